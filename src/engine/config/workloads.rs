//! The workloads, defined once: one entry per sysbench 1.0.20 MySQL script gives its name,
//! what one event does (`Body`, which also tells whether it writes), the tables it works on,
//! the script options its `help` adds to the common ones, and the synthetic model's cost of
//! an event. The enum, `WORKLOADS`, the names and every other list of workloads (the event plan, the bench
//! help, the importer's names, docs/bench.md's list, held by a test) are made from it, so
//! a new workload is one entry here plus its statements in engine/workload/.

/// What one event of a script runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// The oltp_* transaction: BEGIN (unless --skip_trx), the read groups when `reads`
    /// (point selects, the range selects), the write groups when `writes` (updates, delete +
    /// insert), COMMIT.
    Oltp { reads: bool, writes: bool },
    /// One point select.
    PointSelect,
    /// --index_updates UPDATEs of k.
    UpdateIndex,
    /// --non_index_updates UPDATEs of c.
    UpdateNonIndex,
    /// One DELETE of a random row (then its INSERT back when it existed).
    Delete,
    /// One INSERT as text.
    Insert,
    /// Rows appended to the thread's own table in multi-row INSERTs.
    BulkRow,
    /// One SELECT with --random_points values in IN().
    RandomPoints,
    /// One SELECT with --number_of_ranges BETWEEN ranges.
    RandomRanges,
}

impl Body {
    /// Whether an event changes rows.
    pub fn writes(self) -> bool {
        match self {
            Body::Oltp { writes, .. } => writes,
            Body::PointSelect | Body::RandomPoints | Body::RandomRanges => false,
            Body::UpdateIndex
            | Body::UpdateNonIndex
            | Body::Delete
            | Body::Insert
            | Body::BulkRow => true,
        }
    }
}

/// Which tables a script works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tables {
    /// sbtest1..N (`--tables`), the common sbtestN(id, k, c, pad).
    Oltp,
    /// sbtest1 only: `--tables` above 1 is refused, as the script reads only the first.
    First,
    /// One table per thread (sbtest1..threads), of its own shape.
    PerThread,
}

/// One script's entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// sysbench's script name.
    pub name: &'static str,
    pub body: Body,
    pub tables: Tables,
    /// The options the script's `help` lists beside the common ones; None: the script has
    /// no `help` command (bulk_insert).
    pub help: Option<&'static [&'static str]>,
    /// A synthetic model's events per second relative to oltp_read_only's.
    pub synthetic_cost: f64,
}

macro_rules! workloads {
    ($($kind:ident = $name:literal {
        body: $body:expr,
        tables: $tables:ident,
        help: $help:expr,
        synthetic_cost: $cost:literal $(,)?
    })*) => {
        /// One of sysbench 1.0.20's bundled MySQL scripts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum WorkloadKind {
            $($kind,)*
        }

        /// Every workload's entry, in the order sysbench's documentation lists them.
        pub const WORKLOADS: &[Workload] = &[
            $(Workload {
                kind: WorkloadKind::$kind,
                name: $name,
                body: $body,
                tables: Tables::$tables,
                help: $help,
                synthetic_cost: $cost,
            },)*
        ];

        impl WorkloadKind {
            /// Its entry in the table (the table's order is the enum's, so its index).
            pub fn spec(self) -> &'static Workload {
                &WORKLOADS[self as usize]
            }
        }
    };
}

workloads! {
    ReadOnly = "oltp_read_only" {
        body: Body::Oltp { reads: true, writes: false },
        tables: Oltp, help: Some(&[]), synthetic_cost: 1.0,
    }
    ReadWrite = "oltp_read_write" {
        body: Body::Oltp { reads: true, writes: true },
        tables: Oltp, help: Some(&[]), synthetic_cost: 0.7,
    }
    WriteOnly = "oltp_write_only" {
        body: Body::Oltp { reads: false, writes: true },
        tables: Oltp, help: Some(&[]), synthetic_cost: 1.6,
    }
    PointSelect = "oltp_point_select" {
        body: Body::PointSelect,
        tables: Oltp, help: Some(&[]), synthetic_cost: 12.0,
    }
    Insert = "oltp_insert" {
        body: Body::Insert,
        tables: Oltp, help: Some(&[]), synthetic_cost: 6.0,
    }
    UpdateIndex = "oltp_update_index" {
        body: Body::UpdateIndex,
        tables: Oltp, help: Some(&[]), synthetic_cost: 7.0,
    }
    UpdateNonIndex = "oltp_update_non_index" {
        body: Body::UpdateNonIndex,
        tables: Oltp, help: Some(&[]), synthetic_cost: 7.0,
    }
    Delete = "oltp_delete" {
        body: Body::Delete,
        tables: Oltp, help: Some(&[]), synthetic_cost: 7.0,
    }
    BulkInsert = "bulk_insert" {
        body: Body::BulkRow,
        tables: PerThread, help: None, synthetic_cost: 6.0,
    }
    SelectRandomPoints = "select_random_points" {
        body: Body::RandomPoints,
        tables: First, help: Some(&["random_points"]), synthetic_cost: 5.0,
    }
    SelectRandomRanges = "select_random_ranges" {
        body: Body::RandomRanges,
        tables: First, help: Some(&["delta", "number_of_ranges"]),
        synthetic_cost: 5.0,
    }
}

impl WorkloadKind {
    /// Every workload, in the table's order.
    pub fn all() -> impl Iterator<Item = WorkloadKind> {
        WORKLOADS.iter().map(|w| w.kind)
    }

    /// sysbench's script name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn from_name(name: &str) -> Option<WorkloadKind> {
        WORKLOADS.iter().find(|w| w.name == name).map(|w| w.kind)
    }

    /// Whether the script runs on the common sbtestN(id, k, c, pad) tables.
    pub fn uses_oltp_tables(self) -> bool {
        self.spec().tables != Tables::PerThread
    }

    /// Whether an event changes rows: a server then has work it may defer (log flushes,
    /// dirty pages, purge) past the slice that caused it.
    pub fn writes(self) -> bool {
        self.spec().body.writes()
    }
}

impl serde::Serialize for WorkloadKind {
    /// sysbench's script name, as sweep files and points.csv spell it.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_its_own_kind_and_name() {
        for (i, w) in WORKLOADS.iter().enumerate() {
            assert_eq!(w.kind.spec(), w, "{}", w.name);
            assert_eq!(WorkloadKind::from_name(w.name), Some(w.kind));
            assert_eq!(
                w.kind as usize, i,
                "{}: the table's order is the enum's",
                w.name
            );
        }
        assert_eq!(WORKLOADS.len(), 11);
    }

    #[test]
    fn the_scripts_that_only_read_are_the_ones_sysbench_ships_as_such() {
        let readers: Vec<&str> = WORKLOADS
            .iter()
            .filter(|w| !w.kind.writes())
            .map(|w| w.name)
            .collect();
        assert_eq!(
            readers,
            [
                "oltp_read_only",
                "oltp_point_select",
                "select_random_points",
                "select_random_ranges"
            ]
        );
    }
}
