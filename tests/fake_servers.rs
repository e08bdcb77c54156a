//! Servers that break the protocol, met through every front door (`bench`, `check --url`, a
//! sweep's preflight): an auth switch with an empty nonce, a garbage RSA key, packets out of
//! order, a result of 2^32 columns, an error in the middle of a result, a result that never
//! ends and an error message full of escape codes each end in a clear error naming what was
//! wrong, promptly, with no panic, and the escape codes shown, not obeyed; packets that
//! arrive a byte at a time are read whole. (A real MariaDB 10.11 escapes a SIGNAL's control characters itself, as `\001B`:
//! raw ones come from other servers and proxies, which a fake server stands in for.)

mod common;
use common::fake::{self, Fake};
use common::*;
use std::process::Command;
use std::time::{Duration, Instant};

/// Each front door's exit code and output against `f`.
fn doors(f: &Fake) -> Vec<(&'static str, Option<i32>, String, Duration)> {
    knock(f, true)
}

/// `check` and a sweep's preflight only.
fn doors_but_bench(f: &Fake) -> Vec<(&'static str, Option<i32>, String, Duration)> {
    knock(f, false)
}

fn knock(f: &Fake, with_bench: bool) -> Vec<(&'static str, Option<i32>, String, Duration)> {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("fake.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"fake\"\n[data]\ntables = 1\ntable_size = 100\n[run]\nworkloads = [\"oltp_point_select\"]\nthreads = [1]\nduration = \"1s\"\n[[targets]]\nname = \"fake\"\nurl = \"mysql://u:pw@127.0.0.1:{}/d\"\n",
            f.port
        ),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("sweepbench");
    let mut bench = Command::new(&bin);
    bench.args([
        "bench",
        "oltp_point_select",
        "run",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={}", f.port),
        "--mysql-user=u",
        "--mysql-password=pw",
        "--mysql-db=d",
        "--time=1",
    ]);
    let mut check = Command::new(&bin);
    check.env("SWEEPBENCH_PASSWORD", "pw").args([
        "check",
        "--url",
        &format!("mysql://u@127.0.0.1:{}/d", f.port),
    ]);
    let mut run = Command::new(&bin);
    run.env("TMPDIR", dir.path())
        .arg("run")
        .arg(&sweep)
        .arg("--results-dir")
        .arg(dir.path().join("results"));
    let mut out = Vec::new();
    for (name, mut c) in [("bench", bench), ("check", check), ("run", run)] {
        if name == "bench" && !with_bench {
            continue;
        }
        let t = Instant::now();
        let o = c.output().unwrap();
        out.push((name, o.status.code(), text(&o), t.elapsed()));
    }
    out
}

/// Every front door refuses with `code` and words containing `says`, within 30 s, with no
/// panic and no control character from the server.
fn refused(f: &Fake, says: &str) {
    for (door, code, out, took) in doors(f) {
        assert!(
            matches!(code, Some(1) | Some(2)),
            "{door}: exit {code:?}\n{out}"
        );
        assert!(out.contains(says), "{door} names it ('{says}'):\n{out}");
        assert!(!out.contains("panicked at"), "{door}:\n{out}");
        assert!(took < Duration::from_secs(30), "{door} took {took:?}");
    }
}

#[test]
fn an_auth_switch_with_an_empty_nonce_is_a_malformed_packet() {
    let f = fake::serve(|s| {
        if fake::login(s, "mysql_native_password").is_some() {
            fake::send(s, 2, b"\xfecaching_sha2_password\0");
            if fake::read(s).is_some() {
                fake::send(s, 4, &[0x01, 0x04]);
                let _ = fake::read(s);
            }
        }
    });
    refused(&f, "nonce of 0 bytes (it takes 20)");
}

#[test]
fn a_garbage_rsa_key_is_refused_with_2061() {
    let f = fake::serve(|s| {
        if fake::login(s, "caching_sha2_password").is_some() {
            fake::send(s, 2, &[0x01, 0x04]);
            if fake::read(s).is_some() {
                fake::send(
                    s,
                    4,
                    b"\x01-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n",
                );
                let _ = fake::read(s);
            }
        }
    });
    refused(&f, "error 2061 (Authentication plugin 'caching_sha2_password' reported error: the server's RSA public key cannot be read");
}

#[test]
fn packets_out_of_order_are_refused() {
    let f = fake::serve(|s| {
        fake::send(s, 3, &fake::greeting("mysql_native_password", &[b'n'; 20]));
        let _ = fake::read(s);
    });
    refused(
        &f,
        "packets out of order (expected sequence number 0, got 3)",
    );
}

#[test]
fn a_result_of_four_billion_columns_is_not_an_allocation() {
    // Statements are refused preparation (as a proxy may), so the workload sends them as
    // text too, and every query is answered with the count.
    let f = fake::serve(|s| {
        fake::after_login(s, |cmd| match cmd {
            0x16 => vec![fake::err(
                1295,
                "HY000",
                "not in the prepared statement protocol",
            )],
            _ => vec![vec![0xFE, 0, 0, 0, 0, 1, 0, 0, 0]],
        })
    });
    refused(&f, "a result of 4294967296 columns");
}

#[test]
fn a_servers_escape_codes_are_shown_not_obeyed() {
    let evil = "\u{1b}[31mRED\u{1b}[0m evil \u{7} message\u{202e}";
    let f = fake::serve(move |s| fake::send(s, 0, &fake::err(1040, "08004", evil)));
    for (door, code, out, _) in doors(&f) {
        assert!(matches!(code, Some(1) | Some(2)), "{door}: {code:?} {out}");
        assert!(
            out.contains("\\e[31mRED\\e[0m evil \\a message\\u{202e}"),
            "{door} shows the message escaped:\n{out}"
        );
        assert!(
            !out.contains('\u{7}') && !out.contains("\u{1b}[31m") && !out.contains('\u{202e}'),
            "{door} printed the server's control characters raw"
        );
    }
}

/// After the login, every query's answer: one column, then rows for as long as the client
/// reads (a server that streams a result that never ends).
fn endless(s: &mut std::net::TcpStream) {
    fake::after_login_with(s, |s, cmd| {
        if !fake::one_column_head(s, cmd) {
            return;
        }
        let mut seq = 4u8;
        let row = fake::packet(0, b"\x03abc");
        loop {
            let mut p = row.clone();
            p[3] = seq;
            seq = seq.wrapping_add(1);
            if std::io::Write::write_all(s, &p).is_err() {
                return;
            }
        }
    });
}

/// `check` and the preflight give up on it within their watchdog's time, saying the server
/// stopped answering. (`bench` waits for the event as sysbench does: `--forced-shutdown`
/// bounds it there.)
#[test]
fn a_result_that_never_ends_is_given_up_on() {
    let f = fake::serve(endless);
    for (door, code, out, took) in doors_but_bench(&f) {
        assert_eq!(code, Some(2), "{door}: {out}");
        assert!(out.contains("stopped answering"), "{door}: {out}");
        assert!(took < Duration::from_secs(40), "{door} took {took:?}");
        assert!(!out.contains("panicked at"), "{door}: {out}");
    }
}

#[test]
fn an_error_in_the_middle_of_a_result_is_the_statements_error() {
    let f = fake::serve(|s| {
        fake::after_login_with(s, |s, cmd| {
            if !fake::one_column_head(s, cmd) {
                return;
            }
            fake::send(s, 4, b"\x03abc");
            fake::send(
                s,
                5,
                &fake::err(1317, "70100", "Query execution was interrupted"),
            );
        })
    });
    refused(&f, "error 1317 (Query execution was interrupted)");
}

/// A server whose every packet arrives a byte at a time: read whole all the same (its
/// refusal of the login is the answer each door gives).
#[test]
fn packets_split_over_many_reads_are_read_whole() {
    let f = fake::serve(|s| {
        let _ = s.set_nodelay(true);
        let dribble = |s: &mut std::net::TcpStream, p: Vec<u8>| {
            for b in p {
                let _ = std::io::Write::write_all(s, &[b]);
                std::thread::sleep(Duration::from_micros(300));
            }
        };
        dribble(
            s,
            fake::packet(0, &fake::greeting("mysql_native_password", &[b'n'; 20])),
        );
        if fake::read(s).is_some() {
            let e = fake::err(1045, "28000", "Access denied for user 'u'@'localhost'");
            dribble(s, fake::packet(2, &e));
        }
    });
    refused(&f, "error 1045 (Access denied for user 'u'@'localhost'");
}

/// The handshake response's auth data as a server reads it: length-encoded where the server
/// offers CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA (a 300-byte clear-text password arrives
/// whole, where one length byte would have said 45 and cut it), refused with a client error
/// naming the limit where it does not — never cut.
#[test]
fn an_auth_response_of_any_length_is_sent_whole_or_refused() {
    use sweepbench::engine::db::Endpoint;
    use sweepbench::engine::wire::{Conn, Login};
    let password = "p".repeat(300);
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let serve = |caps: u32, heard: std::sync::Arc<std::sync::Mutex<Vec<u8>>>| {
        fake::serve(move |s| {
            fake::send(
                s,
                0,
                &fake::greeting_with("mysql_clear_password", &[b'n'; 20], caps),
            );
            if let Some((_, p)) = fake::read(s) {
                *heard.lock().unwrap() = p;
                fake::send(s, 2, &fake::ok());
            }
        })
    };
    let login = Login {
        user: "u",
        password: &password,
        db: "",
        server_charset: false,
        allow_cleartext: true,
        tls: None,
    };
    let f = serve(fake::CAPS | 0x20_0000, heard.clone());
    let ep = Endpoint::Tcp("127.0.0.1".into(), f.port);
    let c = Conn::connect(&ep, &login, Duration::from_secs(10)).expect("logged in");
    c.close();
    // caps(4) max packet(4) charset(1) filler(23) "u\0", then the auth data.
    let p = heard.lock().unwrap().clone();
    let auth = &p[32 + 2..];
    assert_eq!(auth[0], 0xfc, "a two-byte length follows");
    let len = u16::from_le_bytes([auth[1], auth[2]]) as usize;
    assert_eq!(len, 301, "the password and its NUL");
    assert_eq!(&auth[3..3 + 300], password.as_bytes());

    let f = serve(fake::CAPS, heard);
    let ep = Endpoint::Tcp("127.0.0.1".into(), f.port);
    let Err(e) = Conn::connect(&ep, &login, Duration::from_secs(10)) else {
        panic!("a 300-byte response cut to one length byte was sent");
    };
    assert_eq!(e.code, 2061, "{e}");
    assert!(e.to_string().contains("at most 255"), "{e}");
}
