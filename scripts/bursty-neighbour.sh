#!/usr/bin/env bash
# A bursty CPU neighbour for validating verdicts on a noisy machine (docs/statistics.md): one
# busy thread, on and off in random bursts of 0.2–2 s each, for SECONDS (default 600).
#   scripts/bursty-neighbour.sh 900 &
set -euo pipefail
end=$(( $(date +%s) + ${1:-600} ))
rand_s() { awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.2 + 1.8 * r / 32767 }'; }
while [ "$(date +%s)" -lt "$end" ]; do
  timeout "$(rand_s)" bash -c 'while :; do :; done' || true
  sleep "$(rand_s)"
done
