//! The unpack scripts against fake package indexes, without the network: a version is taken
//! only as digits and dots and matched as a string, a long listing does not end them with
//! SIGPIPE, every failure says why and exits non-zero, and a signal leaves no temp directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A real .deb (dpkg-deb --build) of `package` holding a usr/sbin/mariadbd that prints
/// `version`, as the server's packages do.
fn deb(dir: &Path, package: &str, version: &str) -> PathBuf {
    let root = dir.join(format!("{package}-root"));
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/sbin")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        format!("Package: {package}\nVersion: {version}\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n"),
    )
    .unwrap();
    if package == "mariadb-server-core" {
        executable(
            &root.join("usr/sbin/mariadbd"),
            &format!("#!/bin/sh\necho 'mariadbd  Ver {version}'\n"),
        );
    }
    let out = dir.join(format!("{package}_{version}_amd64.deb"));
    let o = Command::new("dpkg-deb")
        .args(["--build", "--root-owner-group"])
        .arg(&root)
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    out
}

/// A PATH whose apt-cache lists `madison` (then a long tail of other packages' lines) and
/// whose apt-get downloads the debs of `debs`; the rest of PATH as it is.
struct FakeApt {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    cache: PathBuf,
    tmp: PathBuf,
}

fn fake_apt(madison: &[&str], debs: &Path) -> FakeApt {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let listing = dir.path().join("madison");
    let mut lines: Vec<String> = madison
        .iter()
        .map(|v| format!("mariadb-server-core | {v} | http://deb.example/debian bookworm/main amd64 Packages"))
        .collect();
    // Far more than a pipe holds: a reader that stops early kills the writer.
    lines.extend((0..20000).map(|i| format!("mariadb-server-core | 1:9.{i}.0-1 | old")));
    std::fs::write(&listing, lines.join("\n") + "\n").unwrap();
    executable(
        &bin.join("apt-cache"),
        &format!("#!/bin/sh\ncat '{}'\n", listing.display()),
    );
    executable(
        &bin.join("apt-get"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = download ] || exit 0\nshift; [ \"$1\" = -qq ] && shift\nfor p in \"$@\"; do cp '{}'/\"$(echo \"$p\" | cut -d= -f1)\"_*.deb . || exit 100; done\n",
            debs.display()
        ),
    );
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    FakeApt {
        cache: dir.path().join("cache"),
        tmp,
        bin,
        _dir: dir,
    }
}

fn unpack(apt: &FakeApt, version: &str) -> Output {
    Command::new(script("unpack-mariadb.sh"))
        .arg(version)
        .arg(&apt.cache)
        .env(
            "PATH",
            format!("{}:{}", apt.bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("TMPDIR", &apt.tmp)
        // The Debian fallback reads this "mirror": nothing there, and no network.
        .env("DEBIAN_MIRROR", format!("file://{}", apt.tmp.display()))
        .output()
        .unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_listed_version_is_unpacked_under_its_own_name_every_time() {
    let debs = tempfile::tempdir().unwrap();
    deb(debs.path(), "mariadb-server-core", "1:10.11.19-0+deb12u1");
    deb(debs.path(), "mariadb-client-core", "1:10.11.19-0+deb12u1");
    let apt = fake_apt(
        &["1:10.11.19-0+deb12u1", "1:10.11.6-0+deb12u1"],
        debs.path(),
    );
    // Tried several times: the old pipeline died of SIGPIPE in about half of the tries.
    for _ in 0..3 {
        let o = unpack(&apt, "10.11.19");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let basedir = apt.cache.join("mariadb-10.11.19/usr");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            basedir.to_str().unwrap()
        );
        let v = Command::new(basedir.join("sbin/mariadbd"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&v.stdout).trim(),
            "mariadbd  Ver 1:10.11.19-0+deb12u1"
        );
        std::fs::remove_dir_all(apt.cache.join("mariadb-10.11.19")).unwrap();
    }
    assert!(entries(&apt.tmp).is_empty(), "{:?}", entries(&apt.tmp));
}

#[test]
fn a_version_is_digits_and_dots_matched_as_a_string() {
    let debs = tempfile::tempdir().unwrap();
    let apt = fake_apt(&["1:10.11.19-0+deb12u1"], debs.path());
    for bad in [
        ".*",
        "10.11.1.",
        "(",
        "10",
        "10.11.19-0",
        "",
        "10.11.19.1.2",
    ] {
        let o = unpack(&apt, bad);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("is not a MariaDB version") || err.contains("usage:"),
            "{bad}: {}",
            text(&o)
        );
    }
    // 10.11.1 is a version, but not 10.11.19's prefix: the listing has no 10.11.1, and the
    // Debian fallback's (empty) mirror has none either, which it says.
    let o = unpack(&apt, "10.11.1");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no mariadb-server-core 10.11.1 in"),
        "{}",
        text(&o)
    );
    assert!(!apt.cache.join("mariadb-10.11.1").exists());
    assert!(entries(&apt.tmp).is_empty(), "{:?}", entries(&apt.tmp));
}

#[test]
fn a_failed_download_says_why_and_leaves_nothing() {
    // The listing has the version, the "archive" has no package for it.
    let debs = tempfile::tempdir().unwrap();
    let apt = fake_apt(&["1:10.11.19-0+deb12u1"], debs.path());
    let o = unpack(&apt, "10.11.19");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("apt-get download mariadb-server-core=1:10.11.19-0+deb12u1"),
        "{}",
        text(&o)
    );
    assert!(!apt.cache.join("mariadb-10.11.19").exists());
    assert!(!apt.cache.join("mariadb-10.11.19.partial").exists());
    assert!(entries(&apt.tmp).is_empty(), "{:?}", entries(&apt.tmp));
}

/// SIGTERM (a `timeout`) while apt-get downloads: the script ends with 143 and its temp
/// directory goes with it.
#[test]
fn a_signal_leaves_no_temp_directory() {
    let debs = tempfile::tempdir().unwrap();
    let apt = fake_apt(&["1:10.11.19-0+deb12u1"], debs.path());
    executable(
        &apt.bin.join("apt-get"),
        "#!/bin/sh\n[ \"$1\" = download ] || exit 0\nsleep 30\n",
    );
    let mut child = Command::new(script("unpack-mariadb.sh"))
        .args(["10.11.19"])
        .arg(&apt.cache)
        .env(
            "PATH",
            format!("{}:{}", apt.bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("TMPDIR", &apt.tmp)
        .spawn()
        .unwrap();
    // Until the download has started (the temp directory exists).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while entries(&apt.tmp).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(entries(&apt.tmp).len(), 1);
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(entries(&apt.tmp).is_empty(), "{:?}", entries(&apt.tmp));
}

/// A fake Debian mirror (file://) with a Packages index of `packages`.
fn mirror(dir: &Path, suite: &str, packages: &[(&str, &str, &Path)]) {
    let index_dir = dir.join(format!("dists/{suite}/main/binary-amd64"));
    std::fs::create_dir_all(&index_dir).unwrap();
    std::fs::create_dir_all(dir.join("pool")).unwrap();
    let mut index = String::new();
    for (name, version, deb) in packages {
        let file = format!("pool/{}", deb.file_name().unwrap().to_string_lossy());
        std::fs::copy(deb, dir.join(&file)).unwrap();
        index.push_str(&format!(
            "Package: {name}\nVersion: {version}\nArchitecture: amd64\nFilename: {file}\n\n"
        ));
    }
    std::fs::write(index_dir.join("Packages"), index).unwrap();
    let o = Command::new("xz")
        .arg("-kf")
        .arg(index_dir.join("Packages"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

fn debian(version: &str, mirror: &Path, cache: &Path, tmp: &Path) -> Output {
    Command::new(script("unpack-debian-mariadb.sh"))
        .args([version])
        .arg(cache)
        .env("DEBIAN_MIRROR", format!("file://{}", mirror.display()))
        .env("DEBIAN_SUITES", "trixie")
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

#[test]
fn debians_own_index_is_matched_exactly_and_unpacked() {
    let d = tempfile::tempdir().unwrap();
    let debs = d.path().join("debs");
    std::fs::create_dir(&debs).unwrap();
    let server = deb(&debs, "mariadb-server-core", "1:11.8.9-0+deb13u1");
    let client = deb(&debs, "mariadb-client-core", "1:11.8.9-0+deb13u1");
    let m = d.path().join("mirror");
    mirror(
        &m,
        "trixie",
        &[
            ("mariadb-server-core", "1:11.8.9-0+deb13u1", &server),
            ("mariadb-client-core", "1:11.8.9-0+deb13u1", &client),
        ],
    );
    let (cache, tmp) = (d.path().join("cache"), d.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    for other in ["11.8", "11.8.1", "1.8.9"] {
        let o = debian(other, &m, &cache, &tmp);
        assert_eq!(o.status.code(), Some(2), "{other}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains(&format!("no mariadb-server-core {other} in")),
            "{other}: {}",
            text(&o)
        );
    }
    let o = debian("11.8.*", &m, &cache, &tmp);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a MariaDB version"));
    let o = debian("11.8.9", &m, &cache, &tmp);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let basedir = cache.join("mariadb-11.8.9/usr");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        basedir.to_str().unwrap()
    );
    assert!(basedir.join("sbin/mariadbd").is_file());
    // A package the index names but the mirror does not have: said, nothing left.
    std::fs::remove_file(m.join("pool").join(client.file_name().unwrap())).unwrap();
    std::fs::remove_dir_all(cache.join("mariadb-11.8.9")).unwrap();
    let o = debian("11.8.9", &m, &cache, &tmp);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("downloading the packages of MariaDB 11.8.9"),
        "{}",
        text(&o)
    );
    assert!(
        !cache.join("mariadb-11.8.9").exists() && !cache.join("mariadb-11.8.9.partial").exists()
    );
    assert!(entries(&tmp).is_empty(), "{:?}", entries(&tmp));
}

#[test]
fn unpack_mysql_says_why_it_cannot_read_the_index() {
    let d = tempfile::tempdir().unwrap();
    let (cache, tmp) = (d.path().join("cache"), d.path().join("tmp"));
    std::fs::create_dir(&tmp).unwrap();
    let o = Command::new(script("unpack-mysql.sh"))
        .arg(&cache)
        .env(
            "DEBIAN_MIRROR",
            format!("file://{}/nothing", d.path().display()),
        )
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unpack-mysql.sh: cannot read file://"),
        "{}",
        text(&o)
    );
    // An index without MySQL in it.
    let m = d.path().join("mirror");
    mirror(&m, "sid", &[]);
    let o = Command::new(script("unpack-mysql.sh"))
        .arg(&cache)
        .env("DEBIAN_MIRROR", format!("file://{}", m.display()))
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unpack-mysql.sh: no mysql-server-core in"),
        "{}",
        text(&o)
    );
    // The router, the same way: the one package it looked for named.
    let o = Command::new(script("unpack-mysql.sh"))
        .arg("router")
        .arg(&cache)
        .env("DEBIAN_MIRROR", format!("file://{}", m.display()))
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unpack-mysql.sh: no mysql-router in"),
        "{}",
        text(&o)
    );
    assert!(entries(&tmp).is_empty(), "{:?}", entries(&tmp));
}

/// scripts/client-bench.py's method on synthetic rounds with known truth (its `--selftest`):
/// its t quantiles are the tabled ones, A/A runs of six cells with a slot effect and a
/// drifting host decide nothing in at most 5 % of runs, and a 15 % difference is found.
#[test]
fn the_client_benchs_method_holds_its_false_alarm_rate_on_synthetic_rounds() {
    let out = Command::new("python3")
        .arg(script("client-bench.py"))
        .arg("--selftest")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.starts_with("selftest: A/A runs of 6 cells"), "{said}");
}
