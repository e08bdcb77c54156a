//! Unit tests of sweep-file parsing: located errors, hints, and mutated files.
use super::design_tests::PAIRED;
use super::*;

const GOOD: &str = r#"
name = "upgrade"
description = "two targets"
baseline = "a/default"

[data]
tables = 4
table_size = 1000

[run]
workloads = ["oltp_read_only", "oltp_point_select"]
threads = [16, 1, 4, 4]
duration = "2m"
warmup = "10s"
repeats = 2
order = "interleaved"

[workload_options]
rand_type = "uniform"
skip_trx = true

[[targets]]
name = "a"
url = "mysql://root:pw@127.0.0.1:3306/sbtest"

[[targets]]
name = "b"
socket = "/run/mysqld/mysqld.sock"

[[configs]]
name = "default"

[[configs]]
name = "fast"
vars = { innodb_flush_log_at_trx_commit = 2, sync_binlog = 0 }

[[exclude]]
target = "b"
threads = [16]
"#;

pub(super) fn parse(text: &str) -> Result<SweepSpec, SpecError> {
    SweepSpec::parse(Path::new("sweeps/t.toml"), text)
}

#[test]
fn a_full_sweep_parses() {
    let s = parse(GOOD).unwrap();
    assert_eq!(s.name, "upgrade");
    assert_eq!(s.run.threads, vec![1, 4, 16]);
    assert_eq!(s.run.duration_s, 120);
    assert_eq!(s.run.warmup_s, 10);
    assert_eq!(s.run.order, Order::Interleaved);
    assert_eq!(s.data.tables, 4);
    assert_eq!(s.baseline.as_deref(), Some("a/default"));
    assert_eq!(s.targets.len(), 2);
    assert_eq!(
        s.configs[1].vars,
        vec![
            (
                "innodb_flush_log_at_trx_commit".to_string(),
                "2".to_string()
            ),
            ("sync_binlog".to_string(), "0".to_string())
        ]
    );
    assert_eq!(
        s.workload_options.sysbench_args(),
        ["--rand-type=uniform", "--skip-trx=on"]
    );
    let c = s.engine_config(WorkloadKind::ReadOnly, 4, ConnOptions::default());
    assert_eq!((c.threads, c.time_s, c.warmup_s), (4, 120, 10));
    assert_eq!((c.wl.tables, c.wl.table_size), (4, 1000));
    assert!(c.wl.skip_trx);
    assert_eq!(c.rand.kind, crate::engine::config::RandType::Uniform);
    assert_eq!(s.exclude.len(), 1);
    assert!(s.exclude[0].matches("b", "fast", "oltp_read_only", 16));
    assert!(!s.exclude[0].matches("a", "fast", "oltp_read_only", 16));
}

pub(super) fn err(text: &str) -> SpecError {
    parse(text).unwrap_err()
}

#[test]
fn a_bad_thread_list_names_its_line() {
    let e = err(&GOOD.replace("threads = [16, 1, 4, 4]", "threads = [1, \"x\"]"));
    assert_eq!(e.line, 12, "{e}");
    assert!(e.to_string().starts_with("sweeps/t.toml:12:15: "), "{e}");
}

#[test]
fn unknown_keys_get_the_nearest_name() {
    let e = err(&GOOD.replace("repeats = 2", "repeets = 2"));
    assert!(
        e.message
            .contains("unknown key 'repeets' (did you mean 'repeats'?)"),
        "{e}"
    );
    assert_eq!(e.line, 15);
    let e = err(&GOOD.replace("rand_type = \"uniform\"", "rand_tipe = \"uniform\""));
    assert!(e.message.contains("(did you mean 'rand_type'?)"), "{e}");
    assert!(
        !e.message.contains("rand-type"),
        "aliases are not listed: {e}"
    );
    assert_eq!(e.line, 19, "{e}");
}

#[test]
fn semantic_errors_are_located() {
    let e = err(&GOOD.replace("repeats = 2", "repeats = 2\nrate = 20000000"));
    assert!(
        e.message
            .contains("run.rate = 20000000: expected 0 (closed loop) to 10000000"),
        "{e}"
    );
    assert_eq!(e.line, 16, "{e}");
    let e = err(&GOOD.replace("\"oltp_point_select\"", "\"oltp_point_selct\""));
    assert!(
        e.message.contains("did you mean 'oltp_point_select'?"),
        "{e}"
    );
    assert_eq!(e.line, 11);
    assert!(e.message.contains("; sweeps run oltp_read_only, "), "{e}");
    assert!(!e.message.contains("bulk_insert"), "{e}");
    // [fileio]: only with the test, sysbench's option names, values checked by the test.
    let with_fileio = GOOD.replace("\"oltp_point_select\"", "\"fileio\"");
    let e = err(&format!("{GOOD}\n[fileio]\nfile_total_size = \"8M\"\n"));
    assert!(e.message.contains("run.workloads has no \"fileio\""), "{e}");
    assert_eq!(e.line, 41);
    let e = err(&format!(
        "{with_fileio}\n[fileio]\nfile_totl_size = \"8M\"\n"
    ));
    assert!(
        e.message.contains("fileio.file_totl_size: not an option of the fileio test (did you mean 'file_total_size'?)"),
        "{e}"
    );
    assert_eq!(e.line, 42);
    let e = err(&format!(
        "{with_fileio}\n[fileio]\nfile_num = 4\nfile_test_mode = \"sideways\"\n"
    ));
    assert_eq!(e.message, "[fileio]: Invalid IO operations mode: sideways.");
    assert_eq!(e.line, 43);
    let e = err(&GOOD.replace("\"oltp_point_select\"", "\"cpus\""));
    assert!(e.message.contains("did you mean 'cpu'?"), "{e}");
    let e = err(&GOOD
        .replace("\"oltp_point_select\"", "\"cpu\"")
        .replace("name = \"b\"", "name = \"host\""));
    assert!(
        e.message.contains("'host' names the host tests' series"),
        "{e}"
    );
    assert_eq!(e.line, 27);
    let e = err(&GOOD.replace("duration = \"2m\"", "duration = \"soon\""));
    assert!(e.message.contains("run.duration"), "{e}");
    let e = err(&GOOD.replace("baseline = \"a/default\"", "baseline = \"c/default\""));
    assert_eq!(e.line, 4);
    let e = err(&GOOD.replace("skip_trx = true", "threads = 8"));
    assert!(e.message.contains("set it with [run] threads"), "{e}");
    let e = err(&GOOD.replace(
        "url = \"mysql://root:pw@127.0.0.1:3306/sbtest\"",
        "url = \"mysql://127.0.0.1\"",
    ));
    assert!(e.message.contains("url:"), "{e}");
}

#[test]
fn bad_workload_options_are_located_by_their_types() {
    let e = err(&GOOD.replace("rand_type = \"uniform\"", "rand_type = \"weird\""));
    assert_eq!((e.line, e.column), (19, 13), "{e}");
    assert!(e.message.contains("unknown variant `weird`"), "{e}");
    let e = err(&GOOD.replace("skip_trx = true", "rand_pareto_h = 2.0"));
    assert_eq!(e.line, 20, "{e}");
    assert!(e.message.contains("between 0 and 1"), "{e}");
    let e = err(&GOOD.replace("skip_trx = true", "mysql_host = \"x\""));
    assert!(
        e.message
            .contains("connection settings belong to [[targets]]"),
        "{e}"
    );
}

#[test]
fn names_cannot_leave_the_results_directory() {
    for bad in [".", "..", "..."] {
        let e = err(&GOOD.replace("name = \"upgrade\"", &format!("name = \"{bad}\"")));
        assert_eq!(e.line, 2, "{e}");
        let e = err(&GOOD.replace("name = \"a\"", &format!("name = \"{bad}\"")));
        assert!(e.message.contains("target name"), "{e}");
    }
    assert!(parse(&GOOD.replace("name = \"upgrade\"", "name = \"v1.2\"")).is_ok());
}

#[test]
fn impossible_durations_and_bytes_are_named() {
    let e = err(&GOOD.replace("duration = \"2m\"", "duration = \"100000000h\""));
    assert!(e.message.contains("more than ten years"), "{e}");
    let e = err(&GOOD.replace(
        "duration = \"2m\"",
        "duration = \"99999999999999999999999h\"",
    ));
    assert!(e.message.contains("more than ten years"), "{e}");
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("latin1.toml");
    let mut bytes = b"name = \"x\"\n# caf".to_vec();
    bytes.push(0xe9);
    std::fs::write(&f, bytes).unwrap();
    let e = SweepSpec::load(&f).unwrap_err();
    assert_eq!((e.line, e.column), (2, 6), "{e}");
    assert!(e.message.contains("byte 0xe9 is not UTF-8"), "{e}");
}

#[test]
fn tls_keys_in_a_target_table() {
    let t = GOOD.replace(
        "url = \"mysql://root:pw@127.0.0.1:3306/sbtest\"",
        "url = \"mysql://root:pw@127.0.0.1:3306/sbtest\"\nssl_mode = \"VERIFY_CA\"\nssl_ca = \"/etc/ca.pem\"",
    );
    let s = parse(&t).unwrap();
    let TargetKind::External(c) = &s.targets[0].kind else {
        panic!("external")
    };
    assert_eq!(c.tls.mode, crate::engine::config::SslMode::VerifyCa);
    assert_eq!(c.tls.ca.as_deref(), Some(Path::new("/etc/ca.pem")));
    let e = err(&t.replace("VERIFY_CA", "SOMETIMES"));
    assert!(e.message.contains("ssl_mode: expected"), "{e}");
    // sysbench 1.0.20 cannot verify a certificate: that target cannot take the sysbench driver.
    let both = t.replace(
        "order = \"interleaved\"",
        "order = \"interleaved\"\ndrivers = [\"native\", \"sysbench\"]",
    );
    let e = err(&both);
    assert!(
        e.message.contains("target 'a'") && e.message.contains("does not verify"),
        "{e}"
    );
    let required = both.replace(
        "ssl_mode = \"VERIFY_CA\"",
        "ssl_mode = \"REQUIRED\"\nssl_cipher = \"ECDHE-RSA-AES128-GCM-SHA256\"",
    );
    let e = err(&required);
    assert!(
        e.message.contains("give ssl-ca, ssl-cert and ssl-key"),
        "{e}"
    );
    let required = required.replace(
        "ssl_ca = \"/etc/ca.pem\"",
        "ssl_ca = \"/etc/ca.pem\"\nssl_cert = \"/etc/c.pem\"\nssl_key = \"/etc/k.pem\"",
    );
    let s = parse(&required).unwrap();
    let TargetKind::External(c) = &s.targets[0].kind else {
        panic!("external")
    };
    assert_eq!(c.tls.cipher.as_deref(), Some("ECDHE-RSA-AES128-GCM-SHA256"));
    let e = err(&required.replace("ECDHE-RSA-AES128-GCM-SHA256", "RC4-MD5"));
    assert!(
        e.message.contains("ssl_cipher: 'RC4-MD5' is not a cipher"),
        "{e}"
    );
    let e = err(&GOOD.replace("3306/sbtest\"", "3306/sbtest?ssl-cipher=NULL-MD5\""));
    assert!(e.message.contains("ssl-cipher: 'NULL-MD5'"), "{e}");
}

#[test]
fn durations_parse() {
    assert_eq!(parse_duration("90"), Some(90));
    assert_eq!(parse_duration("90s"), Some(90));
    assert_eq!(parse_duration("5m"), Some(300));
    assert_eq!(parse_duration("1h"), Some(3600));
    assert_eq!(parse_duration("x"), None);
    assert_eq!(parse_duration("99999999999999999h"), None);
}

#[test]
fn only_filters_parse() {
    let f = Filter::parse_only("threads=1,4").unwrap();
    assert_eq!(f.threads, Some(vec![1, 4]));
    assert!(Filter::parse_only("thread=1").is_err());
}

#[test]
fn mutated_sweep_files_never_panic() {
    let mut rng = crate::engine::workload::rand::Rng::seeded(20261130);
    let alphabet: Vec<char> = "[]{}=\"',.#\n 0123456789-_abcxyz/:@%".chars().collect();
    let base = format!("{GOOD}\n[[targets]]\nname = \"m\"\nserver = {{ restart = \"per-point\", options = [\"--x=1\"] }}\n");
    for _ in 0..4000 {
        let mut chars: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.uniform(0, 3) {
            let at = rng.uniform(0, chars.len() as u32 - 1) as usize;
            match rng.uniform(0, 5) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(
                    at,
                    alphabet[rng.uniform(0, alphabet.len() as u32 - 1) as usize],
                ),
                2 => chars.truncate(at),
                3 => {
                    // A number made huge or negative.
                    let s: String = chars.iter().collect();
                    let s = s
                        .replacen("1000", "99999999999999999999", 1)
                        .replacen("= 2", "= -2", 1)
                        .replacen("\"2m\"", "\"99999999999999999h\"", 1);
                    chars = s.chars().collect();
                }
                4 => {
                    let s: String = chars.iter().collect();
                    let mut lines: Vec<&str> = s.lines().collect();
                    let i = at % lines.len().max(1);
                    let j = rng.uniform(0, lines.len() as u32 - 1) as usize;
                    lines.swap(i, j);
                    chars = lines.join("\n").chars().collect();
                }
                _ => {
                    let s: String = chars.iter().collect();
                    let line = s
                        .lines()
                        .nth(at % s.lines().count().max(1))
                        .unwrap_or("")
                        .to_string();
                    chars = format!("{s}\n{line}").chars().collect();
                }
            }
            if chars.is_empty() {
                break;
            }
        }
        let text: String = chars.into_iter().collect();
        let r = std::panic::catch_unwind(|| {
            if let Ok(s) = parse(&text) {
                let p = crate::pipeline::plan::Plan::build(&s, &[]);
                let _ = crate::pipeline::plan::format_duration(p.eta_s(&s));
            }
        });
        assert!(r.is_ok(), "parse panicked on:\n{text}");
    }
}

#[test]
fn clients_are_an_axis_and_what_they_cannot_do_is_refused_at_its_line() {
    let s = parse(&GOOD.replace("repeats = 2", "repeats = 2\nclients = [2, 1]")).unwrap();
    assert_eq!(s.run.clients, [1, 2]);
    assert_eq!(parse(GOOD).unwrap().run.clients, [1]);
    let e = err(&GOOD.replace("repeats = 2", "repeats = 2\nclients = 0"));
    assert!(
        e.message
            .contains("run.clients: 0 is not a number of client processes"),
        "{e}"
    );
    assert_eq!(e.line, 16, "{e}");
    // 16 threads at most cannot be split over 32 processes; 1 thread over 2 is left out of
    // the plan.
    let e = err(&GOOD.replace("repeats = 2", "repeats = 2\nclients = 32"));
    assert!(
        e.message
            .contains("16 thread(s) at most cannot be split over 32 client processes"),
        "{e}"
    );
    let s = parse(&GOOD.replace("repeats = 2", "repeats = 2\nclients = [1, 2]")).unwrap();
    let plan = crate::pipeline::plan::Plan::build(&s, &[]);
    assert!(plan.points.iter().all(|p| p.threads >= p.clients));
    assert!(plan
        .points
        .iter()
        .any(|p| p.id == "a/default/oltp_read_only/c2/t4/r1"));
    assert!(plan
        .points
        .iter()
        .any(|p| p.id == "a/default/oltp_read_only/t1/r1"));
    assert!(!plan.points.iter().any(|p| p.id.contains("/c2/t1/")));
    let e = err(&GOOD
        .replace(
            "repeats = 2",
            "repeats = 2\nclients = 2\ndrivers = [\"native\", \"sysbench\"]",
        )
        .replace("threads = [16, 1, 4, 4]", "threads = [4]"));
    assert!(e.message.contains("native engine only"), "{e}");
}

#[test]
fn an_executor_is_local_by_default_and_kubernetes_settings_are_checked() {
    use crate::pipeline::spec::distributed::Executor;
    assert_eq!(parse(GOOD).unwrap().executor, Executor::Local);
    let k = parse(&format!(
        "{GOOD}\n[executor]\nkind = \"kubernetes\"\nimage = \"reg/sweepbench:1\"\nnamespace = \"bench\"\ncpu = \"2\"\nnode_selector = {{ pool = \"clients\" }}\npassword_secret = {{ name = \"db\", key = \"password\" }}\n"
    ))
    .unwrap();
    let Executor::Kubernetes(k) = k.executor else {
        panic!("kubernetes")
    };
    assert_eq!(
        (k.image.as_str(), k.namespace.as_str()),
        ("reg/sweepbench:1", "bench")
    );
    assert_eq!(k.node_selector["pool"], "clients");
    assert_eq!(k.password_secret.unwrap().key, "password");
    let e = err(&format!("{GOOD}\n[executor]\nkind = \"slurm\"\n"));
    assert!(
        e.message
            .contains("kind = \"slurm\": expected \"local\" or \"kubernetes\""),
        "{e}"
    );
    let e = err(&format!(
        "{GOOD}\n[executor]\nkind = \"kubernetes\"\nimage = \"i\"\nnamespace = \"Bench_1\"\n"
    ));
    assert!(e.message.contains("namespace 'Bench_1'"), "{e}");
    let e = err(&format!("{GOOD}\n[executor]\nkind = \"kubernetes\"\n"));
    assert!(e.message.contains("image"), "{e}");
    // What an API server would refuse only at apply time is refused here (#22 N16).
    let base = format!("{GOOD}\n[executor]\nkind = \"kubernetes\"\nimage = \"reg/sb:1\"\n");
    for (extra, says) in [
        ("cpu = \"lots\"", "cpu = \"lots\""),
        ("memory = \"-1Gi\"", "memory = \"-1Gi\""),
        (
            "node_selector = { \"a b/../c\" = \"x\" }",
            "node_selector key",
        ),
        ("node_selector = { pool = \"x y\" }", "node_selector value"),
        (
            "password_secret = { name = \"../Evil Name\", key = \"k\" }",
            "password_secret.name",
        ),
        ("service_account = \"Not Valid!\"", "service_account"),
    ] {
        let e = err(&format!("{base}{extra}\n"));
        assert!(e.message.contains(says), "{extra}: {e}");
    }
    let e = err(&base.replace("reg/sb:1", "reg/sb:1; rm -rf /"));
    assert!(e.message.contains("an image reference"), "{e}");
    for ok in [
        "cpu = \"500m\"\nmemory = \"1.5Gi\"",
        "memory = \"1e9\"",
        "node_selector = { \"kubernetes.io/arch\" = \"amd64\" }",
    ] {
        assert!(parse(&format!("{base}{ok}\n")).is_ok(), "{ok}");
    }
}

#[test]
fn a_missing_sweep_file_is_named_without_a_place_in_it() {
    let e = SweepSpec::load(Path::new("nope.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("nope.toml: cannot read the sweep file: "),
        "{e}"
    );
}

#[test]
fn repeats_have_an_upper_bound() {
    let e = err(&PAIRED.replace(
        "design = \"paired\"\nslice = \"3s\"\nbudget = \"4m\"\n",
        "repeats = 2147483647\n",
    ));
    assert!(
        e.message
            .contains("run.repeats = 2147483647: at most 10000"),
        "{e}"
    );
    assert_eq!(e.line, 5, "{e}");
}

#[test]
fn adaptive_searches_have_finite_limits_and_bounded_lengths() {
    let one = "name = \"s\"\n[run]\nworkloads = [\"oltp_read_only\"]\n";
    let tail = "[[targets]]\nname = \"m\"\nserver = {}\n";
    for (run, says) in [
        (
            "threads = [4]\nrates = \"auto\"\nsla = { p99_ms = inf }",
            "p99_ms = inf: a latency limit",
        ),
        (
            "threads = [4]\nrates = \"auto\"\nsla = { p99_ms = nan }",
            "p99_ms = NaN: a latency limit",
        ),
        (
            "threads = [4]\nrates = \"auto\"\nsla = { p99_ms = 5, max_steps = 4294967295 }",
            "max_steps = 4294967295: expected 2 to 64",
        ),
        (
            "threads = [4]\nrates = \"auto\"\nsla = { p99_ms = 5, max_steps = 1 }",
            "max_steps = 1: expected 2 to 64",
        ),
        (
            "threads = { from = 1, to = 64, p99_ms = inf }",
            "p99_ms = inf: a latency limit",
        ),
        (
            "threads = { from = 1, to = 64, max_points = 100000 }",
            "max_points = 100000: expected 3 to 64",
        ),
    ] {
        let e = err(&format!("{one}{run}\n{tail}"));
        assert!(e.message.contains(says), "{run}: {e}");
        // The key in error is the run section's last line.
        assert_eq!(e.line, 3 + run.lines().count(), "{run}: {e}");
    }
}

#[test]
fn empty_tables_are_refused_with_their_line() {
    let e = err(&PAIRED.replace("name = \"p\"\n", "name = \"p\"\n[data]\ntable_size = 0\n"));
    assert!(
        e.message.contains("data.table_size must be at least 1"),
        "{e}"
    );
    assert_eq!(e.line, 3, "{e}");
    for n in ["0", "100001", "4294967295"] {
        let e = err(&PAIRED.replace(
            "name = \"p\"\n",
            &format!("name = \"p\"\n[data]\ntables = {n}\n"),
        ));
        assert!(
            e.message
                .contains(&format!("data.tables = {n}: expected 1 to 100000")),
            "{e}"
        );
        assert_eq!(e.line, 3, "{e}");
    }
}

#[test]
fn a_proxy_target_takes_its_server_from_the_target_it_names() {
    let base = "name = \"p\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\ndesign = \"sequential\"\n[[targets]]\nname = \"direct\"\nserver = {}\n[[targets]]\nname = \"hap\"\n";
    let s = parse(&format!(
        "{base}proxy = {{ kind = \"haproxy\", target = \"direct\" }}\n"
    ))
    .unwrap();
    let hap = &s.targets[1];
    assert_eq!(hap.proxy.as_ref().unwrap().target, "direct");
    assert!(matches!(hap.kind, TargetKind::Managed(_)));
    for (extra, says) in [
        (
            "proxy = { kind = \"proxysql\", target = \"direct\" }",
            "expected \"haproxy\" or \"mysqlrouter\" (ProxySQL is not supported",
        ),
        (
            "proxy = { kind = \"haproxy\", target = \"nope\" }",
            "proxy.target = 'nope': expected another target of this sweep",
        ),
        (
            "proxy = { kind = \"haproxy\", target = \"hap\" }",
            "proxy.target = 'hap': expected another target",
        ),
        (
            "proxy = { kind = \"haproxy\", target = \"direct\", port = 1 }",
            "proxy: unknown key 'port'",
        ),
        (
            "proxy = { kind = \"haproxy\", target = \"direct\" }\nurl = \"mysql://u@h/db\"",
            "a proxy target takes its server from proxy.target",
        ),
        (
            "proxy = { kind = \"haproxy\", target = \"direct\", tls = \"end\" }",
            "tls, connection_sharing and binary are mysqlrouter's",
        ),
        (
            "proxy = { kind = \"mysqlrouter\", target = \"direct\", tls = \"off\" }",
            "proxy.tls = 'off': expected \"passthrough\", \"end\" or \"disabled\"",
        ),
        (
            "proxy = { kind = \"mysqlrouter\", target = \"direct\", connection_sharing = true }",
            "proxy.connection_sharing needs the router to read the protocol",
        ),
    ] {
        let e = err(&format!("{base}{extra}\n"));
        assert_eq!(e.line, 11, "{extra}: {e}");
        assert!(e.message.contains(says), "{extra}: {e}");
    }
}

#[test]
fn same_server_as_pairs_two_url_targets_and_nothing_else() {
    let base = "name = \"p\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"direct\"\nurl = \"mysql://u@127.0.0.1:3306/db\"\n[[targets]]\nname = \"via\"\n";
    parse(&format!(
        "{base}url = \"mysql://u@127.0.0.1:6033/db\"\nsame_server_as = \"direct\"\n"
    ))
    .unwrap();
    for (extra, says) in [
        (
            "url = \"mysql://u@127.0.0.1:6033/db\"\nsame_server_as = \"nope\"",
            "same_server_as = 'nope': expected another url or socket target of this sweep (targets: direct)",
        ),
        (
            "url = \"mysql://u@127.0.0.1:6033/db\"\nsame_server_as = \"via\"",
            "same_server_as = 'via': expected another",
        ),
        (
            "server = {}\nsame_server_as = \"direct\"",
            "target 'via': same_server_as is for a url or socket target",
        ),
    ] {
        let e = err(&format!("{base}{extra}\n"));
        assert!(e.message.contains(says), "{extra}: {e}");
    }
}

#[test]
fn host_tests_in_workloads_are_kept_apart_from_the_servers() {
    let s = parse(&GOOD.replace(
        "workloads = [\"oltp_read_only\", \"oltp_point_select\"]",
        "workloads = [\"cpu\", \"oltp_read_only\", \"memory\", \"cpu\"]",
    ))
    .unwrap();
    assert_eq!(s.run.workloads, vec![WorkloadKind::ReadOnly]);
    use crate::engine::host::HostKind;
    assert_eq!(s.run.host_tests, vec![HostKind::Cpu, HostKind::Memory]);
    // fileio: sysbench's defaults and rndrw, or what [fileio] says.
    let s = parse(&GOOD.replace(
        "workloads = [\"oltp_read_only\", \"oltp_point_select\"]",
        "workloads = [\"fileio\"]",
    ))
    .unwrap();
    let o = s.run.fileio.as_ref().unwrap();
    assert_eq!((o.num, o.total, o.block), (128, 2 << 30, 16384));
    assert_eq!(o.mode, Some(crate::engine::host::fileio::Mode::RndRw));
    let s = parse(&format!(
        "{}\n[fileio]\nfile_total_size = \"8M\"\nfile_num = 4\nfile_extra_flags = [\"direct\"]\nfile_fsync_all = true\nfile_io_mode = \"async\"\n",
        GOOD.replace("\"oltp_point_select\"", "\"fileio\"")
    ))
    .unwrap();
    let o = s.run.fileio.as_ref().unwrap();
    assert_eq!(
        (o.num, o.total, o.flags),
        (4, 8 << 20, (false, false, true))
    );
    assert!(o.fsync_all && !o.fsync_end && o.fsync_freq == 0);
    assert_eq!(
        o.io_mode,
        crate::engine::host::fileio::IoMode::Async { backlog: 128 }
    );
    // A sweep of the host alone is a sweep too.
    let s = parse(&GOOD.replace(
        "workloads = [\"oltp_read_only\", \"oltp_point_select\"]",
        "workloads = [\"cpu\"]",
    ))
    .unwrap();
    assert!(s.run.workloads.is_empty());
    assert_eq!(s.run.host_tests, vec![HostKind::Cpu]);
}

/// A sweep file's own words are quoted in its errors with control characters escaped: a
/// hostile file cannot recolour or clear the terminal of whoever plans it.
#[test]
fn errors_quote_the_files_words_with_control_characters_escaped() {
    let text = "name = \"ok\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\n[[targets]]\nname = \"t\\u001b[2J\\u0007\"\nurl = \"mysql://root@127.0.0.1/sbtest\"\n";
    let e = SweepSpec::parse(Path::new("sweeps/t.toml"), text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'t\\e[2J\\a'"), "{e}");
    assert!(!e.contains('\u{1b}') && !e.contains('\u{7}'), "{e}");
}

/// Threads from cores (#46): a managed server's cores are its class's cpus, another target's
/// its `cores`; each resolves the multipliers to its own counts beside the absolute ones,
/// the sequential plan runs each target's own and a paired one every count on every series.
#[test]
fn threads_from_cores_resolve_per_target() {
    let body = |run: &str, extra: &str| {
        format!("name = \"c\"\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [\"1×cores\", \"4xcores\", 64]\n{run}\n[[targets]]\nname = \"small\"\nserver = {{ class = {{ cpus = 2, memory = \"1G\" }} }}\n[[targets]]\nname = \"ext\"\nurl = \"mysql://u@127.0.0.1:3306/sbtest\"\n{extra}\n")
    };
    let s = parse(&body("design = \"sequential\"", "cores = 4")).unwrap();
    assert_eq!(s.threads_of("small"), [2, 8, 64]);
    assert_eq!(s.threads_of("ext"), [4, 16, 64]);
    assert_eq!(s.run.threads, [2, 4, 8, 16, 64]);
    let plan = crate::pipeline::plan::Plan::build(&s, &[]);
    let of = |t: &str| -> Vec<u32> {
        let mut v: Vec<u32> = plan
            .points
            .iter()
            .filter(|p| p.target == t && p.repeat == 1)
            .map(|p| p.threads)
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(of("small"), [2, 8, 64]);
    assert_eq!(of("ext"), [4, 16, 64]);
    let paired = parse(&body("design = \"paired\"", "cores = 4")).unwrap();
    let plan = crate::pipeline::plan::Plan::build(&paired, &[]);
    let small: std::collections::BTreeSet<u32> = plan
        .points
        .iter()
        .filter(|p| p.target == "small")
        .map(|p| p.threads)
        .collect();
    assert_eq!(small.into_iter().collect::<Vec<_>>(), [2, 4, 8, 16, 64]);

    // A target whose cores cannot be known is refused at its name, with the remedy.
    let e = parse(&body("", "")).unwrap_err();
    assert!(e.message.contains("target 'ext': run.threads has \"1×cores\" and this target's cores are not known: give cores = N"), "{e}");
    assert_eq!(e.line, 10, "{e}");
    // A managed server's cores are its class's.
    let twice =
        body("", "cores = 4").replace("url = \"mysql://u@127.0.0.1:3306/sbtest\"", "server = {}");
    let e = parse(&twice).unwrap_err();
    assert!(
        e.message
            .contains("a managed server's cores are its class's cpus"),
        "{e}"
    );
    let e = parse(&body("", "cores = 4").replace("\"4xcores\"", "\"4 cpus\"")).unwrap_err();
    assert!(
        e.message.contains("nor a multiple of a target's cores"),
        "{e}"
    );
}
