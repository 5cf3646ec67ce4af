"""The oracle: a virtual environment with Triton 3.8, the last Triton that has real block pointers."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ORACLE_PACKAGES = ("triton==3.8.0", "numpy", "torch==2.13.0")
DEFAULT_VENV = Path(".venvs") / "triton38"


class OracleError(RuntimeError):
    """The oracle environment is missing, broken, or could not be made."""


def _python_in(venv_dir: Path) -> Path:
    return venv_dir / "bin" / "python"


def oracle_version(python: Path) -> str:
    """Return the Triton version that ``python`` imports, or raise :class:`OracleError`."""
    probe = subprocess.run(
        [str(python), "-c", "import triton, torch; print(triton.__version__, torch.__version__)"],
        capture_output=True,
        text=True,
    )
    if probe.returncode:
        raise OracleError(f"{python} cannot import triton and torch:\n{probe.stderr.strip()[-800:]}")
    return probe.stdout.strip()


def ensure_oracle(python: Path | None = None, venv_dir: Path = DEFAULT_VENV, log=print) -> Path:
    """Return the oracle's Python, creating the environment at ``venv_dir`` when none is given or found."""
    if python is not None:
        found = oracle_version(Path(python))
        if not found.startswith("3.8."):
            raise OracleError(
                f"{python} has triton/torch {found}; the oracle needs Triton 3.8 (block pointers)"
            )
        return Path(python)
    candidate = _python_in(venv_dir)
    if candidate.exists():
        try:
            if oracle_version(candidate).startswith("3.8."):
                return candidate
        except OracleError as exc:
            log(f"oracle at {venv_dir} is broken ({exc}); rebuilding it")
    log(f"creating the Triton 3.8 oracle environment at {venv_dir} (once; about 2 GB, a few minutes)")
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    log(f"installing {' '.join(ORACLE_PACKAGES)} into {venv_dir}")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    done = subprocess.run(
        [str(candidate), "-m", "pip", "install", "-q", *ORACLE_PACKAGES],
        env=env,
        stdout=sys.stderr,
        stderr=sys.stderr,
    )
    if done.returncode:
        raise OracleError(
            f"pip could not install {' '.join(ORACLE_PACKAGES)} into {venv_dir}; "
            "give an existing one with --oracle-python"
        )
    log(f"oracle ready: triton/torch {oracle_version(candidate)}")
    return candidate
