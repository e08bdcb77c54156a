#!/usr/bin/env bash
# Unpacks one version of MariaDB's server (server-core + client-core) into a cache directory,
# without installing it, so a sweep can use it as a managed-server basedir:
#   server = { basedir = "<cache>/mariadb-<version>/usr" }
# Usage: scripts/unpack-mariadb.sh <version> [cache-dir]
#   e.g. scripts/unpack-mariadb.sh 10.11.18      (apt-cache madison mariadb-server-core lists them)
#        scripts/unpack-mariadb.sh 11.8.9        (Debian 13's: not in this machine's lists)
# A version this machine's package lists hold is downloaded with apt-get. Any other is looked
# up in Debian's own indexes (trixie, then sid; DEBIAN_SUITES to change) and unpacked with
# every library it needs, that release's C library included; each program is then started
# through the unpacked dynamic loader by a small wrapper at its usual path, so it runs on this
# older system (as scripts/unpack-mysql.sh does for MySQL). Prints the basedir on success.
# Needs apt-get, or curl, xz, dpkg-deb and python3; nothing is installed.
set -euo pipefail
version=${1:?usage: $0 <version> [cache-dir]}
cache=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/sweepbench}
dest="$cache/mariadb-$version"
if [ -x "$dest/usr/sbin/mariadbd" ]; then
  echo "$dest/usr"
  exit 0
fi
full=$(apt-cache madison mariadb-server-core 2>/dev/null | awk -v v="$version" '$3 ~ ":"v"-" || $3 ~ "^"v"-" {print $3; exit}')
if [ -z "$full" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  full=$(apt-cache madison mariadb-server-core | awk -v v="$version" '$3 ~ ":"v"-" || $3 ~ "^"v"-" {print $3; exit}')
fi
if [ -z "$full" ]; then
  exec "$(dirname "$0")/unpack-debian-mariadb.sh" "$version" "$cache"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
( cd "$work" && apt-get download -qq "mariadb-server-core=$full" "mariadb-client-core=$full" >/dev/null )
mkdir -p "$dest.partial"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$dest.partial"; done
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest/usr"
