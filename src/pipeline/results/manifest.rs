//! manifest.json, typed: what a run was — the tool, the sweep, when it started and ended, the
//! host that measured it, its plan, how it ended, the parts it was merged from or the logs
//! it was imported from. Written by `RunDir::write_manifest`, read by `load_manifest`;
//! nothing else reads the file. Every field may be absent (imports have no plan, old runs
//! lack the newer fields), so any manifest sweepbench ever wrote still reads.

use crate::pipeline::results::host::Fingerprint;
use anyhow::Context;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// None while the run goes on, and for a run that was killed.
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<Fingerprint>,
    /// The sweep file's sections as run (`[data]`, `[run]`, `[workload_options]`, the
    /// targets with their addresses redacted, the configs): a record for the reader, in the
    /// sweep file's own words; sweepbench reads the stored sweep.toml instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_options: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Every point id the run planned, in order.
    #[serde(default)]
    pub plan: Vec<String>,
    /// `--shard I/N`: this run is part I of N; `merge` checks the parts against it.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// How the points ended; None until the run ends.
    #[serde(default)]
    pub summary: Option<Summary>,
    /// A merged run: the parts it was made of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<MergedPart>,
    /// An imported run: the sysbench logs it was read from, and when.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imported_from: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub of: u32,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    #[serde(default)]
    pub ok: u32,
    #[serde(default)]
    pub failed: u32,
    #[serde(default)]
    pub sla_overloaded: u32,
    #[serde(default)]
    pub skipped: u32,
    #[serde(default)]
    pub not_run: u32,
    #[serde(default)]
    pub interrupted: bool,
    /// Points measured whose record could not be written (a full disk).
    #[serde(default)]
    pub not_written: Vec<String>,
}

/// One part of a merged run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MergedPart {
    pub index: u32,
    pub of: u32,
    pub run_dir: String,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub host: Option<Fingerprint>,
    #[serde(default)]
    pub summary: Option<Summary>,
}

impl Manifest {
    /// A manifest of this build of sweepbench, everything else empty.
    pub fn new() -> Manifest {
        Manifest {
            tool: "sweepbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..Manifest::default()
        }
    }

    /// Whether the run ended by itself (not interrupted, not killed, not still running).
    pub fn ended(&self) -> bool {
        self.ended_at.is_some() && !self.summary.as_ref().is_some_and(|s| s.interrupted)
    }
}

/// A run's manifest.json: None when the run has none, an error naming the file when it is
/// not one.
pub fn load_manifest(run: &Path) -> anyhow::Result<Option<Manifest>> {
    let path = run.join("manifest.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        let what = if e.is_data() {
            "is not a run's manifest"
        } else {
            "is not valid JSON (cut short?)"
        };
        anyhow::anyhow!("{} {what}: {e}", path.display())
    })
}

/// The host that measured a run (its manifest's fingerprint), if the run says.
pub fn load_host(run: &Path) -> Option<Fingerprint> {
    load_manifest(run).ok()??.host
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifests earlier builds wrote (a sweep's, with nulls for what had not happened,
    /// and an import's) read, and what is written reads back the same.
    #[test]
    fn old_manifests_read_and_new_ones_round_trip() {
        let old = r#"{"tool": "sweepbench", "version": "0.1.0", "sweep": "s",
            "description": null, "run_id": "20261130T010000Z",
            "started_at": "2026-11-30T01:00:00.123+00:00", "ended_at": null,
            "host": {"hostname": "h", "cpu": "c", "cores": 2, "memory_bytes": 1,
                     "kernel": "k", "probe": null},
            "data": {"tables": 1}, "run": {"threads": [1]}, "workload_options": {},
            "targets": [{"name": "t", "kind": "managed"}], "configs": [],
            "baseline": null, "plan": ["t/default/oltp_read_only/t1/r1"],
            "shard": null, "summary": null}"#;
        let m: Manifest = serde_json::from_str(old).unwrap();
        assert_eq!(m.plan.len(), 1);
        assert!(m.ended_at.is_none() && !m.ended());
        assert_eq!(m.host.as_ref().unwrap().cores, 2);
        let import = r#"{"tool": "sweepbench", "version": "0.1.0",
            "imported_from": ["a.log"], "imported_at": "2026-11-30T01:00:00Z"}"#;
        let m: Manifest = serde_json::from_str(import).unwrap();
        assert_eq!(m.imported_from, ["a.log"]);
        assert!(m.plan.is_empty() && m.run_id.is_none());
        let mut m = Manifest::new();
        m.run_id = Some("r".into());
        m.ended_at = Some(Utc::now());
        m.summary = Some(Summary {
            ok: 3,
            interrupted: true,
            ..Summary::default()
        });
        m.shard = Some(Shard { index: 1, of: 2 });
        let back: Manifest = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert!(!back.ended(), "an interrupted run did not end by itself");
    }

    #[test]
    fn a_missing_manifest_is_none_and_a_damaged_one_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        assert!(load_manifest(d.path()).unwrap().is_none());
        std::fs::write(d.path().join("manifest.json"), "{\"tool\": ").unwrap();
        let e = format!("{:#}", load_manifest(d.path()).unwrap_err());
        assert!(e.contains("manifest.json"), "{e}");
    }
}
