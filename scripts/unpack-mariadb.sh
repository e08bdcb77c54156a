#!/usr/bin/env bash
# Unpacks one version of the distribution's MariaDB server (server-core + client-core) into a
# cache directory, without installing it, so a sweep can use it as a managed-server basedir:
#   server = { basedir = "<cache>/mariadb-<version>/usr" }
# Usage: scripts/unpack-mariadb.sh <version> [cache-dir]
#   e.g. scripts/unpack-mariadb.sh 10.11.18      (apt-cache madison mariadb-server-core lists them)
# Prints the basedir on success. Needs apt-get (downloads only; nothing is installed).
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
[ -n "$full" ] || { echo "no mariadb-server-core $version in the package lists (apt-cache madison mariadb-server-core)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
( cd "$work" && apt-get download -qq "mariadb-server-core=$full" "mariadb-client-core=$full" >/dev/null )
mkdir -p "$dest.partial"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$dest.partial"; done
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest/usr"
