//! MySQL Router as a managed proxy (`proxy = { kind = "mysqlrouter", … }`, #51): Debian's
//! current router, unpacked by `scripts/unpack-mysql.sh router`, started by the sweep in front
//! of a managed MariaDB (TLS passed through and ended at the router) and of a real MySQL 9 with
//! connection sharing (it needs MySQL's session_track_gtids); its own connection limit is
//! checked before anything starts, the router named.

mod common;
use common::sweeps::*;
use common::text;
use std::path::{Path, PathBuf};

/// The router, unpacked once into the test cache by the repo's script (once per process:
/// two unpacks into one cache at once would collide).
fn router() -> PathBuf {
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(unpack).clone()
}

fn unpack() -> PathBuf {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mysql-cache");
    let out = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/unpack-mysql.sh"),
    )
    .arg("router")
    .arg(&cache)
    .output()
    .expect("running scripts/unpack-mysql.sh router");
    assert!(
        out.status.success(),
        "unpacking MySQL Router: {}",
        text(&out)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The points of the newest run under `results/<name>` whose status is "ok".
fn ok_points(results: &Path, name: &str) -> usize {
    let run = std::fs::read_dir(results.join(name))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("points.csv").is_file())
        .max()
        .expect("a run with points.csv");
    let csv = std::fs::read_to_string(run.join("points.csv")).unwrap();
    csv.lines().filter(|l| l.contains(",ok,")).count()
}

#[test]
fn a_routers_own_limit_below_the_threads_is_refused_naming_the_router() {
    let bin = router();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"limit\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [4, 16]\n[[targets]]\nname = \"direct\"\nserver = {{}}\n[[targets]]\nname = \"router\"\nproxy = {{ kind = \"mysqlrouter\", target = \"direct\", max_connections = 8, binary = \"{}\" }}\n",
        bin.display()
    );
    let f = sweep_file(dir.path(), "limit", &body);
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("[FAIL] router proxy: mysqlrouter 'router' takes at most 8 connections (proxy.max_connections) and the sweep opens up to"),
        "{said}"
    );
    // The binary found is said; raised to what the sweep needs, the check passes.
    assert!(said.contains("[ok  ] router proxy: mysqlrouter "), "{said}");
    let f = sweep_file(
        dir.path(),
        "limit",
        &body.replace("max_connections = 8", "max_connections = 40"),
    );
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    // A router that is not there: the one command that unpacks one.
    let f = sweep_file(
        dir.path(),
        "limit",
        &body.replace(&bin.display().to_string(), "/nonexistent/mysqlrouter"),
    );
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("binary /nonexistent/mysqlrouter does not exist (scripts/unpack-mysql.sh router prints the path of one)"),
        "{said}"
    );
}

#[test]
fn a_managed_router_carries_the_workload_with_tls_passed_through_and_ended() {
    let bin = router();
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"routed\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"direct\"\nserver = {{}}\n[[targets]]\nname = \"through\"\nproxy = {{ kind = \"mysqlrouter\", target = \"direct\", binary = \"{b}\" }}\n[[targets]]\nname = \"ended\"\nproxy = {{ kind = \"mysqlrouter\", target = \"direct\", tls = \"end\", binary = \"{b}\" }}\n",
        b = bin.display()
    );
    let f = sweep_file(dir.path(), "routed", &body);
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(ok_points(&results, "routed"), 3, "{}", text(&out));
}

#[test]
fn a_router_shares_connections_to_a_real_mysql() {
    let bin = router();
    let m = common::mysql::Mysql::start();
    m.root(&[
        "CREATE USER 'sb'@'%' IDENTIFIED WITH caching_sha2_password BY 'sb pw'",
        "GRANT ALL ON *.* TO 'sb'@'%'",
        "CREATE DATABASE shared",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"shared\"\n[data]\ntables = 1\ntable_size = 500\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [2]\nduration = \"1s\"\nwarmup = \"0s\"\nrepeats = 1\ndesign = \"sequential\"\n[[targets]]\nname = \"mysql\"\nurl = \"mysql://sb:sb%20pw@127.0.0.1:{port}/shared\"\n[[targets]]\nname = \"shared\"\nproxy = {{ kind = \"mysqlrouter\", target = \"mysql\", tls = \"end\", connection_sharing = true, binary = \"{b}\" }}\n",
        port = m.port,
        b = bin.display()
    );
    let f = sweep_file(dir.path(), "shared", &body);
    let results = dir.path().join("results");
    let out = run_sweep(&f, &results, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(ok_points(&results, "shared"), 2, "{}", text(&out));
}

/// TLS ended at the router means the router speaks the protocol to the client itself: its
/// greeting is its own ("…-router"); passed through, the client talks to the server.
#[test]
fn tls_ended_at_the_router_greets_as_the_router_and_passed_through_as_the_server() {
    use sweepbench::engine::db::Endpoint;
    use sweepbench::engine::wire::{Conn, Login};
    use sweepbench::pipeline::server::proxy::{
        Backend, Proxy, ProxyKind, RouterOptions, RouterTls,
    };
    let bin = router();
    let s = common::server();
    let dir = tempfile::tempdir().unwrap();
    let login = Login {
        user: "root",
        password: "",
        db: "",
        server_charset: false,
        allow_cleartext: false,
        tls: None,
    };
    let greeting = |tls: RouterTls, sub: &str| {
        let kind = ProxyKind::Router(RouterOptions {
            binary: Some(bin.clone()),
            tls,
            sharing: false,
        });
        let backend = Backend::Tcp("127.0.0.1".into(), s.port());
        let p = Proxy::start(&dir.path().join(sub), &kind, &backend, 8).expect("router");
        let ep = Endpoint::Tcp("127.0.0.1".into(), p.port);
        let c = Conn::connect(&ep, &login, std::time::Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("through the router ({sub}): {e}"));
        let v = c.server_version.clone();
        c.close();
        v
    };
    let ended = greeting(RouterTls::End, "end");
    assert!(ended.ends_with("-router"), "{ended}");
    let passed = greeting(RouterTls::Passthrough, "pass");
    assert!(passed.contains("MariaDB"), "{passed}");
}

/// A url target behind a proxy whose own limit is below the sweep's largest point: the
/// server's max_connections allows the threads, the router does not. `check` opens what the
/// sweep will open, fails naming how many connections it got, and passes once the sweep asks
/// no more than the router takes.
#[test]
fn check_of_a_url_behind_a_routers_limit_opens_the_connections_and_names_what_it_got() {
    use sweepbench::pipeline::server::proxy::{
        Backend, Proxy, ProxyKind, RouterOptions, RouterTls,
    };
    let bin = router();
    let s = common::server();
    common::fresh_db("routed_url");
    let dir = tempfile::tempdir().unwrap();
    let kind = ProxyKind::Router(RouterOptions {
        binary: Some(bin),
        tls: RouterTls::Passthrough,
        sharing: false,
    });
    let backend = Backend::Tcp("127.0.0.1".into(), s.port());
    let p = Proxy::start(&dir.path().join("router"), &kind, &backend, 8).expect("router");
    let body = |threads: &str| {
        format!(
            "name = \"url\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = {threads}\n[[targets]]\nname = \"routed\"\nurl = \"mysql://root@127.0.0.1:{}/routed_url\"\n",
            p.port
        )
    };
    let f = sweep_file(dir.path(), "url", &body("[4, 16]"));
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("[FAIL] routed connections: opened 8 of the 18 connections the sweep needs at 16 threads"),
        "{said}"
    );
    assert!(said.contains("keep [run] threads at or below 6"), "{said}");
    assert!(said.contains("max_connections on its route"), "{said}");
    // What the router takes passes, and its connections were all closed again.
    let f = sweep_file(dir.path(), "url", &body("[2, 6]"));
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let out = sweepbench(&["check", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "the first check's connections are closed: {}",
        text(&out)
    );
}

/// TLS on both sides of a router that ends it: the client asks for TLS (`--mysql-ssl=required`
/// fails against a router that does not offer it) and the router's own connection to the
/// server is TLS too — the user is `REQUIRE SSL`, so a plain leg would be refused — and the
/// workload runs through it.
#[test]
fn tls_on_both_sides_of_a_router_that_ends_it_carries_the_workload() {
    use sweepbench::pipeline::server::proxy::{
        Backend, Proxy, ProxyKind, RouterOptions, RouterTls,
    };
    let bin = router();
    let pki = common::tls::pki();
    let s = common::tls::tls_server(&pki);
    let dir = tempfile::tempdir().unwrap();
    let kind = ProxyKind::Router(RouterOptions {
        binary: Some(bin),
        tls: RouterTls::End,
        sharing: false,
    });
    let backend = Backend::Tcp("127.0.0.1".into(), s.port());
    let p = Proxy::start(&dir.path().join("router"), &kind, &backend, 8).expect("router");
    let conn = [
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", p.port),
        "--mysql-user=tlsu".into(),
        "--mysql-password=tls pw".into(),
        "--mysql-db=tlsdb".into(),
        "--mysql-ssl=required".into(),
    ];
    let bench = |words: &str| {
        let mut a: Vec<String> = words.split_whitespace().map(String::from).collect();
        a.extend(conn.iter().cloned());
        std::process::Command::new(assert_cmd::cargo::cargo_bin("sweepbench"))
            .arg("bench")
            .args(&a)
            .output()
            .unwrap()
    };
    let out = bench("oltp_point_select prepare --table-size=100");
    assert!(out.status.success(), "{}", text(&out));
    let out = bench("oltp_point_select run --table-size=100 --threads=2 --time=2");
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let events: u64 = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(events > 0, "{said}");
    // The client's leg: what the router greets with, it encrypts (required was met). The
    // server's leg: the session the router opened for the user is encrypted.
    let mut o = sweepbench::engine::config::ConnOptions {
        hosts: vec!["127.0.0.1".into()],
        ports: vec![p.port],
        user: "tlsu".into(),
        password: Some("tls pw".into()),
        db: "tlsdb".into(),
        ..Default::default()
    };
    o.tls.mode = sweepbench::engine::config::SslMode::Required;
    let mut c = sweepbench::engine::db::wire_connect(&o, 0, false).expect("through the router");
    let rows = c
        .query_rows("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        .unwrap();
    let cipher = rows[0][1].clone().unwrap_or_default();
    assert!(!cipher.is_empty(), "the router's leg to the server is TLS");
    c.close();
}

/// Connection sharing seen where it happens, in the server's own connection count: six
/// client connections through a sharing router, idle after a query, hold fewer than six
/// connections on the server once the router has taken their server connections back into its
/// pool.
#[test]
fn a_sharing_router_holds_fewer_server_connections_than_its_clients() {
    use sweepbench::pipeline::server::proxy::{
        Backend, Proxy, ProxyKind, RouterOptions, RouterTls,
    };
    let bin = router();
    let m = common::mysql::Mysql::start();
    m.root(&[
        "CREATE USER 'sh'@'%' IDENTIFIED WITH caching_sha2_password BY 'sh pw'",
        "GRANT ALL ON *.* TO 'sh'@'%'",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let kind = ProxyKind::Router(RouterOptions {
        binary: Some(bin),
        tls: RouterTls::End,
        sharing: true,
    });
    let backend = Backend::Tcp("127.0.0.1".into(), m.port);
    let p = Proxy::start(&dir.path().join("router"), &kind, &backend, 16).expect("router");
    let o = sweepbench::engine::config::ConnOptions {
        hosts: vec!["127.0.0.1".into()],
        ports: vec![p.port],
        user: "sh".into(),
        password: Some("sh pw".into()),
        db: String::new(),
        ..Default::default()
    };
    let mut clients = Vec::new();
    for _ in 0..6 {
        let mut c = sweepbench::engine::db::wire_connect(&o, 0, false).expect("through the router");
        c.query_rows("SELECT 1").unwrap();
        clients.push(c);
    }
    let on_server = || {
        let mut c = sweepbench::engine::wire::Conn::connect(
            &m.socket(),
            &common::mysql::login("root", "", None),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        let rows = c
            .query_rows("SELECT COUNT(*) FROM performance_schema.processlist WHERE user = 'sh'")
            .unwrap();
        c.close();
        String::from_utf8(rows[0][0].clone().unwrap())
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    let mut seen = u32::MAX;
    common::wait_for(
        "the router to pool the idle clients' server connections",
        std::time::Duration::from_secs(30),
        || {
            seen = on_server();
            seen < 6
        },
    );
    assert!(seen < 6, "{seen} server connections for 6 clients");
    // Each client still answers, on whichever server connection the router gives it.
    for c in &mut clients {
        c.query_rows("SELECT 1").unwrap();
    }
    for c in clients {
        c.close();
    }
}
