//! The administrative client: every statement sweepbench sends besides the workload's
//! (preflight, data checks, server variables and status, the watch's ping) goes through
//! `Admin`, on mysql_async — the only module that knows that crate. Rows come back as text,
//! errors with libmysqlclient's codes (`Error::code`).

use crate::engine::config::ConnOptions;
use crate::engine::db::{
    cannot_connect, endpoint, wire_connect, wire_tls, Endpoint, WIRE_CONNECT_TIMEOUT,
};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};

/// One row of a result, each column as its text (None for NULL).
pub type Row = Vec<Option<String>>;

/// An administrative connection.
#[derive(Debug)]
pub struct Admin(Conn);

/// A failed administrative connect or statement.
#[derive(Debug)]
pub struct Error(mysql_async::Error);

impl Error {
    /// The server's (or libmysqlclient's client-side) error code, if it has one.
    pub fn code(&self) -> Option<u16> {
        error_code(&self.0)
    }

    /// A login or statement that took the connection and never answered (`within`'s
    /// deadline): the server is silent, not refusing.
    pub fn timed_out(&self) -> bool {
        matches!(&self.0, mysql_async::Error::Io(mysql_async::IoError::Io(x)) if x.kind() == std::io::ErrorKind::TimedOut)
    }
}

impl std::fmt::Display for Error {
    /// "error code (message)" in sysbench's FATAL wording.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(&self.0))
    }
}

impl std::error::Error for Error {}

impl From<mysql_async::Error> for Error {
    fn from(e: mysql_async::Error) -> Self {
        Error(e)
    }
}

/// `s` as an SQL string literal ('…', quotes and backslashes escaped), for the few
/// administrative statements that name a value.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// A row's columns as text.
fn row_text(r: &mysql_async::Row) -> Row {
    (0..r.len()).map(|i| r.as_ref(i).and_then(text)).collect()
}

/// A column's text: the text protocol sends every value as bytes.
fn text(v: &mysql_async::Value) -> Option<String> {
    match v {
        mysql_async::Value::NULL => None,
        mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        other => Some(other.as_sql(true)),
    }
}

impl Admin {
    /// Opens administrative connection `n` to `c`, naming the endpoint, the user and the
    /// remedy on failure.
    pub async fn connect(c: &ConnOptions, n: usize) -> anyhow::Result<Admin> {
        open(c, opts(c, n))
            .await
            .map(Admin)
            .map_err(|e| cannot_connect(c, n, error_code(&e), describe(&e)))
    }

    /// Opens administrative connection `n` (the first endpoint's when `n` is 0), the error as
    /// the login gave it.
    pub async fn open(c: &ConnOptions, n: usize) -> Result<Admin, Error> {
        Ok(Admin(open(c, opts(c, n)).await?))
    }

    /// Opens a connection that selects no database (to create it, or to ask the server).
    pub async fn open_no_db(c: &ConnOptions) -> Result<Admin, Error> {
        Ok(Admin(open(c, opts_no_db(c)).await?))
    }

    /// Runs a statement, its result (if any) dropped.
    pub async fn exec(&mut self, sql: impl AsRef<str>) -> Result<(), Error> {
        Ok(self.0.query_drop(sql.as_ref()).await?)
    }

    /// Every row of a query's result.
    pub async fn rows(&mut self, sql: impl AsRef<str>) -> Result<Vec<Row>, Error> {
        let rows: Vec<mysql_async::Row> = self.0.query(sql.as_ref()).await?;
        Ok(rows.iter().map(row_text).collect())
    }

    /// The first row of a query's result, if it has one.
    pub async fn first(&mut self, sql: impl AsRef<str>) -> Result<Option<Row>, Error> {
        let row: Option<mysql_async::Row> = self.0.query_first(sql.as_ref()).await?;
        Ok(row.as_ref().map(row_text))
    }

    /// The first column of every row, NULLs left out (SHOW GRANTS, a list of names).
    pub async fn column(&mut self, sql: impl AsRef<str>) -> Result<Vec<String>, Error> {
        Ok(self
            .rows(sql)
            .await?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    /// The first column of the first row (None for no row or NULL).
    pub async fn value(&mut self, sql: impl AsRef<str>) -> Result<Option<String>, Error> {
        Ok(self
            .first(sql)
            .await?
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Name–value rows (SHOW GLOBAL VARIABLES, SHOW GLOBAL STATUS).
    pub async fn pairs(
        &mut self,
        sql: impl AsRef<str>,
    ) -> Result<Vec<(String, Option<String>)>, Error> {
        Ok(self
            .rows(sql)
            .await?
            .into_iter()
            .filter_map(|mut r| {
                let value = r.get_mut(1).and_then(Option::take);
                Some((r.into_iter().next().flatten()?, value))
            })
            .collect())
    }

    /// Closes the connection (COM_QUIT); a failure to say goodbye changes nothing.
    pub async fn close(self) {
        let _ = self.0.disconnect().await;
    }
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

/// mysql_async options for administrative connection `n` (it prepares no statements: the
/// workload runs on `wire`).
fn opts(c: &ConnOptions, n: usize) -> Opts {
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
fn opts_no_db(c: &ConnOptions) -> Opts {
    let mut c = c.clone();
    c.db.clear();
    opts(&c, 0)
}

/// The server (or client-side) error code of a driver error, if it has one. Lost connections
/// map to 2013 so `--mysql-ignore-errors` lists behave as with libmysqlclient.
fn error_code(e: &mysql_async::Error) -> Option<u16> {
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
fn describe(e: &mysql_async::Error) -> String {
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
async fn open(c: &ConnOptions, o: Opts) -> Result<Conn, mysql_async::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_cannot_end_its_literal() {
        assert_eq!(quote("sbtest"), "'sbtest'");
        assert_eq!(quote("o'brien"), "'o''brien'");
        assert_eq!(quote("a\\' OR 1=1 -- "), "'a\\\\'' OR 1=1 -- '");
    }

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
        let e = Admin::connect(&c, 0)
            .await
            .expect_err("no greeting, no login")
            .to_string();
        assert!(
            e.contains("error 2013 (Lost connection to MySQL server at 'reading initial communication packet' (no answer within 10 s))"),
            "{e}"
        );
        assert!(e.contains("is it stopped (SIGSTOP), overloaded"), "{e}");
    }
}
