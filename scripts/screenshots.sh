#!/bin/sh
# Starts the window under Xvfb (a real X server), runs the bundled rehearsal and saves screenshots.
#   sh scripts/screenshots.sh [OUT_DIR]
set -eu
cd "$(dirname "$0")/.."
command -v xvfb-run >/dev/null || { echo "screenshots: install xvfb first: apt-get install -y xvfb xauth"; exit 1; }
unset QT_QPA_PLATFORM
xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/screenshots.py "${1:-screenshots}"
