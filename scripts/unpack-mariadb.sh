#!/usr/bin/env bash
# Unpacks one version of MariaDB's server (server-core + client-core) into a cache directory,
# without installing it, so a sweep can use it as a managed-server basedir:
#   server = { basedir = "<cache>/mariadb-<version>/usr" }
# Usage: scripts/unpack-mariadb.sh <version> [cache-dir]
#   e.g. scripts/unpack-mariadb.sh 10.11.18      (apt-cache madison mariadb-server-core lists them)
#        scripts/unpack-mariadb.sh 11.8.9        (Debian 13's: not in this machine's lists)
#        scripts/unpack-mariadb.sh 10.5.23       (Debian 11's mariadb-server-core-10.5)
# A version this machine's package lists hold is downloaded with apt-get. Any other is looked
# up in Debian's own indexes (trixie, sid, then bullseye; DEBIAN_SUITES to change) and unpacked with
# every library it needs, that release's C library included; each program is then started
# through the unpacked dynamic loader by a small wrapper at its usual path, so it runs on this
# older system (as scripts/unpack-mysql.sh does for MySQL). Prints the basedir on success;
# any failure says why on stderr and exits non-zero (2).
# Needs apt-get, or curl, xz, dpkg-deb and python3; nothing is installed.
set -euo pipefail
fail() { echo "unpack-mariadb.sh: $*" >&2; exit 2; }
version=${1:-}
[ -n "$version" ] || fail "usage: $0 <version> [cache-dir], e.g. $0 10.11.18"
# The version names a directory and is compared as a string, never as a pattern.
[[ $version =~ ^[0-9]+(\.[0-9]+){1,2}$ ]] ||
  fail "'$version' is not a MariaDB version (digits and dots, like 10.11.18 or 11.8)"
cache=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/sweepbench}
dest="$cache/mariadb-$version"
if [ -x "$dest/usr/sbin/mariadbd" ]; then
  echo "$dest/usr"
  exit 0
fi
# The traps before the temp directory: a signal right after mktemp must still remove it.
work=
trap 'rm -rf ${work:+"$work"} "$dest.partial"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)

# The package version ("1:10.11.18-0+deb12u1") whose upstream part is exactly $version. awk
# reads the whole listing: leaving early would end apt-cache with SIGPIPE.
listed() {
  apt-cache madison mariadb-server-core >"$work/madison" 2>/dev/null || true
  awk -v v="$version" '{ s = $3; sub(/^[0-9]+:/, "", s); sub(/-[^-]*$/, "", s)
    if (s == v && f == "") f = $3 } END { print f }' "$work/madison"
}
full=$(listed)
if [ -z "$full" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  full=$(listed)
fi
if [ -z "$full" ]; then
  rm -rf "$work"
  trap - EXIT
  exec "$(dirname "$0")/unpack-debian-mariadb.sh" "$version" "$cache"
fi
(cd "$work" && apt-get download -qq "mariadb-server-core=$full" "mariadb-client-core=$full" >/dev/null) ||
  fail "apt-get download mariadb-server-core=$full mariadb-client-core=$full failed (see above)"
mkdir -p "$dest.partial"
for deb in "$work"/*.deb; do
  dpkg -x "$deb" "$dest.partial" || fail "dpkg -x $deb failed"
done
[ -x "$dest.partial/usr/sbin/mariadbd" ] || fail "the packages of $full hold no usr/sbin/mariadbd"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest/usr"
