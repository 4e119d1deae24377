#!/bin/sh
# Sets goalgui up on a Debian/Ubuntu machine: the system libraries Qt loads and
# the compiler llama.cpp builds with, a virtual environment in .venv, and the
# package in it with the embedded local model. `--test` adds what the test
# suite needs. Safe to run again; pip caches the llama.cpp build.
set -eu
cd "$(dirname "$0")/.."
TEST=0
[ "${1:-}" = "--test" ] && TEST=1

APT_PACKAGES="libegl1 libgl1 libx11-6 libx11-xcb1 libdbus-1-3 libfontconfig1 libfreetype6
libglib2.0-0 libxkbcommon0 libxkbcommon-x11-0 libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0
libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0
libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 fonts-dejavu-core build-essential"
# the tests also drive the window on a real X server
[ "$TEST" = 1 ] && APT_PACKAGES="$APT_PACKAGES xvfb xauth"

missing=""
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing system libraries:$missing"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
  else
    echo "setup: these system packages are missing; install them first:"
    echo "  sudo apt-get install -y --no-install-recommends$missing"
    exit 1
  fi
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "setup: building llama.cpp for the embedded model (about 5 minutes on 2 cores, once)"
fi
if [ "$TEST" = 1 ]; then
  .venv/bin/python -m pip install -q -e '.[local,test]'
else
  .venv/bin/python -m pip install -q -e '.[local]'
fi
echo "setup: ready (.venv/bin/goalgui)"
