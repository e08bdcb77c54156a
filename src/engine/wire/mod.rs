//! The workload's own MySQL client: a blocking connection per worker thread that speaks just
//! what the measured loop needs (COM_QUERY, COM_STMT_PREPARE/EXECUTE, COM_QUIT) and drains
//! results without building rows, so a query costs one write, usually one read and no
//! allocation. Administrative statements (preflight, variables, status) go through `engine::admin`,
//! on this same client with rows read as text (`rows`).
//!
//! In layers, each using only those above it: `error` (the error type, libmysqlclient's
//! client codes) and `proto` (the protocol's numbers); `stream` (the socket, opened, and
//! TLS's socket); `packet` (framing: sequence numbers checked, payloads capped, the read
//! buffer given back after a large result); `decode` (pure decoders from a payload to what
//! it says, which the tests fuzz without a socket); `auth` (the login, a function per auth
//! plugin) and `tls`; and here, the connection: commands and the one result-set loop.

mod auth;
pub mod decode;
mod error;
mod packet;
pub mod proto;
mod rows;
mod stream;
pub mod tls;
mod tls_v1;

use packet::{put_lenenc, Framed};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

pub use error::*;
pub use rows::TextRow;
use stream::open;
pub use stream::Stream;

/// Where a connection goes: a unix socket, or host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Socket(String),
    Tcp(String, u16),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Socket(s) => write!(f, "socket {s}"),
            Endpoint::Tcp(h, p) if h.contains(':') => write!(f, "[{h}]:{p}"),
            Endpoint::Tcp(h, p) => write!(f, "{h}:{p}"),
        }
    }
}

/// A statement parameter (or a value substituted into statement text).
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Int(i64),
    Str(&'a [u8]),
}

/// Who logs in, and to which database (empty: none).
#[derive(Clone)]
pub struct Login<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub db: &'a str,
    /// Talk in the server's default character set when it stores ASCII unchanged, so the
    /// server converts nothing (prepare's ASCII rows); otherwise utf8mb4 as sysbench does.
    pub server_charset: bool,
    /// Send the password in clear over TCP without TLS if the server asks for
    /// mysql_clear_password (`--mysql-allow-cleartext`); over a Unix socket it always may.
    pub allow_cleartext: bool,
    /// TLS over TCP (a Unix socket is local and stays as it is).
    pub tls: Option<tls::Tls>,
}

/// A server-side prepared statement.
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    id: u32,
    params: u16,
    pub columns: u16,
    /// The parameter types the server holds for it (see `types_key`); 0: none yet.
    bound: u64,
}

/// Parameter types as one number: the count, and which of the first 48 are strings. 0 when
/// they cannot be told apart that way (more than 48), so they are always sent.
fn types_key(args: &[Arg<'_>]) -> u64 {
    if args.is_empty() || args.len() > 48 {
        return 0;
    }
    let strings = args
        .iter()
        .enumerate()
        .fold(0u64, |m, (i, a)| m | (matches!(a, Arg::Str(_)) as u64) << i);
    (args.len() as u64) << 48 | strings
}

/// What a statement returned: whether it produced a result set, and the affected rows of
/// its last OK packet (changed rows: we do not set CLIENT_FOUND_ROWS, as libmysqlclient).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    pub result_set: bool,
    pub affected: u64,
}

pub struct Conn {
    f: Framed,
    pub server_version: String,
    /// The server's id for this connection (PROCESSLIST.ID); 0 for a dry run.
    pub connection_id: u32,
    /// `--mysql-dry-run`: every call succeeds at once without a server (sysbench's smoke
    /// test); the socket is an unconnected pair that is never written.
    dry: bool,
}

impl Conn {
    /// The server's own certificate (DER) when the login went over TLS.
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        let s = self.f.tls.as_ref()?;
        Some(s.conn.peer_certificates()?.first()?.as_ref().to_vec())
    }
}

impl Conn {
    /// Connects and logs in; `timeout` bounds the TCP connect and each read of the login.
    pub fn connect(ep: &Endpoint, login: &Login<'_>, timeout: Duration) -> Result<Conn, Error> {
        let stream = Arc::new(open(ep, timeout)?);
        let _ = stream.set_read_timeout(Some(timeout));
        let mut f = Framed::new(stream);
        let host = match ep {
            Endpoint::Tcp(h, _) => h.as_str(),
            Endpoint::Socket(_) => "localhost",
        };
        let g = auth::handshake(&mut f, login, matches!(ep, Endpoint::Socket(_)), host).map_err(|e| {
            // libmysqlclient's words: nothing was being queried yet.
            if e.code == CR_SERVER_LOST {
                Error::client(
                    CR_SERVER_LOST,
                    format!(
                        "Lost connection to MySQL server at 'reading initial communication packet' (no answer within {} s)",
                        timeout.as_secs_f64()
                    ),
                )
            } else {
                e
            }
        })?;
        let _ = f.stream.set_read_timeout(None);
        Ok(Conn {
            f,
            server_version: g.version,
            connection_id: g.connection_id,
            dry: false,
        })
    }

    /// A connection that pretends every call succeeds (`--mysql-dry-run`).
    pub fn dry() -> Result<Conn, Error> {
        let (a, _b) = UnixStream::pair().map_err(|e| {
            Error::client(
                CR_CONNECTION_ERROR,
                format!("dry run: no socket pair ({e})"),
            )
        })?;
        Ok(Conn {
            f: Framed::new(Arc::new(Stream::Unix(a))),
            server_version: "dry run".into(),
            connection_id: 0,
            dry: true,
        })
    }

    /// The socket, for shutting it down from another thread.
    pub fn stream(&self) -> &Arc<Stream> {
        &self.f.stream
    }

    /// Runs statement text (COM_QUERY) and drains its results.
    pub fn query(&mut self, sql: &str) -> Result<Outcome, Error> {
        if self.dry {
            return Ok(Outcome::default());
        }
        let b = self.f.begin();
        b.push(proto::COM_QUERY);
        b.extend_from_slice(sql.as_bytes());
        self.f.send()?;
        self.read_outcome(None)
    }

    /// Prepares a statement (COM_STMT_PREPARE), skipping its metadata.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        if self.dry {
            return Ok(Statement {
                id: 0,
                params: sql.matches('?').count() as u16,
                columns: 0,
                bound: 0,
            });
        }
        let b = self.f.begin();
        b.push(proto::COM_STMT_PREPARE);
        b.extend_from_slice(sql.as_bytes());
        self.f.send()?;
        let r = self.f.next()?;
        let ok = decode::prepare_ok(self.f.payload(r))?;
        let st = Statement {
            id: ok.id,
            columns: ok.columns,
            params: ok.params,
            bound: 0,
        };
        for n in [st.params, st.columns] {
            if n > 0 {
                for _ in 0..n {
                    self.f.next()?;
                }
                self.eof()?;
            }
        }
        Ok(st)
    }

    /// Executes a prepared statement with `args` in the binary protocol and drains its
    /// results. Parameter types go with the first execution and again only when they change
    /// (as libmysqlclient does), so the server need not set them up each time.
    pub fn execute(&mut self, st: &mut Statement, args: &[Arg<'_>]) -> Result<Outcome, Error> {
        if self.dry {
            return Ok(Outcome::default());
        }
        if args.len() != st.params as usize {
            return Err(Error::client(
                CR_INVALID_PARAMETER_NO,
                format!(
                    "Invalid parameter number: the statement takes {}, {} given",
                    st.params,
                    args.len()
                ),
            ));
        }
        let b = self.f.begin();
        put_execute_head(b, st.id, args.len());
        let key = types_key(args);
        if !args.is_empty() {
            if key != 0 && key == st.bound {
                b.push(0); // the server has the types
            } else {
                b.push(1);
                for a in args {
                    put_type(b, matches!(a, Arg::Int(_)));
                }
            }
            for a in args {
                match *a {
                    Arg::Int(v) => put_int(b, v),
                    Arg::Str(s) => put_str(b, s),
                }
            }
        }
        self.f.send()?;
        let out = self.read_outcome(None);
        // After an error the server may not have kept them: send them again next time.
        st.bound = if out.is_ok() { key } else { 0 };
        out
    }

    /// Runs statement text given as bytes (a bulk load's batch).
    pub fn query_bytes(&mut self, sql: &[u8]) -> Result<Outcome, Error> {
        if self.dry {
            return Ok(Outcome::default());
        }
        let b = self.f.begin();
        b.push(proto::COM_QUERY);
        b.extend_from_slice(sql);
        self.f.send()?;
        self.read_outcome(None)
    }

    /// Executes `st` with a payload built by [`begin_execute`] and the `put_*` functions
    /// (possibly on another thread, before the statement id was known).
    pub fn execute_encoded(&mut self, st: &Statement, payload: &[u8]) -> Result<Outcome, Error> {
        if self.dry {
            return Ok(Outcome::default());
        }
        let b = self.f.begin();
        b.extend_from_slice(payload);
        if b.len() < 9 {
            return Err(Error::client(
                CR_INVALID_PARAMETER_NO,
                "Empty COM_STMT_EXECUTE payload".into(),
            ));
        }
        b[5..9].copy_from_slice(&st.id.to_le_bytes());
        self.f.send()?;
        self.read_outcome(None)
    }

    /// Says goodbye (COM_QUIT); the server closes its end.
    pub fn close(mut self) {
        if self.dry {
            return;
        }
        self.f.begin().push(proto::COM_QUIT);
        let _ = self.f.send();
    }

    fn eof(&mut self) -> Result<u16, Error> {
        let r = self.f.next()?;
        let p = self.f.payload(r);
        match p.first() {
            _ if decode::is_eof(p) => Ok(decode::eof_status(p)),
            Some(&proto::ERR) => Err(decode::err(p)),
            _ => Err(Error::malformed()),
        }
    }

    /// Reads every result of the command just sent; the rows of the first result set into
    /// `rows` when given (the administrative client's), drained unread otherwise (the
    /// workload's: no row is built).
    fn read_outcome(&mut self, mut rows: Option<&mut Vec<TextRow>>) -> Result<Outcome, Error> {
        let mut out = Outcome::default();
        loop {
            let r = self.f.next()?;
            let p = self.f.payload(r);
            let status = match p.first() {
                Some(&proto::OK) => {
                    let ok = decode::ok(p)?;
                    out.affected = ok.affected;
                    ok.status
                }
                Some(&proto::ERR) => return Err(decode::err(p)),
                Some(&proto::LOCAL_INFILE) => {
                    // LOAD DATA LOCAL: we send no file; the server answers with its result.
                    self.f.begin_reply();
                    self.f.send()?;
                    continue;
                }
                _ => {
                    out.result_set = true;
                    let columns = decode::column_count(p)?;
                    for _ in 0..columns {
                        self.f.next()?;
                    }
                    self.eof()?;
                    // Only the first result set's rows are kept.
                    self.result_rows(columns as usize, rows.take())?
                }
            };
            if status & proto::SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(out);
            }
        }
    }

    /// A result set's rows up to its EOF packet, whose status flags it returns: each row read
    /// as text into `keep` (the administrative client's), or skipped unread (the workload's:
    /// no row is built, nothing allocated). An ERR instead of a row ends the statement.
    fn result_rows(
        &mut self,
        columns: usize,
        mut keep: Option<&mut Vec<TextRow>>,
    ) -> Result<u16, Error> {
        loop {
            let r = self.f.next()?;
            let p = self.f.payload(r);
            match p.first() {
                _ if decode::is_eof(p) => return Ok(decode::eof_status(p)),
                Some(&proto::ERR) => return Err(decode::err(p)),
                _ => {}
            }
            if let Some(rows) = keep.as_deref_mut() {
                let mut row = Vec::with_capacity(columns.min(64));
                decode::text_row(p, columns, &mut row)?;
                rows.push(row);
            }
        }
    }
}

/// Starts a COM_STMT_EXECUTE payload (command byte included, statement id left for
/// [`Conn::execute_encoded`]) whose parameters are `kinds` repeated `repeat` times: an integer
/// for `true`, a string for `false`. The values follow with [`put_int`] and [`put_str`].
pub fn begin_execute(buf: &mut Vec<u8>, kinds: &[bool], repeat: usize) {
    let n = kinds.len() * repeat;
    buf.clear();
    put_execute_head(buf, 0, n);
    if n > 0 {
        buf.push(1);
        for _ in 0..repeat {
            for &int in kinds {
                put_type(buf, int);
            }
        }
    }
}

/// COM_STMT_EXECUTE up to its types flag: command, statement id, no cursor, one iteration,
/// and the null bitmap (no NULLs) of `params` parameters.
fn put_execute_head(buf: &mut Vec<u8>, id: u32, params: usize) {
    buf.push(proto::COM_STMT_EXECUTE);
    buf.extend_from_slice(&id.to_le_bytes());
    buf.push(0);
    buf.extend_from_slice(&1u32.to_le_bytes());
    buf.extend(std::iter::repeat_n(0u8, params.div_ceil(8)));
}

/// A parameter's type: a signed 64-bit integer, or a string.
fn put_type(buf: &mut Vec<u8>, int: bool) {
    let t = if int {
        proto::MYSQL_TYPE_LONGLONG
    } else {
        proto::MYSQL_TYPE_STRING
    };
    buf.extend_from_slice(&[t, 0]);
}

pub fn put_int(buf: &mut Vec<u8>, v: i64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub fn put_str(buf: &mut Vec<u8>, s: &[u8]) {
    put_lenenc(buf, s.len() as u64);
    buf.extend_from_slice(s);
}

/// The live sockets of a run, one slot per connection, so the run can end queries that hang
/// (forced shutdown, point timeout) by shutting their sockets down.
#[derive(Debug, Default)]
pub struct Sockets {
    slots: Vec<std::sync::Mutex<Option<Arc<Stream>>>>,
    closed: std::sync::atomic::AtomicBool,
}

impl Sockets {
    pub fn new(n: usize) -> Sockets {
        Sockets {
            slots: (0..n).map(|_| Default::default()).collect(),
            closed: Default::default(),
        }
    }

    /// Records connection `i`'s current socket; one opened after `shutdown_all` is shut at once.
    pub fn set(&self, i: usize, s: &Arc<Stream>) {
        if let Some(slot) = self.slots.get(i) {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(s.clone());
        }
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            s.shutdown();
        }
    }

    pub fn shutdown_all(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        for slot in &self.slots {
            if let Some(s) = &*slot.lock().unwrap_or_else(|p| p.into_inner()) {
                s.shutdown();
            }
        }
    }
}
