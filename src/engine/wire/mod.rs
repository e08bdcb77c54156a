//! The workload's own MySQL client: a blocking connection per worker thread that speaks just
//! what the measured loop needs (COM_QUERY, COM_STMT_PREPARE/EXECUTE, COM_QUIT) and drains
//! results without building rows, so a query costs one write, usually one read and no
//! allocation. Administrative statements (preflight, variables, status) go through `engine::admin`,
//! on this same client with rows read as text (`rows`).

mod auth;
pub mod decode;
mod packet;
mod rows;
pub mod tls;
mod tls_v1;

use packet::{put_lenenc, Framed};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

pub use rows::TextRow;

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

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const MYSQL_TYPE_LONGLONG: u8 = 0x08;
const MYSQL_TYPE_STRING: u8 = 0xFE;

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

    fn malformed() -> Error {
        Error::client(2027, "Malformed packet".into())
    }

    fn lost(e: &std::io::Error) -> Error {
        match e.kind() {
            std::io::ErrorKind::BrokenPipe => {
                Error::client(2006, format!("MySQL server has gone away ({e})"))
            }
            _ => Error::client(
                2013,
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

/// A connected socket. Shared so another thread can shut it down to end a hung query.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// Ends any read or write in progress on this socket with an error.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }
}

impl Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
            Stream::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).write(buf),
            Stream::Unix(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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

fn open(ep: &Endpoint, timeout: Duration) -> Result<Stream, Error> {
    match ep {
        Endpoint::Socket(path) => UnixStream::connect(path).map(Stream::Unix).map_err(|e| {
            Error::client(
                2002,
                format!("Can't connect to local MySQL server through socket '{path}' ({e})"),
            )
        }),
        Endpoint::Tcp(host, port) => {
            let fail = |e: std::io::Error| {
                Error::client(
                    2003,
                    format!("Can't connect to MySQL server on '{host}:{port}' ({e})"),
                )
            };
            let mut last = None;
            for addr in (host.as_str(), *port).to_socket_addrs().map_err(fail)? {
                match TcpStream::connect_timeout(&addr, timeout) {
                    Ok(s) => {
                        let _ = s.set_nodelay(true);
                        return Ok(Stream::Tcp(s));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(fail(last.unwrap_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
            })))
        }
    }
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
            if e.code == 2013 {
                Error::client(
                    2013,
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
        let (a, _b) = UnixStream::pair()
            .map_err(|e| Error::client(2002, format!("dry run: no socket pair ({e})")))?;
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
        b.push(0x03);
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
        b.push(0x16);
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
                2034,
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
        b.push(0x03);
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
            return Err(Error::client(2034, "Empty COM_STMT_EXECUTE payload".into()));
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
        self.f.begin().push(0x01);
        let _ = self.f.send();
    }

    fn eof(&mut self) -> Result<u16, Error> {
        let r = self.f.next()?;
        let p = self.f.payload(r);
        match p.first() {
            _ if decode::is_eof(p) => Ok(decode::eof_status(p)),
            Some(&decode::ERR) => Err(decode::err(p)),
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
                Some(&decode::OK) => {
                    let ok = decode::ok(p)?;
                    out.affected = ok.affected;
                    ok.status
                }
                Some(&decode::ERR) => return Err(decode::err(p)),
                Some(&decode::LOCAL_INFILE) => {
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
                    match rows.take() {
                        Some(keep) => self.text_rows(columns as usize, keep)?,
                        None => self.drain_rows()?,
                    }
                }
            };
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(out);
            }
        }
    }

    /// Skips rows up to the EOF packet and returns its status flags.
    fn drain_rows(&mut self) -> Result<u16, Error> {
        loop {
            let r = self.f.next()?;
            let p = self.f.payload(r);
            match p.first() {
                _ if decode::is_eof(p) => return Ok(decode::eof_status(p)),
                Some(&decode::ERR) => return Err(decode::err(p)),
                _ => {}
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
    buf.push(0x17);
    buf.extend_from_slice(&id.to_le_bytes());
    buf.push(0);
    buf.extend_from_slice(&1u32.to_le_bytes());
    buf.extend(std::iter::repeat_n(0u8, params.div_ceil(8)));
}

/// A parameter's type: a signed 64-bit integer, or a string.
fn put_type(buf: &mut Vec<u8>, int: bool) {
    let t = if int {
        MYSQL_TYPE_LONGLONG
    } else {
        MYSQL_TYPE_STRING
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
