//! The connection phase: the server's greeting, our handshake response, and the
//! authentication exchange for mysql_native_password, caching_sha2_password (fast and full,
//! with the server's RSA key over TCP), MariaDB's client_ed25519 and mysql_clear_password.

use super::decode;
use super::packet::Framed;
use super::{Error, Login};

pub const CLIENT_LONG_PASSWORD: u32 = 0x1;
pub const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
pub const CLIENT_PROTOCOL_41: u32 = 0x200;
pub const CLIENT_TRANSACTIONS: u32 = 0x2000;
pub const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
pub const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
pub const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
pub const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
pub const CLIENT_SSL: u32 = 0x800;

/// utf8mb4_general_ci, what libmysqlclient and sysbench connect with.
const CHARSET: u8 = 45;

/// Collations of character sets that store ASCII text unchanged (latin1, ascii, utf8mb3,
/// utf8mb4), by id.
fn ascii_safe(collation: u8) -> bool {
    matches!(
        collation,
        5 | 8 | 11 | 15 | 31 | 33 | 45..=49 | 65 | 83 | 94 | 192..=215 | 224..=247 | 255
    )
}

/// What the greeting told us that outlives the login.
pub struct Greeting {
    pub version: String,
    /// The server's id for this connection (CONNECTION_ID(), PROCESSLIST.ID).
    pub connection_id: u32,
}

/// The auth response `plugin` wants. `clear_ok`: the password may travel in clear (a Unix
/// socket, or `--mysql-allow-cleartext`), which mysql_clear_password needs.
fn response(
    plugin: &[u8],
    nonce: &[u8],
    password: &[u8],
    clear_ok: bool,
) -> Result<Vec<u8>, Error> {
    Ok(match plugin {
        b"mysql_native_password" => mysql_common::scramble::scramble_native(nonce, password)
            .map(|s| s.to_vec())
            .unwrap_or_default(),
        b"caching_sha2_password" => mysql_common::scramble::scramble_sha256(nonce, password)
            .map(|s| s.to_vec())
            .unwrap_or_default(),
        // MariaDB's ed25519: the nonce signed with a key derived from the password.
        b"client_ed25519" => {
            mysql_common::scramble::create_response_for_ed25519(password, nonce).to_vec()
        }
        // MySQL's sha256_password: the password itself, which only a secure transport may carry.
        b"sha256_password" if clear_ok => {
            let mut p = password.to_vec();
            p.push(0);
            p
        }
        b"sha256_password" => {
            return Err(Error::client(
                2059,
                "Authentication plugin 'sha256_password' needs TLS or a Unix socket here: add ssl-mode=REQUIRED to the URL (bench: --mysql-ssl=on)".into(),
            ))
        }
        b"mysql_clear_password" if !clear_ok => {
            return Err(Error::client(
                2059,
                "Authentication plugin 'mysql_clear_password' cannot be loaded: plugin not enabled (the server asks for the password in clear over TCP without TLS; connect over the Unix socket, or accept it with --mysql-allow-cleartext, as libmysqlclient's --enable-cleartext-plugin)".into(),
            ))
        }
        b"mysql_clear_password" => {
            let mut p = password.to_vec();
            p.push(0);
            p
        }
        other => {
            return Err(Error::client(
                2059,
                format!(
                    "Authentication plugin '{}' is not supported by sweepbench (use mysql_native_password, caching_sha2_password or MariaDB's ed25519 for the benchmark user)",
                    String::from_utf8_lossy(other)
                ),
            ))
        }
    })
}

/// The SSL request (the handshake response's first 32 bytes with CLIENT_SSL), then the TLS
/// handshake on the same socket; the login continues inside TLS.
fn start_tls(
    f: &mut Framed,
    caps: u32,
    charset: u8,
    tls: &super::tls::Tls,
    host: &str,
) -> Result<(), Error> {
    let b = f.begin_reply();
    b.extend_from_slice(&caps.to_le_bytes());
    b.extend_from_slice(&(16u32 << 20).to_le_bytes());
    b.push(charset);
    b.extend_from_slice(&[0; 23]);
    f.send()?;
    let fail = |why: String| {
        let why = super::tls::explain(&why);
        Error::client(2026, format!("SSL connection error: {why}"))
    };
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| fail(format!("'{host}' is not a host name TLS can verify ({e})")))?;
    let conn =
        rustls::ClientConnection::new(tls.config.clone(), name).map_err(|e| fail(e.to_string()))?;
    let sock = match &*f.stream {
        super::Stream::Tcp(s) => s.try_clone().map_err(|e| Error::lost(&e))?,
        super::Stream::Unix(_) => return Err(fail("TLS over a Unix socket is not used".into())),
    };
    let mut s = rustls::StreamOwned::new(conn, super::packet::TlsSocket(sock));
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock).map_err(|e| {
            // The certificate's verdict, when that is what failed.
            let inner = e.get_ref().map_or_else(|| e.to_string(), |x| x.to_string());
            fail(inner)
        })?;
    }
    f.tls = Some(Box::new(s));
    Ok(())
}

/// Reads the greeting, logs in (over TLS when `login.tls` asks and the endpoint is TCP to
/// `host`), and returns the server's version.
pub fn handshake(
    f: &mut Framed,
    login: &Login<'_>,
    is_socket: bool,
    host: &str,
) -> Result<Greeting, Error> {
    let r = f.next()?;
    // Refused before the greeting (e.g. "Too many connections") is the ERR as the error.
    let decode::Handshake {
        version,
        connection_id,
        mut nonce,
        caps: server_caps,
        collation: server_collation,
        mut plugin,
    } = decode::handshake(f.payload(r))?;
    if server_caps & CLIENT_PROTOCOL_41 == 0 {
        return Err(Error::client(
            2027,
            "The server does not speak protocol 4.1".into(),
        ));
    }
    let mut want = CLIENT_LONG_PASSWORD
        | CLIENT_PROTOCOL_41
        | CLIENT_TRANSACTIONS
        | CLIENT_SECURE_CONNECTION
        | CLIENT_MULTI_STATEMENTS
        | CLIENT_MULTI_RESULTS
        | CLIENT_PS_MULTI_RESULTS
        | CLIENT_PLUGIN_AUTH;
    if !login.db.is_empty() {
        want |= CLIENT_CONNECT_WITH_DB;
    }
    let mut caps = want & server_caps;
    let charset = if login.server_charset && ascii_safe(server_collation) {
        server_collation
    } else {
        CHARSET
    };
    let tls = match (&login.tls, is_socket) {
        (Some(t), false) if server_caps & CLIENT_SSL != 0 => {
            caps |= CLIENT_SSL;
            start_tls(f, caps, charset, t, host)?;
            true
        }
        (Some(t), false) if t.required => {
            return Err(Error::client(
                2026,
                "SSL connection error: TLS was asked for (--mysql-ssl) but the server does not offer it (have_ssl is not YES: give the server ssl_cert and ssl_key)".into(),
            ))
        }
        _ => false,
    };
    // The greeting's nonce is MySQL's 20 bytes whatever plugin it names (ed25519 sends its
    // own 32 in a switch).
    if plugin != b"client_ed25519" {
        decode::nonce_fits(&plugin, &nonce, "greeting")?;
    }
    let password = login.password.as_bytes();
    let clear_ok = is_socket || tls || login.allow_cleartext;
    let auth = response(&plugin, &nonce, password, clear_ok)?;
    let b = f.begin_reply();
    b.extend_from_slice(&caps.to_le_bytes());
    b.extend_from_slice(&(16u32 << 20).to_le_bytes());
    b.push(charset);
    b.extend_from_slice(&[0; 23]);
    b.extend_from_slice(login.user.as_bytes());
    b.push(0);
    b.push(auth.len() as u8);
    b.extend_from_slice(&auth);
    if caps & CLIENT_CONNECT_WITH_DB != 0 {
        b.extend_from_slice(login.db.as_bytes());
        b.push(0);
    }
    if caps & CLIENT_PLUGIN_AUTH != 0 {
        b.extend_from_slice(&plugin);
        b.push(0);
    }
    f.send()?;
    let mut switched = false;
    loop {
        let r = f.next()?;
        let p = f.payload(r);
        match p.first() {
            Some(0x00) => {
                return Ok(Greeting {
                    version,
                    connection_id,
                })
            }
            Some(0xFF) => {
                // Which plugin and transport the refused login used: the remedy depends on it.
                let mut e = decode::err(p);
                let transport = if is_socket {
                    "a Unix socket"
                } else if tls {
                    "TLS"
                } else {
                    "TCP without TLS"
                };
                e.message = format!(
                    "{} (login with {} over {transport})",
                    e.message,
                    String::from_utf8_lossy(&plugin)
                );
                return Err(e);
            }
            Some(0xFE) if !switched => {
                // Auth switch request: another plugin, a fresh nonce.
                switched = true;
                (plugin, nonce) = decode::auth_switch(&p[1..])?;
                let auth = response(&plugin, &nonce, password, clear_ok)?;
                f.begin_reply().extend_from_slice(&auth);
                f.send()?;
            }
            Some(0x01) if plugin == b"caching_sha2_password" => match p.get(1) {
                Some(0x03) => {} // fast path accepted; the OK follows
                Some(0x04) => full_sha2_auth(f, password, &nonce, is_socket || tls)?,
                _ => return Err(Error::malformed()),
            },
            _ => return Err(Error::malformed()),
        }
    }
}

/// caching_sha2_password when the server has no cached hash: the password in clear over a
/// Unix socket, else encrypted with the server's RSA public key.
fn full_sha2_auth(
    f: &mut Framed,
    password: &[u8],
    nonce: &[u8],
    is_socket: bool,
) -> Result<(), Error> {
    let mut clear = password.to_vec();
    clear.push(0);
    if is_socket {
        f.begin_reply().extend_from_slice(&clear);
        return f.send();
    }
    f.begin_reply().push(0x02);
    f.send()?;
    let r = f.next()?;
    let p = f.payload(r);
    if p.first() != Some(&0x01) {
        return Err(Error::malformed());
    }
    let key = public_key(&p[1..])?;
    // The nonce's length was checked when it came (`nonce_fits`): never empty here.
    for (i, b) in clear.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    let sealed = key
        .encrypt(&mut rand_core::OsRng, rsa::Oaep::new::<sha1::Sha1>(), &clear)
        .map_err(|e| rsa_failed(format!("the password cannot be sealed with the server's key ({e}): a password of {} bytes is too long for a {}-bit key", password.len(), rsa::traits::PublicKeyParts::size(&key) * 8)))?;
    f.begin_reply().extend_from_slice(&sealed);
    f.send()
}

/// libmysqlclient's CR_AUTH_PLUGIN_ERR for the RSA step of caching_sha2_password.
fn rsa_failed(why: String) -> Error {
    Error::client(
        2061,
        format!("Authentication plugin 'caching_sha2_password' reported error: {why}"),
    )
}

/// The server's RSA public key, as MySQL sends it: PEM, SubjectPublicKeyInfo (or PKCS#1).
fn public_key(pem: &[u8]) -> Result<rsa::RsaPublicKey, Error> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let text = std::str::from_utf8(pem)
        .map_err(|_| rsa_failed("the server's RSA public key is not PEM text".into()))?;
    let text = text.trim_end_matches('\0');
    rsa::RsaPublicKey::from_public_key_pem(text)
        .or_else(|e| rsa::RsaPublicKey::from_pkcs1_pem(text).map_err(|_| e))
        .map_err(|e| {
            rsa_failed(format!(
                "the server's RSA public key cannot be read ({e}; {} bytes sent)",
                pem.len()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_goes_in_clear_only_where_allowed() {
        let e = response(b"mysql_clear_password", b"", b"pw", false).unwrap_err();
        assert_eq!(e.code, 2059);
        assert!(e.message.contains("--mysql-allow-cleartext"), "{e}");
        assert_eq!(
            response(b"mysql_clear_password", b"", b"pw", true).unwrap(),
            b"pw\0"
        );
        let sig = response(b"client_ed25519", &[7; 32], b"pw", false).unwrap();
        assert_eq!(sig.len(), 64);
        assert!(response(b"dialog", b"", b"pw", true).is_err());
        assert_eq!(
            response(b"sha256_password", b"", b"pw", true).unwrap(),
            b"pw\0"
        );
        assert!(response(b"sha256_password", b"", b"pw", false).is_err());
    }

    /// A MariaDB ed25519 nonce that ends in 0 is signed whole (one login in 256 was refused
    /// when the 0 was taken for a terminator); a native scramble loses its terminating NUL.
    #[test]
    fn an_auth_switch_keeps_an_ed25519_nonce_whole() {
        let mut ed = b"client_ed25519\0".to_vec();
        let nonce: Vec<u8> = (1..=31).chain([0]).collect();
        ed.extend_from_slice(&nonce);
        assert_eq!(
            decode::auth_switch(&ed).unwrap(),
            (b"client_ed25519".to_vec(), nonce)
        );
        let mut native = b"mysql_native_password\0".to_vec();
        native.extend_from_slice(&[b'a'; 20]);
        native.push(0);
        assert_eq!(decode::auth_switch(&native).unwrap().1, vec![b'a'; 20]);
    }
}
