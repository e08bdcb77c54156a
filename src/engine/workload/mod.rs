//! The eleven sysbench 1.0.20 MySQL workloads: their names, the statements each one prepares,
//! and the per-event sequence of statement groups (spec §3).

pub mod prepare;
pub mod primes;
pub mod rand;
pub mod session;
pub mod sql;

pub use crate::engine::config::WorkloadKind;
use crate::engine::config::{Body, WorkloadOptions};

/// A prepared statement sysbench's scripts create per table, in preparation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Stmt {
    pub const COUNT: usize = 9;

    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether executing it yields a result set (read) rather than an OK packet.
    pub fn returns_rows(self) -> bool {
        matches!(
            self,
            Stmt::PointSelect
                | Stmt::SimpleRange
                | Stmt::SumRange
                | Stmt::OrderRange
                | Stmt::DistinctRange
        )
    }
}

/// A run of one statement kind `count` times on one uniformly drawn table (sysbench's
/// `execute_*` functions). `DeleteInsert` stands for the DELETE + INSERT pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Begin,
    Commit,
    Run(Stmt, u32),
    DeleteInsert(u32),
    /// oltp_delete: one DELETE per event.
    SingleDelete,
    /// oltp_insert: one text INSERT per event.
    TextInsert,
    /// bulk_insert: one row appended to the thread's multi-row INSERT.
    BulkRow,
    /// select_random_points / select_random_ranges: one statement on sbtest1.
    RandomPoints,
    RandomRanges,
}

/// The statement groups of one event, in order, and the statements to prepare up front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPlan {
    pub groups: Vec<Group>,
    /// Per-table statements prepared at connect time.
    pub prepared: Vec<Stmt>,
    /// Whether BEGIN/COMMIT are prepared too.
    pub trx: bool,
}

impl EventPlan {
    pub fn new(kind: WorkloadKind, o: &WorkloadOptions) -> EventPlan {
        let body = kind.spec().body;
        let (reads, writes) = match body {
            Body::Oltp { reads, writes } => (reads, writes),
            _ => (false, false),
        };
        let trx = matches!(body, Body::Oltp { .. }) && !o.skip_trx;
        let mut groups = Vec::new();
        let mut prepared = Vec::new();
        fn add(stmt: Stmt, count: u32, groups: &mut Vec<Group>, prepared: &mut Vec<Stmt>) {
            prepared.push(stmt);
            if count > 0 {
                groups.push(Group::Run(stmt, count));
            }
        }
        if trx {
            groups.push(Group::Begin);
        }
        if reads {
            add(
                Stmt::PointSelect,
                o.point_selects,
                &mut groups,
                &mut prepared,
            );
            if o.range_selects {
                add(
                    Stmt::SimpleRange,
                    o.simple_ranges,
                    &mut groups,
                    &mut prepared,
                );
                add(Stmt::SumRange, o.sum_ranges, &mut groups, &mut prepared);
                add(Stmt::OrderRange, o.order_ranges, &mut groups, &mut prepared);
                add(
                    Stmt::DistinctRange,
                    o.distinct_ranges,
                    &mut groups,
                    &mut prepared,
                );
            }
        }
        if writes {
            add(
                Stmt::IndexUpdate,
                o.index_updates,
                &mut groups,
                &mut prepared,
            );
            add(
                Stmt::NonIndexUpdate,
                o.non_index_updates,
                &mut groups,
                &mut prepared,
            );
            prepared.push(Stmt::Delete);
            prepared.push(Stmt::Insert);
            if o.delete_inserts > 0 {
                groups.push(Group::DeleteInsert(o.delete_inserts));
            }
        }
        match body {
            Body::Oltp { .. } => {}
            Body::PointSelect => add(Stmt::PointSelect, 1, &mut groups, &mut prepared),
            Body::UpdateIndex => add(
                Stmt::IndexUpdate,
                o.index_updates,
                &mut groups,
                &mut prepared,
            ),
            Body::UpdateNonIndex => add(
                Stmt::NonIndexUpdate,
                o.non_index_updates,
                &mut groups,
                &mut prepared,
            ),
            Body::Delete => {
                prepared.push(Stmt::Delete);
                groups.push(Group::SingleDelete);
            }
            Body::Insert => groups.push(Group::TextInsert),
            Body::BulkRow => groups.push(Group::BulkRow),
            Body::RandomPoints => groups.push(Group::RandomPoints),
            Body::RandomRanges => groups.push(Group::RandomRanges),
        }
        if trx {
            groups.push(Group::Commit);
        }
        EventPlan {
            groups,
            prepared,
            trx,
        }
    }

    /// Server-side prepared statements one connection holds: every per-table statement on
    /// every table, BEGIN/COMMIT, and the random-select statement.
    pub fn statements_per_connection(&self, tables: u32) -> u32 {
        let random = self
            .groups
            .iter()
            .any(|g| matches!(g, Group::RandomPoints | Group::RandomRanges));
        self.prepared.len() as u32 * tables + 2 * self.trx as u32 + random as u32
    }

    /// Reads, writes and other statements one event performs when nothing fails and every
    /// write changes a row (spec §3's table). oltp_delete's split depends on the data.
    pub fn expected_counts(&self) -> (u64, u64, u64) {
        let (mut r, mut w, mut o) = (0u64, 0u64, 0u64);
        for g in &self.groups {
            match *g {
                Group::Begin | Group::Commit => o += 1,
                Group::Run(s, n) if s.returns_rows() => r += n as u64,
                Group::Run(_, n) => w += n as u64,
                Group::DeleteInsert(n) => w += 2 * n as u64,
                Group::SingleDelete | Group::TextInsert => w += 1,
                Group::BulkRow => {}
                Group::RandomPoints | Group::RandomRanges => r += 1,
            }
        }
        (r, w, o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{EngineConfig, Overrides};

    /// The event plan of "workload key = value, …" (a sweep file's `[workload_options]`).
    fn plan(spec: &str) -> EventPlan {
        let (name, options) = spec.split_once(' ').unwrap_or((spec, ""));
        let mut o = EngineConfig::new(WorkloadKind::from_name(name).unwrap());
        let options = options.replace(", ", "\n");
        toml::from_str::<Overrides>(&options).unwrap().apply(&mut o);
        EventPlan::new(o.workload, &o.wl)
    }

    #[test]
    fn per_event_counts_follow_the_spec() {
        assert_eq!(plan("oltp_read_write").expected_counts(), (14, 4, 2));
        assert_eq!(plan("oltp_read_only").expected_counts(), (14, 0, 2));
        assert_eq!(
            plan("oltp_read_only skip_trx = true").expected_counts(),
            (14, 0, 0)
        );
        assert_eq!(
            plan("oltp_read_only range_selects = false").expected_counts(),
            (10, 0, 2)
        );
        assert_eq!(plan("oltp_write_only").expected_counts(), (0, 4, 2));
        assert_eq!(plan("oltp_point_select").expected_counts(), (1, 0, 0));
        assert_eq!(plan("oltp_update_index").expected_counts(), (0, 1, 0));
        assert_eq!(plan("oltp_update_non_index").expected_counts(), (0, 1, 0));
        assert_eq!(plan("oltp_insert").expected_counts(), (0, 1, 0));
        assert_eq!(
            plan("oltp_read_write point_selects = 3, delete_inserts = 2, skip_trx = true")
                .expected_counts(),
            (7, 6, 0)
        );
    }

    #[test]
    fn prepared_statements_follow_sysbench_order() {
        let p = plan("oltp_read_write");
        assert!(p.trx);
        assert_eq!(
            p.prepared,
            vec![
                Stmt::PointSelect,
                Stmt::SimpleRange,
                Stmt::SumRange,
                Stmt::OrderRange,
                Stmt::DistinctRange,
                Stmt::IndexUpdate,
                Stmt::NonIndexUpdate,
                Stmt::Delete,
                Stmt::Insert
            ]
        );
        let p = plan("oltp_point_select skip_trx = false");
        assert!(!p.trx);
        assert_eq!(p.prepared, vec![Stmt::PointSelect]);
    }
}
