//! The one bracket around every measured window (`Bracket`), whatever the design: what is
//! read before a window (the server's counters, the server's and the host's CPU, the clock)
//! and what its record is given after it (its figures and status from the measurement, its
//! samples, the CPU it cost, the share of the host others took, the counters kept, a dead
//! server revived).

use super::block::Block;
use super::measure::Measured;
use super::point_grace_s;
use super::record::{fail_if_empty, host_shares, set_shares, write_samples};
use super::window::Seat;
use crate::engine::exec::RunReport;
use crate::pipeline::events::Events;
use crate::pipeline::plan::Point;
use crate::pipeline::results::cost::Sample;
use crate::pipeline::results::{r4, PointRecord, PointStatus, RunDir};
use crate::pipeline::spec::SweepSpec;
use crate::usage::HostCpu;
use std::time::Instant;

/// What a window cost: the server's CPU (None where it cannot be read), the host's CPU and
/// the wall clock, read before and after it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spent {
    pub server_s: Option<f64>,
    /// A managed proxy's CPU in front of the server (0 without one): part of what is
    /// measured, so not "others".
    pub proxy_s: f64,
    pub host: Option<HostCpu>,
    pub wall_s: f64,
}

impl Spent {
    /// Nothing spent yet: what an interleaved round's turns add up from.
    pub fn nothing() -> Spent {
        Spent {
            server_s: Some(0.0),
            proxy_s: 0.0,
            host: Some(HostCpu::default()),
            wall_s: 0.0,
        }
    }

    /// Adds a later window's cost (an interleaved round's next turn); a reading missing from
    /// any turn leaves the sum unknown.
    pub fn absorb(&mut self, s: Spent) {
        self.server_s = self.server_s.zip(s.server_s).map(|(a, b)| a + b);
        self.proxy_s += s.proxy_s;
        self.host = self.host.zip(s.host).map(|(a, b)| HostCpu {
            busy_s: a.busy_s + b.busy_s,
            steal_s: a.steal_s + b.steal_s,
            cpus: a.cpus.max(b.cpus),
        });
        self.wall_s += s.wall_s;
    }
}

/// The clock and the CPU readings a window starts from.
pub(super) struct Meter {
    server0: Option<f64>,
    proxy0: Option<f64>,
    host0: Option<HostCpu>,
    began: Instant,
}

impl Meter {
    /// Starts reading now; `b` is the block whose server is measured (None: a host test).
    pub fn start(b: Option<&Block>) -> Meter {
        Meter {
            server0: b.and_then(Block::server_cpu_seconds),
            proxy0: b.and_then(Block::proxy_cpu_seconds),
            host0: crate::usage::host_cpu(),
            began: Instant::now(),
        }
    }

    /// What the window cost since `start`.
    pub fn stop(self, b: Option<&Block>) -> Spent {
        let host1 = crate::usage::host_cpu();
        let server1 = b.and_then(Block::server_cpu_seconds);
        let proxy1 = b.and_then(Block::proxy_cpu_seconds);
        Spent {
            server_s: self.server0.zip(server1).map(|(a, z)| z - a),
            proxy_s: self
                .proxy0
                .zip(proxy1)
                .map_or(0.0, |(a, z)| (z - a).max(0.0)),
            // Readings over different sets of CPUs (the affinity changed) tell nothing.
            host: self
                .host0
                .zip(host1)
                .filter(|(a, z)| a.cpus == z.cpus)
                .map(|(a, z)| HostCpu {
                    busy_s: z.busy_s - a.busy_s,
                    steal_s: z.steal_s - a.steal_s,
                    cpus: z.cpus,
                }),
            wall_s: self.began.elapsed().as_secs_f64(),
        }
    }
}

/// One measured window of a point on a block, from its opening to its record: the one
/// bracket every design measures in. Opened before the measurement (the server's and the
/// host's CPU, the clock, the server's counters), closed after it (`close`): the record
/// settled from what was measured, its samples written, the CPU it cost and the share
/// others took set, the counters kept, a dead server revived.
pub(super) struct Bracket {
    meter: Meter,
    counters: Option<Sample>,
}

/// A window stopped but not yet written: what it cost, and its counters before.
pub(super) struct Stopped {
    spent: Spent,
    counters: Option<Sample>,
}

impl Bracket {
    /// Opens a window of point `p` on `b`: its counters now (after a profile asked for has
    /// attached, so that wait is in no window), then the CPU and the clock.
    pub async fn open(b: &mut Block, p: &Point) -> Bracket {
        let counters = b.window_start(p).await;
        Bracket {
            meter: Meter::start(Some(b)),
            counters,
        }
    }

    /// Opens a window whose counters are read later (`restart`): a sequential point reads
    /// them once its warmup is over. `b` None: a host test, no server.
    pub fn open_counting_later(b: Option<&Block>) -> Bracket {
        Bracket {
            meter: Meter::start(b),
            counters: None,
        }
    }

    /// The window starts again at the instant its counters `c` were read (a sequential
    /// point's warmup over), with the CPU and the clock read then (`meter`): what the
    /// warmup cost is in none of the window's figures. A measurement that never says when
    /// its warmup ended (the sysbench binary) keeps the opening's readings.
    pub fn restart(&mut self, c: Option<Sample>, meter: Meter) {
        self.counters = c;
        self.meter = meter;
    }

    /// The window is over: what it cost is read now.
    pub fn stop(self, b: Option<&Block>) -> Stopped {
        Stopped {
            spent: self.meter.stop(b),
            counters: self.counters,
        }
    }

    /// Stops and closes the window (`Stopped::close`).
    pub async fn close(
        self,
        b: Option<&mut Block>,
        to: &mut Keep<'_>,
        rec: &mut PointRecord,
        m: &anyhow::Result<Measured>,
        seat: Seat,
    ) -> Option<(f64, f64)> {
        let stopped = self.stop(b.as_deref());
        stopped.close(b, to, rec, m, seat).await
    }

    /// Closes a window whose cost was summed over turns (`Spent::absorb`) instead of read
    /// around it; its counters are still the ones read at its opening.
    pub fn spent(self, spent: Spent) -> Stopped {
        Stopped {
            spent,
            counters: self.counters,
        }
    }
}

/// Where a closed window's record and samples go.
pub(super) struct Keep<'a> {
    pub spec: &'a SweepSpec,
    pub dir: &'a mut RunDir,
    pub ev: &'a dyn Events,
}

impl Stopped {
    /// Writes what window `m` measured into `rec` and returns the shares of the host's CPU
    /// others took and the hypervisor stole (None where they cannot be told): the record's
    /// figures and status (`settle`), its samples, the server's CPU, the client's share of
    /// its cores; then the block's counters kept and, after a failure, its server revived.
    pub async fn close(
        self,
        b: Option<&mut Block>,
        to: &mut Keep<'_>,
        rec: &mut PointRecord,
        m: &anyhow::Result<Measured>,
        seat: Seat,
    ) -> Option<(f64, f64)> {
        settle(to.spec, rec, m);
        let id = rec.point_id.clone();
        match m {
            Err(_) => {}
            Ok(Measured::Sysbench { intervals }) => {
                if let Err(e) = to.dir.append_intervals(&id, intervals) {
                    rec.error = format!("per-second samples not written: {e:#}");
                }
            }
            Ok(Measured::Report { report, .. }) => write_samples(to.dir, to.ev, &id, report),
        }
        let mut shares = None;
        if m.is_ok() {
            // A host test has no server: its client is all that was measured.
            let ours = match &b {
                Some(_) => {
                    rec.server_cpu_s = self.spent.server_s.map(r4);
                    rec.server_cpu_s
                        .map(|s| rec.client_cpu_s + s + self.spent.proxy_s)
                }
                None => Some(rec.client_cpu_s),
            };
            if seat.alone_here {
                shares = ours
                    .zip(self.spent.host)
                    .map(|(o, host)| host_shares(host, self.spent.wall_s, o));
                set_shares(rec, shares);
            }
            if seat.has_client {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
                rec.client_cpu_pct = crate::pipeline::results::client_cpu_pct(
                    rec.client_cpu_s,
                    rec.duration_s,
                    rec.threads,
                    cores,
                );
            }
        }
        if let Some(b) = b {
            b.end_window(&to.dir.path, self.counters, rec, to.ev).await;
        }
        shares
    }
}

/// What a measurement gave, written into its record — the one way for every design: the
/// engine's counts, latencies and client CPU (sysbench's are already there), and the status:
/// failed with why (an error, the engine's fatal error, events still running past the
/// point's timeout, or no event at all), interrupted, or ok.
fn settle(spec: &SweepSpec, rec: &mut PointRecord, m: &anyhow::Result<Measured>) {
    match m {
        Err(e) => {
            rec.status = PointStatus::Failed;
            rec.set_error(e);
            return;
        }
        Ok(Measured::Sysbench { .. }) => {}
        Ok(Measured::Report {
            report,
            cpu_s,
            skew_ms,
        }) => {
            rec.fill(report, *cpu_s);
            rec.start_skew_ms = skew_ms.map(r4);
            rec.status = status(spec, report, rec);
        }
    }
    fail_if_empty(rec);
}

/// A measured window's status from its report: failed (with why), interrupted or ok.
fn status(spec: &SweepSpec, r: &RunReport, rec: &mut PointRecord) -> PointStatus {
    match (&r.fatal, r.interrupted, r.unfinished) {
        (Some(f), _, _) => {
            rec.set_fatal(f);
            PointStatus::Failed
        }
        (None, _, Some(n)) => {
            rec.error = format!(
                "point timeout: {n} event(s) still running {:.0}s after the point's end; ended by forced shutdown",
                point_grace_s(spec)
            );
            PointStatus::Failed
        }
        (None, true, None) => PointStatus::Interrupted,
        (None, false, None) => PointStatus::Ok,
    }
}
