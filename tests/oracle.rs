//! mysql_async as the oracle of sweepbench's own MySQL client: against every real server the
//! tests start — this machine's MariaDB 10.11, Debian 13's MariaDB 11.8 and Debian's MySQL 9 —
//! every kind of administrative read sweepbench makes (the preflight's SELECTs, SHOW GRANTS,
//! SHOW GLOBAL VARIABLES and STATUS, information_schema, row counts, SHOW CREATE TABLE, a
//! table of NULLs, empty strings and binary values) is made by both clients and compared
//! value by value, NULL and '' kept apart; and each login (every auth plugin the server has,
//! a wrong password, TLS as REQUIRED, VERIFY_CA and VERIFY_IDENTITY, none where the user
//! requires it) succeeds with both or fails with both with the same server code, and a CA
//! that did not sign the server's certificate is refused by both. mysql_async has no
//! PREFERRED mode, so that one is not compared. A comparison that lets a NULL read as '' through is shown to
//! fail. Not compared: X.509 version 1 certificates (webpki, under mysql_async's rustls,
//! cannot read them; tests/tls.rs covers ours).

mod common;
use common::mysql::Mysql;
use common::*;
use mysql_async::prelude::Queryable;
use std::collections::BTreeMap;
use sweepbench::engine::admin::Admin;
use sweepbench::engine::config::{ConnOptions, SslMode, TlsOptions};
use sweepbench::pipeline::server::{managed::exec_root, ManagedServer, ServerSpec};

type Rows = Vec<Vec<Option<String>>>;

/// How a login asks for TLS, in the mysql client's modes that both clients have
/// (mysql_async has no PREFERRED).
#[derive(Clone, Debug)]
enum Tls {
    Off,
    Required,
    VerifyCa(std::path::PathBuf),
    VerifyIdentity(std::path::PathBuf),
}

/// A login to try with both clients.
#[derive(Clone)]
struct Who {
    port: u16,
    user: &'static str,
    password: &'static str,
    db: &'static str,
    tls: Tls,
}

const PW: &str = "o pw'\"\\";

async fn ours(w: &Who, sql: &[&str]) -> Result<Vec<Rows>, u16> {
    let c = ConnOptions {
        hosts: vec!["127.0.0.1".into()],
        ports: vec![w.port],
        user: w.user.into(),
        password: Some(w.password.into()),
        db: w.db.into(),
        tcp: true,
        tls: match &w.tls {
            Tls::Off => TlsOptions::default(),
            Tls::Required => TlsOptions {
                mode: SslMode::Required,
                ..Default::default()
            },
            Tls::VerifyCa(ca) | Tls::VerifyIdentity(ca) => TlsOptions {
                mode: if matches!(w.tls, Tls::VerifyCa(_)) {
                    SslMode::VerifyCa
                } else {
                    SslMode::VerifyIdentity
                },
                ca: Some(ca.clone()),
                ..Default::default()
            },
        },
        ..Default::default()
    };
    let mut a = Admin::open(&c, 0)
        .await
        .map_err(|e| e.code().unwrap_or(0))?;
    let mut out = Vec::new();
    for q in sql {
        out.push(a.rows(q).await.map_err(|e| e.code().unwrap_or(0))?);
    }
    a.close().await;
    Ok(out)
}

async fn theirs(w: &Who, sql: &[&str]) -> Result<Vec<Rows>, u16> {
    let code = |e: mysql_async::Error| match e {
        mysql_async::Error::Server(s) => s.code,
        other => panic!("mysql_async failed without a server error: {other}"),
    };
    let mut b = mysql_async::OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(w.port)
        .user(Some(w.user))
        .pass(Some(w.password))
        .prefer_socket(false);
    if !w.db.is_empty() {
        b = b.db_name(Some(w.db));
    }
    let ssl = mysql_async::SslOpts::default();
    match &w.tls {
        Tls::Off => {}
        Tls::Required => b = b.ssl_opts(ssl.with_danger_accept_invalid_certs(true)),
        Tls::VerifyCa(ca) => {
            b = b.ssl_opts(
                ssl.with_root_certs(vec![ca.clone().into()])
                    .with_danger_skip_domain_validation(true),
            )
        }
        Tls::VerifyIdentity(ca) => b = b.ssl_opts(ssl.with_root_certs(vec![ca.clone().into()])),
    }
    let mut c = mysql_async::Conn::new(b).await.map_err(code)?;
    let mut out = Vec::new();
    for q in sql {
        let rows: Vec<mysql_async::Row> = c.query(*q).await.map_err(code)?;
        out.push(
            rows.into_iter()
                .map(|r| {
                    r.unwrap()
                        .into_iter()
                        .map(|v| match v {
                            mysql_async::Value::NULL => None,
                            mysql_async::Value::Bytes(b) => {
                                Some(String::from_utf8_lossy(&b).into_owned())
                            }
                            other => panic!("a text result gave {other:?}"),
                        })
                        .collect()
                })
                .collect(),
        );
    }
    let _ = c.disconnect().await;
    Ok(out)
}

/// Where two results differ, cell by cell (NULL is not '').
fn differences(q: &str, a: &Rows, b: &Rows) -> Vec<String> {
    let mut d = Vec::new();
    if a.len() != b.len() {
        d.push(format!("{q}: {} rows against {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            d.push(format!("{q}: row {i}: {x:?} against {y:?}"));
        }
    }
    d
}

const SETUP: &[&str] = &[
    "DROP DATABASE IF EXISTS oracle",
    "CREATE DATABASE oracle",
    "CREATE TABLE oracle.t (id INT PRIMARY KEY, s VARCHAR(20) NULL, b VARBINARY(8) NULL, n INT NULL)",
    "INSERT INTO oracle.t VALUES (1, '', X'', NULL), (2, NULL, NULL, 0), (3, 'x', X'41FF', -7), (4, 'NULL', 'é', NULL)",
];

/// Reads whose answer does not change between two connections.
const READS: &[&str] = &[
    "SELECT VERSION()",
    "SELECT @@max_connections",
    "SELECT @@max_user_connections",
    "SELECT @@max_prepared_stmt_count",
    "SELECT @@datadir",
    "SELECT @@log_bin",
    "SHOW GRANTS",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'oracle' AND table_name LIKE 't%'",
    "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'oracle'",
    "SELECT COUNT(*) FROM `oracle`.`t`",
    "SELECT COUNT(*), SUM(LENGTH(s)) FROM oracle.t",
    "SELECT * FROM oracle.t ORDER BY id",
    "SELECT NULL, '', 'NULL', 0, -1.5, X'00FF', 'é中', 1e300",
    "SELECT * FROM information_schema.columns WHERE table_schema = 'oracle' ORDER BY ordinal_position",
    "SHOW CREATE TABLE oracle.t",
    "SELECT 1 FROM oracle.t WHERE 1 = 0",
];

/// Both clients read everything in READS alike, and SHOW GLOBAL VARIABLES / STATUS alike
/// wherever the value held still between two of our reads around theirs.
async fn reads_agree(w: &Who) {
    let a = ours(w, READS).await.expect("our reads");
    let b = theirs(w, READS).await.expect("mysql_async's reads");
    let d: Vec<String> = READS
        .iter()
        .zip(a.iter().zip(&b))
        .flat_map(|(q, (x, y))| differences(q, x, y))
        .collect();
    assert!(d.is_empty(), "{}", d.join("\n"));
    // The table's NULLs and empty strings came through as themselves.
    assert_eq!(a[11][0][1], Some(String::new()));
    assert_eq!(a[11][1][1], None);
    assert_eq!(a[11][3][1].as_deref(), Some("NULL"));

    for (q, at_least) in [("SHOW GLOBAL VARIABLES", 300), ("SHOW GLOBAL STATUS", 100)] {
        // A gauge (Threads_connected, Memory_used) can move while theirs reads and come back
        // before ours reads again, when another test uses the same server: a name is a
        // difference only when it differs in each of three tries; a client that misreads a
        // value misreads it every time.
        let mut differing: Option<Vec<String>> = None;
        for _ in 0..3 {
            let (names_ok, compared, now) = values_agree(w, q).await;
            assert!(names_ok, "{q}: the same names");
            assert!(compared >= at_least, "{q}: {compared} values held still");
            differing = Some(match differing {
                None => now,
                Some(before) => before.into_iter().filter(|n| now.contains(n)).collect(),
            });
            if differing.as_ref().is_some_and(|d| d.is_empty()) {
                break;
            }
        }
        assert_eq!(differing, Some(Vec::new()), "{q}: values read differently");
    }
}

/// One try at `q`'s name-value pairs: ours, theirs, ours again. Whether the names agree, how
/// many values held still between our two reads, and those of them theirs read otherwise.
async fn values_agree(w: &Who, q: &str) -> (bool, usize, Vec<String>) {
    let pairs = |r: &Rows| -> BTreeMap<String, Option<String>> {
        r.iter()
            .map(|row| (row[0].clone().unwrap_or_default(), row[1].clone()))
            .collect()
    };
    let before = pairs(&ours(w, &[q]).await.unwrap()[0]);
    let other = pairs(&theirs(w, &[q]).await.unwrap()[0]);
    let after = pairs(&ours(w, &[q]).await.unwrap()[0]);
    let names_ok = before.keys().eq(other.keys());
    let mut compared = 0;
    let mut differing = Vec::new();
    for (name, v) in &before {
        if after.get(name) == Some(v) {
            compared += 1;
            if other.get(name) != Some(v) {
                differing.push(name.clone());
            }
        }
    }
    (names_ok, compared, differing)
}

/// Each login succeeds with both clients or fails with both, with the same code.
async fn logins_agree(whos: &[Who]) {
    for w in whos {
        let a = ours(w, &["SELECT CURRENT_USER()"]).await;
        let b = theirs(w, &["SELECT CURRENT_USER()"]).await;
        assert_eq!(a, b, "{}@{} (tls {:?})", w.user, w.port, w.tls);
    }
}

fn who(port: u16, user: &'static str, password: &'static str) -> Who {
    Who {
        port,
        user,
        password,
        db: "",
        tls: Tls::Off,
    }
}

/// `ed25519`: the server has MariaDB's auth_ed25519 plugin to install (the 11.8 unpacked from
/// Debian 13's server-core package does not: it ships in mariadb-plugin-... of its own).
async fn mariadb(s: &ManagedServer, ed25519: bool) {
    let quote = sweepbench::engine::admin::quote;
    exec_root(s, SETUP).unwrap();
    let mut users = vec![
        "DROP USER IF EXISTS 'onative'@'127.0.0.1', 'oed'@'127.0.0.1'".to_string(),
        format!(
            "CREATE USER 'onative'@'127.0.0.1' IDENTIFIED BY {}",
            quote(PW)
        ),
        "GRANT ALL ON oracle.* TO 'onative'@'127.0.0.1'".into(),
    ];
    if ed25519 {
        users.extend([
            "INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'".to_string(),
            format!(
                "CREATE USER 'oed'@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD({})",
                quote(PW)
            ),
            "GRANT SELECT ON oracle.* TO 'oed'@'127.0.0.1'".into(),
        ]);
    }
    exec_root(s, &users.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    let port = s.port();
    reads_agree(&Who {
        db: "oracle",
        ..who(port, "onative", PW)
    })
    .await;
    let mut whos = vec![
        who(port, "onative", PW),
        who(port, "onative", "wrong"),
        who(port, "nobody", PW),
        Who {
            db: "nosuchdb",
            ..who(port, "onative", PW)
        },
    ];
    if ed25519 {
        whos.extend([who(port, "oed", PW), who(port, "oed", "wrong")]);
    }
    logins_agree(&whos).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_10_11_reads_and_logins_agree_with_mysql_async() {
    mariadb(server(), true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_11_8_reads_and_logins_agree_with_mysql_async() {
    let s = ManagedServer::start(&ServerSpec {
        basedir: Some(unpacked_mariadb("11.8.9")),
        ..ServerSpec::default()
    })
    .unwrap();
    mariadb(&s, false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_over_tls_logins_agree_with_mysql_async() {
    let p = common::tls::pki();
    let s = common::tls::tls_server(&p);
    let with = |tls: Tls, user, password| Who {
        tls,
        ..who(s.port(), user, password)
    };
    logins_agree(&[
        with(Tls::Required, "tlsu", "tls pw"),
        with(Tls::Required, "tlsu", "wrong"),
        with(Tls::Off, "tlsu", "tls pw"),
        with(Tls::VerifyCa(p.ca.clone()), "tlsu", "tls pw"),
        with(Tls::VerifyIdentity(p.ca.clone()), "tlsu", "tls pw"),
    ])
    .await;
    // A CA that did not sign the server's certificate: both refuse before any login (no
    // server code to compare: each client's own TLS error).
    let wrong = with(Tls::VerifyCa(p.other_ca.clone()), "tlsu", "tls pw");
    assert!(ours(&wrong, &["SELECT 1"]).await.is_err());
    let b = mysql_async::OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(s.port())
        .user(Some("tlsu"))
        .pass(Some("tls pw"))
        .prefer_socket(false)
        .ssl_opts(
            mysql_async::SslOpts::default()
                .with_root_certs(vec![p.other_ca.clone().into()])
                .with_danger_skip_domain_validation(true),
        );
    assert!(mysql_async::Conn::new(b).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn mysql_9_reads_and_logins_agree_with_mysql_async() {
    let m = Mysql::start();
    let q = |s: &str| sweepbench::engine::admin::quote(s);
    m.root(SETUP);
    m.root(&[
        &format!(
            "CREATE USER 'ocs'@'%' IDENTIFIED WITH caching_sha2_password BY {}",
            q(PW)
        ),
        &format!(
            "CREATE USER 'otls'@'%' IDENTIFIED WITH caching_sha2_password BY {} REQUIRE SSL",
            q(PW)
        ),
        "GRANT ALL ON oracle.* TO 'ocs'@'%'",
        "GRANT SELECT ON oracle.* TO 'otls'@'%'",
    ]);
    reads_agree(&Who {
        db: "oracle",
        ..who(m.port, "ocs", PW)
    })
    .await;
    let tls = |user, password| Who {
        tls: Tls::Required,
        ..who(m.port, user, password)
    };
    // caching_sha2_password's full path (RSA over plain TCP) after the cache is emptied, then
    // its fast path; TLS required and given; refusals.
    m.forget_logins();
    logins_agree(&[who(m.port, "ocs", PW)]).await;
    m.forget_logins();
    logins_agree(&[
        who(m.port, "ocs", PW),
        who(m.port, "ocs", PW),
        who(m.port, "ocs", "wrong"),
        tls("otls", PW),
        who(m.port, "otls", PW),
        tls("ocs", PW),
    ])
    .await;
}

/// The comparison itself: a reader that turned a NULL into '' (or the reverse) is caught.
#[tokio::test(flavor = "multi_thread")]
async fn a_null_read_as_an_empty_string_is_caught() {
    let s = server();
    exec_root(
        s,
        &SETUP
            .iter()
            .map(|q| q.replace("oracle", "oracle_flip"))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let w = Who {
        db: "oracle_flip",
        ..who(s.port(), "root", "")
    };
    let q = "SELECT * FROM oracle_flip.t ORDER BY id";
    let mut a = ours(&w, &[q]).await.unwrap().remove(0);
    let b = theirs(&w, &[q]).await.unwrap().remove(0);
    assert!(differences(q, &a, &b).is_empty());
    // A broken text-row reader: the first NULL it meets read as an empty string.
    let cell = a
        .iter_mut()
        .flat_map(|r| r.iter_mut())
        .find(|c| c.is_none())
        .expect("a NULL in the table");
    *cell = Some(String::new());
    let d = differences(q, &a, &b);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].contains("Some(\"\")") && d[0].contains("None"),
        "{d:?}"
    );
}
