#!/usr/bin/env bash
# MariaDB <version> from Debian's own package indexes (a release newer than this system, such
# as Debian 13's 11.8, or older, such as Debian 11's 10.5 — packaged then as
# mariadb-server-core-10.5), with every library it needs, that release's C library included,
# unpacked into <cache>/mariadb-<version>; each program under usr/bin and usr/sbin becomes a
# wrapper that starts the real one through the unpacked dynamic loader. Called by
# scripts/unpack-mariadb.sh for versions this machine's package lists do not hold.
#   Usage: scripts/unpack-debian-mariadb.sh <version> <cache-dir>     prints the basedir
# Any failure says why on stderr and exits non-zero (2).
set -euo pipefail
fail() { echo "unpack-debian-mariadb.sh: $*" >&2; exit 2; }
version=${1:-}
cache=${2:-}
[ -n "$version" ] && [ -n "$cache" ] || fail "usage: $0 <version> <cache-dir>"
[[ $version =~ ^[0-9]+(\.[0-9]+){1,2}$ ]] ||
  fail "'$version' is not a MariaDB version (digits and dots, like 11.8.9)"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
dest="$cache/mariadb-$version"
if [ -x "$dest/usr/sbin/mariadbd" ]; then
  echo "$dest/usr"
  exit 0
fi
mkdir -p "$cache"
# The traps before the temp directory: a signal right after mktemp must still remove it.
work=
trap 'rm -rf ${work:+"$work"} "$dest.partial"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)

found=
for suite in ${DEBIAN_SUITES:-trixie sid bullseye}; do
  # An index is read once a day, then reused.
  index="$cache/$suite-Packages"
  if [ ! -s "$index" ] || [ -n "$(find "$index" -mmin +1440 2>/dev/null)" ]; then
    if curl -fsS -m 300 -o "$work/Packages.xz" "$mirror/dists/$suite/main/binary-amd64/Packages.xz"; then
      xz -dc "$work/Packages.xz" >"$index.partial" && mv "$index.partial" "$index"
    elif [ ! -s "$index" ]; then
      echo "cannot read $mirror/dists/$suite/main/binary-amd64/Packages.xz (is deb.debian.org reachable?)" >&2
      continue
    fi
  fi
  # mariadb-server-core and mariadb-client-core at <version>, and the closure of their
  # dependencies (first alternative of each), minus what only maintainer scripts use.
  if python3 - "$index" "$version" >"$work/list" <<'PY'
import sys
blocks = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n\n")
version = sys.argv[2]
pkgs, provides = {}, {}
for b in blocks:
    f = {}
    for line in b.split("\n"):
        if ": " in line and not line.startswith(" "):
            k, v = line.split(": ", 1)
            f[k] = v
    if "Package" not in f or f.get("Architecture") not in ("amd64", "all"):
        continue
    pkgs[f["Package"]] = f
    for p in f.get("Provides", "").split(","):
        p = p.strip().split(" ")[0]
        if p:
            provides.setdefault(p, f["Package"])
# Older releases put the major version in the name (Debian 11: mariadb-server-core-10.5).
major = ".".join(version.split(".")[:2])
names = next(([s, c] for s, c in (("mariadb-server-core", "mariadb-client-core"),
                                  ("mariadb-server-core-" + major, "mariadb-client-core-" + major))
              if s in pkgs and c in pkgs), None)
core = pkgs[names[0]] if names else None
upstream = core["Version"].split(":")[-1].split("+")[0].split("-")[0] if core else ""
if upstream != version:
    sys.exit(1)
skip = {"perl", "perl-base", "perl:any", "debconf", "debconf-2.0", "passwd", "systemd",
        "iproute2", "psmisc", "mysql-common", "mariadb-common", "dpkg", "adduser", "libc-bin",
        "init-system-helpers", "lsb-base", "sysvinit-utils"}
want, seen, out = list(names), set(), []
while want:
    n = want.pop().split(":")[0]
    if n in seen or n in skip:
        continue
    seen.add(n)
    if n not in pkgs:
        if n in provides:
            want.append(provides[n])
            continue
        sys.exit(f"the index has no package {n}")
    f = pkgs[n]
    out.append(f)
    for field in ("Pre-Depends", "Depends"):
        for alt in f.get(field, "").split(","):
            alt = alt.strip()
            if alt:
                want.append(alt.split("|")[0].strip().split(" ")[0])
for f in out:
    print(f["Filename"])
PY
  then
    found=$suite
    break
  fi
done
if [ -z "$found" ]; then
  echo "no mariadb-server-core $version in this machine's package lists (apt-cache madison mariadb-server-core) nor in Debian's ${DEBIAN_SUITES:-trixie sid bullseye} (each release keeps only its newest: Debian 11 has 10.5.23, Debian 13 11.8's newest)" >&2
  exit 2
fi
mkdir -p "$work/debs"
(cd "$work/debs" && xargs -P4 -I{} curl -fsS -m 600 -O "$mirror/{}") <"$work/list" ||
  fail "downloading the packages of MariaDB $version from $mirror failed (see above)"
rm -rf "$dest.partial"
mkdir -p "$dest.partial"
for deb in "$work"/debs/*.deb; do
  dpkg-deb -x "$deb" "$dest.partial" || fail "dpkg-deb -x $deb failed"
done
# A release before merged /usr (Debian 11) puts the C library and the loader in lib/: merged
# into usr/lib, so the wrappers find every library in one place.
if [ -d "$dest.partial/lib" ] && [ ! -L "$dest.partial/lib" ]; then
  mkdir -p "$dest.partial/usr/lib"
  cp -a "$dest.partial/lib/." "$dest.partial/usr/lib/"
  rm -rf "$dest.partial/lib"
  ln -s usr/lib "$dest.partial/lib"
fi
# Every program becomes a wrapper that runs the real one (kept in usr/libexec/real) through
# the unpacked loader and libraries; scripts (mariadb-install-db) stay as they are and call
# the wrappers.
real="$dest.partial/usr/libexec/real"
mkdir -p "$real"
for f in "$dest.partial"/usr/bin/* "$dest.partial"/usr/sbin/*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  head -c 4 "$f" | grep -q 'ELF' || continue
  name=$(basename "$f")
  mv "$f" "$real/$name"
  extra=
  [ "$name" = mariadbd ] && extra='--plugin-dir="$usr/lib/mysql/plugin"'
  cat >"$f" <<WRAP
#!/bin/sh
# MariaDB $version from Debian $found, run through its own C library (unpacked, not installed).
usr="\$(cd "\$(dirname "\$0")/.." && pwd)"
lib="\$usr/lib/x86_64-linux-gnu"
WRAP
  if [ -n "$extra" ]; then
    cat >>"$f" <<WRAP
# mariadbd reads --no-defaults / --defaults-file only as its first argument.
first=
case "\${1:-}" in --no-defaults|--defaults-file=*|--defaults-extra-file=*|--print-defaults) first=\$1; shift ;; esac
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "\$usr/libexec/real/$name" \$first $extra "\$@"
WRAP
  else
    cat >>"$f" <<WRAP
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "\$usr/libexec/real/$name" "\$@"
WRAP
  fi
  chmod +x "$f"
done
# Symlinks to programs (mysqld → mariadbd) keep pointing at the wrappers.
"$dest.partial/usr/sbin/mariadbd" --no-defaults --version >/dev/null ||
  fail "the unpacked mariadbd does not start (its --version failed, see above)"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest/usr"
