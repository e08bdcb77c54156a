//! A sweep file's `[workload_options]`, deserialized straight into types: each key a field
//! (sysbench's name, its '-' spelling and its 0.5 name), each value checked by its type, so a
//! bad value is reported by the TOML reader at its line and column. `apply` lays them over
//! sysbench's defaults; `sysbench_args` gives them to the sysbench binary.

use super::{
    EngineConfig, IgnoreErrors, ParetoH, PerEvent, Percentile, PsMode, RandType, SpecIter,
    TableOptions,
};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A boolean as sysbench takes one: true/false, or "on"/"off", "yes"/"no", "1"/"0".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "FlagValue")]
pub struct Flag(pub bool);

#[derive(Deserialize)]
#[serde(untagged)]
enum FlagValue {
    Bool(bool),
    Text(String),
}

impl TryFrom<FlagValue> for Flag {
    type Error = String;
    fn try_from(v: FlagValue) -> Result<Flag, String> {
        match v {
            FlagValue::Bool(b) => Ok(Flag(b)),
            FlagValue::Text(s) => super::flag_word(&s)
                .map(Flag)
                .ok_or_else(|| format!("'{s}': expected true/false or \"on\"/\"off\"")),
        }
    }
}

impl Serialize for Flag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(self.0)
    }
}

/// The engine options a sweep file may set; the rest come from `[run]`, `[data]` and the
/// targets. Serialized (into manifest.json) as the keys that were given.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    #[serde(
        alias = "range-size",
        alias = "oltp_range_size",
        alias = "oltp-range-size"
    )]
    pub range_size: Option<Spanned<u32>>,
    #[serde(alias = "point-selects", alias = "oltp_point_selects")]
    pub point_selects: Option<Spanned<PerEvent>>,
    #[serde(alias = "simple-ranges", alias = "oltp_simple_ranges")]
    pub simple_ranges: Option<Spanned<PerEvent>>,
    #[serde(alias = "sum-ranges", alias = "oltp_sum_ranges")]
    pub sum_ranges: Option<Spanned<PerEvent>>,
    #[serde(alias = "order-ranges", alias = "oltp_order_ranges")]
    pub order_ranges: Option<Spanned<PerEvent>>,
    #[serde(alias = "distinct-ranges", alias = "oltp_distinct_ranges")]
    pub distinct_ranges: Option<Spanned<PerEvent>>,
    #[serde(alias = "index-updates", alias = "oltp_index_updates")]
    pub index_updates: Option<Spanned<PerEvent>>,
    #[serde(alias = "non-index-updates", alias = "oltp_non_index_updates")]
    pub non_index_updates: Option<Spanned<PerEvent>>,
    #[serde(alias = "delete-inserts", alias = "oltp_delete_inserts")]
    pub delete_inserts: Option<Spanned<PerEvent>>,
    #[serde(alias = "range-selects", alias = "oltp_range_selects")]
    pub range_selects: Option<Spanned<Flag>>,
    #[serde(alias = "auto-inc", alias = "oltp_auto_inc")]
    pub auto_inc: Option<Spanned<Flag>>,
    #[serde(alias = "create-secondary")]
    pub create_secondary: Option<Spanned<Flag>>,
    #[serde(alias = "skip-trx", alias = "oltp_skip_trx")]
    pub skip_trx: Option<Spanned<Flag>>,
    #[serde(alias = "oltp_secondary")]
    pub secondary: Option<Spanned<Flag>>,
    #[serde(alias = "create-table-options")]
    pub create_table_options: Option<Spanned<TableOptions>>,
    #[serde(alias = "random-points")]
    pub random_points: Option<Spanned<PerEvent>>,
    #[serde(alias = "number-of-ranges")]
    pub number_of_ranges: Option<Spanned<PerEvent>>,
    pub delta: Option<Spanned<u32>>,
    #[serde(alias = "rand-type")]
    pub rand_type: Option<Spanned<RandType>>,
    #[serde(alias = "rand-seed")]
    pub rand_seed: Option<Spanned<u64>>,
    #[serde(alias = "rand-spec-iter")]
    pub rand_spec_iter: Option<Spanned<SpecIter>>,
    #[serde(alias = "rand-spec-pct")]
    pub rand_spec_pct: Option<Spanned<f64>>,
    #[serde(alias = "rand-spec-res")]
    pub rand_spec_res: Option<Spanned<f64>>,
    #[serde(alias = "rand-pareto-h")]
    pub rand_pareto_h: Option<Spanned<ParetoH>>,
    #[serde(alias = "rand-zipfian-exp")]
    pub rand_zipfian_exp: Option<Spanned<f64>>,
    #[serde(alias = "db-ps-mode")]
    pub db_ps_mode: Option<Spanned<PsMode>>,
    #[serde(alias = "mysql-ignore-errors")]
    pub mysql_ignore_errors: Option<Spanned<IgnoreErrors>>,
    pub percentile: Option<Spanned<Percentile>>,
    #[serde(alias = "prepare-threads")]
    pub prepare_threads: Option<Spanned<u32>>,
}

/// Sets `$dst` from each given field, in one line per option.
macro_rules! lay {
    ($self:ident, $( $field:ident => $dst:expr, $conv:expr; )*) => {
        $( if let Some(v) = &$self.$field { $dst = $conv(v.get_ref().clone()); } )*
    };
}

impl Overrides {
    /// Lays the given options over `c` (sysbench's defaults plus what the sweep fixed).
    pub fn apply(&self, c: &mut EngineConfig) {
        let id = |x| x;
        let flag = |f: Flag| f.0;
        let count = u32::from;
        let at_least_one = |n: PerEvent| u32::from(n).max(1);
        lay!(self,
            range_size => c.wl.range_size, id;
            delta => c.wl.delta, id;
            rand_seed => c.rand_seed, |n: u64| n;
            prepare_threads => c.prepare_threads, id;
        );
        lay!(self,
            point_selects => c.wl.point_selects, count;
            simple_ranges => c.wl.simple_ranges, count;
            sum_ranges => c.wl.sum_ranges, count;
            order_ranges => c.wl.order_ranges, count;
            distinct_ranges => c.wl.distinct_ranges, count;
            index_updates => c.wl.index_updates, count;
            non_index_updates => c.wl.non_index_updates, count;
            delete_inserts => c.wl.delete_inserts, count;
            random_points => c.wl.random_points, at_least_one;
            number_of_ranges => c.wl.number_of_ranges, at_least_one;
            rand_spec_iter => c.rand.spec_iter, u32::from;
        );
        lay!(self,
            range_selects => c.wl.range_selects, flag;
            auto_inc => c.wl.auto_inc, flag;
            create_secondary => c.wl.create_secondary, flag;
            skip_trx => c.wl.skip_trx, flag;
            secondary => c.wl.secondary, flag;
        );
        lay!(self,
            rand_spec_pct => c.rand.spec_pct, |x: f64| x;
            rand_spec_res => c.rand.spec_res, |x: f64| x;
            rand_zipfian_exp => c.rand.zipfian_exp, |x: f64| x;
            rand_pareto_h => c.rand.pareto_h, f64::from;
            rand_type => c.rand.kind, |x: RandType| x;
            db_ps_mode => c.ps_mode, |x: PsMode| x;
            mysql_ignore_errors => c.ignore_errors, |x: IgnoreErrors| x;
            create_table_options => c.wl.create_table_options, |x: TableOptions| x;
            percentile => c.percentile, u32::from;
        );
        c.fit_workload();
    }

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
    use crate::engine::config::WorkloadKind;

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
}
