#!/usr/bin/env bash
# Quickstart: installs what is missing (MariaDB server binaries), builds sweepbench, starts a
# throwaway MariaDB on 127.0.0.1 (nothing installed is touched), prepares a small data set and
# measures two workloads at 1, 2, 4, 8 and 16 threads. Writes results/quickstart/<UTC time>/.
# Until `sweepbench run` lands (sweep files), the sweep is this script's loop over `bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "[quickstart] installing the MariaDB server (apt-get install mariadb-server)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends mariadb-server
fi
command -v cargo >/dev/null 2>&1 || { echo "[quickstart] cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }

echo "[quickstart] building (release)"
cargo build --release --quiet
BIN="$PWD/target/release/sweepbench"
OUT="results/quickstart/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
export OUT BIN
"$BIN" sandbox --max-connections=100 -- bash -c '
  set -euo pipefail
  conn="--mysql-host=127.0.0.1 --mysql-port=$SWEEPBENCH_PORT --mysql-user=root --mysql-db=sbtest"
  data="--tables=4 --table-size=20000"
  "$BIN" bench oltp_read_write prepare $conn $data > "$OUT/prepare.log"
  tail -n 1 "$OUT/prepare.log"
  echo "workload,threads,tps,qps,lat_avg_ms,lat_p95_ms,errors" > "$OUT/points.csv"
  for w in oltp_read_only oltp_point_select; do
    for t in 1 2 4 8 16; do
      log="$OUT/$w-$t.log"
      "$BIN" bench $w run $conn $data --threads=$t --time=5 --warmup-time=1 > "$log"
      awk -v w=$w -v t=$t '"'"'
        /transactions:/ {tps=substr($3,2)}
        /queries:/ && /per sec/ {qps=substr($3,2)}
        /ignored errors:/ {err=$3}
        /avg:/ {avg=$2}
        /th percentile:/ {p95=$3}
        END {printf "%s,%s,%s,%s,%s,%s,%s\n", w, t, tps, qps, avg, p95, err}'"'"' "$log" >> "$OUT/points.csv"
      echo "[quickstart] $w threads=$t: $(tail -n 1 "$OUT/points.csv")"
    done
  done
'
echo
column -s, -t < "$OUT/points.csv" 2>/dev/null || cat "$OUT/points.csv"
echo
echo "[quickstart] results in $OUT (points.csv and one sysbench-format log per point)"
