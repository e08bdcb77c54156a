#!/usr/bin/env bash
# Calibrates cross-run verdicts against a busy host on this machine (docs/statistics.md, "A busy
# host"): real runs of one managed MariaDB, some beside scripts/bursty-neighbour.sh, compared
# the way users compare runs made at different times.
#   scripts/busy-host-calibration.sh [OUT_DIR]      (about 35 minutes on two cores)
# 1. A/A: for 2 and 5 repeats, 5 quiet runs and 4 with the neighbour, alternated; every quiet
#    run as base against every busy one as candidate (20 comparisons each): how many points
#    were called regressed or improved, how many not judged, and how many a verdict blind to
#    the host's load would have called regressed (the interval of Δ tps wholly below −5 %).
# 2. A copy of a quiet 5-repeat run with every figure 40 % slower, judged against a busy run
#    (not judged: the host's load differs) and against a quiet one (regressed).
# 3. A real change, quiet and unpaired: innodb_flush_log_at_trx_commit = 2 against 1 on
#    oltp_write_only, five repeats each: regressed.
# Everything is written under OUT_DIR (default: a new temp dir); nothing else is touched.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
cd "$out"
bin="$here/target/release/sweepbench"
[ -x "$bin" ] || (cd "$here" && cargo build --release --quiet)

sweep() { # NAME REPEATS WORKLOAD VARS
  cat > "$1.toml" <<EOF
name = "$1"
[data]
tables = 2
table_size = 10000
[run]
workloads = ["$3"]
threads = [1, 2]
duration = "5s"
warmup = "1s"
repeats = $2
[[targets]]
name = "local"
server = {}
[[configs]]
name = "default"
vars = { $4 }
EOF
}

newest() { ls -d "results/$1"/2* | tail -1; }

run_one() { # NAME BUSY
  if [ "$2" = busy ]; then
    "$here/scripts/bursty-neighbour.sh" 3600 & nb=$!
    "$bin" run "$1.toml" --quiet > /dev/null
    kill "$nb" 2> /dev/null; wait "$nb" 2> /dev/null || true
    pkill -f 'while :; do :; done' 2> /dev/null || true
  else
    "$bin" run "$1.toml" --quiet > /dev/null
  fi
  newest "$1"
}

# Counts over one comparison's JSON: regressed, withheld, blind-regressed points.
tally() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
reg = wh = blind = 0
for r in d["rows"]:
    reg += r["verdict"] in ("regressed", "improved")
    wh += bool((r.get("host_load") or {}).get("withheld"))
    t = next(m for m in r["metrics"] if m["metric"] == "tps")
    blind += t["hi_pct"] is not None and t["hi_pct"] < -d["threshold_pct"]
print(reg, wh, blind, len(d["rows"]))'
}

echo "results in $out"
for reps in 2 5; do
  name="aa$reps"
  sweep "$name" "$reps" oltp_read_only ""
  # The runs alternate quiet, busy, quiet, …; an OUT_DIR that already holds all nine (an
  # earlier call) is judged again without running them.
  if [ "$(ls -d "results/$name"/2* 2> /dev/null | wc -l)" -lt 9 ]; then
    for i in 1 2 3 4 5; do
      run_one "$name" quiet > /dev/null
      [ "$i" -lt 5 ] && run_one "$name" busy > /dev/null
    done
  fi
  quiet=() busy=() i=0
  for d in $(ls -d "results/$name"/2* | head -9); do
    if [ $((i % 2)) -eq 0 ]; then quiet+=("$d"); else busy+=("$d"); fi
    i=$((i + 1))
  done
  reg=0 wh=0 blind=0 points=0 comparisons_regressed=0
  for q in "${quiet[@]}"; do
    for b in "${busy[@]}"; do
      read -r r w bl n < <("$bin" compare "$q" "$b" --format json | tally)
      reg=$((reg + r)); wh=$((wh + w)); blind=$((blind + bl)); points=$((points + n))
      [ "$r" -gt 0 ] && comparisons_regressed=$((comparisons_regressed + 1))
    done
  done
  echo "A/A, $reps repeats, neighbour on the candidate: 20 comparisons, $points points:" \
    "$comparisons_regressed comparisons with a regressed or improved point ($reg points);" \
    "$wh points not judged; $blind points a verdict blind to the host would have called regressed"
done

# 2. A quiet run's copy made 40 % slower, against a busy base.
slow="results/aa5/slowed"
rm -rf "$slow"
cp -r "${quiet[0]}" "$slow"
python3 - "$slow/points.csv" <<'EOF'
import csv, sys
path = sys.argv[1]
rows = list(csv.DictReader(open(path)))
for r in rows:
    for k in list(r):
        v = r[k]
        if not v:
            continue
        if k in ("tps", "qps"):
            r[k] = repr(float(v) * 0.6)
        elif k in ("transactions", "queries", "reads", "writes", "other"):
            r[k] = str(round(int(v) * 0.6))
        elif k.startswith("lat_") or k.endswith("_ms"):
            r[k] = repr(float(v) / 0.6)
with open(path, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=rows[0].keys())
    w.writeheader()
    w.writerows(rows)
EOF
read -r r w bl n < <("$bin" compare "${busy[0]}" "$slow" --format json | tally)
echo "40 % slower copy against a busy base, 5 repeats: regressed at $r of $n points, $w not judged"
read -r r w bl n < <("$bin" compare "${quiet[1]}" "$slow" --format json | tally)
echo "the same copy against a quiet base, 5 repeats: regressed at $r of $n points, $w not judged"

# 3. flush 2 → 1, quiet, unpaired.
sweep flush 5 oltp_write_only "innodb_flush_log_at_trx_commit = 2"
a="$(run_one flush quiet)"
sweep flush 5 oltp_write_only "innodb_flush_log_at_trx_commit = 1"
b="$(run_one flush quiet)"
read -r r w bl n < <("$bin" compare "$a" "$b" --format json | tally)
echo "innodb_flush_log_at_trx_commit 2 → 1, quiet, 5 repeats: regressed at $r of $n points, $w not judged"
