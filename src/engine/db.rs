//! Where connections go and how they log in, from sysbench's `--mysql-*` options, for both
//! clients (mysql_async for administration, `wire` for the workload), and error
//! classification by server error code.

use crate::engine::config::ConnOptions;
use mysql_async::{Conn, Opts, OptsBuilder};
use std::path::Path;

/// Error codes that mean the connection is gone (client-side codes sysbench sees).
pub const CONNECTION_LOST: [u16; 4] = [2013, 2006, 2011, 2055];
/// ER_UNSUPPORTED_PS: the server cannot prepare this statement; send it as text.
pub const ER_UNSUPPORTED_PS: u16 = 1295;

/// Socket paths libmysqlclient builds use by default on the distributions we support.
const DEFAULT_SOCKETS: [&str; 3] = [
    "/run/mysqld/mysqld.sock",
    "/var/run/mysqld/mysqld.sock",
    "/tmp/mysql.sock",
];

pub use crate::engine::wire::Endpoint;

/// Where the n-th connection goes: sockets, or host × port round-robin with ports cycling
/// fastest (sysbench's order).
pub fn endpoint(c: &ConnOptions, n: usize) -> Endpoint {
    if !c.sockets.is_empty() {
        return Endpoint::Socket(c.sockets[n % c.sockets.len()].clone());
    }
    let ports = if c.ports.is_empty() {
        &[3306][..]
    } else {
        &c.ports[..]
    };
    let hosts: &[String] = if c.hosts.is_empty() {
        &[]
    } else {
        &c.hosts[..]
    };
    let port = ports[n % ports.len()];
    let host = hosts
        .get((n / ports.len()) % hosts.len().max(1))
        .map(String::as_str)
        .unwrap_or("localhost");
    if host == "localhost" && !c.tcp {
        // libmysqlclient reads "localhost" as "use the Unix socket".
        if let Some(s) = DEFAULT_SOCKETS.iter().find(|s| Path::new(s).exists()) {
            return Endpoint::Socket((*s).to_string());
        }
        return Endpoint::Tcp("127.0.0.1".into(), port);
    }
    Endpoint::Tcp(host.to_string(), port)
}

/// mysql_async's TLS options for `c` (PREFERRED asks for TLS; `open` falls back to a plain
/// connection when the server has none, as the mysql client does).
fn ssl_opts(c: &ConnOptions) -> Option<mysql_async::SslOpts> {
    use crate::engine::config::SslMode;
    let t = &c.tls;
    if t.mode == SslMode::Disabled {
        return None;
    }
    // mysql_async takes no cipher list: administrative connections use rustls's defaults.
    let verify = matches!(t.mode, SslMode::VerifyCa | SslMode::VerifyIdentity);
    let mut o = mysql_async::SslOpts::default()
        .with_danger_accept_invalid_certs(!verify)
        .with_danger_skip_domain_validation(t.mode != SslMode::VerifyIdentity);
    if let Some(ca) = &t.ca {
        o = o
            .with_root_certs(vec![ca.clone().into()])
            .with_disable_built_in_roots(true);
    }
    if let (Some(cert), Some(key)) = (&t.cert, &t.key) {
        o = o.with_client_identity(Some(mysql_async::ClientIdentity::new(
            cert.clone().into(),
            key.clone().into(),
        )));
    }
    Some(o)
}

/// The workload client's TLS for `c`: None when off; an error names the file or mode.
pub fn wire_tls(c: &ConnOptions) -> Result<Option<crate::engine::wire::tls::Tls>, String> {
    use crate::engine::config::SslMode;
    use crate::engine::wire::tls::{client_config, Tls, Verify};
    let verify = match c.tls.mode {
        SslMode::Disabled => return Ok(None),
        SslMode::Preferred | SslMode::Required => Verify::Nothing,
        SslMode::VerifyCa => Verify::Ca,
        SslMode::VerifyIdentity => Verify::Identity,
    };
    Ok(Some(Tls {
        config: client_config(verify, &c.tls)?,
        required: c.tls.mode != SslMode::Preferred,
    }))
}

/// mysql_async options for administrative connection `n` (it prepares no statements: the
/// workload runs on `wire`).
pub fn opts(c: &ConnOptions, n: usize) -> Opts {
    let b = OptsBuilder::default()
        .user(Some(c.user.clone()))
        .pass(c.password.clone())
        .db_name((!c.db.is_empty()).then(|| c.db.clone()))
        .prefer_socket(false)
        .tcp_nodelay(true)
        .ssl_opts(ssl_opts(c));
    let b = match endpoint(c, n) {
        Endpoint::Socket(s) => b.socket(Some(s)),
        Endpoint::Tcp(h, p) => b.ip_or_hostname(h).tcp_port(p),
    };
    Opts::from(b)
}

/// Same as `opts` but without selecting a database (to create it).
pub fn opts_no_db(c: &ConnOptions) -> Opts {
    let mut c = c.clone();
    c.db.clear();
    opts(&c, 0)
}

/// The server (or client-side) error code of a driver error, if it has one. Lost connections
/// map to 2013 so `--mysql-ignore-errors` lists behave as with libmysqlclient.
pub fn error_code(e: &mysql_async::Error) -> Option<u16> {
    match e {
        mysql_async::Error::Server(s) => Some(s.code),
        // A TLS failure surfaces as an I/O error: name it as libmysqlclient does (2026).
        mysql_async::Error::Io(x) if x.to_string().contains("certificate") => Some(2026),
        // TLS asked of a server that has none; a TLS file that cannot be used (`open`).
        mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer) => {
            Some(2026)
        }
        mysql_async::Error::Other(x) if x.to_string().starts_with(TLS_SETUP) => Some(2026),
        // Nothing listens there: libmysqlclient's 2003 (`cannot_connect` says 2002 for a socket).
        mysql_async::Error::Io(mysql_async::IoError::Io(x))
            if matches!(
                x.kind(),
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
            ) =>
        {
            Some(2003)
        }
        mysql_async::Error::Io(_) => Some(2013),
        mysql_async::Error::Driver(mysql_async::DriverError::ConnectionClosed) => Some(2013),
        _ => None,
    }
}

/// "code (message)" in sysbench's FATAL wording.
pub fn describe(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("error {} ({})", s.code, s.message),
        other => match error_code(other) {
            Some(2026) => format!(
                "error 2026 ({})",
                crate::engine::wire::tls::explain(&other.to_string())
            ),
            // mysql_async prefixes an I/O error with "Input/output error: " twice.
            Some(code) => match other {
                mysql_async::Error::Io(mysql_async::IoError::Io(x)) => {
                    format!("error {code} ({x})")
                }
                _ => format!("error {code} ({other})"),
            },
            None => format!("error ({other})"),
        },
    }
}

/// Opens workload connection `n` with our own client; `server_charset` as in
/// [`crate::engine::wire::Login`].
pub fn wire_connect(
    c: &ConnOptions,
    n: usize,
    server_charset: bool,
) -> Result<crate::engine::wire::Conn, crate::engine::wire::Error> {
    let login = crate::engine::wire::Login {
        user: &c.user,
        password: c.password.as_deref().unwrap_or(""),
        db: &c.db,
        server_charset,
        allow_cleartext: c.allow_cleartext,
        tls: wire_tls(c).map_err(|why| {
            crate::engine::wire::Error::client(2026, format!("SSL connection error: {why}"))
        })?,
    };
    crate::engine::wire::Conn::connect(&endpoint(c, n), &login, WIRE_CONNECT_TIMEOUT)
}

/// How long a connect or a login read may take before the attempt counts as failed.
const WIRE_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What to do about a failed connect or login, by error code (libmysqlclient's client codes
/// and the server's).
pub fn connect_remedy(code: Option<u16>) -> &'static str {
    match code {
        Some(2002) => "is the server running, and is this its socket? (SHOW VARIABLES LIKE 'socket' on the server)",
        Some(2003 | 2005) => "is the server running and listening on that host and port (bind_address, port, a firewall)?",
        Some(2013 | 2006) => "the server accepted the connection but did not answer: is it stopped (SIGSTOP), overloaded, or not a MySQL server?",
        Some(1045) => "check the user and password (the URL, SWEEPBENCH_PASSWORD / MYSQL_PWD, or ~/.my.cnf [client]) and that the user may connect from this host; a user created REQUIRE SSL is refused the same way without TLS: add ssl-mode=REQUIRED to the target URL (bench: --mysql-ssl=on)",
        Some(1044 | 1049) => "the user may not use that database, or it does not exist: GRANT ALL ON db.* TO the user, or CREATE DATABASE",
        Some(1129 | 1130) => "the server refuses this host: GRANT the user for this host, or FLUSH HOSTS",
        Some(1040 | 1203) => "too many connections: raise max_connections (or max_user_connections), or use fewer threads",
        Some(2026) => "TLS could not be set up: check that the server has ssl_cert and ssl_key (SHOW VARIABLES LIKE 'have_ssl' says YES), for VERIFY_CA / VERIFY_IDENTITY that --mysql-ssl-ca (ssl-ca=) is the CA that signed the server's certificate, and for VERIFY_IDENTITY that the certificate names the host connected to (its subjectAltName; MySQL's auto-generated certificates name none)",
        Some(1251 | 2059) => "the message says what the login needs: TLS (ssl-mode=REQUIRED, --mysql-ssl=on), --mysql-allow-cleartext, or a plugin this client speaks (ALTER USER … IDENTIFIED WITH caching_sha2_password, mysql_native_password or MariaDB's ed25519)",
        _ => "check the address, the user and the password",
    }
}

/// Why connection `n` could not be opened, naming the endpoint and the user, and the remedy.
pub fn cannot_connect(
    c: &ConnOptions,
    n: usize,
    code: Option<u16>,
    why: impl std::fmt::Display,
) -> anyhow::Error {
    let code = match (endpoint(c, n), code) {
        (Endpoint::Socket(_), Some(2003)) => Some(2002),
        (_, code) => code,
    };
    anyhow::Error::new(crate::engine::Fatal::new(
        format!(
            "cannot connect to MySQL server at {} as user '{}': {why}; {}",
            endpoint(c, n),
            c.user,
            connect_remedy(code)
        ),
        code,
    ))
}

/// A DNS name the server's certificate holds, read over a VERIFY_CA login of our own client
/// (whose verifier checks the chain and not the name), once per host and port.
///
/// mysql_async's "skip the domain check" misses rustls 0.23's `NotValidForNameContext`, so
/// under VERIFY_CA it checked the name anyway and refused a certificate made for another
/// host. Given a name the certificate holds, it checks the chain to the CA and that name —
/// what VERIFY_CA promises. None when the login fails or the certificate names no host.
fn certificate_name(c: &ConnOptions, host: &str, port: u16) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Names = HashMap<(String, u16), Option<String>>;
    static NAMES: Mutex<Option<Names>> = Mutex::new(None);
    let key = (host.to_string(), port);
    if let Some(known) = NAMES
        .lock()
        .ok()?
        .get_or_insert_with(HashMap::new)
        .get(&key)
    {
        return known.clone();
    }
    let probe = ConnOptions {
        hosts: vec![host.to_string()],
        ports: vec![port],
        sockets: vec![],
        db: String::new(),
        tcp: true,
        ..c.clone()
    };
    let name = wire_connect(&probe, 0, false).ok().and_then(|conn| {
        let der = rustls::pki_types::CertificateDer::from(conn.peer_certificate()?);
        let cert = webpki::EndEntityCert::try_from(&der).ok()?;
        let first = cert.valid_dns_names().next().map(str::to_string);
        first
    });
    NAMES
        .lock()
        .ok()?
        .get_or_insert_with(HashMap::new)
        .insert(key, name.clone());
    name
}

/// How a TLS file's problem starts, for `error_code`.
const TLS_SETUP: &str = "SSL connection error: ";

/// Opens a mysql_async connection. A login refused with "access denied" (1045) is tried
/// again: mysql_common 0.37 drops the last byte of a MariaDB ed25519 nonce when it is 0 (its
/// AuthSwitchRequest strips a trailing NUL for every plugin; fixed upstream only in 0.38, which
/// mysql_async 0.37 cannot use), so one ed25519 login in 256 is refused with a right password.
/// A wrong password is refused four times with the same error. Under `ssl-mode=PREFERRED` a
/// server without TLS gets a plain connection, as the mysql client gives it.
pub async fn open(c: &ConnOptions, o: Opts) -> Result<Conn, mysql_async::Error> {
    // mysql_async names no file when a CA, certificate or key cannot be used: the workload
    // client's reading of them does.
    if let Err(why) = wire_tls(c) {
        return Err(mysql_async::Error::Other(
            format!("{TLS_SETUP}{why}").into(),
        ));
    }
    let o = match (c.tls.mode, o.ssl_opts()) {
        (crate::engine::config::SslMode::VerifyCa, Some(ssl)) if o.socket().is_none() => {
            let (host, port) = (o.ip_or_hostname().to_string(), o.tcp_port());
            let probe = c.clone();
            let name = tokio::task::spawn_blocking(move || certificate_name(&probe, &host, port))
                .await
                .ok()
                .flatten();
            match name {
                Some(n) => Opts::from(
                    OptsBuilder::from_opts(o.clone())
                        .ssl_opts(ssl.clone().with_danger_tls_hostname_override(Some(n))),
                ),
                None => o,
            }
        }
        _ => o,
    };
    if let Some(relayed) = version_1_relay(c, &o, false)? {
        return within(Conn::new(relayed)).await;
    }
    // Up to three more tries: one refusal in 256 per try, so a right password is refused four
    // times in a row once in 4·10⁹ logins (once more only was once in 65,536: a test of 1,200
    // logins failed at that rate).
    let mut r = within(Conn::new(o.clone())).await;
    for _ in 0..3 {
        match &r {
            Err(e) if error_code(e) == Some(1045) => r = within(Conn::new(o.clone())).await,
            _ => break,
        }
    }
    match r {
        Err(e) if e.to_string().contains("UnsupportedCertVersion") => {
            match version_1_relay(c, &o, true)? {
                Some(relayed) => within(Conn::new(relayed)).await,
                None => Err(e),
            }
        }
        Err(mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer))
            if c.tls.mode == crate::engine::config::SslMode::Preferred =>
        {
            let plain = OptsBuilder::from_opts(o).ssl_opts(None::<mysql_async::SslOpts>);
            within(Conn::new(plain)).await
        }
        r => r,
    }
}

/// Options that reach `o`'s server through the TLS relay (`tls_relay`), for a server whose
/// certificate is X.509 version 1: when `found` (mysql_async's login just said so; the
/// server is remembered) or when the server is already known for it. None for a Unix
/// socket, no TLS, or VERIFY_IDENTITY (a version 1 certificate names no host: refused with
/// that reason).
fn version_1_relay(
    c: &ConnOptions,
    o: &Opts,
    found: bool,
) -> Result<Option<Opts>, mysql_async::Error> {
    use crate::engine::config::SslMode;
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static VERSION_1: Mutex<BTreeSet<(String, u16)>> = Mutex::new(BTreeSet::new());
    if o.socket().is_some() || matches!(c.tls.mode, SslMode::Disabled | SslMode::VerifyIdentity) {
        return Ok(None);
    }
    let server = (o.ip_or_hostname().to_string(), o.tcp_port());
    {
        let mut known = VERSION_1.lock().unwrap_or_else(|p| p.into_inner());
        if found {
            known.insert(server.clone());
        } else if !known.contains(&server) {
            return Ok(None);
        }
    }
    // `open` has already refused TLS files that cannot be used.
    let Ok(Some(tls)) = wire_tls(c) else {
        return Ok(None);
    };
    let up = crate::engine::tls_relay::Upstream {
        host: server.0.clone(),
        port: server.1,
        tls: tls.config,
    };
    let key = format!("{}:{} {:?}", server.0, server.1, c.tls);
    let at = crate::engine::tls_relay::address(&key, &up)
        .map_err(|e| mysql_async::Error::Io(mysql_async::IoError::Io(e)))?;
    Ok(Some(Opts::from(
        OptsBuilder::from_opts(o.clone())
            .socket(Some(at.to_string_lossy().into_owned()))
            .ssl_opts(None::<mysql_async::SslOpts>),
    )))
}

/// A login that has not finished within `WIRE_CONNECT_TIMEOUT` (a server that takes the
/// connection and never greets: stopped, hung, not MySQL) is an error 2013, as the workload
/// connections' is, instead of a wait without end.
async fn within(
    connecting: impl std::future::Future<Output = Result<Conn, mysql_async::Error>>,
) -> Result<Conn, mysql_async::Error> {
    match tokio::time::timeout(WIRE_CONNECT_TIMEOUT, connecting).await {
        Ok(r) => r,
        Err(_) => Err(mysql_async::Error::Io(mysql_async::IoError::Io(
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "Lost connection to MySQL server at 'reading initial communication packet' (no answer within {} s)",
                    WIRE_CONNECT_TIMEOUT.as_secs()
                ),
            ),
        ))),
    }
}

/// Opens one administrative connection, naming the endpoint and user on failure.
pub async fn connect(c: &ConnOptions, n: usize) -> anyhow::Result<Conn> {
    open(c, opts(c, n))
        .await
        .map_err(|e| cannot_connect(c, n, error_code(&e), describe(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that takes the connection and never greets (a stopped one): the login gives
    /// up with libmysqlclient's 2013 and the remedy for it, instead of waiting for ever.
    #[tokio::test]
    async fn a_silent_server_fails_the_login_at_its_deadline() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = ConnOptions {
            hosts: vec!["127.0.0.1".into()],
            ports: vec![silent.local_addr().unwrap().port()],
            user: "root".into(),
            ..Default::default()
        };
        let e = connect(&c, 0)
            .await
            .expect_err("no greeting, no login")
            .to_string();
        assert!(
            e.contains("error 2013 (Lost connection to MySQL server at 'reading initial communication packet' (no answer within 10 s))"),
            "{e}"
        );
        assert!(e.contains("is it stopped (SIGSTOP), overloaded"), "{e}");
    }

    fn conn(hosts: &[&str], ports: &[u16]) -> ConnOptions {
        ConnOptions {
            hosts: hosts.iter().map(|s| s.to_string()).collect(),
            ports: ports.to_vec(),
            sockets: vec![],
            user: "u".into(),
            password: None,
            db: "d".into(),
            ..ConnOptions::default()
        }
    }

    #[test]
    fn ports_cycle_fastest_then_hosts() {
        let c = conn(&["a", "b"], &[1, 2]);
        let got: Vec<Endpoint> = (0..5).map(|n| endpoint(&c, n)).collect();
        assert_eq!(
            got,
            vec![
                Endpoint::Tcp("a".into(), 1),
                Endpoint::Tcp("a".into(), 2),
                Endpoint::Tcp("b".into(), 1),
                Endpoint::Tcp("b".into(), 2),
                Endpoint::Tcp("a".into(), 1),
            ]
        );
    }

    #[test]
    fn sockets_win_over_hosts() {
        let mut c = conn(&["a"], &[1]);
        c.sockets = vec!["/x.sock".into()];
        assert_eq!(endpoint(&c, 3), Endpoint::Socket("/x.sock".into()));
    }
}
