//! Threads from cores (`threads = ["1×cores", "2×cores", 64]`): each target's cores — a
//! managed server's class or this host's, `cores = N` on any other — and the thread counts
//! the multipliers resolve to on it.

use super::raw::RawSweep;
use super::target::TargetKind;
use super::{Ctx, SpecError, Target};
use crate::engine::config::MAX_THREADS;
use std::collections::BTreeMap;

/// "2×cores", "2xcores", "2 * cores", "0.5×cores" or "cores" → the multiplier.
pub fn multiplier(text: &str) -> Option<f64> {
    super::lexical::times(text, "cores")
}

/// How a multiplier reads ("2×cores", "0.5×cores").
pub fn shown(m: f64) -> String {
    format!("{}×cores", super::super::server::class::trim_number(m))
}

/// The count `m` × `cores` resolves to: the nearest whole thread, at least 1.
pub fn count(m: f64, cores: f64) -> u32 {
    ((m * cores).round() as u32).clamp(1, MAX_THREADS)
}

/// Each target's cores, where known: `cores = N` on it, a managed server's class, or this
/// host's CPUs for a managed server without one (it runs here, on all of them).
pub(super) fn cores(cx: &Ctx<'_>, raw: &RawSweep, targets: &mut [Target]) -> Result<(), SpecError> {
    let host = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    for (t, r) in targets.iter_mut().zip(&raw.targets) {
        let class = match &t.kind {
            TargetKind::Managed(m) => Some(m.class().map_or(host, |c| c.cpus)),
            _ => None,
        };
        t.cores = match (&r.cores, class) {
            (Some(c), _) if !(c.get_ref().get() > 0.0 && c.get_ref().get() <= 4096.0) => {
                return Err(cx.err(
                    c.span(),
                    format!("cores = {}: give the server's CPU count (1 to 4096)", c.get_ref().get()),
                ))
            }
            (Some(c), Some(_)) if t.proxy.is_none() => {
                return Err(cx.err(
                    c.span(),
                    "cores: a managed server's cores are its class's cpus (or this host's); remove cores, or give server.class",
                ))
            }
            (Some(c), _) => Some(c.get_ref().get()),
            (None, k) => k,
        };
    }
    Ok(())
}

/// Each target's memory, where known: `memory = "8G"` on it, a managed server's class, or this
/// host's RAM for a managed server without one. `size = "N × memory"` refuses a target
/// whose memory is not known, with the remedy.
pub(super) fn memory(
    cx: &Ctx<'_>,
    raw: &RawSweep,
    targets: &mut [Target],
    size: Option<super::size::SizeOf>,
) -> Result<(), SpecError> {
    let host = crate::pipeline::server::class::host_memory();
    for (t, r) in targets.iter_mut().zip(&raw.targets) {
        let managed = match &t.kind {
            TargetKind::Managed(m) => Some(m.class().map(|c| c.memory).or(host)),
            _ => None,
        };
        t.memory = match (&r.memory, managed) {
            (Some(m), Some(_)) if t.proxy.is_none() => {
                return Err(cx.err(
                    m.span(),
                    "memory: a managed server's memory is its class's (or this host's); remove memory, or give server.class",
                ))
            }
            (Some(m), _) => Some(
                crate::engine::host::size(m.get_ref())
                    .filter(|b| *b >= 1 << 20)
                    .ok_or_else(|| {
                        cx.err(m.span(), format!("memory = \"{}\": give the server's memory, like \"8G\"", m.get_ref()))
                    })?,
            ),
            (None, k) => k.flatten(),
        };
        if t.memory.is_none() && matches!(size, Some(super::size::SizeOf::Memory(_))) {
            return Err(cx.err(
                r.name.span(),
                format!(
                    "target '{}': data.size is relative to memory and this target's memory is not known: give memory = \"8G\" on it (its server's RAM)",
                    t.name
                ),
            ));
        }
    }
    Ok(())
}

/// The thread counts of each target when `per_core` has multipliers: the absolute counts and
/// each multiplier × its cores, ascending. A target whose cores are unknown is refused with
/// the remedy.
pub(super) fn resolve(
    cx: &Ctx<'_>,
    raw: &RawSweep,
    absolute: &[u32],
    per_core: &[f64],
    targets: &[Target],
) -> Result<BTreeMap<String, Vec<u32>>, SpecError> {
    let mut out = BTreeMap::new();
    if per_core.is_empty() {
        return Ok(out);
    }
    for (t, r) in targets.iter().zip(&raw.targets) {
        let Some(cores) = t.cores else {
            return Err(cx.err(
                r.name.span(),
                format!(
                    "target '{}': run.threads has \"{}\" and this target's cores are not known: give cores = N on it (its server's CPU count)",
                    t.name,
                    shown(per_core[0])
                ),
            ));
        };
        let mut list: Vec<u32> = absolute
            .iter()
            .copied()
            .chain(per_core.iter().map(|&m| count(m, cores)))
            .collect();
        list.sort_unstable();
        list.dedup();
        out.insert(t.name.clone(), list);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipliers_read_as_written() {
        assert_eq!(multiplier("2×cores"), Some(2.0));
        assert_eq!(multiplier("2xcores"), Some(2.0));
        assert_eq!(multiplier(" 8 * cores "), Some(8.0));
        assert_eq!(multiplier("0.5×cores"), Some(0.5));
        assert_eq!(multiplier("cores"), Some(1.0));
        assert_eq!(multiplier("2×core"), None);
        assert_eq!(multiplier("-1×cores"), None);
        assert_eq!(multiplier("many cores"), None);
        assert_eq!(shown(0.5), "0.5×cores");
        assert_eq!(count(8.0, 1.5), 12);
        assert_eq!(count(0.1, 1.0), 1);
    }
}
