//! Fake MySQL servers on 127.0.0.1: each connection is answered by a script of packets, so a
//! test can send what no real server sends (an empty nonce, a garbage RSA key, sequence
//! numbers out of order, four billion columns, an error message with escape codes).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// A listening fake server; it answers connections until the test process ends.
pub struct Fake {
    pub port: u16,
}

/// Serves every connection with `script` on its own thread.
pub fn serve(script: impl Fn(&mut TcpStream) + Send + Sync + 'static) -> Fake {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let script = Arc::new(script);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let script = script.clone();
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
                script(&mut s);
                // Whatever the client does next, the conversation is over.
                std::thread::sleep(Duration::from_millis(200));
            });
        }
    });
    Fake { port }
}

/// One packet: a 3-byte length, the sequence number, the payload.
pub fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

pub fn send(s: &mut TcpStream, seq: u8, payload: &[u8]) {
    let _ = s.write_all(&packet(seq, payload));
}

/// The next packet from the client (sequence number, payload); None once it is gone.
pub fn read(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    let mut p = vec![0; len];
    s.read_exact(&mut p).ok()?;
    Some((h[3], p))
}

/// Protocol 4.1, secure connection, plugin auth, transactions, multi-results, with a DB.
pub const CAPS: u32 = 0x1 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x1_0000 | 0x2_0000 | 0x8_0000;

/// A protocol-10 greeting offering `plugin` with `nonce` (20 bytes for the usual plugins).
pub fn greeting(plugin: &str, nonce: &[u8]) -> Vec<u8> {
    greeting_with(plugin, nonce, CAPS)
}

/// `greeting` with capabilities `caps`.
pub fn greeting_with(plugin: &str, nonce: &[u8], caps: u32) -> Vec<u8> {
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.99-fake\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(&nonce[..8.min(nonce.len())]);
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    if nonce.len() > 8 {
        p.extend_from_slice(&nonce[8..]);
    }
    p.push(0);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

pub fn ok() -> Vec<u8> {
    vec![0, 0, 0, 2, 0, 0, 0]
}

pub fn err(code: u16, state: &str, message: &str) -> Vec<u8> {
    let mut p = vec![0xFF];
    p.extend_from_slice(&code.to_le_bytes());
    p.push(b'#');
    p.extend_from_slice(state.as_bytes());
    p.extend_from_slice(message.as_bytes());
    p
}

/// The greeting and the client's handshake response, read; the next sequence number is 2.
pub fn login(s: &mut TcpStream, plugin: &str) -> Option<()> {
    send(s, 0, &greeting(plugin, &[b'n'; 20]));
    read(s).map(|_| ())
}

/// Logs the client in, then answers each command with the packets `answer` gives for its
/// command byte (sequence from 1).
pub fn after_login(s: &mut TcpStream, answer: impl Fn(u8) -> Vec<Vec<u8>>) {
    after_login_with(s, |s, c| {
        for (i, p) in answer(c).iter().enumerate() {
            send(s, 1 + i as u8, p);
        }
    })
}

/// As `after_login`, but the script writes the answer itself (given the command byte).
pub fn after_login_with(s: &mut TcpStream, answer: impl Fn(&mut TcpStream, u8)) {
    if login(s, "mysql_native_password").is_none() {
        return;
    }
    send(s, 2, &ok());
    while let Some((_, cmd)) = read(s) {
        let c = cmd.first().copied().unwrap_or(0);
        if c == 1 {
            return; // COM_QUIT
        }
        answer(s, c);
    }
}

/// A column definition (protocol 4.1) of a VARCHAR column `name`.
pub fn column_def(name: &str) -> Vec<u8> {
    let mut p = Vec::new();
    for part in ["def", "d", "t", "t", name, name] {
        p.push(part.len() as u8);
        p.extend_from_slice(part.as_bytes());
    }
    p.extend_from_slice(&[0x0c, 0x21, 0, 0x10, 0, 0, 0, 0xfd, 0, 0, 0, 0, 0]);
    p
}

/// Refuses to prepare (as a proxy may, so the client sends its statements as text) and
/// answers a query with the head of a one-column result: the count, the column, the EOF.
/// True when it sent the head (the rows, from sequence number 4, are the caller's).
pub fn one_column_head(s: &mut TcpStream, cmd: u8) -> bool {
    if cmd == 0x16 {
        send(s, 1, &err(1295, "HY000", "not prepared here"));
        return false;
    }
    send(s, 1, &[1]);
    send(s, 2, &column_def("c"));
    send(s, 3, &[0xfe, 0, 0, 2, 0]);
    true
}
