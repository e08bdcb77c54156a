#!/usr/bin/env bash
# Unpacks Debian's current MySQL server (mysql-server-core from unstable, MySQL 9.x) with every
# library it needs, including unstable's C library, into a cache directory, without installing
# anything; writes a wrapper that starts that mysqld through the unpacked dynamic loader, so it
# runs on this stable system. The tests use it as a real MySQL server (caching_sha2_password,
# the RSA key exchange, MySQL's TLS) on a machine whose own packages have only MariaDB.
# With "router" first it unpacks MySQL Router (mysql-router, from the same source) the same way,
# for sweeps whose proxy is { kind = "mysqlrouter" }.
#   Usage: scripts/unpack-mysql.sh [cache-dir]         prints the wrapper's path (<dir>/mysqld)
#          scripts/unpack-mysql.sh router [cache-dir]  prints <dir>/mysqlrouter
# Needs curl, xz, dpkg-deb and python3; downloads about 50 MB from deb.debian.org once.
# Any failure says why on stderr and exits non-zero (2).
set -euo pipefail
fail() { echo "unpack-mysql.sh: $*" >&2; exit 2; }
root_pkg=mysql-server-core
name=mysql
if [ "${1:-}" = router ]; then
  root_pkg=mysql-router
  name=mysql-router
  shift
fi
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/sweepbench}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"
# The traps before the temp directory: a signal right after mktemp must still remove it.
work=
trap 'rm -rf ${work:+"$work"}' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)

# Unstable's index changes daily: read it once a day, then reuse the unpacked tree.
index="$cache/sid-Packages"
if [ ! -s "$index" ] || [ -n "$(find "$index" -mmin +1440 2>/dev/null)" ]; then
  if curl -fsS -m 300 -o "$work/Packages.xz" "$mirror/dists/sid/main/binary-amd64/Packages.xz"; then
    xz -dc "$work/Packages.xz" >"$index.partial" && mv "$index.partial" "$index"
  elif [ ! -s "$index" ]; then
    fail "cannot read $mirror/dists/sid/main/binary-amd64/Packages.xz (is deb.debian.org reachable?)"
  fi
fi

# The root package and the closure of its dependencies (first alternative of each), minus
# what only its maintainer scripts use.
python3 - "$index" "$root_pkg" >"$work/list" <<'EOF' || fail "no $root_pkg in $index (see above)"
import sys
root = sys.argv[2]
blocks = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n\n")
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
skip = {"perl", "perl-base", "perl:any", "debconf", "debconf-2.0", "passwd", "systemd",
        "iproute2", "psmisc", "mysql-client", "mysql-common", "dpkg", "adduser", "libc-bin",
        "init-system-helpers"}
want, seen, out = [root], set(), []
while want:
    n = want.pop().split(":")[0]
    if n in seen or n in skip:
        continue
    seen.add(n)
    if n not in pkgs:
        if n in provides:
            want.append(provides[n])
            continue
        sys.exit(f"unstable's index has no package {n}")
    f = pkgs[n]
    out.append(f)
    for field in ("Pre-Depends", "Depends"):
        for alt in f.get(field, "").split(","):
            alt = alt.strip()
            if alt:
                want.append(alt.split("|")[0].strip().split(" ")[0])
print(pkgs[root]["Version"])
for f in out:
    print(f["Filename"])
EOF
version=$(head -1 "$work/list")
dest="$cache/$name-$version"
wrapper=mysqld
[ "$name" = mysql-router ] && wrapper=mysqlrouter
if [ -x "$dest/$wrapper" ]; then
  echo "$dest/$wrapper"
  exit 0
fi
mkdir -p "$work/debs"
tail -n +2 "$work/list" >"$work/files"
(cd "$work/debs" && xargs -P4 -I{} curl -fsS -m 600 -O "$mirror/{}") <"$work/files" ||
  fail "downloading $root_pkg $version's packages from $mirror failed (see above)"
rm -rf "$dest.partial"
trap 'rm -rf "$work" "$dest.partial"' EXIT
mkdir -p "$dest.partial"
for deb in "$work"/debs/*.deb; do
  dpkg-deb -x "$deb" "$dest.partial/root" || fail "dpkg-deb -x $deb failed"
done
if [ "$wrapper" = mysqlrouter ]; then
  cat >"$dest.partial/mysqlrouter" <<EOF
#!/bin/sh
# MySQL Router $version from Debian unstable, run through its own C library (unpacked, not
# installed); its plugins are in \$root/usr/lib/mysqlrouter/plugin (plugin_folder).
root="\$(dirname "\$0")/root"
lib="\$root/usr/lib/x86_64-linux-gnu"
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib:\$root/usr/lib/mysql-router:\$root/usr/lib/mysqlrouter/private" \\
  "\$root/usr/bin/mysqlrouter" "\$@"
EOF
  chmod +x "$dest.partial/mysqlrouter"
  "$dest.partial/mysqlrouter" --version >/dev/null ||
    fail "the unpacked mysqlrouter does not start (its --version failed, see above)"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
  echo "$dest/mysqlrouter"
  exit 0
fi
cat >"$dest.partial/mysqld" <<EOF
#!/bin/sh
# MySQL $version from Debian unstable, run through its own C library (unpacked, not installed).
root="\$(dirname "\$0")/root"
lib="\$root/usr/lib/x86_64-linux-gnu"
# mysqld reads --no-defaults / --defaults-file only as its first argument.
first=
case "\${1:-}" in --no-defaults|--defaults-file=*|--defaults-extra-file=*) first=\$1; shift ;; esac
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "\$root/usr/sbin/mysqld" \$first \\
  --basedir="\$root/usr" --lc-messages-dir="\$root/usr/share/mysql" \\
  --plugin-dir="\$root/usr/lib/mysql/plugin" "\$@"
EOF
chmod +x "$dest.partial/mysqld"
"$dest.partial/mysqld" --no-defaults --version >/dev/null ||
  fail "the unpacked mysqld does not start (its --version failed, see above)"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest/mysqld"
