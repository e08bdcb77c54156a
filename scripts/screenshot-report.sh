#!/usr/bin/env bash
# Writes a PNG screenshot of a run's whole report.html with headless Chromium.
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
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile" --hide-scrollbars)
# The whole page, not a window's worth: its height is measured first, by a page that loads
# the report in a 1200-px-wide frame and writes the report's height into its own DOM.
cat > "$profile/measure.html" <<HTML
<!doctype html><body><iframe id="f" src="file://$html" style="width:1200px;height:100px;border:0"></iframe>
<script>document.getElementById('f').onload = function () {
  document.body.setAttribute('data-height', this.contentDocument.documentElement.scrollHeight);
};</script></body>
HTML
height=$("$browser" "${flags[@]}" --allow-file-access-from-files --virtual-time-budget=5000 \
  --dump-dom "file://$profile/measure.html" 2>/dev/null | sed -n 's/.*data-height="\([0-9]*\)".*/\1/p' | head -1)
# Unmeasured (an old browser): a tall window; the page's end is then blank.
height=${height:-6000}
"$browser" "${flags[@]}" --window-size=1200,"$height" \
  --screenshot="$(realpath -m "$out")" "file://$html" >/dev/null 2>&1
echo "$out"
