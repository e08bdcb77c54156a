#!/usr/bin/env bash
# Writes a PNG screenshot of a run's report.html with headless Chromium.
# Usage: scripts/screenshot-report.sh results/<sweep>/<run> [out.png]
# Needs chromium (apt-get install chromium).
set -euo pipefail
run=${1:?usage: $0 RUN_DIR [out.png]}
out=${2:-$run/report.png}
html=$(cd "$run" && pwd)/report.html
[ -f "$html" ] || { echo "no report.html in $run (sweepbench report $run writes it)" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "chromium not found: apt-get install chromium" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1200,2400 \
  --screenshot="$(realpath -m "$out")" "file://$html" >/dev/null 2>&1
echo "$out"
