#!/usr/bin/env bash
# The nightly on real servers, night after night (docs/regressions.md, "A real nightly"): a
# MariaDB from this machine's binaries plays the server under test and is restarted before
# every night as a deploy would restart it; each night runs the README's cron line unchanged
# but for its directory, with sweeps/nightly.toml narrowed to fit (oltp_read_write at 4 and 16
# threads, a 6-minute budget: DRILL_WORKLOADS, DRILL_THREADS, DRILL_BUDGET to change) and its
# candidate url pointed at that server, beside the sweep's managed control. A narrower budget
# leaves wider intervals: 4 minutes over six points (7 rounds each) called flush 1 "slower",
# −24 to −37 %, where ±5 % needed the interval past the threshold. Nights are "good" (innodb_flush_log_at_trx_commit=2, no binary
# log) or "bad" (flush 1, sync_binlog=1, binary log on); the default is the issue's
# good good bad bad good. Prints per night the cron line's exit code, what it would mail (the
# first line of last-attempt.txt and the gate's outcome) and `history`'s exit code. The
# checkout it runs in is results/nightly-drill/ (its results/ stay there); the server's data
# lives in a temp dir removed at the end. About 40 minutes on two cores.
#   scripts/nightly-drill.sh [good|bad ...]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
nights=("$@")
[ ${#nights[@]} -gt 0 ] || nights=(good good bad bad good)

bin=$repo/target/release/sweepbench
[ -x "$bin" ] || cargo build --release
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)

work=$(mktemp -d "${TMPDIR:-/tmp}/sweepbench-drill.XXXXXX")
sock=$work/mysqld.sock
stop() {
  if [ -S "$sock" ]; then mariadb-admin --socket="$sock" -uroot shutdown 2>/dev/null || true; fi
  for _ in $(seq 60); do [ -S "$sock" ] || break; sleep 0.5; done
}
trap 'stop; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The server under test: its own datadir, 127.0.0.1 only, root by socket.
mariadb-install-db --no-defaults --datadir="$work/data" --user="$(id -un)" >"$work/install.log" 2>&1
start() {
  local opts=()
  if [ "$1" = bad ]; then
    opts=(--innodb-flush-log-at-trx-commit=1 --sync-binlog=1 --log-bin="$work/binlog" --server-id=1)
  else
    opts=(--innodb-flush-log-at-trx-commit=2 --skip-log-bin)
  fi
  "$mariadbd" --no-defaults --datadir="$work/data" --socket="$sock" --port="$port" \
    --bind-address=127.0.0.1 --user="$(id -un)" --innodb-buffer-pool-size=256M \
    --max-connections=200 "${opts[@]}" >>"$work/server.log" 2>&1 &
  for _ in $(seq 120); do
    mariadb-admin --socket="$sock" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "[drill] the server under test did not start: $work/server.log" >&2
  exit 1
}

# Its user, with a password that only the environment carries (never a command line).
SWEEPBENCH_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
export SWEEPBENCH_PASSWORD
start good
mariadb --socket="$sock" -uroot <<SQL
CREATE DATABASE sbtest;
CREATE USER 'sbtest'@'127.0.0.1' IDENTIFIED BY '$SWEEPBENCH_PASSWORD';
GRANT ALL ON sbtest.* TO 'sbtest'@'127.0.0.1';
SQL
stop

# A checkout as the README's cron line expects it: the release build, the sweep, results/.
co=$repo/results/nightly-drill
rm -rf "$co/results" "$co"/history-*.txt
mkdir -p "$co/target/release" "$co/sweeps" "$co/results"
ln -sf "$bin" "$co/target/release/sweepbench"
sed -e "s|^url = .*|url = \"mysql://sbtest@127.0.0.1:$port/sbtest\"|" \
    -e "s|^workloads = .*|workloads = ${DRILL_WORKLOADS:-[\"oltp_read_write\"]}|" \
    -e "s|^threads = .*|threads = ${DRILL_THREADS:-[4, 16]}|" \
    -e "s|^budget = .*|budget = \"${DRILL_BUDGET:-6m}\"|" \
    sweeps/nightly.toml >"$co/sweeps/nightly.toml"
line=$(sed -n 's|^0 2 \* \* \* ||p' README.md | sed "s|cd /srv/sweepbench|cd $co|")

for i in "${!nights[@]}"; do
  n=${nights[$i]}
  start "$n"
  set +e
  mail=$(sh -c "$line")
  code=$?
  set -e
  stop
  set +e
  "$bin" history "$co/results/nightly" >"$co/history-$((i + 1)).txt" 2>&1
  hcode=$?
  set -e
  gate=$(grep -- '--fail-on-regression: \(FAILED\|passed\)' "$co/results/nightly/last-attempt.txt" | tail -1 || true)
  echo "night $((i + 1)) ($n): cron line exit $code; history exit $hcode"
  echo "  $(head -1 "$co/results/nightly/last-attempt.txt")"
  [ -z "$gate" ] || echo "  ${gate:0:200}"
  [ -z "$mail" ] && echo "  mailed: nothing" || echo "  mailed: $(echo "$mail" | wc -l) line(s)"
done
echo "[drill] runs, summaries and history: $co/results/nightly, $co/history-*.txt"
