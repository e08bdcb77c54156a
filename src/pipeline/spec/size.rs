//! `[data] size`: the data set given as bytes, or relative to each target's server
//! (`"1.2 × buffer_pool"`, `"1.2 × memory"`), and each target's rows per table derived from
//! the row size measured on that server (`pipeline::sweep::data`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// What `size` is measured against.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum SizeOf {
    /// A size in bytes ("2G").
    Bytes(u64),
    /// That many times the server's innodb_buffer_pool_size (read from the running server).
    BufferPool(f64),
    /// That many times the server's memory: a managed server's class, this host's RAM for
    /// one without, or the target's `memory`.
    Memory(f64),
}

impl SizeOf {
    /// "2G", "1.2 × buffer_pool", "1.2x memory", "buffer_pool" → the size; None otherwise.
    pub fn parse(text: &str) -> Option<SizeOf> {
        let t = text.trim();
        for (word, make) in [
            ("buffer_pool", SizeOf::BufferPool as fn(f64) -> SizeOf),
            ("memory", SizeOf::Memory),
        ] {
            if t.ends_with(word) {
                return super::lexical::times(t, word)
                    .filter(|f| *f <= 1000.0)
                    .map(make);
            }
        }
        crate::engine::host::size(t)
            .filter(|b| *b >= 1 << 20)
            .map(SizeOf::Bytes)
    }

    /// As the file would say it.
    pub fn shown(&self) -> String {
        let n = crate::pipeline::server::class::trim_number;
        match self {
            SizeOf::Bytes(b) => bytes(*b),
            SizeOf::BufferPool(f) => format!("{} × buffer_pool", n(*f)),
            SizeOf::Memory(f) => format!("{} × memory", n(*f)),
        }
    }
}

/// "288 KiB", "614 MiB", "2.4 GiB", "100 TiB".
pub fn bytes(b: u64) -> String {
    let n = crate::pipeline::server::class::trim_number;
    if b >= 1 << 40 {
        format!(
            "{} TiB",
            n((b as f64 / (1u64 << 40) as f64 * 10.0).round() / 10.0)
        )
    } else if b >= 1 << 30 {
        format!(
            "{} GiB",
            n((b as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0)
        )
    } else if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b.div_ceil(1024))
    }
}

/// Bytes a row assumed before a server has measured one (sysbench's rows with the k index in
/// InnoDB: 220–240 here), for `plan`'s estimates and the probe's size.
pub const ASSUMED_ROW_BYTES: u64 = 230;

/// What `size` comes to on `target` as far as the file tells (before any server runs): a
/// size, a multiple of its memory, or of a managed server's buffer pool (its first config's
/// innodb_buffer_pool_size, else its class's share, else the default my.cnf's); None for an
/// external server's buffer pool, which only the server knows.
pub fn estimate(spec: &super::SweepSpec, target: &str) -> Option<u64> {
    let t = spec.targets.iter().find(|t| t.name == target)?;
    Some(match spec.data.size? {
        SizeOf::Bytes(b) => b,
        SizeOf::Memory(f) => (t.memory? as f64 * f) as u64,
        SizeOf::BufferPool(f) => {
            let super::target::TargetKind::Managed(m) = &t.kind else {
                return None;
            };
            let given = spec.configs.first().and_then(|c| {
                let (_, v) = c
                    .vars
                    .iter()
                    .find(|(k, _)| k == "innodb_buffer_pool_size")?;
                crate::engine::host::size(&crate::pipeline::server::mycnf::cnf_value(v))
            });
            let pool = given.unwrap_or_else(|| {
                m.class().map_or(
                    crate::pipeline::server::mycnf::DEFAULT_BUFFER_POOL_MB,
                    |c| c.buffer_pool_mb(),
                ) << 20
            });
            (pool as f64 * f) as u64
        }
    })
}

/// One target's data as sized: what was asked, the rows per table it came to, the bytes per
/// row measured, and what the prepared tables hold (information_schema's data and index).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Sized {
    pub asked_bytes: u64,
    pub rows: u32,
    pub bytes_per_row: f64,
    pub measured_bytes: u64,
}

/// Each target's sizing, made while the run prepares it and read by every measurement after:
/// shared by the spec's clones.
#[derive(Debug, Clone, Default)]
pub struct SizedTargets(Arc<Mutex<BTreeMap<String, Sized>>>);

impl SizedTargets {
    pub fn get(&self, target: &str) -> Option<Sized> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(target)
            .copied()
    }

    pub fn set(&self, target: &str, s: Sized) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(target.to_string(), s);
    }

    pub fn all(&self) -> BTreeMap<String, Sized> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl serde::Serialize for SizedTargets {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.all().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        assert_eq!(SizeOf::parse("2G"), Some(SizeOf::Bytes(2 << 30)));
        assert_eq!(
            SizeOf::parse("1.2 × buffer_pool"),
            Some(SizeOf::BufferPool(1.2))
        );
        assert_eq!(SizeOf::parse("1.2x memory"), Some(SizeOf::Memory(1.2)));
        assert_eq!(SizeOf::parse("memory"), Some(SizeOf::Memory(1.0)));
        assert_eq!(SizeOf::parse("1.2 × disk"), None);
        assert_eq!(SizeOf::parse("-1 × memory"), None);
        assert_eq!(SizeOf::parse("12"), None, "12 bytes is not a data set");
        assert_eq!(SizeOf::BufferPool(1.2).shown(), "1.2 × buffer_pool");
        assert_eq!(bytes(614 << 20), "614 MiB");
        assert_eq!(bytes(2_576_980_378), "2.4 GiB");
        assert_eq!(bytes(100 << 40), "100 TiB");
    }
}
