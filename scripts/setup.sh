#!/usr/bin/env bash
# Create .venv (once) and install tilescope with the pinned versions from constraints.txt; reinstall
# (rebuilding the C kernel) when the pins, pyproject.toml, setup.py or the C source change.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.tilescope-installed
want=$(cat constraints.txt pyproject.toml setup.py src/tilescope/engine/*.c | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[test]'
  echo "$want" > "$stamp"
fi
