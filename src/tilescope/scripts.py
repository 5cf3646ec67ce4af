"""Running the user's Python script or module as ``__main__``, the way ``python`` would.

Exceptions are printed as Python prints them (without tilescope's own frames) and become exit
status 1; ``SystemExit`` keeps its status. A script that wants a CUDA device on a machine without
one gets a note on how to run it on the CPU.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import traceback
from types import TracebackType
from typing import Any

from .engine.interrupts import ctrl_c_not_lost

#: set by ``tilescope run`` for the processes it starts (JSON: its pid, clients, options, a report folder);
#: the pytest plug-in of such a process (a pytest-xdist worker) intercepts and reports there
RUN_ENV = "TILESCOPE_RUN"

_CUDA_SIGNS = ("Torch not compiled with CUDA", "Found no NVIDIA driver", "active drivers",
               "CUDA driver", "no CUDA GPUs", "CUDA is not available", "cuda:", "CUDA library")

def cuda_hint() -> str:
    """What to do about a script that wanted a CUDA device and found none."""
    from .gpu import modelling

    spec = modelling()
    if spec is None:
        return (
            "tilescope: this code asks for a CUDA device, and there is none here. `tilescope run` answers "
            "for one (CUDA tensors on the CPU, device queries as an H200) unless told `--gpu off` or "
            "TILESCOPE_GPU=off: leave the model on, or create the tensors on the CPU, e.g.\n"
            "    DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')"
        )
    return (
        f"tilescope: this code asks for a CUDA device in a way the modelled {spec.name} does not answer "
        "(tilescope.gpu covers torch's tensor factories, Tensor.to/.cuda, torch.cuda's queries, streams "
        "and events, and Triton's driver); please report it, and create these tensors on the CPU meanwhile."
    )


def run_target(script: str | None, module: str | None, args: list[str]) -> int:
    """Run ``script`` (a path) or ``module`` (a name) with ``args`` as ``sys.argv[1:]``; its exit status."""
    if module is None and not os.path.isfile(script):
        print(f"tilescope run: no such script: {script}", file=sys.stderr)
        return 2
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    watchdog = _CtrlCWatchdog()
    try:
        with ctrl_c_not_lost(), watchdog:
            _run(script, module, args)
    except SystemExit as exc:
        return _exit_status(exc.code)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the user's error: show it as Python would, then go on to the reports
        traceback.print_exception(type(exc), exc, _user_frames(exc.__traceback__), file=sys.stderr)
        if wants_cuda(exc):
            print("\n" + cuda_hint(), file=sys.stderr)
        return 1
    finally:
        watchdog.ended()
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


class _CtrlCWatchdog:
    """Ctrl-C always ends ``tilescope run``: the interrupt is raised in the script as usual, and if it
    has not reached :func:`run_target` within :data:`CTRL_C_GRACE_S` seconds (the script caught it and
    went on, or it was lost where no tilescope code runs) the process exits with status 130 and says so.

    The grace period starts from the signal itself: Python's wake-up file descriptor receives it from
    the C-level handler, and a thread waiting on it starts the clock, so a main thread stuck in native
    code (where Python-level handlers never run) still ends.
    """

    def __init__(self) -> None:
        self._timer: threading.Timer | None = None
        self._previous: Any = None
        self._wakeup: tuple[int, int] | None = None
        self._previous_fd = -1

    def __enter__(self) -> _CtrlCWatchdog:
        main = threading.current_thread() is threading.main_thread()
        if main and callable(signal.getsignal(signal.SIGINT)):
            self._previous = signal.signal(signal.SIGINT, self._on_ctrl_c)
            read, write = os.pipe()
            os.set_blocking(write, False)
            self._previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            self._wakeup = (read, write)
            threading.Thread(target=self._watch, args=(read,), daemon=True, name="tilescope-ctrl-c").start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        if self._wakeup is not None:
            signal.set_wakeup_fd(self._previous_fd)
            os.close(self._wakeup[1])  # the watching thread's read then ends

    def _watch(self, read: int) -> None:
        """Wait for signals on the wake-up descriptor; a SIGINT starts the clock."""
        try:
            while data := os.read(read, 64):
                if signal.SIGINT in data:
                    self._start_clock()
        except OSError:
            pass
        finally:
            os.close(read)

    def _start_clock(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(CTRL_C_GRACE_S, _exit_after_ctrl_c)
            self._timer.daemon = True
            self._timer.start()

    def _on_ctrl_c(self, signum: int, frame: Any) -> None:
        self._start_clock()
        raise KeyboardInterrupt

    def ended(self) -> None:
        """The script has ended (the interrupt reached tilescope, or it ran to its end): no forced exit."""
        if self._timer is not None:
            self._timer.cancel()


#: seconds a Ctrl-C may take to stop the script before ``tilescope run`` exits regardless
CTRL_C_GRACE_S = 20.0


def _exit_after_ctrl_c() -> None:
    print(f"\ntilescope run: the script did not stop within {CTRL_C_GRACE_S:.0f} s of Ctrl-C; exiting "
          "(no reports written)", file=sys.stderr, flush=True)
    os._exit(130)


def _run(script: str | None, module: str | None, args: list[str]) -> None:
    """Run the target as ``__main__`` (raises what it raises)."""
    if module is not None:
        sys.argv = [module, *args]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


def wants_cuda(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it came from) says a CUDA device was missing."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if any(sign in str(exc) for sign in _CUDA_SIGNS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """The traceback from the first frame outside this module and runpy."""
    ours = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}

    def is_ours(filename: str) -> bool:
        return filename == "<frozen runpy>" or os.path.abspath(filename) in ours

    while tb is not None and is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb
