#!/usr/bin/env bash
# The project's gates: formatting, lints (warnings are errors), then every test. Database
# tests start their own throwaway MariaDB servers; nothing else needs to be running.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
