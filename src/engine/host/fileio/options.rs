//! fileio's options, by sysbench's names (`file_num`, `file_total_size`, …): sysbench's
//! defaults, and the checks with its FATAL lines, for `bench fileio`'s command line and a
//! sweep's `[fileio]` alike.

use super::{IoMode, Mode};
use crate::engine::host::size;

/// The test's options, by sysbench's names (`file_num`, …), typed and checked with
/// sysbench's FATAL lines.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FileIoOptions {
    pub num: u64,
    pub total: u64,
    pub block: u64,
    pub mode: Option<Mode>,
    pub io_mode: IoMode,
    /// sync, dsync, direct.
    pub flags: (bool, bool, bool),
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fdatasync: bool,
    pub merged: u64,
    pub rw_ratio: f64,
    /// `--events`, which the header prints as the number of requests.
    pub max_events: u64,
}

/// sysbench's defaults for the test's options, by their names.
pub const DEFAULTS: [(&str, &str); 13] = [
    ("file_num", "128"),
    ("file_block_size", "16384"),
    ("file_total_size", "2G"),
    ("file_test_mode", ""),
    ("file_io_mode", "sync"),
    ("file_async_backlog", "128"),
    ("file_extra_flags", ""),
    ("file_fsync_freq", "100"),
    ("file_fsync_all", "off"),
    ("file_fsync_end", "on"),
    ("file_fsync_mode", "fsync"),
    ("file_merged_requests", "0"),
    ("file_rw_ratio", "1.5"),
];

impl FileIoOptions {
    /// Reads the options from `get` (a value by sysbench's name, `_` for `-`; its default
    /// when not given, see `DEFAULTS`).
    pub fn parse(get: &dyn Fn(&str) -> String) -> Result<FileIoOptions, String> {
        let int = |n: &str| -> Result<u64, String> {
            let v = get(n);
            v.trim()
                .parse::<u64>()
                .map_err(|_| format!("FATAL: Invalid value for {}: {v}", n.replace('_', "-")))
        };
        let flag = |n: &str| -> Result<bool, String> {
            let v = get(n);
            crate::engine::config::flag_word(&v)
                .ok_or_else(|| format!("FATAL: Invalid value for {}: {v}", n.replace('_', "-")))
        };
        let num = int("file_num")?;
        if num == 0 || num > 1_000_000 {
            return Err(format!(
                "FATAL: Invalid value for file-num: {}",
                get("file_num")
            ));
        }
        let total = size(&get("file_total_size"))
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                format!(
                    "FATAL: Invalid value for file-total-size: {}",
                    get("file_total_size")
                )
            })?;
        let block = int("file_block_size")?;
        if block == 0 || block > 1 << 30 {
            return Err(format!(
                "FATAL: Invalid value for file-block-size: {}.",
                get("file_block_size")
            ));
        }
        let mode = match get("file_test_mode").as_str() {
            "" => None,
            "seqwr" => Some(Mode::SeqWrite),
            "seqrewr" => Some(Mode::SeqRewrite),
            "seqrd" => Some(Mode::SeqRead),
            "rndrd" => Some(Mode::RndRead),
            "rndwr" => Some(Mode::RndWrite),
            "rndrw" => Some(Mode::RndRw),
            m => return Err(format!("FATAL: Invalid IO operations mode: {m}.")),
        };
        let io_mode = match get("file_io_mode").as_str() {
            "sync" => IoMode::Sync,
            "async" => {
                let backlog = int("file_async_backlog")?;
                if backlog == 0 || backlog > 65_536 {
                    return Err(format!(
                        "FATAL: Invalid value of file-async-backlog: {}",
                        get("file_async_backlog")
                    ));
                }
                IoMode::Async {
                    backlog: backlog as u32,
                }
            }
            "mmap" => IoMode::Mmap,
            m => return Err(format!("FATAL: unknown I/O mode: {m}")),
        };
        let mut flags = (false, false, false);
        let extra = get("file_extra_flags");
        for f in extra.split(',').filter(|f| !f.is_empty()) {
            match f {
                "sync" => flags.0 = true,
                "dsync" => flags.1 = true,
                "direct" => flags.2 = true,
                _ => {
                    return Err(format!(
                        "FATAL: Invalid value for file-extra-flags: {extra}"
                    ))
                }
            }
        }
        let fsync_all = flag("file_fsync_all")?;
        let fdatasync = match get("file_fsync_mode").as_str() {
            "fsync" => false,
            "fdatasync" => true,
            m => return Err(format!("FATAL: Invalid fsync mode: {m}.")),
        };
        let rw_ratio: f64 = get("file_rw_ratio").trim().parse().map_err(|_| {
            format!(
                "FATAL: Invalid value for --file-rw-ratio: {}.",
                get("file_rw_ratio")
            )
        })?;
        if rw_ratio < 0.0 || !rw_ratio.is_finite() {
            return Err(format!(
                "FATAL: Invalid value for --file-rw-ratio: {rw_ratio:.6}."
            ));
        }
        let merged = int("file_merged_requests")?;
        if merged > 1 << 20 || block.saturating_mul(merged.max(1)) > 1 << 30 {
            return Err(format!(
                "FATAL: Invalid value for file-merged-requests: {merged}."
            ));
        }
        Ok(FileIoOptions {
            num,
            total,
            block,
            mode,
            io_mode,
            flags,
            // --file-fsync-all overrides the other two, as in sysbench.
            fsync_freq: if fsync_all {
                0
            } else {
                int("file_fsync_freq")?
            },
            fsync_all,
            fsync_end: !fsync_all && flag("file_fsync_end")?,
            fdatasync,
            merged,
            rw_ratio,
            max_events: 0,
        })
    }

    /// The size of each file.
    pub fn file_size(&self) -> u64 {
        self.total / self.num
    }
}
