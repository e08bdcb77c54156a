//! TLS against a real MariaDB configured with certificates made here: a `REQUIRE SSL` user
//! prepares and runs through `bench --mysql-ssl=on`, is refused without TLS, VERIFY_CA takes
//! the right CA and refuses a wrong one, and a sweep target with `ssl-mode=REQUIRED` runs
//! without its password reaching the results.

mod common;
use common::text;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

struct Pki {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    other_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn ca() -> (rcgen::Certificate, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    (p.self_signed(&key).unwrap(), key)
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let (ca_cert, ca_key) = ca();
    let (other, _) = ca();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
    let put = |name: &str, pem: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, pem).unwrap();
        p
    };
    Pki {
        ca: put("ca.pem", ca_cert.pem()),
        other_ca: put("other-ca.pem", other.pem()),
        cert: put("server-cert.pem", cert.pem()),
        key: put("server-key.pem", key.serialize_pem()),
        _dir: dir,
    }
}

fn server(p: &Pki) -> ManagedServer {
    let arg = |k: &str, v: &Path| format!("--{k}={}", v.display());
    let s = ManagedServer::start(&ServerSpec {
        options: vec![
            arg("ssl-ca", &p.ca),
            arg("ssl-cert", &p.cert),
            arg("ssl-key", &p.key),
        ],
        ..ServerSpec::default()
    })
    .unwrap();
    exec_root(
        &s,
        &[
            "CREATE USER 'tlsu'@'127.0.0.1' IDENTIFIED BY 'tls pw' REQUIRE SSL",
            "CREATE DATABASE tlsdb",
            "GRANT ALL ON tlsdb.* TO 'tlsu'@'127.0.0.1'",
        ],
    )
    .unwrap();
    s
}

fn bench(s: &ManagedServer, words: &str) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .arg("bench")
        .args(words.split_whitespace())
        .args([
            "--mysql-host=127.0.0.1".to_string(),
            format!("--mysql-port={}", s.port()),
            "--mysql-user=tlsu".into(),
            "--mysql-password=tls pw".into(),
            "--mysql-db=tlsdb".into(),
            "--table-size=200".into(),
        ])
        .output()
        .unwrap()
}

#[test]
fn a_require_ssl_user_runs_over_tls_and_the_ca_is_checked() {
    let p = pki();
    let s = server(&p);
    let out = bench(&s, "oltp_point_select prepare --mysql-ssl=on");
    assert!(out.status.success(), "{}", text(&out));
    let out = bench(&s, "oltp_point_select run --mysql-ssl=on --time=1");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("transactions:"), "{}", text(&out));

    let out = bench(&s, "oltp_point_select run --time=1");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("TLS"),
        "the refusal names TLS: {}",
        text(&out)
    );

    let ok = format!(
        "oltp_point_select run --time=1 --mysql-ssl=VERIFY_CA --mysql-ssl-ca={}",
        p.ca.display()
    );
    let out = bench(&s, &ok);
    assert!(out.status.success(), "{}", text(&out));
    let ident = format!(
        "oltp_point_select run --time=1 --mysql-ssl=VERIFY_IDENTITY --mysql-ssl-ca={}",
        p.ca.display()
    );
    let out = bench(&s, &ident);
    assert!(out.status.success(), "{}", text(&out));

    let wrong = format!(
        "oltp_point_select run --time=1 --mysql-ssl=VERIFY_CA --mysql-ssl-ca={}",
        p.other_ca.display()
    );
    let out = bench(&s, &wrong);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("SSL connection error")
            && text(&out).to_lowercase().contains("certificate"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_sweep_target_with_ssl_mode_required_runs_and_keeps_its_password() {
    let p = pki();
    let s = server(&p);
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("tls.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"tls\"\n[data]\ntables = 1\ntable_size = 200\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"secure\"\nurl = \"mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode=REQUIRED\"\n",
            s.port()
        ),
    )
    .unwrap();
    let results = dir.path().join("results");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", sweep.to_str().unwrap(), "--results-dir"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let run = sweepbench::pipeline::sweep::latest_run(&results, "tls").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 1, "{csv}");
    for f in ["sweep.toml", "manifest.json", "points.csv", "report.md"] {
        let body = std::fs::read_to_string(run.join(f)).unwrap();
        assert!(
            !body.contains("tls pw") && !body.contains("tls%20pw"),
            "{f} holds the password"
        );
    }
}
