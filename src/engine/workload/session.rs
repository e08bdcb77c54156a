//! One worker's connection: the statements it prepared before the start, and the execution of
//! one event with sysbench's counting (§4), ignorable-error restarts and reconnects (§6).

use super::rand::{Rng, UniqueSeq, C_LEN, PAD_LEN};
use super::sql::{self, Arg};
use super::{EventPlan, Group, Stmt};
use crate::engine::config::Body;
use crate::engine::config::{EngineConfig, IgnoreErrors, PsMode};
use crate::engine::metrics::Tally;
use crate::engine::wire::{self, Conn, Outcome, Sockets, Statement};
use crate::engine::{db, Fatal};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest wait between two reconnect attempts: sysbench retries every millisecond,
/// which against a dead host is a thousand failed connects a second per thread; doubling
/// from 1 ms up to this keeps a returning server found within a quarter of a second.
const RECONNECT_BACKOFF_MAX: Duration = Duration::from_millis(250);
/// The wait after the first failed reconnect.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);

/// The wait after a failed reconnect that followed one of `wait`: twice as long, at most
/// `RECONNECT_BACKOFF_MAX`.
fn next_backoff(wait: Duration) -> Duration {
    (wait * 2).min(RECONNECT_BACKOFF_MAX)
}

/// How long a thread of a run with no time limit (`--time=0 --events=N`) tries to reconnect
/// before it gives up; a timed run tries until its deadline.
const RECONNECT_PATIENCE: Duration = Duration::from_secs(30);

/// What every session of a run shares, read-only.
#[derive(Debug)]
pub struct SessionConfig {
    pub opts: EngineConfig,
    pub plan: EventPlan,
    pub unique: UniqueSeq,
    /// Set when the run is ending; a reconnect loop gives up when it sees it.
    pub stop: Arc<AtomicBool>,
    /// Every session's socket, for ending hung queries.
    pub sockets: Sockets,
}

/// A statement ready to run: the server-side handle, or text to substitute when the server
/// refused to prepare it or `--db-ps-mode=disable`.
#[derive(Debug)]
struct Prepared {
    handle: Option<Statement>,
    text: String,
}

/// Why an event did not complete.
#[derive(Debug)]
pub enum EventError {
    /// A non-ignorable error: the run ends. The message is sysbench's FATAL line.
    Fatal(Fatal),
    /// The run is stopping while the session was reconnecting.
    Stopped,
    /// The connection was lost with an ignored error (2013, 2006) and could not be opened
    /// again before the run's deadline: the thread ends.
    Lost(Lost),
}

/// A connection lost for good: when it was lost, and the error of the last attempt to open
/// it again.
#[derive(Debug, Clone)]
pub struct Lost {
    pub at: Instant,
    pub error: wire::Error,
}

enum Failure {
    Restart,
    Fatal(Fatal),
    Stopped,
    Lost(Lost),
}

/// A statement's failure before the query text is attached.
enum Raw {
    Restart,
    Fatal(wire::Error),
    Stopped(Failure),
}

impl Raw {
    /// sysbench's FATAL line names the libmysqlclient call that failed: a server-side
    /// prepared statement's execute, or a query sent as text (`--db-ps-mode=disable`, a
    /// statement the server would not prepare, the bulk and text inserts).
    fn with_query(self, query: &str, prepared: bool) -> Failure {
        match self {
            Raw::Restart => Failure::Restart,
            Raw::Stopped(f) => f,
            Raw::Fatal(e) => {
                let call = if prepared {
                    "mysql_stmt_execute()"
                } else {
                    "mysql_drv_query()"
                };
                Failure::Fatal(Fatal::new(
                    format!("FATAL: {call} returned {e} for query '{query}'"),
                    Some(e.code),
                ))
            }
        }
    }
}

/// A worker's connection, statements, random state and reusable buffers.
pub struct Session {
    cfg: Arc<SessionConfig>,
    index: usize,
    conn: Conn,
    /// Per-table statements, indexed `stmt.index() * tables + (table - 1)`.
    stmts: Vec<Option<Prepared>>,
    begin: Option<Prepared>,
    commit: Option<Prepared>,
    random: Option<Prepared>,
    rng: Rng,
    text: String,
    c: [u8; C_LEN],
    pad: [u8; PAD_LEN],
    args: Vec<Arg<'static>>,
    bulk: String,
    bulk_rows: u64,
    /// Counts of the statements of the event in progress (including restarted attempts).
    pub tally: Tally,
    /// Codes of the ignored errors of the event in progress (reused buffer).
    pub event_codes: Vec<u16>,
    /// When the current run ends: a restarted event or a reconnect gives up then.
    deadline: Option<Instant>,
}

fn connect(cfg: &SessionConfig, index: usize) -> Result<Conn, wire::Error> {
    if cfg.opts.dry_run {
        return Conn::dry();
    }
    // The measured statements use sysbench's connection character set, so the server does the
    // same conversions for both tools.
    let conn = db::wire_connect(&cfg.opts.conn, index, false)?;
    cfg.sockets.set(index, conn.stream());
    Ok(conn)
}

impl Session {
    /// Connects (connection `index` of the run, for host/port round-robin) and prepares every
    /// statement the workload uses on every table, as sysbench's thread_init does.
    pub fn open(cfg: Arc<SessionConfig>, index: usize, seed: u64) -> anyhow::Result<Self> {
        let conn = connect(&cfg, index)
            .map_err(|e| db::cannot_connect(&cfg.opts.conn, index, Some(e.code), e))?;
        let mut s = Session {
            cfg,
            index,
            conn,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            random: None,
            rng: Rng::seeded(seed),
            text: String::with_capacity(1024),
            c: [0; C_LEN],
            pad: [0; PAD_LEN],
            args: Vec::with_capacity(32),
            bulk: String::new(),
            bulk_rows: 0,
            tally: Tally::default(),
            event_codes: Vec::with_capacity(8),
            deadline: None,
        };
        s.prepare_all()?;
        Ok(s)
    }

    /// The end of the run about to start (None: no time limit).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The server's id for this connection (PROCESSLIST.ID) as it was opened.
    pub fn connection_id(&self) -> u32 {
        self.conn.connection_id
    }

    fn prepare_one(&mut self, text: String) -> Result<Prepared, Fatal> {
        if self.cfg.opts.ps_mode == PsMode::Disable {
            return Ok(Prepared { handle: None, text });
        }
        match self.conn.prepare(text.as_str()) {
            Ok(st) => Ok(Prepared {
                handle: Some(st),
                text,
            }),
            Err(e) if e.code == db::ER_UNSUPPORTED_PS => Ok(Prepared { handle: None, text }),
            Err(e) => Err(Fatal::new(
                format!("FATAL: mysql_stmt_prepare() returned {e} for query '{text}'"),
                Some(e.code),
            )),
        }
    }

    fn prepare_all(&mut self) -> Result<(), Fatal> {
        let cfg = self.cfg.clone();
        let tables = cfg.opts.wl.tables;
        if cfg.plan.trx {
            self.begin = Some(self.prepare_one("BEGIN".into())?);
            self.commit = Some(self.prepare_one("COMMIT".into())?);
        }
        self.stmts = (0..Stmt::COUNT * tables as usize).map(|_| None).collect();
        for &stmt in &cfg.plan.prepared {
            for t in 1..=tables {
                let p = self.prepare_one(sql::stmt_text(stmt, t))?;
                self.stmts[stmt.index() * tables as usize + t as usize - 1] = Some(p);
            }
        }
        self.random = match cfg.opts.workload.spec().body {
            Body::RandomPoints => {
                Some(self.prepare_one(sql::random_points_text(cfg.opts.wl.random_points))?)
            }
            Body::RandomRanges => {
                Some(self.prepare_one(sql::random_ranges_text(cfg.opts.wl.number_of_ranges))?)
            }
            Body::Oltp { .. }
            | Body::PointSelect
            | Body::UpdateIndex
            | Body::UpdateNonIndex
            | Body::Delete
            | Body::Insert
            | Body::BulkRow => None,
        };
        Ok(())
    }

    /// Runs one event to completion, restarting it after ignorable errors (the latency the
    /// caller measures spans the retries, as in sysbench).
    pub fn run_event(&mut self) -> Result<(), EventError> {
        loop {
            match self.try_event() {
                Ok(()) => return Ok(()),
                // A restart is a new event to sysbench's event loop, which asks the time
                // limit first: an error that keeps coming never holds a thread past it.
                Err(Failure::Restart) => {
                    if self.cfg.stop.load(Ordering::Relaxed) || self.past_deadline() {
                        return Err(EventError::Stopped);
                    }
                }
                Err(Failure::Fatal(m)) => return Err(EventError::Fatal(m)),
                Err(Failure::Stopped) => return Err(EventError::Stopped),
                Err(Failure::Lost(l)) => return Err(EventError::Lost(l)),
            }
        }
    }

    fn table(&mut self) -> u32 {
        self.rng.uniform(1, self.cfg.opts.wl.tables)
    }

    fn id(&mut self) -> i64 {
        let size = self.cfg.opts.wl.table_size;
        self.rng.default_dist(1, size, &self.cfg.opts.rand) as i64
    }

    fn try_event(&mut self) -> Result<(), Failure> {
        let cfg = self.cfg.clone();
        let range = cfg.opts.wl.range_size as i64;
        for &group in &cfg.plan.groups {
            match group {
                Group::Begin => self.exec_special(true)?,
                Group::Commit => self.exec_special(false)?,
                Group::Run(stmt, count) => {
                    let t = self.table();
                    for _ in 0..count {
                        let id = self.id();
                        match stmt {
                            Stmt::PointSelect | Stmt::IndexUpdate => {
                                self.exec_table(stmt, t, &[Arg::Int(id)])?
                            }
                            Stmt::NonIndexUpdate => {
                                self.rng.fill_digit_groups(&mut self.c);
                                let c = self.c;
                                self.exec_table(stmt, t, &[Arg::Str(&c), Arg::Int(id)])?
                            }
                            _ => {
                                self.exec_table(stmt, t, &[Arg::Int(id), Arg::Int(id + range - 1)])?
                            }
                        }
                    }
                }
                Group::DeleteInsert(count) => {
                    let t = self.table();
                    for _ in 0..count {
                        let id = self.id();
                        let k = self.id();
                        self.exec_table(Stmt::Delete, t, &[Arg::Int(id)])?;
                        self.rng.fill_digit_groups(&mut self.c);
                        self.rng.fill_digit_groups(&mut self.pad);
                        let (c, pad) = (self.c, self.pad);
                        let args = [Arg::Int(id), Arg::Int(k), Arg::Str(&c), Arg::Str(&pad)];
                        self.exec_table(Stmt::Insert, t, &args)?;
                    }
                }
                Group::SingleDelete => {
                    let t = self.table();
                    let id = self.id();
                    self.exec_table(Stmt::Delete, t, &[Arg::Int(id)])?;
                }
                Group::TextInsert => self.text_insert()?,
                Group::BulkRow => self.bulk_row()?,
                Group::RandomPoints | Group::RandomRanges => self.random_select(group)?,
            }
        }
        Ok(())
    }

    fn exec_special(&mut self, begin: bool) -> Result<(), Failure> {
        let p = if begin {
            &mut self.begin
        } else {
            &mut self.commit
        };
        let p = p
            .as_mut()
            .expect("BEGIN/COMMIT prepared when the plan has them");
        let prepared = p.handle.is_some();
        let r = match &mut p.handle {
            Some(h) => self.conn.execute(h, &[]),
            None => self.conn.query(p.text.as_str()),
        };
        let query = if begin { "BEGIN" } else { "COMMIT" };
        self.classify(r).map_err(|f| f.with_query(query, prepared))
    }

    fn exec_table(&mut self, stmt: Stmt, table: u32, args: &[Arg<'_>]) -> Result<(), Failure> {
        let i = stmt.index() * self.cfg.opts.wl.tables as usize + table as usize - 1;
        let p = self.stmts[i]
            .as_mut()
            .expect("every planned statement is prepared for every table");
        let r = match &mut p.handle {
            Some(h) => self.conn.execute(h, args),
            None => {
                sql::substitute(&mut self.text, &p.text, args);
                self.conn.query(self.text.as_str())
            }
        };
        match self.classify(r) {
            Err(Raw::Fatal(e)) => {
                let p = self.stmts[i].as_ref().expect("prepared above");
                let prepared = p.handle.is_some();
                let query = if prepared { &p.text } else { &self.text };
                Err(Raw::Fatal(e).with_query(query, prepared))
            }
            other => other.map_err(|f| f.with_query("", true)),
        }
    }

    fn random_select(&mut self, group: Group) -> Result<(), Failure> {
        let wl = &self.cfg.opts.wl;
        let threads = self.cfg.opts.threads as f64;
        // Each thread draws from its own slice of the key space (the scripts' partitioning).
        let len = wl.table_size as f64 / threads;
        let slot = self.index as f64 % threads;
        let (lo, hi) = ((len * slot) as u32, (len * slot + len) as u32);
        let rand = self.cfg.opts.rand;
        self.args.clear();
        if group == Group::RandomPoints {
            for _ in 0..wl.random_points {
                let v = self.rng.default_dist(lo, hi, &rand);
                self.args.push(Arg::Int(v as i64));
            }
        } else {
            let delta = wl.delta as i64;
            for _ in 0..wl.number_of_ranges {
                let v = self.rng.default_dist(lo, hi, &rand) as i64;
                self.args.push(Arg::Int(v));
                self.args.push(Arg::Int(v + delta));
            }
        }
        let p = self.random.as_mut().expect("random statement prepared");
        let r = match &mut p.handle {
            Some(h) => self.conn.execute(h, &self.args),
            None => {
                sql::substitute(&mut self.text, &p.text, &self.args);
                self.conn.query(self.text.as_str())
            }
        };
        match self.classify(r) {
            Err(f) => {
                let p = self.random.as_ref().expect("prepared above");
                Err(f.with_query(&p.text, p.handle.is_some()))
            }
            Ok(()) => Ok(()),
        }
    }

    fn text_insert(&mut self) -> Result<(), Failure> {
        let t = self.table();
        let k = self.id();
        self.rng.fill_digit_groups(&mut self.c);
        self.rng.fill_digit_groups(&mut self.pad);
        let id: i64 = if self.cfg.opts.wl.auto_inc {
            0
        } else {
            self.cfg.unique.next() as i64 - 2_147_483_648
        };
        self.text.clear();
        let _ = write!(
            self.text,
            "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{}', '{}')",
            std::str::from_utf8(&self.c).unwrap_or_default(),
            std::str::from_utf8(&self.pad).unwrap_or_default()
        );
        let r = self.conn.query(self.text.as_str());
        match self.classify(r) {
            Err(f) => Err(f.with_query(&self.text, false)),
            Ok(()) => Ok(()),
        }
    }

    /// bulk_insert: appends `(n,n)` to this thread's buffer and sends it when the next row
    /// would overflow sysbench's 512 KiB buffer.
    fn bulk_row(&mut self) -> Result<(), Failure> {
        self.bulk_rows += 1;
        let n = self.bulk_rows;
        let row_len = 2 * (n.checked_ilog10().unwrap_or(0) as usize + 1) + 3;
        if !self.bulk.is_empty() && self.bulk.len() + 1 + row_len > sql::BULK_BUFFER {
            self.flush_bulk()?;
        }
        if self.bulk.is_empty() {
            let _ = write!(
                self.bulk,
                "INSERT INTO sbtest{} VALUES",
                self.index as u32 + 1
            );
        } else {
            self.bulk.push(',');
        }
        let _ = write!(self.bulk, "({n},{n})");
        Ok(())
    }

    fn flush_bulk(&mut self) -> Result<(), Failure> {
        if self.bulk.is_empty() {
            return Ok(());
        }
        let r = self.conn.query(self.bulk.as_str());
        let out = match self.classify(r) {
            Err(f) => Err(f.with_query(&self.bulk[..self.bulk.len().min(120)], false)),
            Ok(()) => Ok(()),
        };
        self.bulk.clear();
        out
    }

    /// Sends what bulk_insert still holds (sysbench's `bulk_insert_done` at thread end).
    pub fn finish(&mut self) -> Result<(), EventError> {
        match self.flush_bulk() {
            Err(Failure::Fatal(m)) => Err(EventError::Fatal(m)),
            _ => Ok(()),
        }
    }

    /// Counts a statement by its result, or decides between restart and fatal (§4, §6).
    fn classify(&mut self, r: Result<Outcome, wire::Error>) -> Result<(), Raw> {
        let e = match r {
            Ok(out) => {
                if out.result_set {
                    self.tally.reads += 1;
                } else if out.affected > 0 {
                    self.tally.writes += 1;
                } else {
                    self.tally.other += 1;
                }
                return Ok(());
            }
            Err(e) => e,
        };
        let code = e.code;
        let ignorable = match &self.cfg.opts.ignore_errors {
            IgnoreErrors::All => true,
            list => list.ignores(code),
        };
        if !ignorable {
            return Err(Raw::Fatal(e));
        }
        if db::CONNECTION_LOST.contains(&code) {
            self.tally.reconnects += 1;
            self.reconnect().map_err(Raw::Stopped)?;
        } else {
            self.tally.errors += 1;
            self.event_codes.push(code);
        }
        Err(Raw::Restart)
    }

    /// Reconnects until it works, as sysbench does, waiting 1 ms after the first failed
    /// attempt and twice as long after each next one (at most `RECONNECT_BACKOFF_MAX`), then
    /// prepares the statements again. Gives up when the run is stopping, and with the last
    /// attempt's error at the run's deadline (or after `RECONNECT_PATIENCE` without one).
    fn reconnect(&mut self) -> Result<(), Failure> {
        let at = Instant::now();
        let give_up = self.deadline.unwrap_or(at + RECONNECT_PATIENCE);
        let mut wait = FIRST_BACKOFF;
        loop {
            if self.cfg.stop.load(Ordering::Relaxed) {
                return Err(Failure::Stopped);
            }
            match connect(&self.cfg, self.index) {
                Ok(c) => {
                    self.conn = c;
                    break;
                }
                Err(error) => {
                    let now = Instant::now();
                    if now >= give_up {
                        return Err(Failure::Lost(Lost { at, error }));
                    }
                    std::thread::sleep(wait.min(give_up - now));
                    wait = next_backoff(wait);
                }
            }
        }
        self.prepare_all().map_err(Failure::Fatal)
    }

    /// Says goodbye to the server (its statements go with the connection).
    pub fn close(self) {
        self.conn.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The waits between reconnect attempts double from 1 ms and stop at 250 ms: a dead host
    /// gets four attempts a second per thread once the back-off has grown (not sysbench's
    /// thousand), and a returning server is tried again within a quarter of a second.
    #[test]
    fn the_reconnect_back_off_doubles_to_its_bound_and_stays_there() {
        let mut waits = vec![FIRST_BACKOFF];
        for _ in 0..20 {
            waits.push(next_backoff(*waits.last().unwrap()));
        }
        let ms: Vec<u128> = waits.iter().take(10).map(|w| w.as_millis()).collect();
        assert_eq!(ms, [1, 2, 4, 8, 16, 32, 64, 128, 250, 250]);
        assert!(waits.iter().all(|w| *w <= Duration::from_millis(250)));
    }
}
