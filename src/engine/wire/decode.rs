//! Pure decoders from a packet's payload to what it says — the greeting, an auth switch, OK,
//! ERR, EOF, a result's column count, a prepared statement's OK, a text row — with no socket
//! and no connection state, so each is tested and fuzzed on bytes alone. Each refuses what is
//! malformed with a client error naming it, and allocates at most what the payload holds.

use super::error::*;
use super::packet::Reader;
use super::proto::*;
use super::rows::TextRow;

/// Names what was malformed in the reader's bare "Malformed packet": which packet, and how
/// long it was.
fn in_packet(what: &'static str, p: &[u8]) -> impl Fn(Error) -> Error + use<> {
    let len = p.len();
    move |e| {
        if e.code == CR_MALFORMED_PACKET && e.message == "Malformed packet" {
            Error::client(
                CR_MALFORMED_PACKET,
                format!("Malformed packet: {what} of {len} bytes ends early or holds a bad length"),
            )
        } else {
            e
        }
    }
}

/// More columns than any server puts in a result (MySQL and MariaDB stop at 4,096 a table
/// and a select list); a larger count is a broken or hostile peer, not a size to allocate.
pub const MAX_COLUMNS: u64 = 65_535;

/// What the greeting (protocol 10) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// As sent, control characters escaped (it is printed and stored).
    pub version: String,
    pub connection_id: u32,
    pub nonce: Vec<u8>,
    pub caps: u32,
    pub collation: u8,
    /// The auth plugin the server names; mysql_native_password when it names none.
    pub plugin: Vec<u8>,
}

/// A greeting, or the ERR a server sends instead (e.g. "Too many connections").
pub fn handshake(p: &[u8]) -> Result<Handshake, Error> {
    if p.first() == Some(&ERR) {
        return Err(err(p));
    }
    greeting(p).map_err(in_packet("the server's greeting", p))
}

fn greeting(p: &[u8]) -> Result<Handshake, Error> {
    let mut rd = Reader { buf: p };
    if rd.u8()? != 10 {
        return Err(Error::client(
            CR_MALFORMED_PACKET,
            "Unsupported protocol version (sweepbench speaks protocol 10)".into(),
        ));
    }
    let version = crate::visible::visible(&String::from_utf8_lossy(rd.nul_str()?)).into_owned();
    let connection_id = rd.u32()?;
    let mut nonce = rd.bytes(8)?.to_vec();
    rd.u8()?;
    let mut caps = rd.u16()? as u32;
    let collation = rd.u8()?;
    rd.u16()?;
    caps |= (rd.u16()? as u32) << 16;
    let data_len = rd.u8()? as usize;
    rd.bytes(10)?;
    if caps & CLIENT_SECURE_CONNECTION != 0 {
        let n = data_len.saturating_sub(8).max(13);
        let more = rd.bytes(n.min(rd.buf.len()))?;
        // The scramble's second part ends with a NUL that is not part of it.
        let more = more.strip_suffix(&[0]).unwrap_or(more);
        nonce.extend_from_slice(more);
    }
    let mut plugin: Vec<u8> = if caps & CLIENT_PLUGIN_AUTH != 0 {
        let rest = rd.rest();
        rest.split(|&b| b == 0).next().unwrap_or_default().to_vec()
    } else {
        Vec::new()
    };
    if plugin.is_empty() {
        plugin = b"mysql_native_password".to_vec();
    }
    // MySQL's 20 bytes whatever plugin it names (ed25519 sends its own 32 in a switch).
    if plugin != b"client_ed25519" {
        nonce_fits(&plugin, &nonce, "greeting")?;
    }
    Ok(Handshake {
        version,
        connection_id,
        nonce,
        caps,
        collation,
        plugin,
    })
}

/// The nonce length each plugin's answer is computed over; None: any.
fn nonce_len(plugin: &[u8]) -> Option<usize> {
    match plugin {
        b"mysql_native_password" | b"caching_sha2_password" => Some(20),
        b"client_ed25519" => Some(32),
        _ => None,
    }
}

/// A nonce of the wrong length for `plugin` is the server's mistake, said as such (an empty
/// one would otherwise be indexed by caching_sha2_password's RSA step).
fn nonce_fits(plugin: &[u8], nonce: &[u8], from: &str) -> Result<(), Error> {
    match nonce_len(plugin) {
        Some(n) if nonce.len() != n => Err(Error::client(
            CR_MALFORMED_PACKET,
            format!(
                "Malformed packet: the server's {from} for {} carried a nonce of {} bytes (it takes {n})",
                String::from_utf8_lossy(plugin),
                nonce.len()
            ),
        )),
        _ => Ok(()),
    }
}

/// The plugin and nonce of an auth switch request (the payload after its 0xFE), the nonce's
/// length checked for the plugin. The 20-byte scrambles of mysql_native_password and
/// caching_sha2_password come with a NUL that is not part of them; MariaDB's ed25519 nonce is
/// 32 random bytes and may itself end in 0, so it is kept whole.
pub fn auth_switch(p: &[u8]) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let mut rd = Reader { buf: p };
    let plugin = rd
        .nul_str()
        .map_err(in_packet("an auth switch request", p))?
        .to_vec();
    let rest = rd.rest();
    let nonce = match rest {
        [head @ .., 0] if plugin != b"client_ed25519" => head,
        all => all,
    };
    nonce_fits(&plugin, nonce, "auth switch request")?;
    Ok((plugin, nonce.to_vec()))
}

/// caching_sha2_password's verdict on the fast path (an AUTH_MORE_DATA packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sha2 {
    /// The cached hash matched; the OK follows.
    FastOk,
    /// No cached hash: the full path, the password itself (sealed, over plain TCP).
    FullAuth,
}

/// caching_sha2_password's malformed exchange: what came where `due` was.
fn sha2_malformed(p: &[u8], due: &str) -> Error {
    Error::client(
        CR_MALFORMED_PACKET,
        format!(
            "Malformed packet: caching_sha2_password's exchange sent {:02x?} where {due} was due",
            &p[..p.len().min(4)]
        ),
    )
}

/// The AUTH_MORE_DATA packet that answers the fast path's scramble.
pub fn sha2_verdict(p: &[u8]) -> Result<Sha2, Error> {
    match p {
        [AUTH_MORE_DATA, SHA2_FAST_OK] => Ok(Sha2::FastOk),
        [AUTH_MORE_DATA, SHA2_FULL_AUTH] => Ok(Sha2::FullAuth),
        _ => Err(sha2_malformed(p, "fast-path-ok (3) or full-auth (4)")),
    }
}

/// The AUTH_MORE_DATA packet that answers our request for the server's RSA public key: the
/// key's PEM text.
pub fn sha2_key(p: &[u8]) -> Result<&[u8], Error> {
    match p {
        [AUTH_MORE_DATA, pem @ ..] => Ok(pem),
        _ => Err(sha2_malformed(p, "the server's RSA key")),
    }
}

/// An ERR packet (0xFF, code, optional '#' and SQLSTATE, message) as an error; the message
/// with its control characters escaped, since it reaches terminals, summary.txt and mail.
pub fn err(p: &[u8]) -> Error {
    let mut rd = Reader {
        buf: p.get(1..).unwrap_or_default(),
    };
    let code = rd.u16().unwrap_or(CR_UNKNOWN_ERROR);
    let mut rest = rd.rest();
    let mut sqlstate = None;
    if rest.first() == Some(&b'#') && rest.len() >= 6 {
        sqlstate = rest[1..6].try_into().ok();
        rest = &rest[6..];
    }
    let text = String::from_utf8_lossy(rest);
    Error {
        sqlstate,
        ..Error::client(code, crate::visible::visible(&text).into_owned())
    }
}

/// What an OK packet (0x00, affected rows, last insert id, status) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OkPacket {
    pub affected: u64,
    pub status: u16,
}

pub fn ok(p: &[u8]) -> Result<OkPacket, Error> {
    let mut rd = Reader {
        buf: p.get(1..).unwrap_or_default(),
    };
    let mut read = || -> Result<OkPacket, Error> {
        let affected = rd.lenenc()?;
        rd.lenenc()?;
        Ok(OkPacket {
            affected,
            status: rd.u16()?,
        })
    };
    read().map_err(in_packet("an OK packet", p))
}

/// Whether `p` is an EOF packet (0xFE and shorter than 9 bytes: a longer one starting 0xFE
/// is a row or a length of 2^56 and more).
pub fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&EOF) && p.len() < 9
}

/// The status flags of an EOF packet (0xFE, warnings, status); a pre-4.1 EOF has none.
pub fn eof_status(p: &[u8]) -> u16 {
    match p {
        [_, _, _, a, b, ..] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    }
}

/// The column count that opens a result set, bounded by `MAX_COLUMNS`.
pub fn column_count(p: &[u8]) -> Result<u64, Error> {
    let columns = Reader { buf: p }
        .lenenc()
        .map_err(in_packet("a result's column count", p))?;
    if columns > MAX_COLUMNS {
        return Err(Error::client(
            CR_MALFORMED_PACKET,
            format!(
                "Malformed packet: a result of {columns} columns (a server sends at most {MAX_COLUMNS})"
            ),
        ));
    }
    Ok(columns)
}

/// What COM_STMT_PREPARE's OK says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepareOk {
    pub id: u32,
    pub columns: u16,
    pub params: u16,
}

pub fn prepare_ok(p: &[u8]) -> Result<PrepareOk, Error> {
    match p.first() {
        Some(&OK) => {}
        Some(&ERR) => return Err(err(p)),
        _ => return Err(Error::malformed()),
    }
    let mut rd = Reader { buf: &p[1..] };
    let mut read = || -> Result<PrepareOk, Error> {
        Ok(PrepareOk {
            id: rd.u32()?,
            columns: rd.u16()?,
            params: rd.u16()?,
        })
    };
    read().map_err(in_packet("a prepared statement's OK", p))
}

/// A text row of `columns` columns into `row` (cleared first): each column's bytes, None for
/// NULL. Bytes left over after the last column are malformed, as are too few.
pub fn text_row(p: &[u8], columns: usize, row: &mut TextRow) -> Result<(), Error> {
    row_columns(p, columns, row).map_err(in_packet("a row", p))
}

fn row_columns(p: &[u8], columns: usize, row: &mut TextRow) -> Result<(), Error> {
    row.clear();
    let mut rd = Reader { buf: p };
    for _ in 0..columns {
        if rd.buf.first() == Some(&NULL) {
            rd.u8()?;
            row.push(None);
        } else {
            let n = rd.lenenc()?;
            let n = usize::try_from(n).map_err(|_| Error::malformed())?;
            row.push(Some(rd.bytes(n)?.to_vec()));
        }
    }
    if !rd.buf.is_empty() {
        return Err(Error::client(
            CR_MALFORMED_PACKET,
            format!(
                "Malformed packet: a row of {columns} columns with {} bytes left over",
                rd.buf.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn greeting(nonce: &[u8], plugin: &[u8]) -> Vec<u8> {
        let caps: u32 = 0x200 | 0x8000 | 0x8_0000;
        let mut p = vec![10];
        p.extend_from_slice(b"11.8.9-MariaDB\0");
        p.extend_from_slice(&42u32.to_le_bytes());
        p.extend_from_slice(&nonce[..8]);
        p.push(0);
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(&nonce[8..]);
        p.push(0);
        p.extend_from_slice(plugin);
        p.push(0);
        p
    }

    #[test]
    fn a_greeting_is_read_whole() {
        let nonce: Vec<u8> = (1..=20).collect();
        let h = handshake(&greeting(&nonce, b"caching_sha2_password")).unwrap();
        assert_eq!(h.version, "11.8.9-MariaDB");
        assert_eq!(h.connection_id, 42);
        assert_eq!(h.nonce, nonce);
        assert_eq!(h.plugin, b"caching_sha2_password");
        assert_eq!(h.collation, 45);
        // Cut four bytes into the nonce's second part: 12 bytes of nonce, no plugin named.
        let mut g = greeting(&nonce, b"x");
        g.truncate(47 + 4);
        let short = handshake(&g).unwrap_err();
        assert!(
            short
                .message
                .contains("greeting for mysql_native_password carried a nonce of 12 bytes"),
            "{short}"
        );
    }

    #[test]
    fn each_packet_is_read_and_the_malformed_named() {
        assert_eq!(
            ok(&[0, 3, 0, 2, 0]).unwrap(),
            OkPacket {
                affected: 3,
                status: 2
            }
        );
        let e = err(b"\xff\x15\x04#28000Access denied");
        assert_eq!(
            (e.code, e.sqlstate(), e.message.as_str()),
            (1045, Some("28000"), "Access denied")
        );
        assert_eq!(err(&[0xff]).code, 2000);
        assert!(is_eof(&[0xfe, 0, 0, 2, 0]) && !is_eof(&[0xfe; 9]));
        assert_eq!(eof_status(&[0xfe, 0, 0, 8, 0]), 8);
        assert_eq!(column_count(&[3]).unwrap(), 3);
        let big = column_count(&[0xfe, 0, 0, 0, 0, 1, 0, 0, 0]).unwrap_err();
        assert!(big.message.contains("4294967296 columns"), "{big}");
        assert_eq!(
            prepare_ok(&[0, 7, 0, 0, 0, 1, 0, 2, 0, 0]).unwrap(),
            PrepareOk {
                id: 7,
                columns: 1,
                params: 2
            }
        );
        let mut row = Vec::new();
        text_row(b"\x03abc\xfb\x00", 3, &mut row).unwrap();
        assert_eq!(row, vec![Some(b"abc".to_vec()), None, Some(Vec::new())]);
        assert_eq!(
            text_row(b"\x03abc\xfb", 1, &mut row).unwrap_err().code,
            2027
        );
        let e = text_row(b"\x05abc", 1, &mut row).unwrap_err();
        assert_eq!(
            e.message,
            "Malformed packet: a row of 4 bytes ends early or holds a bad length"
        );
        let e = handshake(&[10, b'v', 0, 1]).unwrap_err();
        assert!(
            e.message.contains("the server's greeting of 4 bytes"),
            "{e}"
        );
        assert_eq!(sha2_verdict(&[1, 3]).unwrap(), Sha2::FastOk);
        assert_eq!(sha2_verdict(&[1, 4]).unwrap(), Sha2::FullAuth);
        assert_eq!(sha2_key(b"\x01PEM").unwrap(), b"PEM");
        assert!(sha2_verdict(&[1, 9])
            .unwrap_err()
            .message
            .contains("[01, 09]"));
        assert_eq!(sha2_key(&[]).unwrap_err().code, 2027);
        let e = auth_switch(b"caching_sha2_password\0").unwrap_err();
        assert!(e.message.contains("nonce of 0 bytes (it takes 20)"), "{e}");
        let mut ed = b"client_ed25519\0".to_vec();
        ed.extend((1..=31).chain([0]));
        assert_eq!(auth_switch(&ed).unwrap().1.len(), 32);
    }

    /// Every decoder on any bytes: an answer or a client error, never a panic, and nothing
    /// allocated beyond the payload's own length.
    fn any_bytes(p: &[u8]) {
        if let Ok(h) = handshake(p) {
            assert!(h.nonce.len() + h.plugin.len() <= p.len() + "mysql_native_password".len());
        }
        if let Ok((plugin, nonce)) = auth_switch(p) {
            assert!(plugin.len() + nonce.len() <= p.len());
        }
        let e = err(p);
        assert!(e.message.len() <= 6 * p.len() + 1, "escapes at most ×6");
        let _ = ok(p);
        let _ = is_eof(p) && eof_status(p) > 0;
        if let Ok(c) = column_count(p) {
            assert!(c <= MAX_COLUMNS);
        }
        let _ = prepare_ok(p);
        let _ = sha2_verdict(p);
        if let Ok(k) = sha2_key(p) {
            assert!(k.len() < p.len());
        }
        for columns in [0, 1, 3, 1000] {
            let mut row = Vec::new();
            if text_row(p, columns, &mut row).is_ok() {
                let held: usize = row.iter().flatten().map(Vec::len).sum();
                assert!(held <= p.len());
                assert_eq!(row.len(), columns);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn decoders_take_any_bytes(p in proptest::collection::vec(any::<u8>(), 0..300)) {
            any_bytes(&p);
        }

        #[test]
        fn decoders_take_a_greeting_with_bytes_changed(
            changes in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
            cut in any::<usize>(),
        ) {
            let mut g = greeting(&[7; 20], b"mysql_native_password");
            for (i, b) in changes {
                let n = g.len();
                g[i % n] = b;
            }
            let n = g.len();
            g.truncate(n - cut % 8);
            any_bytes(&g);
        }
    }
}
