//! `bench memory`: sysbench 1.0.20's memory test (`engine::host::memory`) — its options and
//! its lines.

use super::{size, Printed};
use crate::bench::options::RawOptions;
use crate::engine::host::memory::{Memory, Oper, WORD};
use anyhow::bail;

pub const HELP: &str = "memory options:\n  --memory-block-size=SIZE    size of memory block for test [1K]\n  --memory-total-size=SIZE    total size of data to transfer [100G]\n  --memory-scope=STRING       memory access scope {global,local} [global]\n  --memory-hugetlb[=on|off]   allocate memory from HugeTLB pool [off]\n  --memory-oper=STRING        type of memory operations {read, write, none} [write]\n  --memory-access-mode=STRING memory access mode {seq,rnd} [seq]\n";

pub fn of(raw: &RawOptions) -> anyhow::Result<Memory> {
    let given = |n: &str| raw.get(n).to_string();
    let block = size(&given("memory_block_size"))
        .filter(|&b| b as usize >= WORD && b.is_power_of_two() && b <= 1 << 34)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "FATAL: Invalid value for memory-block-size: {}",
                given("memory_block_size")
            )
        })? as usize;
    let total = size(&given("memory_total_size")).ok_or_else(|| {
        anyhow::anyhow!(
            "FATAL: Invalid value for memory-total-size: {}",
            given("memory_total_size")
        )
    })?;
    let global = match given("memory_scope").as_str() {
        "global" => true,
        "local" => false,
        s => bail!("FATAL: Invalid value for memory-scope: {s}"),
    };
    let oper = match given("memory_oper").as_str() {
        "read" => Oper::Read,
        "write" => Oper::Write,
        "none" => Oper::None,
        s => bail!("FATAL: Invalid value for memory-oper: {s}"),
    };
    let random = match given("memory_access_mode").as_str() {
        "seq" => false,
        "rnd" => true,
        s => bail!("FATAL: Invalid value for memory-access-mode: {s}"),
    };
    if raw.flag("memory_hugetlb") {
        eprintln!("WARNING: --memory-hugetlb: sweepbench allocates ordinary pages");
    }
    Ok(Memory::new(block, total, global, oper, random))
}

impl Printed for Memory {
    fn describe(&self) -> String {
        let oper = match self.oper {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        };
        format!(
            "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {oper}\n  scope: {}\n\n",
            self.block / 1024,
            self.total / 1024 / 1024,
            if self.global { "global" } else { "local" }
        )
    }

    fn interval_line(&self, events: u64, secs: f64, _: u32, _: u32, _: f64) -> String {
        format!(
            "{:.2} MiB/sec",
            events as f64 * self.block as f64 / 1048576.0 / secs
        )
    }

    fn cumulative(&self, events: u64, secs: f64) -> String {
        let mut s = format!(
            "Total operations: {events} ({:8.2} per second)\n\n",
            events as f64 / secs
        );
        if self.oper != Oper::None {
            let mb = events as f64 * self.block as f64 / 1048576.0;
            s.push_str(&format!(
                "{mb:.2} MiB transferred ({:.2} MiB/sec)\n\n",
                mb / secs
            ));
        }
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysbench_reads_them() {
        assert_eq!(size("1K"), Some(1024));
        assert_eq!(size("100G"), Some(100 << 30));
        assert_eq!(size("512"), Some(512));
        assert_eq!(size("x"), None);
    }
}
