#!/usr/bin/env bash
# Quickstart: installs what is missing (MariaDB server binaries), builds sweepbench, and runs
# sweeps/quickstart.toml: a throwaway MariaDB on 127.0.0.1 in a temp dir (nothing installed is
# touched), 4 × 20,000 rows, oltp_read_only and oltp_point_select at 1, 2, 4, 8 and 16 threads.
# About four minutes on two cores (three repeats of every point); results land in results/quickstart/<UTC time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "[quickstart] installing the MariaDB server (apt-get install mariadb-server)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends mariadb-server
fi
command -v cargo >/dev/null 2>&1 || { echo "[quickstart] cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }

echo "[quickstart] building (release; about 3-4 minutes the first time on two cores)"
# cargo's own progress bar shows what it is compiling; errors and warnings still print.
cargo build --release
exec ./target/release/sweepbench run sweeps/quickstart.toml "$@"
