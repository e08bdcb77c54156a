#!/usr/bin/env bash
# Measures sweepbench against sysbench 1.0.20 on one throwaway MariaDB (same server, same
# tables, interleaved A-B-B-A): prepare rows/s, and point_select QPS with client CPU per query.
# Usage: scripts/compare-sysbench.sh [tables] [table_size] [seconds per point]
# ONLY=prepare or ONLY=point measures one part; THREADS="2 16 64" picks the thread counts and
# WORKLOADS="oltp_point_select oltp_read_only" the workloads of the run part; ROUNDS=2 repeats
# each A-B-B-A. BASE=/path/to/an/older/sweepbench puts that build in sysbench's place (a
# before/after check of a change; the columns keep the name "sysbench").
# TLS=1 runs both over TLS (certificates made with openssl in a temp dir; sysbench 1.0.20's
# --mysql-ssl=on reads client-cert.pem, client-key.pem and cacert.pem from its working
# directory, and sweepbench is given the same client certificate).
# Prints CSV, then the median of each tool and their ratio per figure.
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${1:-8} SIZE=${2:-250000} SECS=${3:-10}
cargo build --release --quiet
export BIN="$PWD/target/release/sweepbench" BASE=${BASE:-} TABLES SIZE SECS ONLY=${ONLY:-} THREADS=${THREADS:-"1 2 16 64"} WORKLOADS=${WORKLOADS:-oltp_point_select} ROUNDS=${ROUNDS:-1}
csv=$(mktemp)
pki=$(mktemp -d)
trap 'rm -rf "$csv" "$pki"' EXIT
tls_server=() SSL=""
if [ "${TLS:-0}" = 1 ]; then
  (cd "$pki"
   openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out cacert.pem -days 2 -subj "/CN=compare CA"
   for who in server client; do
     openssl req -newkey rsa:2048 -nodes -keyout $who-key.pem -out $who.csr -subj "/CN=$who"
     # v3 certificates (with extensions): webpki refuses v1 ones.
     printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > ext.cnf
     openssl x509 -req -in $who.csr -CA cacert.pem -CAkey ca-key.pem -CAcreateserial -out $who-cert.pem -days 2 -extfile ext.cnf
   done) > /dev/null 2>&1
  tls_server=(--server-option=ssl-ca="$pki/cacert.pem" --server-option=ssl-cert="$pki/server-cert.pem" --server-option=ssl-key="$pki/server-key.pem")
  SSL="--mysql-ssl=on"
fi
export SSL PKI="$pki"
cd "$pki"
"$BIN" sandbox --max-connections=300 --server-option=innodb_buffer_pool_size=2G \
  --server-option=innodb_log_file_size=512M "${tls_server[@]}" -- bash -c '
  set -euo pipefail
  conn="--mysql-host=127.0.0.1 --mysql-port=$SWEEPBENCH_PORT --mysql-user=root --mysql-db=sbtest $SSL"
  ours_tls=""
  [ -n "$SSL" ] && ours_tls="--mysql-ssl-cert=$PKI/client-cert.pem --mysql-ssl-key=$PKI/client-key.pem"
  data="--tables=$TABLES --table-size=$SIZE"
  rows=$((TABLES * SIZE))
  prep() { # tool
    local t0 t1
    if [ "$1" = sysbench ] && [ -n "$BASE" ]; then cmd=("$BASE" bench oltp_read_write prepare $conn $data --threads=2)
    elif [ "$1" = sysbench ]; then cmd=(sysbench oltp_read_write $conn $data --threads=2 prepare)
    else cmd=("$BIN" bench oltp_read_write prepare $conn $data --threads=2); fi
    t0=$(date +%s.%N); "${cmd[@]}" > /dev/null; t1=$(date +%s.%N)
    "$BIN" bench oltp_read_write cleanup $conn $data > /dev/null
    echo "prepare,$1,$(echo "$rows / ($t1 - $t0)" | bc -l | xargs printf %.0f)"
  }
  echo "what,tool,value"
  order=$(for _ in $(seq "$ROUNDS"); do echo sysbench sweepbench sweepbench sysbench; done)
  if [ "$ONLY" != point ]; then
    for tool in $order; do prep $tool; done
  fi
  [ "$ONLY" = prepare ] && exit 0
  "$BIN" bench oltp_read_write prepare $conn $data > /dev/null
  point() { # tool threads workload
    local out cpu
    if [ "$1" = sysbench ] && [ -n "$BASE" ]; then cmd=("$BASE" bench "$3" run $conn $data --threads=$2 --time=$SECS)
    elif [ "$1" = sysbench ]; then cmd=(sysbench "$3" $conn $data --threads=$2 --time=$SECS run)
    else cmd=("$BIN" bench "$3" run $conn $ours_tls $data --threads=$2 --time=$SECS); fi
    out=$( { /usr/bin/time -f "CPU %U %S" "${cmd[@]}"; } 2>&1 )
    qps=$(echo "$out" | awk "/queries:/ && /per sec/ {print substr(\$3,2)}")
    q=$(echo "$out" | awk "/queries:/ && /per sec/ {print \$2}")
    cpu=$(echo "$out" | awk "/^CPU/ {print \$2 + \$3}")
    user=$(echo "$out" | awk "/^CPU/ {print \$2}")
    echo "$3_qps_t$2,$1,$qps"
    echo "$3_cpu_us_per_query_t$2,$1,$(echo "$cpu * 1000000 / $q" | bc -l | xargs printf %.2f)"
    echo "$3_user_us_per_query_t$2,$1,$(echo "$user * 1000000 / $q" | bc -l | xargs printf %.2f)"
  }
  for w in $WORKLOADS; do
    for t in $THREADS; do
      for tool in $order; do point $tool $t $w; done
    done
  done
' | tee "$csv"
echo
echo "what,sysbench_median,sweepbench_median,ratio"
awk -F, 'NR > 1 && NF == 3 { v[$1 "," $2] = v[$1 "," $2] " " $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
  function median(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END { for (i = 0; i < n; i++) { w = order[i]; s = median(v[w ",sysbench"]); o = median(v[w ",sweepbench"]);
    printf "%s,%.2f,%.2f,%.3f\n", w, s, o, (s > 0 ? o / s : 0) } }' "$csv"
