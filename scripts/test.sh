#!/usr/bin/env bash
# The README's test command: installs what the tests need (scripts/setup.sh), then the
# project's gates — formatting, lints (warnings are errors) — and every test binary, each
# run even when an earlier one fails, ending with the count of passed and failed tests.
# Database tests start their own throwaway MariaDB servers; nothing else needs to be running.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/setup.sh
source scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
# The build without Kubernetes support (`--no-default-features`) compiles and lints clean too.
cargo clippy --no-default-features --lib --bins -- -D warnings
log=target/test-output.log
status=0
cargo test --no-fail-fast 2>&1 | tee "$log" || status=$?
# The plain closing line: every binary's "test result" added up.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed/) p += $(i-1); if ($(i) ~ /^failed/) f += $(i-1) } }
  END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
