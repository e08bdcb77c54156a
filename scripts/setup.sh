#!/usr/bin/env bash
# What the tests need, installed where missing; one list for the README's test command
# (scripts/test.sh sources this file) and CI (.ci/run runs scripts/test.sh):
# - MariaDB's server binaries: every database test starts throwaway servers from them;
# - mariadb-plugin-rocksdb: a target's tables made with MyRocks (tests/engines.rs);
# - sysbench 1.0.20: the drop-in is checked line by line against it;
# - haproxy: a managed proxy target is tested through a real HAProxy (and MySQL Router, which
#   scripts/unpack-mysql.sh router unpacks from Debian unstable like MySQL itself);
# - galera-4 and rsync: a managed Galera cluster (tests/cluster.rs) joins its nodes by rsync
#   state transfer;
# - curl, xz, python3: the version-matrix test unpacks MariaDB 10.11.18 from this machine's
#   package lists and 11.8.9 from Debian 13's, and the MySQL test Debian unstable's MySQL
#   (scripts/unpack-*.sh; downloaded into target/, never installed);
# - openssl: a TLS test makes an X.509 version 1 certificate, which rcgen cannot; a router
#   ending TLS gets its certificate from it;
# - chromium: the HTML report is checked in a real browser;
# - perf (linux-perf): `[run] profile = "perf"` is tested on a real server (tests/profiles.rs;
#   it samples every CPU, so the tests need root or kernel.perf_event_paranoid <= 0);
# - kubernetes-validate (PyPI, in a virtual environment under target/, nothing system-wide):
#   the rendered Kubernetes manifests are checked against the schema;
# - rustfmt and clippy: the gates.
# Debian packages are installed with apt-get as root (or through sudo); without either, it
# prints the one command to run and stops.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
have mariadbd || need+=(mariadb-server)
have mariadb-install-db || need+=(mariadb-server)
[ -f /usr/lib/mysql/plugin/ha_rocksdb.so ] || need+=(mariadb-plugin-rocksdb)
have sysbench || need+=(sysbench)
have haproxy || need+=(haproxy)
[ -f /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)
have rsync || need+=(rsync)
have curl || need+=(curl)
have xz || need+=(xz-utils)
have python3 || need+=(python3)
have openssl || need+=(openssl)
have perf || need+=(linux-perf)
[ -x /usr/bin/chromium ] || need+=(chromium)

# Installs Debian packages $@ as root, or says the one command that would.
install() {
  local as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo)
    else
      echo "[setup] the tests need: $*; install them with:" >&2
      echo "  sudo apt-get install -y --no-install-recommends $*" >&2
      exit 2
    fi
  fi
  echo "[setup] installing: $*"
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$@"
}
if [ ${#need[@]} -gt 0 ]; then
  # shellcheck disable=SC2046
  install $(printf '%s\n' "${need[@]}" | sort -u)
fi

if ! command -v kubernetes-validate >/dev/null 2>&1; then
  venv="$PWD/target/ci-venv"
  if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    echo "[setup] installing kubernetes-validate into $venv"
    rm -rf "$venv"
    mkdir -p target
    # Debian's python3 makes a virtual environment only with python3-venv.
    if ! python3 -m venv "$venv" 2>/dev/null; then
      install python3-venv
      rm -rf "$venv"
      python3 -m venv "$venv"
    fi
    "$venv/bin/pip" install -q kubernetes-validate
  fi
  export PATH="$venv/bin:$PATH"
fi
command -v rustfmt >/dev/null 2>&1 || rustup component add rustfmt
command -v cargo-clippy >/dev/null 2>&1 || rustup component add clippy
