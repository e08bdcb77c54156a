//! The adaptive keys of `[run]`: `threads` (a list, "auto", or the search's table) and
//! `rates = "auto"` with its `sla`.

use super::raw;
use super::{element_span, fraction, unknown_field_hint, Ctx, SpecError, SweepSpec};
use crate::engine::config::MAX_THREADS;
use crate::pipeline::adaptive::AutoThreads;
use toml::Spanned;

/// The most points one adaptive search (auto threads, an SLA's rates) may measure: each is a
/// point of the sweep's full duration, and a search that has not converged in 64 will not.
pub const MAX_SEARCH_STEPS: u32 = 64;

/// `threads` as read: the absolute counts, the multiples of cores, and the adaptive search.
type ThreadList = (Vec<u32>, Vec<f64>, Option<AutoThreads>);

impl SweepSpec {
    /// `rates = "auto"` and `sla = { p99_ms = … }`, which go together.
    pub(super) fn sla(
        cx: &Ctx<'_>,
        r: &raw::RawRun,
    ) -> Result<Option<crate::pipeline::adaptive::Sla>, SpecError> {
        match (&r.rates, &r.sla) {
            (None, None) => Ok(None),
            (Some(x), _) if x.get_ref() != "auto" => Err(cx.err(
                x.span(),
                format!(
                    "run.rates = \"{}\": expected \"auto\" (a fixed open-loop rate is run.rate)",
                    x.get_ref()
                ),
            )),
            (Some(x), None) => Err(cx.err(
                x.span(),
                "run.rates = \"auto\" needs run.sla, e.g. sla = { p99_ms = 10 }",
            )),
            (None, Some(v)) => Err(cx.err(v.span(), "run.sla needs run.rates = \"auto\"")),
            (Some(_), Some(v)) => {
                let bad = |m: String| cx.err(v.span(), format!("run.sla: {m}"));
                if r.rate.is_some() {
                    return Err(bad(
                        "rates = \"auto\" chooses the rates: remove run.rate".into()
                    ));
                }
                let s: raw::RawSla = v
                    .get_ref()
                    .clone()
                    .try_into()
                    .map_err(|e: toml::de::Error| bad(unknown_field_hint(e.message())))?;
                let p99_ms = s.p99_ms.get();
                if !p99_ms.is_finite() || p99_ms <= 0.0 {
                    return Err(bad(format!(
                        "p99_ms = {p99_ms}: a latency limit is a number of milliseconds above 0"
                    )));
                }
                if let Some(t) = s.threads.filter(|&t| t > MAX_THREADS) {
                    return Err(bad(format!(
                        "threads = {t}: at most {MAX_THREADS} (the most connections a server takes)"
                    )));
                }
                if let Some(m) = s.max_steps.filter(|m| !(2..=MAX_SEARCH_STEPS).contains(m)) {
                    return Err(bad(format!(
                        "max_steps = {m}: expected 2 to {MAX_SEARCH_STEPS} rates per search"
                    )));
                }
                let resolution = s.resolution.map_or(0.05, raw::Num::get);
                if !fraction(resolution) {
                    return Err(bad("resolution is a fraction between 0 and 1".into()));
                }
                Ok(Some(crate::pipeline::adaptive::Sla {
                    p99_ms,
                    threads: s.threads.filter(|&t| t > 0),
                    max_steps: s.max_steps.unwrap_or(8),
                    resolution,
                }))
            }
        }
    }

    /// `threads`: a list (counts and multiples of cores), "auto", or a table of the adaptive
    /// search's settings.
    pub(super) fn threads(cx: &Ctx<'_>, v: &Spanned<toml::Value>) -> Result<ThreadList, SpecError> {
        let bad = |m: String| cx.err(v.span(), format!("run.threads: {m}"));
        let auto = match v.get_ref() {
            toml::Value::Array(list) => {
                let mut threads = Vec::new();
                let mut per_core = Vec::new();
                for (i, x) in list.iter().enumerate() {
                    let m = x.as_str().and_then(super::cores::multiplier);
                    match (x.as_integer(), m) {
                        (Some(n), _) if (1..=MAX_THREADS as i64).contains(&n) => threads.push(n as u32),
                        (_, Some(m)) => per_core.push(m),
                        _ => {
                            let at = element_span(cx.text, v.span(), i).unwrap_or(v.span());
                            return Err(cx.err(
                                at,
                                format!("run.threads: {x} is not a thread count (1 to {MAX_THREADS}, the most connections a server takes) nor a multiple of a target's cores (\"2×cores\")"),
                            ));
                        }
                    }
                }
                threads.sort_unstable();
                threads.dedup();
                per_core.sort_by(f64::total_cmp);
                per_core.dedup();
                if threads.is_empty() && per_core.is_empty() {
                    return Err(bad("the list is empty".into()));
                }
                return Ok((threads, per_core, None));
            }
            toml::Value::String(s) if s == "auto" => AutoThreads::default(),
            toml::Value::Table(_) => {
                let r: raw::RawAuto = v
                    .get_ref()
                    .clone()
                    .try_into()
                    .map_err(|e: toml::de::Error| bad(unknown_field_hint(e.message())))?;
                let d = AutoThreads::default();
                AutoThreads {
                    from: r.from.unwrap_or(d.from),
                    to: r.to.unwrap_or(d.to),
                    drop: r.drop.map_or(d.drop, raw::Num::get),
                    p99_ms: r.p99_ms.map(raw::Num::get),
                    resolution: r.resolution.map_or(d.resolution, raw::Num::get),
                    max_points: r.max_points.unwrap_or(d.max_points),
                }
            }
            other => {
                return Err(bad(format!(
                    "{other} is neither a list of thread counts, \"auto\", nor a table such as {{ from = 1, to = 256 }}"
                )))
            }
        };
        let a = auto;
        if a.from == 0 || a.to < a.from || a.to > MAX_THREADS {
            return Err(bad(format!(
                "from = {} and to = {}: need 1 ≤ from ≤ to ≤ {MAX_THREADS}",
                a.from, a.to
            )));
        }
        if !fraction(a.drop) || !fraction(a.resolution) {
            return Err(bad(
                "drop and resolution are fractions between 0 and 1 (0.1 is 10 %)".into(),
            ));
        }
        if !(3..=MAX_SEARCH_STEPS).contains(&a.max_points) {
            return Err(bad(format!(
                "max_points = {}: expected 3 to {MAX_SEARCH_STEPS} thread counts per search",
                a.max_points
            )));
        }
        if let Some(l) = a.p99_ms.filter(|l| !l.is_finite() || *l <= 0.0) {
            return Err(bad(format!(
                "p99_ms = {l}: a latency limit is a number of milliseconds above 0"
            )));
        }
        Ok((a.ladder(u32::MAX), Vec::new(), Some(a)))
    }
}
