//! The connection phase: the server's greeting, our handshake response, and the
//! authentication exchange for mysql_native_password, caching_sha2_password (fast and full,
//! with the server's RSA key over TCP), MariaDB's client_ed25519 and mysql_clear_password.

use super::decode;
use super::error::*;
use super::packet::{put_lenenc, Framed};
use super::proto::*;
use super::{Error, Login};

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

/// The first answer of auth plugin `plugin` to the server's nonce: each plugin a function of
/// its own below. `clear_ok`: the password may travel in clear (TLS, a Unix socket, or
/// `--mysql-allow-cleartext`).
fn response(
    plugin: &[u8],
    nonce: &[u8],
    password: &[u8],
    clear_ok: bool,
) -> Result<Vec<u8>, Error> {
    match plugin {
        b"mysql_native_password" => Ok(native(nonce, password)),
        b"caching_sha2_password" => Ok(caching_sha2(nonce, password)),
        b"client_ed25519" => Ok(ed25519(nonce, password)),
        b"sha256_password" => sha256(password, clear_ok),
        b"mysql_clear_password" => clear(password, clear_ok),
        other => Err(Error::client(
            CR_AUTH_PLUGIN_CANNOT_LOAD,
            format!(
                "Authentication plugin '{}' is not supported by sweepbench (use mysql_native_password, caching_sha2_password or MariaDB's ed25519 for the benchmark user)",
                String::from_utf8_lossy(other)
            ),
        )),
    }
}

/// mysql_native_password: SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))); empty for
/// no password.
fn native(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    mysql_common::scramble::scramble_native(nonce, password)
        .map(|s| s.to_vec())
        .unwrap_or_default()
}

/// caching_sha2_password's fast path (the full one, when the server asks, is `full_sha2_auth`).
fn caching_sha2(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    mysql_common::scramble::scramble_sha256(nonce, password)
        .map(|s| s.to_vec())
        .unwrap_or_default()
}

/// MariaDB's ed25519: the nonce signed with a key derived from the password.
fn ed25519(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    mysql_common::scramble::create_response_for_ed25519(password, nonce).to_vec()
}

/// MySQL's sha256_password: the password itself, which only a secure transport may carry.
fn sha256(password: &[u8], clear_ok: bool) -> Result<Vec<u8>, Error> {
    if !clear_ok {
        return Err(Error::client(
            CR_AUTH_PLUGIN_CANNOT_LOAD,
            "Authentication plugin 'sha256_password' needs TLS or a Unix socket here: add ssl-mode=REQUIRED to the URL (bench: --mysql-ssl=on)".into(),
        ));
    }
    Ok(nul_terminated(password))
}

/// mysql_clear_password: the password in clear, only where it may travel so.
fn clear(password: &[u8], clear_ok: bool) -> Result<Vec<u8>, Error> {
    if !clear_ok {
        return Err(Error::client(
            CR_AUTH_PLUGIN_CANNOT_LOAD,
            "Authentication plugin 'mysql_clear_password' cannot be loaded: plugin not enabled (the server asks for the password in clear over TCP without TLS; connect over the Unix socket, or accept it with --mysql-allow-cleartext, as libmysqlclient's --enable-cleartext-plugin)".into(),
        ));
    }
    Ok(nul_terminated(password))
}

fn nul_terminated(password: &[u8]) -> Vec<u8> {
    let mut p = password.to_vec();
    p.push(0);
    p
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
        Error::client(
            CR_SSL_CONNECTION_ERROR,
            format!("SSL connection error: {why}"),
        )
    };
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| fail(format!("'{host}' is not a host name TLS can verify ({e})")))?;
    let conn =
        rustls::ClientConnection::new(tls.config.clone(), name).map_err(|e| fail(e.to_string()))?;
    let sock = match &*f.stream {
        super::Stream::Tcp(s) => s.try_clone().map_err(|e| Error::lost(&e))?,
        super::Stream::Unix(_) => return Err(fail("TLS over a Unix socket is not used".into())),
    };
    let mut s = rustls::StreamOwned::new(conn, super::stream::TlsSocket(sock));
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
            CR_MALFORMED_PACKET,
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
        | CLIENT_PLUGIN_AUTH
        | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
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
                CR_SSL_CONNECTION_ERROR,
                "SSL connection error: TLS was asked for (--mysql-ssl) but the server does not offer it (have_ssl is not YES: give the server ssl_cert and ssl_key)".into(),
            ))
        }
        _ => false,
    };
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
    if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        put_lenenc(b, auth.len() as u64);
    } else if auth.len() > 255 {
        // One length byte cannot say it: cut, the server would read another password.
        return Err(Error::client(
            CR_AUTH_PLUGIN_ERR,
            format!(
                "the {} response is {} bytes and the server takes at most 255 in its handshake (it lacks CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA): use a shorter password",
                String::from_utf8_lossy(&plugin),
                auth.len()
            ),
        ));
    } else {
        b.push(auth.len() as u8);
    }
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
            Some(&OK) => {
                return Ok(Greeting {
                    version,
                    connection_id,
                })
            }
            Some(&ERR) => {
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
            Some(&EOF) if !switched => {
                // Auth switch request: another plugin, a fresh nonce.
                switched = true;
                (plugin, nonce) = decode::auth_switch(&p[1..])?;
                let auth = response(&plugin, &nonce, password, clear_ok)?;
                f.begin_reply().extend_from_slice(&auth);
                f.send()?;
            }
            Some(&AUTH_MORE_DATA) if plugin == b"caching_sha2_password" => {
                match decode::sha2_verdict(p)? {
                    decode::Sha2::FastOk => {}
                    decode::Sha2::FullAuth => {
                        full_sha2_auth(f, password, &nonce, is_socket || tls)?
                    }
                }
            }
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
    f.begin_reply().push(SHA2_REQUEST_KEY);
    f.send()?;
    let r = f.next()?;
    let key = public_key(decode::sha2_key(f.payload(r))?)?;
    // The nonce's length was checked when it came (`nonce_fits`); an empty one is still
    // refused here rather than indexed.
    if nonce.is_empty() {
        return Err(Error::malformed());
    }
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
        CR_AUTH_PLUGIN_ERR,
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
