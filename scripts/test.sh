#!/bin/sh
# Runs the whole test suite. A skipped test fails the run (conftest.py), and so
# does pytest's exit code 5 (no tests collected): every exit but 0 is a failure.
set -u
cd "$(dirname "$0")/.."
export QT_QPA_PLATFORM=offscreen
.venv/bin/python -m pytest -rs "$@"
rc=$?
if [ "$rc" = 5 ]; then
  echo "test: no tests were collected" >&2
  exit 1
fi
exit "$rc"
