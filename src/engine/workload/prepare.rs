//! `prepare`, `prewarm` and `cleanup`: building the sbtest tables in parallel (create, load in
//! multi-row batches while the next batch is generated, index after the load), warming them,
//! and dropping them.

use super::rand::{Rng, C_LEN, PAD_LEN};
use super::{sql, WorkloadKind};
use crate::engine::config::{EngineConfig, Tables};
use crate::engine::db;
use crate::engine::wire;
use anyhow::{bail, Context};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Progress line unless the caller asked for quiet (sweeps under `--quiet`).
macro_rules! say {
    ($o:expr, $($t:tt)*) => {
        if !$o.quiet {
            println!($($t)*);
        }
    };
}

/// What a finished prepare reports.
#[derive(Debug, Clone, Copy)]
pub struct PrepareStats {
    pub tables: u32,
    pub rows: u64,
    pub seconds: f64,
    pub connections: u32,
}

impl PrepareStats {
    pub fn rows_per_sec(&self) -> f64 {
        if self.seconds > 0.0 {
            self.rows as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// One connection of the workload's own client for prepare's DDL, cleanup and prewarm (it
/// takes what the workload takes: a version 1 certificate under REQUIRED, say), to the
/// benchmark database, created first when the server says it is missing. Blocking; `n` says
/// where it goes as for the workload's n-th connection, and its socket goes into
/// `sockets[slot]`, so the watch can shut it on a server that stopped answering.
fn admin_conn(
    o: &EngineConfig,
    n: usize,
    create_db: bool,
    (sockets, slot): (&wire::Sockets, usize),
) -> anyhow::Result<wire::Conn> {
    let conn = connect_admin(o, n, create_db)?;
    sockets.set(slot, conn.stream());
    Ok(conn)
}

fn connect_admin(o: &EngineConfig, n: usize, create_db: bool) -> anyhow::Result<wire::Conn> {
    let failed = |e: wire::Error| db::cannot_connect(&o.conn, n, Some(e.code), e);
    match db::wire_connect(&o.conn, n, false) {
        Ok(c) => Ok(c),
        Err(e) if create_db && e.code == 1049 => {
            let mut no_db = o.conn.clone();
            no_db.db.clear();
            let mut c = db::wire_connect(&no_db, n, false).map_err(failed)?;
            c.query(&format!("CREATE DATABASE IF NOT EXISTS `{}`", o.conn.db))
                .map_err(|e| anyhow::anyhow!("cannot create database '{}': {e}", o.conn.db))?;
            say!(o, "Created database '{}'", o.conn.db);
            c.close();
            db::wire_connect(&o.conn, n, false).map_err(failed)
        }
        Err(e) => Err(failed(e)),
    }
}

/// Runs `work` on a blocking thread with its own copy of the configuration.
async fn blocking<T: Send + 'static>(
    o: &EngineConfig,
    work: impl FnOnce(&EngineConfig) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let o = o.clone();
    tokio::task::spawn_blocking(move || work(&o))
        .await
        .context("an administrative connection's thread failed")?
}

fn run_sql(conn: &mut wire::Conn, q: &str) -> anyhow::Result<()> {
    conn.query(q)
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("FATAL: {e} for query '{}'", short(q)))
}

/// A table that could not be created, with the remedy its error calls for: `cleanup` only
/// when the table is already there.
fn create_failed(t: u32, e: &wire::Error) -> anyhow::Error {
    let remedy = match e.code {
        1050 => " (it exists: drop it first with cleanup)",
        1044 | 1142 => " (the user may not create tables here: GRANT CREATE ON the database)",
        1049 => " (no such database: CREATE DATABASE it, or name another with --mysql-db)",
        1286 => {
            " (the server has no such storage engine: see SHOW ENGINES, --mysql-storage-engine)"
        }
        _ => "",
    };
    anyhow::anyhow!("FATAL: creating table sbtest{t}: {e}{remedy}")
}

fn short(q: &str) -> &str {
    &q[..q.len().min(160)]
}

/// A slice of one table's rows for one loader connection.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    table: u32,
    first: u64,
    rows: u64,
}

/// How many connections prepare uses when `--prepare-threads` is not given: at least the
/// machine's cores, since the server parses and the client generates at the same time.
fn prepare_parallelism(o: &EngineConfig) -> u32 {
    if o.prepare_threads > 0 {
        return o.prepare_threads;
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
    o.threads.max(cores).max(2)
}

/// `prepare`: sysbench's tables with sysbench's data, built in parallel, under the watch
/// (a server that stops answering, or an interrupt, ends it and shuts the loaders' sockets).
pub async fn prepare(o: &EngineConfig) -> anyhow::Result<PrepareStats> {
    if o.dry_run {
        return Ok(dry_prepare(o));
    }
    // The loaders' connections and, in the slot after them, the DDL's.
    let sockets = Arc::new(wire::Sockets::new(prepare_parallelism(o) as usize + 1));
    let shut = sockets.clone();
    crate::engine::watch::watched(
        &o.conn,
        "preparing the tables",
        build(o, sockets),
        move || shut.shutdown_all(),
    )
    .await
}

async fn build(o: &EngineConfig, sockets: Arc<wire::Sockets>) -> anyhow::Result<PrepareStats> {
    let started = Instant::now();
    let ddl = prepare_parallelism(o) as usize;
    if o.workload == WorkloadKind::BulkInsert {
        let s = sockets.clone();
        blocking(o, move |o| {
            let mut admin = admin_conn(o, 0, true, (&s, ddl))?;
            for t in 1..=o.threads {
                say!(o, "Creating table 'sbtest{t}'...");
                run_sql(&mut admin, &sql::create_bulk_table(t))?;
            }
            admin.close();
            Ok(())
        })
        .await?;
        return Ok(PrepareStats {
            tables: o.threads,
            rows: 0,
            seconds: started.elapsed().as_secs_f64(),
            connections: 1,
        });
    }
    let table_size = rows_to_load(o);
    // sysbench with one thread prints each table's lines together, table after table; with
    // more, "Initializing worker threads..." and then the lines as the threads go. The load is
    // parallel either way; with one thread a table's lines wait until it is done.
    let serial = o.threads <= 1;
    if !serial {
        say!(o, "Initializing worker threads...\n");
    }
    let s = sockets.clone();
    blocking(o, move |o| {
        let mut admin = admin_conn(o, 0, true, (&s, ddl))?;
        for t in 1..=o.wl.tables {
            if !serial {
                say!(o, "Creating table 'sbtest{t}'...");
            }
            admin
                .query(&sql::create_table(t, &o.wl))
                .map_err(|e| create_failed(t, &e))?;
        }
        admin.close();
        Ok(())
    })
    .await?;

    let conns = prepare_parallelism(o);
    let per_table = if table_size == 0 {
        0
    } else {
        (conns as u64)
            .div_ceil(o.wl.tables as u64)
            .clamp(1, table_size.div_ceil(1000))
    };
    let mut chunks = Vec::new();
    for t in 1..=o.wl.tables {
        if table_size > 0 && !serial {
            say!(o, "Inserting {table_size} records into 'sbtest{t}'");
        }
        let step = table_size.div_ceil(per_table.max(1));
        let mut first = 1;
        while first <= table_size {
            let rows = step.min(table_size - first + 1);
            chunks.push(Chunk {
                table: t,
                first,
                rows,
            });
            first += rows;
        }
    }
    let shared = Arc::new(Loader {
        opts: o.clone(),
        next: AtomicUsize::new(0),
        left: (0..=o.wl.tables)
            .map(|t| AtomicU32::new(chunks.iter().filter(|c| c.table == t).count() as u32))
            .collect(),
        rows_done: AtomicU64::new(0),
        seed: super::rand::effective_seed(o.rand_seed),
        failed: AtomicBool::new(false),
        serial: serial.then(|| Mutex::new(InOrder::default())),
        table_size,
        chunks,
        sockets,
    });
    // Tables with no rows still get their index.
    if table_size == 0 {
        let (shared, s) = (shared.clone(), shared.sockets.clone());
        blocking(o, move |o| {
            let mut c = admin_conn(o, 0, false, (&s, ddl))?;
            for t in 1..=o.wl.tables {
                if o.wl.create_secondary {
                    if !serial {
                        say!(o, "Creating a secondary index on 'sbtest{t}'...");
                    }
                    run_sql(&mut c, &sql::create_index(t))?;
                }
                shared.table_done(t);
            }
            c.close();
            Ok(())
        })
        .await?;
    }
    let workers = conns.min(shared.chunks.len().max(1) as u32);
    let mut set = tokio::task::JoinSet::new();
    for w in 0..workers {
        let shared = shared.clone();
        set.spawn_blocking(move || shared.work(w as usize));
    }
    let total_rows = table_size * o.wl.tables as u64;
    let mut tick = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(10),
        Duration::from_secs(10),
    );
    loop {
        tokio::select! {
            r = set.join_next() => match r {
                None => break,
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => { shared.failed.store(true, Ordering::Relaxed); return Err(e); }
                Some(Err(e)) => { shared.failed.store(true, Ordering::Relaxed); bail!("prepare worker failed: {e}"); }
            },
            // Progress is ours, not sysbench's: on stderr, so stdout stays what log parsers
            // of sysbench expect.
            _ = tick.tick() => if !o.quiet {
                let done = shared.rows_done.load(Ordering::Relaxed);
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "[ {secs:.0}s ] inserted {done}/{total_rows} rows ({:.0} rows/s)",
                    done as f64 / secs
                );
            }
        }
    }
    Ok(PrepareStats {
        tables: o.wl.tables,
        rows: total_rows,
        seconds: started.elapsed().as_secs_f64(),
        connections: workers,
    })
}

/// Rows each table gets: oltp_insert with explicit ids starts from empty tables so its ids
/// cannot collide.
fn rows_to_load(o: &EngineConfig) -> u64 {
    if o.workload == WorkloadKind::Insert && !o.wl.auto_inc {
        0
    } else {
        o.wl.table_size as u64
    }
}

/// sysbench's lines for one prepared table, in its order.
fn say_table(o: &EngineConfig, t: u32, rows: u64) {
    say!(o, "Creating table 'sbtest{t}'...");
    if rows > 0 {
        say!(o, "Inserting {rows} records into 'sbtest{t}'");
    }
    if o.wl.create_secondary {
        say!(o, "Creating a secondary index on 'sbtest{t}'...");
    }
}

/// `prepare --mysql-dry-run`: what sysbench prints when every call pretends to succeed.
fn dry_prepare(o: &EngineConfig) -> PrepareStats {
    let bulk = o.workload == WorkloadKind::BulkInsert;
    let tables = if bulk { o.threads } else { o.wl.tables };
    for t in 1..=tables {
        if bulk {
            say!(o, "Creating table 'sbtest{t}'...");
        } else {
            say_table(o, t, rows_to_load(o));
        }
    }
    PrepareStats {
        tables,
        rows: 0,
        seconds: 0.0,
        connections: 0,
    }
}

/// Rows per INSERT during the load: about sysbench's 512 KiB per statement, and well under
/// the 65,535 placeholders a prepared statement may have.
const ROWS_PER_INSERT: u64 = 2500;

struct Loader {
    opts: EngineConfig,
    chunks: Vec<Chunk>,
    next: AtomicUsize,
    /// Chunks still loading per table (index = table number): the last one builds the index.
    left: Vec<AtomicU32>,
    rows_done: AtomicU64,
    seed: u64,
    /// Set when a loader failed: the others stop at their next statement.
    failed: AtomicBool,
    /// With one thread: tables finished, printed in table order (see `prepare`).
    serial: Option<Mutex<InOrder>>,
    table_size: u64,
    /// Each loader's socket, shut when the watch gives up on the server.
    sockets: Arc<wire::Sockets>,
}

/// Tables finished out of order, and the next one whose lines are due.
#[derive(Default)]
struct InOrder {
    done: std::collections::BTreeSet<u32>,
    next: u32,
}

/// One load statement's worth of rows, encoded for the server.
struct Batch {
    bytes: Vec<u8>,
    rows: u64,
}

impl Loader {
    /// Table `t` is loaded and indexed: with one thread, print the lines of every table up to
    /// the first unfinished one, as sysbench would have printed them one table at a time.
    fn table_done(&self, t: u32) {
        let Some(m) = &self.serial else {
            return;
        };
        let o = &self.opts;
        let mut q = m.lock().unwrap_or_else(|p| p.into_inner());
        q.next = q.next.max(1);
        q.done.insert(t);
        loop {
            let t = q.next;
            if !q.done.remove(&t) {
                break;
            }
            say_table(o, t, self.table_size);
            q.next += 1;
        }
    }

    fn work(&self, w: usize) -> anyhow::Result<()> {
        let r = self.work_inner(w);
        if r.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        r
    }

    fn work_inner(&self, w: usize) -> anyhow::Result<()> {
        let c = &self.opts.conn;
        // The rows are ASCII: in the server's own character set they are stored without a
        // conversion per value (+25–50 % rows/s where the server's default is latin1).
        let mut conn =
            db::wire_connect(c, w, true).map_err(|e| db::cannot_connect(c, w, Some(e.code), e))?;
        self.sockets.set(w, conn.stream());
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&chunk) = self.chunks.get(i) else {
                break;
            };
            self.load(&mut conn, chunk, self.seed.wrapping_add(i as u64 * 7919))?;
            let t = chunk.table as usize;
            if self.left[t].fetch_sub(1, Ordering::AcqRel) == 1 {
                if self.opts.wl.create_secondary {
                    if self.serial.is_none() {
                        say!(self.opts, "Creating a secondary index on 'sbtest{t}'...");
                    }
                    let q = sql::create_index(chunk.table);
                    conn.query(&q)
                        .map_err(|e| anyhow::anyhow!("FATAL: {e} for query '{}'", short(&q)))?;
                }
                self.table_done(chunk.table);
            }
        }
        conn.close();
        Ok(())
    }

    /// Streams one chunk as multi-row INSERTs, prepared and sent in the binary protocol (the
    /// server skips parsing ~190 bytes of literals per row: 1.5–2× the rows/s of text), or as
    /// text when the server cannot prepare them. A generator thread encodes the next batch
    /// while the server runs the current one.
    fn load(&self, conn: &mut wire::Conn, chunk: Chunk, seed: u64) -> anyhow::Result<()> {
        let wl = &self.opts.wl;
        let per = ROWS_PER_INSERT.min(chunk.rows.max(1));
        let fail = |e: wire::Error, what: &str| {
            anyhow::anyhow!(
                "FATAL: loading sbtest{}: {e} for query '{what}'",
                chunk.table
            )
        };
        let full_text = sql::load_statement(chunk.table, wl.auto_inc, per);
        let full = match conn.prepare(&full_text) {
            Ok(st) => Some(st),
            Err(e) if e.code == db::ER_UNSUPPORTED_PS => None,
            Err(e) => return Err(fail(e, short(&full_text))),
        };
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(2);
        let (ret_tx, ret_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let gen = Generator {
            wl: wl.clone(),
            rand: self.opts.rand,
            chunk,
            seed,
            per,
            binary: full.is_some(),
        };
        std::thread::scope(|scope| {
            scope.spawn(move || gen.run(tx, ret_rx));
            for batch in rx {
                if self.failed.load(Ordering::Relaxed) {
                    bail!("stopped: another loader failed");
                }
                if crate::interrupt::requested() {
                    bail!("interrupted while loading sbtest{}", chunk.table);
                }
                let r = match &full {
                    Some(st) if batch.rows == per => conn.execute_encoded(st, &batch.bytes),
                    Some(_) => {
                        let text = sql::load_statement(chunk.table, wl.auto_inc, batch.rows);
                        let st = conn.prepare(&text).map_err(|e| fail(e, short(&text)))?;
                        conn.execute_encoded(&st, &batch.bytes)
                    }
                    None => conn.query_bytes(&batch.bytes),
                };
                r.map_err(|e| fail(e, short(&full_text)))?;
                self.rows_done.fetch_add(batch.rows, Ordering::Relaxed);
                let _ = ret_tx.send(batch.bytes);
            }
            Ok(())
        })
    }
}

/// Generates a chunk's rows (sysbench's values: k by --rand-type, c and pad as digit groups)
/// into statement payloads.
struct Generator {
    wl: super::WorkloadOptions,
    rand: super::rand::RandParams,
    chunk: Chunk,
    seed: u64,
    per: u64,
    /// Binary COM_STMT_EXECUTE payloads, or SQL text.
    binary: bool,
}

impl Generator {
    fn run(
        self,
        tx: std::sync::mpsc::SyncSender<Batch>,
        recycled: std::sync::mpsc::Receiver<Vec<u8>>,
    ) {
        let wl = &self.wl;
        let mut rng = Rng::seeded(self.seed);
        let (mut c, mut pad) = ([0u8; C_LEN], [0u8; PAD_LEN]);
        let kinds: &[bool] = if wl.auto_inc {
            &[true, false, false]
        } else {
            &[true, true, false, false]
        };
        let text_prefix = sql::load_prefix(self.chunk.table, wl.auto_inc);
        let end = self.chunk.first + self.chunk.rows;
        let mut first = self.chunk.first;
        while first < end {
            let rows = self.per.min(end - first);
            let mut buf = recycled
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(sql::BULK_BUFFER + 4096));
            if self.binary {
                wire::begin_execute(&mut buf, kinds, rows as usize);
            } else {
                buf.clear();
                buf.extend_from_slice(text_prefix.as_bytes());
            }
            for id in first..first + rows {
                let k = rng.default_dist(1, wl.table_size, &self.rand);
                rng.fill_digit_groups(&mut c);
                rng.fill_digit_groups(&mut pad);
                if self.binary {
                    if !wl.auto_inc {
                        wire::put_int(&mut buf, id as i64);
                    }
                    wire::put_int(&mut buf, k as i64);
                    wire::put_str(&mut buf, &c);
                    wire::put_str(&mut buf, &pad);
                } else {
                    if id > first {
                        buf.push(b',');
                    }
                    buf.push(b'(');
                    if !wl.auto_inc {
                        let _ = write!(buf, "{id}, ");
                    }
                    let _ = write!(buf, "{k}, '");
                    buf.extend_from_slice(&c);
                    buf.extend_from_slice(b"', '");
                    buf.extend_from_slice(&pad);
                    buf.extend_from_slice(b"')");
                }
            }
            if tx.send(Batch { bytes: buf, rows }).is_err() {
                return;
            }
            first += rows;
        }
    }
}

/// Tables a command works on: sbtest1..N, or one per thread for bulk_insert.
fn table_count(o: &EngineConfig) -> anyhow::Result<u32> {
    match o.workload.spec().tables {
        Tables::PerThread => Ok(o.threads),
        Tables::First if o.wl.tables > 1 => {
            bail!(
                "{} works on one table: --tables must be 1",
                o.workload.name()
            )
        }
        Tables::First | Tables::Oltp => Ok(o.wl.tables),
    }
}

/// `cleanup`: DROP TABLE IF EXISTS for every table, on one connection.
pub async fn cleanup(o: &EngineConfig) -> anyhow::Result<()> {
    let tables = table_count(o)?;
    if o.dry_run {
        for t in 1..=tables {
            say!(o, "Dropping table 'sbtest{t}'...");
        }
        return Ok(());
    }
    let sockets = Arc::new(wire::Sockets::new(1));
    let shut = sockets.clone();
    crate::engine::watch::watched(
        &o.conn,
        "dropping the tables",
        drop_all(o, tables, sockets),
        move || shut.shutdown_all(),
    )
    .await
}

async fn drop_all(
    o: &EngineConfig,
    tables: u32,
    sockets: Arc<wire::Sockets>,
) -> anyhow::Result<()> {
    blocking(o, move |o| {
        let mut conn = admin_conn(o, 0, false, (&sockets, 0))?;
        for t in 1..=tables {
            say!(o, "Dropping table 'sbtest{t}'...");
            run_sql(&mut conn, &sql::drop_table(t))?;
        }
        conn.close();
        Ok(())
    })
    .await
}

/// `prewarm`: read every table through its primary key and its secondary index, in parallel.
pub async fn prewarm(o: &EngineConfig) -> anyhow::Result<()> {
    let tables = table_count(o)?;
    if o.dry_run {
        for t in 1..=tables {
            say!(o, "Prewarming table sbtest{t}");
        }
        return Ok(());
    }
    let workers = o.threads.min(tables).max(1);
    let sockets = Arc::new(wire::Sockets::new(workers as usize));
    let shut = sockets.clone();
    crate::engine::watch::watched(
        &o.conn,
        "prewarming the tables",
        warm_all(o, tables, workers, sockets),
        move || shut.shutdown_all(),
    )
    .await
}

async fn warm_all(
    o: &EngineConfig,
    tables: u32,
    workers: u32,
    sockets: Arc<wire::Sockets>,
) -> anyhow::Result<()> {
    let next = Arc::new(AtomicU32::new(1));
    let mut set = tokio::task::JoinSet::new();
    for w in 0..workers {
        let (o, next, sockets) = (o.clone(), next.clone(), sockets.clone());
        set.spawn_blocking(move || {
            let mut conn = admin_conn(&o, w as usize, false, (&sockets, w as usize))?;
            run_sql(
                &mut conn,
                "SET SESSION tmp_table_size=2*1024*1024*1024, max_heap_table_size=2*1024*1024*1024",
            )?;
            loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t > tables {
                    break;
                }
                say!(o, "Prewarming table sbtest{t}");
                let size = o.wl.table_size;
                for q in [
                    format!("ANALYZE TABLE sbtest{t}"),
                    format!("SELECT AVG(id) FROM (SELECT * FROM sbtest{t} FORCE KEY (PRIMARY) LIMIT {size}) t"),
                    format!("SELECT COUNT(*) FROM (SELECT * FROM sbtest{t} WHERE k LIKE '%0%' LIMIT {size}) t"),
                ] {
                    run_sql(&mut conn, &q)?;
                }
            }
            conn.close();
            anyhow::Ok(())
        });
    }
    while let Some(r) = set.join_next().await {
        r.context("prewarm worker failed")??;
    }
    Ok(())
}
