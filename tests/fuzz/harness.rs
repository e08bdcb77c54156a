//! The fuzzing harness: deterministic proptest runners per target, a case bounded in time
//! on its own thread, a tally of outcomes, and mutations of real inputs (bytes, lines,
//! numbers and strings swapped for hostile ones).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::sync::mpsc;
use std::time::Duration;

/// A case that takes longer than this is a hang (the slowest accepted inputs take well under
/// a second in a debug build).
pub const CASE_LIMIT: Duration = Duration::from_secs(20);

pub fn cases() -> u32 {
    std::env::var("SWEEPBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

pub fn runner(target: u8) -> TestRunner {
    let seed: u64 = std::env::var("SWEEPBENCH_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261201);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8] = target;
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs `f` on its own thread and fails the case if it panics or outlasts `CASE_LIMIT`.
pub fn bounded(
    what: &str,
    f: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(), TestCaseError> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(()) => match handle.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TestCaseError::fail(format!("{what}: {e}"))),
            Err(_) => Err(TestCaseError::fail(format!("{what}: panicked"))),
        },
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(TestCaseError::fail(format!("{what}: panicked")))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(TestCaseError::fail(format!(
            "{what}: still running after {} s (a hang)",
            CASE_LIMIT.as_secs()
        ))),
    }
}

/// How many cases got how far, printed at the end of a target (`--nocapture`): a fuzzer
/// whose inputs are all refused at the first step tests nothing beyond it.
#[derive(Default)]
pub struct Tally(std::sync::Mutex<std::collections::BTreeMap<&'static str, u32>>);

impl Tally {
    pub fn add(&self, what: &'static str) {
        *self.0.lock().unwrap().entry(what).or_default() += 1;
    }

    pub fn show(&self, target: &str) -> std::collections::BTreeMap<&'static str, u32> {
        let m = self.0.lock().unwrap().clone();
        eprintln!("{target}: {m:?}");
        m
    }
}

/// Numbers a hostile or careless file may hold.
pub const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "255",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "-9223372036854775808",
    "1e308",
    "1e400",
    "-1e308",
    "0.0",
    "0.5",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "1_000",
    "0x10",
    "1.5e3",
    "007",
    "",
];

/// Strings a hostile or careless file may hold.
pub const STRINGS: &[&str] = &[
    "", " ", "..", ".", "/", "../../etc/passwd", "a/b", "x'; DROP TABLE sbtest1; --",
    "\\\\", "\u{0}", "é", "\u{202e}evil", "<script>alert(1)</script>", "auto", "off", "0s",
    "100000000h", "1ms", "-1s", "nan", "mysql://u:p@localhost:3307/db", "mysql://", "oltp_nosuch",
    "oltp_read_only", "sysbench", "native", "kubernetes", "duet", "paired", "sequential",
    "interleaved", "250ms", "pairs", "REQUIRED", "VERIFY_CA", "%FF", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

#[derive(Debug, Clone)]
pub enum Mutation {
    /// XOR a byte.
    Byte(usize, u8),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// The nth number in the text becomes NUMBERS[k].
    Number(usize, usize),
    /// The nth double-quoted string's contents become STRINGS[k].
    Str(usize, usize),
    Truncate(usize),
    /// One of the target's extra lines inserted before line n.
    Insert(usize, usize),
}

/// Mutations weighted towards those that keep a file readable (numbers, strings, whole
/// lines), so that most cases reach past the parser into what uses its values.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<usize>(), 1u8..=255).prop_map(|(a, b)| Mutation::Byte(a, b)),
        1 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        4 => (any::<usize>(), 0..NUMBERS.len()).prop_map(|(a, k)| Mutation::Number(a, k)),
        3 => (any::<usize>(), 0..STRINGS.len()).prop_map(|(a, k)| Mutation::Str(a, k)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(a, k)| Mutation::Insert(a, k)),
    ]
}

/// Byte ranges of the numbers in `t` (digits with an optional sign, point and exponent).
pub fn numbers(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].is_ascii_digit() {
            let mut s = i;
            if s > 0 && t[s - 1] == b'-' {
                s -= 1;
            }
            let mut e = i;
            while e < t.len() && (t[e].is_ascii_digit() || matches!(t[e], b'.' | b'e' | b'_')) {
                e += 1;
            }
            out.push((s, e));
            i = e;
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the contents of the double-quoted strings in `t`.
pub fn strings(t: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, &b) in t.iter().enumerate() {
        if b == b'"' {
            match open.take() {
                None => open = Some(i + 1),
                Some(s) => out.push((s, i)),
            }
        } else if b == b'\n' {
            open = None;
        }
    }
    out
}

pub fn lines(t: &[u8]) -> Vec<Vec<u8>> {
    t.split(|&b| b == b'\n').map(|l| l.to_vec()).collect()
}

pub fn apply(seed: &[u8], muts: &[Mutation], extra: &[&str]) -> Vec<u8> {
    let mut t = seed.to_vec();
    for m in muts {
        match *m {
            Mutation::Byte(at, x) if !t.is_empty() => {
                let n = t.len();
                t[at % n] ^= x;
            }
            Mutation::DeleteLine(at) | Mutation::DuplicateLine(at) => {
                let mut ls = lines(&t);
                let k = at % ls.len();
                if matches!(m, Mutation::DeleteLine(_)) {
                    ls.remove(k);
                } else {
                    let l = ls[k].clone();
                    ls.insert(k, l);
                }
                t = ls.join(&b'\n');
            }
            Mutation::SwapLines(a, b) => {
                let mut ls = lines(&t);
                let n = ls.len();
                ls.swap(a % n, b % n);
                t = ls.join(&b'\n');
            }
            Mutation::Number(at, k) => {
                let ns = numbers(&t);
                if let Some(&(s, e)) = ns.get(at % ns.len().max(1)) {
                    t.splice(s..e, NUMBERS[k].bytes());
                }
            }
            Mutation::Str(at, k) => {
                let ss = strings(&t);
                if let Some(&(s, e)) = ss.get(at % ss.len().max(1)) {
                    t.splice(s..e, STRINGS[k].bytes());
                }
            }
            Mutation::Truncate(at) if !t.is_empty() => {
                let n = t.len();
                t.truncate(at % n);
            }
            Mutation::Insert(at, k) if !extra.is_empty() => {
                let mut ls = lines(&t);
                let n = ls.len();
                ls.insert(at % (n + 1), extra[k % extra.len()].as_bytes().to_vec());
                t = ls.join(&b'\n');
            }
            _ => {}
        }
    }
    t
}

pub fn inputs(seeds: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    mutated(seeds, 3)
}

/// A seed and 1 to `most` mutations of it.
pub fn mutated(seeds: usize, most: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0..seeds, proptest::collection::vec(mutation(), 1..=most))
}
