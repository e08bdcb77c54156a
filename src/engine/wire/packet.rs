//! MySQL packet framing over a blocking socket: one read buffer and one write buffer per
//! connection, reused for every command, so a query costs one `write` and usually one `read`
//! and no allocation.

use super::error::*;
use super::stream::{Stream, TlsSocket};
use std::io::{Read, Write};
use std::sync::Arc;

/// A TLS session over its own handle on the connection's TCP socket (the shared `Stream`
/// stays for timeouts and for shutting the socket down from another thread).
pub type TlsStream = rustls::StreamOwned<rustls::ClientConnection, TlsSocket>;

/// Largest payload of one packet; a longer one continues in the next (not needed by any
/// workload we run, so refused rather than reassembled).
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// A read buffer larger than this is given back before the next command.
const SHRINK_ABOVE: usize = 256 * 1024;

pub struct Framed {
    pub stream: Arc<Stream>,
    /// Set once the login switched to TLS: every byte then goes through it.
    pub tls: Option<Box<TlsStream>>,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    wbuf: Vec<u8>,
    seq: u8,
}

impl Framed {
    pub fn new(stream: Arc<Stream>) -> Framed {
        Framed {
            stream,
            tls: None,
            // Grows to the largest response seen (a 100-row range select: ~13 KB), once.
            rbuf: vec![0; 4 * 1024],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(1024),
            seq: 0,
        }
    }

    /// Starts a command: sequence 0 and an empty payload after the 4 header bytes.
    pub fn begin(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
        // A large result (an administrative SHOW of many rows) grew the read buffer: give it
        // back between commands, so a connection holds 32 MiB only while it needs it.
        if self.rbuf.len() > SHRINK_ABOVE && self.rpos == self.rend {
            self.rbuf = vec![0; 4 * 1024];
            self.rpos = 0;
            self.rend = 0;
        }
        self.begin_reply()
    }

    /// Starts a packet that answers the server (the sequence continues).
    pub fn begin_reply(&mut self) -> &mut Vec<u8> {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0]);
        &mut self.wbuf
    }

    /// Frames and sends the packet built since `begin`.
    pub fn send(&mut self) -> Result<(), Error> {
        let len = self.wbuf.len() - 4;
        if len >= MAX_PAYLOAD {
            return Err(Error::client(
                CR_NET_PACKET_TOO_LARGE,
                format!("Got packet bigger than 'max_allowed_packet' bytes ({len} bytes; sweepbench sends at most 16 MiB per statement)"),
            ));
        }
        self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.wbuf[3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
        match &mut self.tls {
            Some(t) => t.write_all(&self.wbuf).and_then(|()| t.flush()),
            None => (&*self.stream).write_all(&self.wbuf),
        }
        .map_err(|e| Error::lost(&e))
    }

    /// Reads the next packet and returns the range of its payload in the read buffer (valid
    /// until the next call).
    pub fn next(&mut self) -> Result<(usize, usize), Error> {
        self.fill(4)?;
        let h = &self.rbuf[self.rpos..self.rpos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if h[3] != self.seq {
            return Err(Error::client(
                CR_MALFORMED_PACKET,
                format!(
                    "Malformed packet: packets out of order (expected sequence number {}, got {})",
                    self.seq, h[3]
                ),
            ));
        }
        self.seq = h[3].wrapping_add(1);
        if len == MAX_PAYLOAD {
            return Err(Error::client(
                CR_MALFORMED_PACKET,
                "Malformed packet: a response of 16 MiB or more is not supported".into(),
            ));
        }
        self.fill(4 + len)?;
        let start = self.rpos + 4;
        self.rpos = start + len;
        Ok((start, start + len))
    }

    pub fn payload(&self, r: (usize, usize)) -> &[u8] {
        &self.rbuf[r.0..r.1]
    }

    /// Makes at least `n` unread bytes available, reading as much as the socket has.
    fn fill(&mut self, n: usize) -> Result<(), Error> {
        if self.rend - self.rpos >= n {
            return Ok(());
        }
        if self.rpos + n > self.rbuf.len() {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
            if n > self.rbuf.len() {
                self.rbuf.resize(n.next_power_of_two(), 0);
            }
        }
        while self.rend - self.rpos < n {
            let buf = &mut self.rbuf[self.rend..];
            let got = match &mut self.tls {
                Some(t) => t.read(buf),
                None => (&*self.stream).read(buf),
            };
            match got {
                Ok(0) => {
                    return Err(Error::client(
                        CR_SERVER_LOST,
                        "Lost connection to MySQL server during query".into(),
                    ))
                }
                Ok(k) => self.rend += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::lost(&e)),
            }
        }
        Ok(())
    }
}

/// A cursor over a payload with the protocol's integer and string encodings.
pub struct Reader<'a> {
    pub buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.buf.len() < n {
            return Err(Error::malformed());
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, Error> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Error> {
        self.take(n)
    }

    /// A length-encoded integer.
    pub fn lenenc(&mut self) -> Result<u64, Error> {
        let n = match self.u8()? {
            v @ 0..=0xFA => return Ok(v as u64),
            0xFC => 2,
            0xFD => 3,
            0xFE => 8,
            _ => return Err(Error::malformed()),
        };
        let b = self.take(n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    pub fn nul_str(&mut self) -> Result<&'a [u8], Error> {
        let end = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(Error::malformed)?;
        let s = &self.buf[..end];
        self.buf = &self.buf[end + 1..];
        Ok(s)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }
}

pub fn put_lenenc(buf: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => buf.push(v as u8),
        0xFB..=0xFFFF => {
            buf.push(0xFC);
            buf.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buf.push(0xFD);
            buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            buf.push(0xFE);
            buf.extend_from_slice(&v.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_at_every_width() {
        for v in [
            0,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            let mut r = Reader { buf: &b };
            assert_eq!(r.lenenc().unwrap(), v);
            assert!(r.buf.is_empty());
        }
    }

    #[test]
    fn short_payloads_are_malformed_not_panics() {
        let mut r = Reader { buf: &[0xFC, 1] };
        assert_eq!(r.lenenc().unwrap_err().code, 2027);
        let mut r = Reader { buf: b"abc" };
        assert_eq!(r.nul_str().unwrap_err().code, 2027);
    }
}
