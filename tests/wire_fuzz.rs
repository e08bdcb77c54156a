//! Fuzzing what `wire` reads from a server: a whole conversation of a valid server — the
//! greeting, an auth switch (native or caching_sha2's fast path) or a plain OK, then a text
//! result set of two rows with a NULL, and an OK with affected rows — mutated (bytes changed,
//! cut, inserted; lengths and sequence numbers set to extremes), served by a fake server on
//! 127.0.0.1 to the library's own client (`Conn::connect`, `query_rows`, `query`). The
//! properties: no panic, an answer within the time a silent server gets, an error that names
//! a client error code (or the code of an ERR packet the mutation made, found in the bytes
//! sent), and an unmutated conversation read exactly.
//!
//! Deterministic (a fixed seed and `SWEEPBENCH_FUZZ_CASES` cases, 300 unless set), so CI is
//! bounded; `SWEEPBENCH_FUZZ_SEED=<n>` explores other inputs.

mod common;
use common::fake::{self, packet};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::Write;
use std::time::{Duration, Instant};
use sweepbench::engine::db::Endpoint;
use sweepbench::engine::wire::{Conn, Login, TextRow};

/// A valid server's side of one conversation, in the three flights it sends: before the
/// client's handshake response, after it, and after the client's query.
fn flights(switch: u8) -> Vec<Vec<u8>> {
    let greeting = packet(0, &fake::greeting("mysql_native_password", &[b'n'; 20]));
    let mut auth = Vec::new();
    match switch {
        0 => auth.extend(packet(2, &fake::ok())),
        1 => {
            let mut p = b"\xfemysql_native_password\0".to_vec();
            p.extend_from_slice(&[b's'; 20]);
            p.push(0);
            auth.extend(packet(2, &p));
            auth.extend(packet(4, &fake::ok()));
        }
        _ => {
            let mut p = b"\xfecaching_sha2_password\0".to_vec();
            p.extend_from_slice(&[b's'; 20]);
            p.push(0);
            auth.extend(packet(2, &p));
            auth.extend(packet(4, &[0x01, 0x03]));
            auth.extend(packet(5, &fake::ok()));
        }
    }
    let mut rs = Vec::new();
    rs.extend(packet(1, &[2]));
    for (i, name) in ["a", "b"].iter().enumerate() {
        rs.extend(packet(2 + i as u8, &fake::column_def(name)));
    }
    rs.extend(packet(4, &[0xfe, 0, 0, 2, 0]));
    rs.extend(packet(5, b"\x03abc\xfb"));
    rs.extend(packet(6, b"\x00\x01z"));
    rs.extend(packet(7, &[0xfe, 0, 0, 2, 0]));
    // The second query's answer: an OK with 3 rows affected.
    let ok = packet(1, &[0, 3, 0, 2, 0, 0, 0]);
    vec![greeting, auth, rs, ok]
}

/// One change to a flight's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    /// A header's length or sequence byte, at the packet boundary nearest the offset.
    Extreme(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        any::<usize>().prop_map(Mutation::Cut),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..12)
        )
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
        (
            any::<usize>(),
            prop_oneof![Just(0u8), Just(0xfb), Just(0xfc), Just(0xfe), Just(0xff)]
        )
            .prop_map(|(i, b)| Mutation::Extreme(i, b)),
    ]
}

fn apply(flight: &mut Vec<u8>, m: &Mutation) {
    if flight.is_empty() {
        return;
    }
    match m {
        Mutation::Set(i, b) => {
            let n = flight.len();
            flight[i % n] = *b;
        }
        Mutation::Cut(i) => {
            let n = flight.len();
            flight.truncate(i % n);
        }
        Mutation::Insert(i, v) => {
            let at = i % (flight.len() + 1);
            flight.splice(at..at, v.iter().copied());
        }
        Mutation::Extreme(i, b) => {
            // Walk the packets to the one holding offset i and set one of its header bytes.
            let target = i % flight.len();
            let mut at = 0;
            while at + 4 <= flight.len() {
                let len = u32::from_le_bytes([flight[at], flight[at + 1], flight[at + 2], 0]);
                let next = at + 4 + len as usize;
                if next > target || next >= flight.len() {
                    let n = flight.len().max(1);
                    flight[at + (i / n) % 4] = *b;
                    return;
                }
                at = next;
            }
        }
    }
}

/// Serves `flights` (each after reading one packet from the client, the first at once) and
/// closes; returns the port. A client that sends nothing for `patience` (it waits for the
/// rest of a packet a mutation cut) is hung up on, so it sees the connection lost at once.
fn serve_once(flights: Vec<Vec<u8>>, patience: Duration) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let _ = s.set_read_timeout(Some(patience));
        for (i, f) in flights.iter().enumerate() {
            if i > 0 && fake::read(&mut s).is_none() {
                return;
            }
            // An auth switch gets one more packet from the client before the next flight.
            if i == 1 && f.len() > 4 && f[4] == 0xfe {
                let (a, b) = split_after_first(f);
                if s.write_all(a).is_err() || fake::read(&mut s).is_none() {
                    return;
                }
                if s.write_all(b).is_err() {
                    return;
                }
                continue;
            }
            if s.write_all(f).is_err() {
                return;
            }
        }
        // Wait for the client to go, then close.
        let _ = fake::read(&mut s);
    });
    port
}

fn split_after_first(f: &[u8]) -> (&[u8], &[u8]) {
    let len = u32::from_le_bytes([f[0], f[1], f[2], 0]) as usize;
    f.split_at((4 + len).min(f.len()))
}

/// What the client made of one conversation.
fn converse(flights: Vec<Vec<u8>>, patience: Duration) -> Result<(Vec<TextRow>, u64), u16> {
    let port = serve_once(flights, patience);
    let login = Login {
        user: "u",
        password: "pw",
        db: "d",
        server_charset: false,
        allow_cleartext: false,
        tls: None,
    };
    let ep = Endpoint::Tcp("127.0.0.1".into(), port);
    let mut c = Conn::connect(&ep, &login, Duration::from_secs(3)).map_err(|e| e.code)?;
    let rows = c.query_rows("SELECT a, b FROM t").map_err(|e| e.code)?;
    let out = c.query("UPDATE t SET a = 1").map_err(|e| e.code)?;
    c.close();
    Ok((rows, out.affected))
}

fn cases() -> u32 {
    std::env::var("SWEEPBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn runner() -> TestRunner {
    let seed: u64 = std::env::var("SWEEPBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0050);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

#[test]
fn valid_conversations_are_read_exactly() {
    for switch in 0..3 {
        let (rows, affected) =
            converse(flights(switch), Duration::from_secs(10)).expect("a valid conversation");
        assert_eq!(
            rows,
            vec![
                vec![Some(b"abc".to_vec()), None],
                vec![Some(Vec::new()), Some(b"z".to_vec())]
            ]
        );
        assert_eq!(affected, 3);
    }
}

#[test]
fn mutated_conversations_end_in_an_answer_or_a_client_error_never_a_panic() {
    let strategy = (
        0u8..3,
        0usize..4,
        proptest::collection::vec(mutation(), 1..4),
    );
    let errors = std::cell::RefCell::new(std::collections::BTreeMap::<u16, u32>::new());
    runner()
        .run(&strategy, |(switch, which, ms)| {
            let mut f = flights(switch);
            for m in &ms {
                apply(&mut f[which], m);
            }
            let t = Instant::now();
            let sent = f.clone();
            let r = converse(f, Duration::from_millis(150));
            // A silent or cut-short server is given up on within the connect timeout (3 s)
            // or at once when the fake closes the socket.
            prop_assert!(t.elapsed() < Duration::from_secs(12), "{:?}", t.elapsed());
            if let Err(code) = r {
                // A client code (libmysqlclient's 2000s), or a server's error read from an
                // ERR packet the mutation made: its 0xff and the code's two bytes are in what
                // the fake sent. Never a code from nowhere.
                let from_err = sent.iter().any(|f| {
                    f.windows(3)
                        .any(|w| w[0] == 0xff && u16::from_le_bytes([w[1], w[2]]) == code)
                });
                prop_assert!(
                    (2000..3000).contains(&code) || from_err,
                    "error {code} is no client code and no ERR packet sent it"
                );
                *errors.borrow_mut().entry(code).or_default() += 1;
            }
            Ok(())
        })
        .unwrap();
    // The mutations reached the parsers: most conversations failed, as malformed or lost.
    let errors = errors.into_inner();
    let failed: u32 = errors.values().sum();
    assert!(failed > cases() / 4, "{errors:?}");
    assert!(
        errors.contains_key(&2027) && errors.contains_key(&2013),
        "{errors:?}"
    );
}
