"""Dataclass methods compiled once and kept on disk (``tilescope.methodcache``): the classes are the
ones ``dataclasses`` makes, a later process compiles nothing, and a bad or absent cache changes
nothing but the time."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import pytest

from tilescope import methodcache


def _make():
    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 2
        tags: list = dataclasses.field(default_factory=list, compare=False)

    @dataclasses.dataclass(repr=False, eq=False, kw_only=True)
    class Options:
        debug: bool = True
        name: str | None = None

    return Point, Options


def _codes(cls) -> dict:
    methods = {n: f for n, f in vars(cls).items() if callable(f) and hasattr(f, "__code__")}
    return {n: (f.__code__.co_code, f.__code__.co_consts, f.__code__.co_names, f.__code__.co_varnames,
                f.__code__.co_flags, f.__code__.co_filename, f.__qualname__, f.__defaults__, f.__kwdefaults__)
            for n, f in methods.items()}  # fmt: skip


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(methodcache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(methodcache, "_caches", {})  # as in a fresh process
    return tmp_path


def test_classes_made_in_the_window_are_the_classes_dataclasses_makes(cache_dir):
    plain = _make()
    with methodcache.compiled_dataclasses():
        first = _make()  # compiled, then stored
    methodcache._caches.clear()
    with methodcache.compiled_dataclasses():
        again = _make()  # from the file
    assert "exec" not in vars(dataclasses)
    for made in (first, again):
        for ours, theirs in zip(made, plain, strict=True):
            assert _codes(ours) == _codes(theirs)
    Point, Options = again
    p = Point(1)
    assert repr(p).endswith("Point(x=1, y=2, tags=[])")
    assert p == Point(1, 2, ["other"]) and p < Point(2) and hash(p) == hash(Point(1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3
    assert Point(1).tags is not Point(1).tags
    with pytest.raises(TypeError):
        Options(True)  # keyword-only
    assert Options(name="n").name == "n" and Options().debug


def test_a_later_window_compiles_nothing(cache_dir, monkeypatch):
    with methodcache.compiled_dataclasses():
        _make()
    assert list(cache_dir.iterdir()), "the methods are kept"
    methodcache._caches.clear()
    compiled = []
    real = compile
    monkeypatch.setattr("builtins.compile", lambda *a, **k: compiled.append(a) or real(*a, **k))
    with methodcache.compiled_dataclasses():
        _make()
    assert compiled == []


def test_a_file_that_does_not_load_is_ignored_and_replaced(cache_dir):
    with methodcache.compiled_dataclasses():
        _make()
    (path,) = cache_dir.iterdir()
    path.write_bytes(b"not marshal")
    methodcache._caches.clear()
    with methodcache.compiled_dataclasses():
        made = _make()
    assert made[0](1).y == 2
    methodcache._caches.clear()
    assert methodcache._Cache(path).codes  # replaced by a good one


def test_no_cache_directory_no_file_and_the_same_classes(tmp_path, monkeypatch):
    monkeypatch.setenv(methodcache.CACHE_ENV, "")
    monkeypatch.setattr(methodcache, "_caches", {})
    with methodcache.compiled_dataclasses():
        assert "exec" not in vars(dataclasses)
        Point, _ = _make()
    assert Point(1) == Point(1, 2) and not list(tmp_path.iterdir())


def test_no_home_directory_no_cache(monkeypatch):
    monkeypatch.delenv(methodcache.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(methodcache.Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    with methodcache.compiled_dataclasses():
        assert "exec" not in vars(dataclasses)
        assert _make()[0](1).y == 2


def test_the_window_is_closed_after_an_error(cache_dir):
    with pytest.raises(RuntimeError), methodcache.compiled_dataclasses():
        assert "exec" in vars(dataclasses)
        raise RuntimeError
    assert "exec" not in vars(dataclasses)


def test_a_fresh_process_imports_tilescope_from_the_kept_methods(tmp_path):
    script = textwrap.dedent("""
        import dataclasses, sys
        import tilescope
        from tilescope.ir import records
        assert "exec" not in vars(dataclasses)
        cache = next(iter(tilescope.methodcache._caches.values()))
        print(cache.added, len(cache.codes) > 50)
    """)
    env = {**os.environ, methodcache.CACHE_ENV: str(tmp_path)}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                              env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert run() == "False True"  # the first process wrote them (saved: nothing left to add)
    (path,) = tmp_path.iterdir()
    before = path.stat().st_mtime_ns
    assert run() == "False True" and path.stat().st_mtime_ns == before  # the second one only read them


def test_modules_a_launch_imports_on_first_use_reuse_the_kept_methods(tmp_path):
    """The engine's reductions (and their layout dataclasses) load mid-launch: a later process's first
    launch of a reducing kernel compiles none of their methods."""
    script = textwrap.dedent("""
        import builtins, dataclasses, sys
        import torch, triton, triton.language as tl
        import tilescope

        made = []  # dataclass methods compiled from their text (the cache's come as code objects)
        exec_ = builtins.exec
        def spy(source, *args, **kwargs):
            if isinstance(source, str) and "__create_fn__" in source:
                made.append(source)
            return exec_(source, *args, **kwargs)
        builtins.exec = spy

        @dataclasses.dataclass
        class Probe:  # outside tilescope's imports: compiled from its text
            x: int
        assert made, "the spy sees dataclasses' methods"
        made.clear()

        @triton.jit
        def row_sum(x_ptr, out_ptr, N: tl.constexpr):
            row = tl.program_id(0)
            tl.store(out_ptr + row, tl.sum(tl.load(x_ptr + row * N + tl.arange(0, N)), axis=0))

        x = torch.randn(4, 16)
        out = torch.empty(4)
        tilescope.trace(row_sum)[(4,)](x, out, N=16)
        assert torch.allclose(out.double(), x.double().sum(1), atol=1e-5)
        assert "tilescope.engine.layout" in sys.modules
        print(len(made))
    """)
    path = tmp_path / "row_sum.py"  # Triton reads a kernel's source from its file
    path.write_text(script)
    env = {**os.environ, methodcache.CACHE_ENV: str(tmp_path / "cache")}

    def run() -> int:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                              env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout.strip().splitlines()[-1])

    run()  # the first process compiles the layouts' methods and keeps them
    assert run() == 0
