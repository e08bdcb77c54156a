//! `wire`'s errors: a server's (its code, SQLSTATE and message), or a client-side one with
//! libmysqlclient's code, named here, so `--mysql-ignore-errors` lists and remedies mean what
//! they mean with sysbench and the mysql client.

/// libmysqlclient's client error codes (errmsg.h) that `wire` reports.
pub const CR_UNKNOWN_ERROR: u16 = 2000;
pub const CR_CONNECTION_ERROR: u16 = 2002;
pub const CR_CONN_HOST_ERROR: u16 = 2003;
pub const CR_SERVER_GONE_ERROR: u16 = 2006;
pub const CR_SERVER_LOST: u16 = 2013;
pub const CR_NET_PACKET_TOO_LARGE: u16 = 2020;
pub const CR_SSL_CONNECTION_ERROR: u16 = 2026;
pub const CR_MALFORMED_PACKET: u16 = 2027;
pub const CR_INVALID_PARAMETER_NO: u16 = 2034;
pub const CR_AUTH_PLUGIN_CANNOT_LOAD: u16 = 2059;
pub const CR_AUTH_PLUGIN_ERR: u16 = 2061;

/// A server error, or a client-side one with libmysqlclient's code (2013 lost connection,
/// 2003 cannot connect, 2027 malformed packet, ...), so `--mysql-ignore-errors` lists mean
/// what they mean with sysbench.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: u16,
    pub message: String,
    /// The server's SQLSTATE ("28000"), when the error came from the server.
    pub sqlstate: Option<[u8; 5]>,
}

impl Error {
    pub fn client(code: u16, message: String) -> Error {
        Error {
            code,
            message,
            sqlstate: None,
        }
    }

    /// The SQLSTATE as text, if the server gave one.
    pub fn sqlstate(&self) -> Option<&str> {
        self.sqlstate
            .as_ref()
            .and_then(|s| std::str::from_utf8(s).ok())
    }

    pub(super) fn malformed() -> Error {
        Error::client(CR_MALFORMED_PACKET, "Malformed packet".into())
    }

    pub(super) fn lost(e: &std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::BrokenPipe => Error::client(
                CR_SERVER_GONE_ERROR,
                format!("MySQL server has gone away ({e})"),
            ),
            _ => Error::client(
                CR_SERVER_LOST,
                format!("Lost connection to MySQL server during query ({e})"),
            ),
        }
    }
}

impl std::fmt::Display for Error {
    /// `error 1045 (Access denied …) [SQLSTATE 28000]`: the code first, as sysbench's FATAL
    /// lines and `--mysql-ignore-errors` speak of it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error {} ({})", self.code, self.message)?;
        match self.sqlstate() {
            Some(s) => write!(f, " [SQLSTATE {s}]"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Error {}
