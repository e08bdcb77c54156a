//! The workload options, defined once: the table below gives each option's name, type,
//! default, 0.5 names, help line and how it applies. `bench` parses and lists its options
//! from it (`WORKLOAD_OPTIONS`); a sweep file's `[workload_options]` is read into `Overrides`,
//! each value checked by its type, so a bad value is reported by the TOML reader at its line
//! and column. `apply` lays the given options over sysbench's defaults; `sysbench_args` gives
//! them to the sysbench binary.

use super::options::{workload_options, Flag, KeySeed};
use super::{
    IgnoreErrors, ParetoH, PerEvent, Percentile, PsMode, RandType, SpecIter, TableOptions,
};

fn at_least_one(n: PerEvent) -> u32 {
    u32::from(n).max(1)
}

workload_options! {
    range_size: u32 = "100", ["oltp_range_size"], "Range size for range SELECT queries",
        |c, v| c.wl.range_size = v;
    point_selects: PerEvent = "10", ["oltp_point_selects"],
        "Number of point SELECT queries per transaction",
        |c, v| c.wl.point_selects = v.into();
    simple_ranges: PerEvent = "1", ["oltp_simple_ranges"],
        "Number of simple range SELECT queries per transaction",
        |c, v| c.wl.simple_ranges = v.into();
    sum_ranges: PerEvent = "1", ["oltp_sum_ranges"],
        "Number of SELECT SUM() queries per transaction",
        |c, v| c.wl.sum_ranges = v.into();
    order_ranges: PerEvent = "1", ["oltp_order_ranges"],
        "Number of SELECT ORDER BY queries per transaction",
        |c, v| c.wl.order_ranges = v.into();
    distinct_ranges: PerEvent = "1", ["oltp_distinct_ranges"],
        "Number of SELECT DISTINCT queries per transaction",
        |c, v| c.wl.distinct_ranges = v.into();
    index_updates: PerEvent = "1", ["oltp_index_updates"],
        "Number of UPDATE index queries per transaction",
        |c, v| c.wl.index_updates = v.into();
    non_index_updates: PerEvent = "1", ["oltp_non_index_updates"],
        "Number of UPDATE non-index queries per transaction",
        |c, v| c.wl.non_index_updates = v.into();
    delete_inserts: PerEvent = "1", ["oltp_delete_inserts"],
        "Number of DELETE/INSERT combinations per transaction",
        |c, v| c.wl.delete_inserts = v.into();
    range_selects: Flag = "on", ["oltp_range_selects"],
        "Enable/disable all range SELECT queries",
        |c, v| c.wl.range_selects = v.0;
    auto_inc: Flag = "on", ["oltp_auto_inc"],
        "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs",
        |c, v| c.wl.auto_inc = v.0;
    create_secondary: Flag = "on", [],
        "Create a secondary index in addition to the PRIMARY KEY",
        |c, v| c.wl.create_secondary = v.0;
    skip_trx: Flag = "off", ["oltp_skip_trx"],
        "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode",
        |c, v| c.wl.skip_trx = v.0;
    secondary: Flag = "off", ["oltp_secondary"],
        "Use a secondary index in place of the PRIMARY KEY",
        |c, v| c.wl.secondary = v.0;
    create_table_options: TableOptions = "", [],
        "extra CREATE TABLE options, e.g. ROW_FORMAT=COMPRESSED (sysbench 1.1)",
        |c, v| c.wl.create_table_options = v;
    random_points: PerEvent = "10", [],
        "Number of random points in the IN() clause in generated SELECTs",
        |c, v| c.wl.random_points = at_least_one(v);
    number_of_ranges: PerEvent = "10", [], "Number of random BETWEEN ranges per SELECT",
        |c, v| c.wl.number_of_ranges = at_least_one(v);
    delta: u32 = "5", [], "Size of BETWEEN ranges", |c, v| c.wl.delta = v;
    rand_type: RandType = "special", [],
        "random distribution: uniform, gaussian, special, pareto, zipfian",
        |c, v| c.rand.kind = v;
    rand_seed: u64 = "0", [], "seed for the random number generators (0 = current time)",
        |c, v| c.rand_seed = v;
    rand_spec_iter: SpecIter = "12", [],
        "iterations for the gaussian and special distributions",
        |c, v| c.rand.spec_iter = v.into();
    rand_spec_pct: f64 = "1", [], "percentage of values treated as 'special'",
        |c, v| c.rand.spec_pct = v;
    rand_spec_res: f64 = "75", [], "percentage of 'special' values to use",
        |c, v| c.rand.spec_res = v;
    rand_pareto_h: ParetoH = "0.2", [], "parameter h of the pareto distribution",
        |c, v| c.rand.pareto_h = v.into();
    rand_zipfian_exp: f64 = "0.8", [], "exponent of the zipfian distribution",
        |c, v| c.rand.zipfian_exp = v;
    db_ps_mode: PsMode = "auto", [], "prepared statements: auto or disable",
        |c, v| c.ps_mode = v;
    mysql_ignore_errors: IgnoreErrors = "1213,1020,1205", [],
        "error codes that restart the event instead of ending the run, or 'all'",
        |c, v| c.ignore_errors = v;
    percentile: Percentile = "95", [],
        "percentile to report in latency statistics (1-100, 0 = disabled)",
        |c, v| c.percentile = v.into();
    prepare_threads: u32 = "0", [], "connections used by prepare (0 = max(2, --threads))",
        |c, v| c.prepare_threads = v;
}

impl<'de> serde::Deserialize<'de> for Overrides {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Overrides, D::Error> {
        struct Table;
        impl<'de> serde::de::Visitor<'de> for Table {
            type Value = Overrides;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of workload options")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Overrides, A::Error> {
                let mut o = Overrides::default();
                let seed = || KeySeed {
                    defs: WORKLOAD_OPTIONS,
                    names: NAMES,
                };
                while let Some(key) = map.next_key_seed(seed())? {
                    if !o.read_value(key.0, &mut map)? {
                        return Err(serde::de::Error::unknown_field(key.0, NAMES));
                    }
                }
                Ok(o)
            }
        }
        d.deserialize_map(Table)
    }
}

impl Overrides {
    /// The options that were given, by sysbench's name (for manifest.json).
    pub fn given(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(mut map)) => {
                map.retain(|_, v| !v.is_null());
                map
            }
            _ => serde_json::Map::new(),
        }
    }

    /// The given options in sysbench's command-line form (`--range-size=50`), for the
    /// sysbench binary.
    pub fn sysbench_args(&self) -> Vec<String> {
        self.given()
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::Bool(true) => "on".to_string(),
                    serde_json::Value::Bool(false) => "off".to_string(),
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                format!("--{}={v}", k.replace('_', "-"))
            })
            .collect()
    }
}

/// Engine options a sweep file may not set in `[workload_options]`, and where they belong.
pub const SET_ELSEWHERE: &[(&str, &str)] = &[
    ("threads", "set it with [run] threads"),
    ("time", "set it with [run] duration"),
    ("events", "set it with [run] duration"),
    ("warmup_time", "set it with [run] warmup"),
    ("report_interval", "set it with [run] report_interval"),
    ("rate", "set it with [run] rate"),
    ("forced_shutdown", "set it with [run] point_timeout"),
    ("tables", "set it with [data] tables"),
    ("table_size", "set it with [data] table_size"),
    ("mysql_storage_engine", "set it with [data] storage_engine"),
    ("format", "output is chosen by sweepbench"),
    (
        "histogram",
        "every point records its full histogram (.hlog)",
    ),
    (
        "report_checkpoints",
        "every point records per-second samples (intervals.csv)",
    ),
    ("verbosity", "not used in sweeps"),
    ("db_debug", "not used in sweeps"),
    ("db_driver", "only the mysql driver exists"),
    ("oltp_read_only", "name the workload in [run] workloads"),
    ("oltp_write_only", "name the workload in [run] workloads"),
];

/// Why an unknown `[workload_options]` key is refused, when it is an engine option that
/// belongs elsewhere.
pub fn set_elsewhere(key: &str) -> Option<String> {
    let key = key.replace('-', "_");
    if let Some((_, why)) = SET_ELSEWHERE.iter().find(|(k, _)| *k == key) {
        return Some(why.to_string());
    }
    key.starts_with("mysql_")
        .then(|| "connection settings belong to [[targets]]".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{EngineConfig, WorkloadKind};

    fn parse(s: &str) -> Result<Overrides, toml::de::Error> {
        toml::from_str(s)
    }

    #[test]
    fn given_options_override_the_defaults_and_only_those() {
        let o = parse("range-size = 50\noltp_skip_trx = \"on\"\nrand_type = \"uniform\"\nrand_pareto_h = 0.5\nmysql_ignore_errors = [1062]\ncreate_table_options = \"ROW_FORMAT=COMPACT\"\n").unwrap();
        let mut c = EngineConfig::new(WorkloadKind::ReadWrite);
        o.apply(&mut c);
        let mut want = EngineConfig::new(WorkloadKind::ReadWrite);
        want.wl.range_size = 50;
        want.wl.skip_trx = true;
        want.rand.kind = RandType::Uniform;
        want.rand.pareto_h = 0.5;
        want.ignore_errors = IgnoreErrors::Codes(vec![1062]);
        want.wl.create_table_options = "ROW_FORMAT=COMPACT".parse().unwrap();
        assert_eq!(c, want);
        let mut args = o.sysbench_args();
        args.sort();
        assert_eq!(
            args,
            [
                "--create-table-options=ROW_FORMAT=COMPACT",
                "--mysql-ignore-errors=1062",
                "--rand-pareto-h=0.5",
                "--rand-type=uniform",
                "--range-size=50",
                "--skip-trx=on"
            ]
        );
    }

    #[test]
    fn bad_values_are_refused_at_their_position_by_their_type() {
        let e = parse("delta = 1\nrand_pareto_h = 1.5\n").unwrap_err();
        assert!(e.message().contains("between 0 and 1"), "{e}");
        assert_eq!(e.span().map(|s| s.start), Some(26));
        let e = parse("rand_type = \"weird\"\n").unwrap_err();
        assert!(e.message().contains("unknown variant"), "{e}");
        let e = parse("percentile = 101\n").unwrap_err();
        assert!(e.message().contains("between 1 and 100"), "{e}");
        let e = parse("skip_trx = \"maybe\"\n").unwrap_err();
        assert!(e.message().contains("expected true/false"), "{e}");
        let e = parse("point_selects = -1\n").unwrap_err();
        assert!(e.message().contains("invalid value"), "{e}");
        let e = parse("delta = 1\npoint_selects = 2147483647\n").unwrap_err();
        assert!(e.message().contains("more than 1000000 per event"), "{e}");
        assert_eq!(e.span().map(|s| s.start), Some(26));
        let e = parse("rand_spec_iter = 4000000\n").unwrap_err();
        assert!(e.message().contains("more than 1000 draws"), "{e}");
        assert!(parse("threads = 4\n").is_err());
        assert_eq!(
            set_elsewhere("warmup-time").as_deref(),
            Some("set it with [run] warmup")
        );
        assert_eq!(
            set_elsewhere("mysql_host").as_deref(),
            Some("connection settings belong to [[targets]]")
        );
        assert_eq!(set_elsewhere("range_sizes"), None);
    }

    #[test]
    fn every_spelling_reads_the_same_option_once() {
        for key in [
            "range_size",
            "range-size",
            "oltp_range_size",
            "oltp-range-size",
        ] {
            let o = parse(&format!("{key} = 7\n")).unwrap();
            assert_eq!(o.range_size.map(|v| *v.get_ref()), Some(7), "{key}");
        }
        let e = parse("range_size = 1\nrange-size = 2\n").unwrap_err();
        assert!(e.message().contains("duplicate field `range_size`"), "{e}");
        let e = parse("delta = 1\nrange_sizes = 2\n").unwrap_err();
        assert!(
            e.message().starts_with("unknown field `range_sizes`"),
            "{e}"
        );
        assert_eq!(e.span().map(|s| s.start), Some(10), "the key is pointed at");
    }

    #[test]
    fn the_command_line_and_the_sweep_file_give_the_same_config() {
        let file = parse("oltp_point_selects = 3\nskip_trx = \"on\"\nrand_pareto_h = 0.5\nmysql_ignore_errors = \"all\"\nrandom_points = 0\n").unwrap();
        let mut args = Overrides::default();
        for (name, word) in [
            ("point_selects", "3"),
            ("skip_trx", "on"),
            ("rand_pareto_h", "0.5"),
            ("mysql_ignore_errors", "all"),
            ("random_points", "0"),
        ] {
            args.set_arg(name, word).unwrap();
        }
        let (mut a, mut b) = (
            EngineConfig::new(WorkloadKind::ReadWrite),
            EngineConfig::new(WorkloadKind::ReadWrite),
        );
        file.apply(&mut a);
        args.apply(&mut b);
        assert_eq!(a, b);
        assert_eq!(a.wl.random_points, 1, "at least one point per select");
        assert_eq!(
            args.set_arg("rand_pareto_h", "1.5"),
            Err("must be between 0 and 1".to_string())
        );
        assert_eq!(
            args.set_arg("point_selects", "-1"),
            Err("expected a non-negative integer".to_string())
        );
        assert!(args.set_arg("threads", "1").is_err());
    }

    #[test]
    fn each_options_default_is_the_engines() {
        let mut given = Overrides::default();
        for d in WORKLOAD_OPTIONS {
            given.set_arg(d.name, d.default).unwrap();
        }
        let mut c = EngineConfig::new(WorkloadKind::ReadWrite);
        given.apply(&mut c);
        assert_eq!(c, EngineConfig::new(WorkloadKind::ReadWrite));
        assert_eq!(NAMES.len(), WORKLOAD_OPTIONS.len());
    }
}
