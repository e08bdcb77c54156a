//! TLS against a real MariaDB configured with certificates made here: a `REQUIRE SSL` user
//! prepares and runs through `bench --mysql-ssl=on`, is refused without TLS, VERIFY_CA takes
//! the right CA and refuses a wrong one, and a sweep target with `ssl-mode=REQUIRED` runs
//! without its password reaching the results, its manifest and report saying it used TLS.

mod common;
use common::text;
use common::tls::{pki, tls_server as server};
use sweepbench::pipeline::server::ManagedServer;

fn bench(s: &ManagedServer, words: &str) -> std::process::Output {
    bench_as(s, "tlsu", std::path::Path::new("."), words)
}

fn bench_as(
    s: &ManagedServer,
    user: &str,
    cwd: &std::path::Path,
    words: &str,
) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .current_dir(cwd)
        .arg("bench")
        .args(words.split_whitespace())
        .args([
            "--mysql-host=127.0.0.1".to_string(),
            format!("--mysql-port={}", s.port()),
            format!("--mysql-user={user}"),
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

/// As sysbench 1.0.20, `--mysql-ssl=on` presents client-cert.pem and client-key.pem from the
/// working directory: a REQUIRE X509 user logs in with them, and is refused without.
#[test]
fn ssl_on_presents_the_client_certificate_of_the_working_directory() {
    let p = pki();

    let s = server(&p);
    let out = bench_as(
        &s,
        "x509u",
        &p.client_dir,
        "oltp_point_select prepare --mysql-ssl=on",
    );
    assert!(out.status.success(), "{}", text(&out));
    let elsewhere = tempfile::tempdir().unwrap();
    let out = bench_as(
        &s,
        "x509u",
        elsewhere.path(),
        "oltp_point_select run --time=1 --mysql-ssl=on",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
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
    let run = |f: &std::path::Path| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .args(["run", f.to_str().unwrap(), "--results-dir"])
            .arg(&results)
            .output()
            .unwrap()
    };
    // Without ssl-mode the preflight refuses, saying how to ask for TLS.
    let plain = dir.path().join("plain.toml");
    std::fs::write(
        &plain,
        std::fs::read_to_string(&sweep)
            .unwrap()
            .replace("?ssl-mode=REQUIRED", ""),
    )
    .unwrap();
    let out = run(&plain);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("ssl-mode=REQUIRED"), "{}", text(&out));
    let out = run(&sweep);
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
    // Who reads the results sees the target was measured over TLS.
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("?ssl-mode=REQUIRED"), "{manifest}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("over TLS (ssl-mode=REQUIRED)"),
        "{}",
        &report[..report.len().min(600)]
    );
}

/// Runs openssl in `d`, failing the test with its output if it fails.
fn openssl(d: &std::path::Path, args: &str) {
    let out = std::process::Command::new("openssl")
        .current_dir(d)
        .args(args.split_whitespace())
        .output()
        .expect("openssl");
    assert!(out.status.success(), "openssl {args}: {}", text(&out));
}

/// A server whose certificate is X.509 version 1 (the MySQL manual's openssl recipe on
/// OpenSSL 3, and what MySQL 5.7 generates; made here by `openssl x509 -req` without
/// extensions). The workload's client takes it as the mysql client does: REQUIRED /
/// `--mysql-ssl=on` encrypted and unverified (a REQUIRE SSL user logs in), VERIFY_CA when
/// the CA signed it; it refuses another CA, an impostor CA of the same name (the
/// signature is checked, not the name), and VERIFY_IDENTITY (no subjectAltName), saying why.
/// A sweep takes it the same way: its administrative connections are the same client.
#[test]
fn a_version_1_certificate_is_taken_as_the_mysql_client_takes_it() {
    let p = pki();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(
        d,
        "req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=v1-ca",
    );
    openssl(d, "req -x509 -newkey rsa:2048 -nodes -keyout fake-key.pem -out fake-ca.pem -days 2 -subj /CN=v1-ca");
    openssl(
        d,
        "req -newkey rsa:2048 -nodes -keyout key.pem -out req.csr -subj /CN=localhost",
    );
    openssl(
        d,
        "x509 -req -in req.csr -CA ca.pem -CAkey ca-key.pem -set_serial 01 -out cert.pem -days 2",
    );
    let shown = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(d.join("cert.pem"))
        .output()
        .unwrap();
    assert!(
        text(&shown).contains("Version: 1 (0x0)"),
        "{}",
        text(&shown)
    );
    let s = common::tls::tls_server_with(&p, &d.join("cert.pem"), &d.join("key.pem"));
    let out = bench(&s, "oltp_point_select prepare --mysql-ssl=on");
    assert!(out.status.success(), "{}", text(&out));
    let out = bench(&s, "oltp_point_select run --time=1 --mysql-ssl=REQUIRED");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("transactions:"), "{}", text(&out));
    let mode = |m: &str, ca: &std::path::Path| {
        format!(
            "oltp_point_select run --time=1 --mysql-ssl={m} --mysql-ssl-ca={}",
            ca.display()
        )
    };
    let out = bench(&s, &mode("VERIFY_CA", &d.join("ca.pem")));
    assert!(out.status.success(), "{}", text(&out));
    for wrong in [d.join("fake-ca.pem"), p.other_ca.clone()] {
        let out = bench(&s, &mode("VERIFY_CA", &wrong));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            text(&out).contains("SSL connection error")
                && (text(&out).contains("BadSignature") || text(&out).contains("UnknownIssuer")),
            "{wrong:?}: {}",
            text(&out)
        );
    }
    let out = bench(&s, &mode("VERIFY_IDENTITY", &d.join("ca.pem")));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("X.509 version 1") && text(&out).contains("VERIFY_CA or REQUIRED"),
        "{}",
        text(&out)
    );
    let res = d.join("results");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["run", "--url"])
        .arg(format!(
            "mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode=REQUIRED",
            s.port()
        ))
        .args(["--threads", "1", "--duration", "1s", "--results-dir"])
        .arg(&res)
        .output()
        .unwrap();
    // A sweep's administrative connections take the version 1 certificate as the workload's
    // do: the REQUIRE SSL user prepares, sets nothing and measures over TLS.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("3 ok, 0 failed"), "{}", text(&out));
    let url = |m: &str, ca: &std::path::Path| {
        format!(
            "mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode={m}&ssl-ca={}",
            s.port(),
            ca.display()
        )
    };
    let (code, said) = check_url(&url("VERIFY_CA", &d.join("ca.pem")));
    assert_eq!(code, Some(0), "{said}");
    // Another CA of the same name: its signature is checked, not its name.
    let (code, said) = check_url(&url("VERIFY_CA", &d.join("fake-ca.pem")));
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("error 2026") && said.contains("BadSignature"),
        "{said}"
    );
    let (code, said) = check_url(&url("VERIFY_IDENTITY", &d.join("ca.pem")));
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("X.509 version 1") && said.contains("VERIFY_CA or REQUIRED"),
        "{said}"
    );
}

/// `--mysql-ssl-cipher` is obeyed: against a server that allows only TLS 1.2 with one
/// cipher, the client asked for that cipher (OpenSSL's name) runs, one asked for another is
/// refused at the handshake, and a name rustls does not know is refused before connecting
/// with the list of the ones it does.
#[test]
fn ssl_cipher_is_obeyed() {
    let p = pki();
    let arg = |k: &str, v: &std::path::Path| format!("--{k}={}", v.display());
    let s = ManagedServer::start(&sweepbench::pipeline::server::ServerSpec {
        options: vec![
            arg("ssl-ca", &p.ca),
            arg("ssl-cert", &p.cert),
            arg("ssl-key", &p.key),
            // rcgen's keys are ECDSA.
            "--ssl-cipher=ECDHE-ECDSA-AES256-GCM-SHA384".into(),
            "--tls-version=TLSv1.2".into(),
        ],
        ..Default::default()
    })
    .unwrap();
    let bench = |cmd: &str, cipher: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .args([
                "bench",
                "oltp_point_select",
                cmd,
                "--time=1",
                "--table-size=10",
            ])
            .args(["--mysql-ssl=on", &format!("--mysql-ssl-cipher={cipher}")])
            .args(common::conn_args(&s, "ciphers"))
            .output()
            .unwrap()
    };
    let run = |cipher: &str| bench("run", cipher);
    let out = bench("prepare", "ECDHE-ECDSA-AES256-GCM-SHA384");
    assert!(out.status.success(), "{}", text(&out));
    let out = run("ECDHE-ECDSA-AES256-GCM-SHA384");
    assert!(out.status.success(), "{}", text(&out));
    let out = run("ecdhe-ecdsa-aes128-gcm-sha256:TLS_AES_256_GCM_SHA384");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("error 2026"), "{}", text(&out));
    let out = run("RC4-MD5");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("'RC4-MD5' is not a cipher")
            && text(&out).contains("ECDHE-RSA-AES128-GCM-SHA256"),
        "{}",
        text(&out)
    );
}

/// The sysbench driver runs a TLS target over TLS: sysbench 1.0.20 finds the target's CA,
/// certificate and key where it reads them (./cacert.pem, ./client-cert.pem,
/// ./client-key.pem), and a REQUIRE SSL user's points run under both drivers; the links are
/// gone afterwards.
#[test]
fn the_sysbench_driver_runs_a_tls_target_over_tls() {
    let p = pki();
    let s = server(&p);
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("both.toml");
    let q = |f: &std::path::Path| f.display().to_string();
    std::fs::write(
        &sweep,
        format!(
            "name = \"both\"\n[data]\ntables = 1\ntable_size = 200\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndrivers = [\"native\", \"sysbench\"]\n[[targets]]\nname = \"secure\"\nurl = \"mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode=REQUIRED\"\nssl_ca = \"{}\"\nssl_cert = \"{}\"\nssl_key = \"{}\"\n",
            s.port(),
            q(&p.ca),
            q(&p.client_dir.join("client-cert.pem")),
            q(&p.client_dir.join("client-key.pem")),
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
    let run = sweepbench::pipeline::sweep::latest_run(&results, "both").unwrap();
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    assert_eq!(csv.matches(",ok,").count(), 2, "{csv}");
    assert!(csv.contains(",sysbench,"), "{csv}");
    let left: Vec<_> = std::fs::read_dir(&run)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".sysbench-tls"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `sweepbench check FILE` for one target URL: its exit code and what it said.
fn check_url(url: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.toml");
    std::fs::write(
        &f,
        format!("name = \"c\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"1s\"\nrepeats = 1\n[[targets]]\nname = \"t\"\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
        .args(["check", f.to_str().unwrap()])
        .output()
        .unwrap();
    (out.status.code(), text(&out))
}

/// VERIFY_CA checks the chain, not the name (#22 N21): a certificate the right CA signed for
/// db.example is taken at 127.0.0.1 by the preflight as by the workload, VERIFY_IDENTITY
/// refuses it for its name, and VERIFY_CA with another CA refuses it.
#[test]
fn verify_ca_takes_a_certificate_made_for_another_host() {
    let p = pki();
    let s = common::tls::tls_server_with(&p, &p.elsewhere_cert, &p.elsewhere_key);
    let url = |mode: &str, ca: &std::path::Path| {
        format!(
            "mysql://tlsu:tls%20pw@127.0.0.1:{}/tlsdb?ssl-mode={mode}&ssl-ca={}",
            s.port(),
            ca.display()
        )
    };
    let (code, said) = check_url(&url("VERIFY_CA", &p.ca));
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = check_url(&url("VERIFY_IDENTITY", &p.ca));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("db.example"), "{said}");
    let (code, said) = check_url(&url("VERIFY_CA", &p.other_ca));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("2026"), "{said}");
}

/// PREFERRED against a server without TLS connects without it, as the mysql client does
/// (#22 N20); REQUIRED is refused with TLS's remedy, not a generic one (N19); a CA file that
/// does not exist is named (N24).
#[test]
fn preferred_falls_back_to_plain_and_required_says_what_the_server_lacks() {
    let s = common::server();
    let base = format!("mysql://root@127.0.0.1:{}/prefdb", s.port());
    let (code, said) = check_url(&format!("{base}?ssl-mode=PREFERRED"));
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = check_url(&format!("{base}?ssl-mode=REQUIRED"));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("have_ssl"), "{said}");
    assert!(
        !said.contains("check the address, the user and the password"),
        "{said}"
    );
    let (code, said) = check_url(&format!(
        "{base}?ssl-mode=VERIFY_CA&ssl-ca=/nonexistent/ca.pem"
    ));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("/nonexistent/ca.pem"), "{said}");
}
