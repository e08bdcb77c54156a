#!/usr/bin/env bash
# Measures sweepbench against sysbench 1.0.20 on one throwaway MariaDB (same server, same
# tables, interleaved A-B-B-A): prepare rows/s, and point_select QPS with client CPU per query.
# Usage: scripts/compare-sysbench.sh [tables] [table_size] [seconds per point]
# ONLY=prepare or ONLY=point measures one part; THREADS="2 16 64" picks the point thread counts.
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${1:-8} SIZE=${2:-250000} SECS=${3:-10}
cargo build --release --quiet
export BIN="$PWD/target/release/sweepbench" TABLES SIZE SECS ONLY=${ONLY:-} THREADS=${THREADS:-"1 2 16 64"}
"$BIN" sandbox --max-connections=300 --server-option=innodb_buffer_pool_size=2G \
  --server-option=innodb_log_file_size=512M -- bash -c '
  set -euo pipefail
  conn="--mysql-host=127.0.0.1 --mysql-port=$SWEEPBENCH_PORT --mysql-user=root --mysql-db=sbtest"
  data="--tables=$TABLES --table-size=$SIZE"
  rows=$((TABLES * SIZE))
  prep() { # tool
    local t0 t1
    if [ "$1" = sysbench ]; then cmd=(sysbench oltp_read_write $conn $data --threads=2 prepare)
    else cmd=("$BIN" bench oltp_read_write prepare $conn $data --threads=2); fi
    t0=$(date +%s.%N); "${cmd[@]}" > /dev/null; t1=$(date +%s.%N)
    "$BIN" bench oltp_read_write cleanup $conn $data > /dev/null
    echo "prepare,$1,$(echo "$rows / ($t1 - $t0)" | bc -l | xargs printf %.0f)"
  }
  echo "what,tool,value"
  if [ "$ONLY" != point ]; then
    for tool in sysbench sweepbench sweepbench sysbench; do prep $tool; done
  fi
  [ "$ONLY" = prepare ] && exit 0
  "$BIN" bench oltp_read_write prepare $conn $data > /dev/null
  point() { # tool threads
    local out cpu
    if [ "$1" = sysbench ]; then cmd=(sysbench oltp_point_select $conn $data --threads=$2 --time=$SECS run)
    else cmd=("$BIN" bench oltp_point_select run $conn $data --threads=$2 --time=$SECS); fi
    out=$( { /usr/bin/time -f "CPU %U %S" "${cmd[@]}"; } 2>&1 )
    qps=$(echo "$out" | awk "/queries:/ && /per sec/ {print substr(\$3,2)}")
    q=$(echo "$out" | awk "/queries:/ && /per sec/ {print \$2}")
    cpu=$(echo "$out" | awk "/^CPU/ {print \$2 + \$3}")
    echo "qps_t$2,$1,$qps"
    echo "cpu_us_per_query_t$2,$1,$(echo "$cpu * 1000000 / $q" | bc -l | xargs printf %.2f)"
  }
  for t in $THREADS; do
    for tool in sysbench sweepbench sweepbench sysbench; do point $tool $t; done
  done
'
