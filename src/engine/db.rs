//! Where connections go and how they log in, from sysbench's `--mysql-*` options, for the
//! one client's two uses (`admin` for administration, `wire` for the workload), and what to
//! do about a connection that failed, by error code.

use crate::engine::config::ConnOptions;
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
pub(crate) const WIRE_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

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

#[cfg(test)]
mod tests {
    use super::*;

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
