#!/bin/sh
# Builds goalgui as a one-folder PyInstaller bundle and smoke-tests it:
#   sh packaging/build.sh            (after sh scripts/setup.sh --test)
# The bundle is packaging/dist/goalgui/; run packaging/dist/goalgui/goalgui. It prints its version,
# runs the rehearsal headless, runs the embedded model headless, and opens the window under Xvfb.
set -eu
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "build: run sh scripts/setup.sh --test first"; exit 1; }
.venv/bin/python -m pip install -q "pyinstaller>=6.10"
started=$(date +%s)
.venv/bin/pyinstaller --noconfirm --clean --log-level WARN \
  --distpath packaging/dist --workpath packaging/build packaging/goalgui.spec
built=$(date +%s)
app=packaging/dist/goalgui/goalgui
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export GOALGUI_HOME="$home"
unset PYTHONPATH

echo "build: $($app --version)"
$app run "Produce a market analysis of UK meal-kit services" --model scripted:rehearsal --json >"$home/rehearsal.json"
grep -q '"state": "complete"' "$home/rehearsal.json" || { echo "build: the rehearsal did not complete"; exit 1; }
echo "build: the rehearsal ran headless"
$app run "Write one tip for keeping a houseplant alive" --model local --max-depth 0 --json >"$home/local.json"
grep -q '"state": "complete"' "$home/local.json" || { echo "build: the embedded model's run did not complete"; exit 1; }
echo "build: the embedded model ran headless (its child process is the bundle itself)"
QT_QPA_PLATFORM= xvfb-run -a -s "-screen 0 1280x800x24" \
  $app run "Produce a market analysis of UK meal-kit services" --model scripted:rehearsal --window --exit-when-done
echo "build: the window opened on a real X server and closed cleanly"
echo "build: built in $((built - started)) s; the bundle is $(du -sh packaging/dist/goalgui | cut -f1)"
