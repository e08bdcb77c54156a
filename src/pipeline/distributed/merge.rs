//! `sweepbench merge RUN_DIR… --out DIR`: the run directories of the parts of one sharded
//! sweep (`run --shard I/N`) joined into one run that `report`, `compare` and `history` read
//! as any other. Refuses parts of different sweep files, a missing, repeated or foreign part,
//! and a point measured twice; writes nothing unless the whole merge succeeds.

use crate::pipeline::results::{self, load_intervals, load_points};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// One part: its directory, manifest and sweep file.
struct Part {
    dir: PathBuf,
    manifest: results::Manifest,
    sweep: String,
    index: u32,
    of: u32,
}

fn part(dir: &Path) -> anyhow::Result<Part> {
    let read = |f: &str| {
        std::fs::read(dir.join(f))
            .with_context(|| format!("{}: no {f} (is it a run directory?)", dir.display()))
    };
    read("manifest.json")?;
    let manifest = results::load_manifest(dir)?
        .with_context(|| format!("{}: no manifest.json", dir.display()))?;
    let sweep = String::from_utf8_lossy(&read("sweep.toml")?).into_owned();
    let Some(results::Shard { index, of }) = manifest.shard else {
        bail!(
            "{}: not a part of a sharded sweep (its manifest has no shard; run it with --shard I/N)",
            dir.display()
        );
    };
    Ok(Part {
        dir: dir.to_path_buf(),
        manifest,
        sweep,
        index,
        of,
    })
}

/// Checks that `parts` are all the parts of one sweep, once each.
fn check(parts: &[Part]) -> anyhow::Result<()> {
    let first = &parts[0];
    for p in &parts[1..] {
        if p.sweep != first.sweep {
            bail!(
                "{} and {} were run from different sweep files (their sweep.toml differ): parts of one sweep only",
                first.dir.display(),
                p.dir.display()
            );
        }
        if p.of != first.of {
            bail!(
                "{} is part {}/{} and {} part {}/{}: parts of one split only",
                first.dir.display(),
                first.index,
                first.of,
                p.dir.display(),
                p.index,
                p.of
            );
        }
    }
    for i in 1..=first.of {
        let n = parts.iter().filter(|p| p.index == i).count();
        if n == 0 {
            bail!(
                "part {i} of {} is missing: give every part's run directory",
                first.of
            );
        }
        if n > 1 {
            bail!("part {i} of {} is given {n} times", first.of);
        }
    }
    Ok(())
}

/// Copies every file under `from` into `to` (created), refusing to overwrite one. A part is
/// untrusted input: a symbolic link anywhere in it is refused, never followed (it could pull
/// any file the merging user can read into the published run).
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    let refuse = |p: &Path| {
        anyhow::anyhow!(
            "{} is a symbolic link: a part's files are copied, never followed; remove it, or merge a copy of the part without links",
            p.display()
        )
    };
    match std::fs::symlink_metadata(from) {
        Err(_) => return Ok(()),
        Ok(m) if m.file_type().is_symlink() => return Err(refuse(from)),
        Ok(_) => {}
    }
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for e in entries {
        let e = e?;
        let dest = to.join(e.file_name());
        let kind = e.file_type()?;
        if kind.is_symlink() {
            return Err(refuse(&e.path()));
        }
        if kind.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else {
            if dest.exists() {
                bail!("{} comes from two parts", dest.display());
            }
            std::fs::copy(e.path(), &dest)
                .with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// Merges the run directories `dirs` into a new run directory `out`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    // A dangling link, or a path ending in `..`, is no new directory either.
    if out.symlink_metadata().is_ok() {
        bail!(
            "{} exists: give a new directory for the merged run",
            out.display()
        );
    }
    if !matches!(
        out.components().next_back(),
        Some(std::path::Component::Normal(_))
    ) {
        bail!(
            "--out {}: give the merged run a directory name of its own (not '.', '..' or '/')",
            out.display()
        );
    }
    let mut parts = dirs
        .iter()
        .map(|d| part(d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    check(&parts)?;
    parts.sort_by_key(|p| p.index);
    let mut points = Vec::new();
    let mut intervals = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // The parts ran one sweep (`check`): a row for a target, config or workload it does not
    // have was added to a part afterwards.
    let spec =
        crate::pipeline::spec::SweepSpec::parse(&parts[0].dir.join("sweep.toml"), &parts[0].sweep)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    for p in &parts {
        for r in load_points(&p.dir)? {
            if !seen.insert(r.point_id.clone()) {
                bail!("point {} was measured by two parts", r.point_id);
            }
            let host = r.is_host() && spec.run.host_tests.iter().any(|h| h.name() == r.workload);
            let known = host
                || spec.targets.iter().any(|t| t.name == r.target)
                    && spec.configs.iter().any(|c| c.name == r.config)
                    && spec.run.workloads.iter().any(|w| w.name() == r.workload);
            if !known {
                bail!(
                    "{}: point {} is not one of the sweep's (its target, config or workload is not in sweep.toml): the part was edited; merge the parts as the runs wrote them",
                    p.dir.display(),
                    r.point_id
                );
            }
            points.push(r);
        }
        intervals.extend(load_intervals(&p.dir)?);
    }
    // Built beside `out` and renamed into place: a failed merge leaves nothing.
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let work = tempfile::Builder::new()
        .prefix(".merge-")
        .tempdir_in(parent)
        .with_context(|| format!("creating a directory in {}", parent.display()))?;
    let w = work.path();
    for p in &parts {
        copy_tree(&p.dir.join("histograms"), &w.join("histograms"))?;
        copy_tree(&p.dir.join("servers"), &w.join("servers"))?;
    }
    let (pcsv, icsv) = results::points_and_intervals_csv(&points, &intervals)?;
    results::write_atomic(&w.join("points.csv"), &pcsv)?;
    results::write_atomic(&w.join("intervals.csv"), &icsv)?;
    // Each part's server counters (status.csv), its point ids unique across the parts.
    for p in &parts {
        results::cost::append(w, &results::cost::load(&p.dir)?)?;
    }
    results::write_atomic(&w.join("sweep.toml"), parts[0].sweep.as_bytes())?;
    let manifest = results::Manifest {
        shard: None,
        run_id: out.file_name().map(|n| n.to_string_lossy().into_owned()),
        plan: parts.iter().flat_map(|p| p.manifest.plan.clone()).collect(),
        started_at: parts.iter().filter_map(|p| p.manifest.started_at).min(),
        ended_at: parts.iter().filter_map(|p| p.manifest.ended_at).max(),
        summary: None,
        shards: parts
            .iter()
            .map(|p| results::MergedPart {
                index: p.index,
                of: p.of,
                run_dir: p.dir.display().to_string(),
                run_id: p.manifest.run_id.clone(),
                host: p.manifest.host.clone(),
                summary: p.manifest.summary.clone(),
            })
            .collect(),
        ..parts[0].manifest.clone()
    };
    results::write_atomic(
        &w.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
    )?;
    let kept = work.keep();
    if let Err(e) = std::fs::rename(&kept, out) {
        let _ = std::fs::remove_dir_all(&kept);
        return Err(
            anyhow::Error::new(e).context(format!("moving the merged run to {}", out.display()))
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_inside_a_part_are_refused_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let secret = d.path().join("secret");
        std::fs::write(&secret, "private").unwrap();
        let part = d.path().join("part");
        std::fs::create_dir_all(part.join("histograms")).unwrap();
        std::fs::write(part.join("histograms/a.hlog"), "ok").unwrap();
        std::os::unix::fs::symlink(&secret, part.join("histograms/leak.hlog")).unwrap();
        let out = d.path().join("out");
        let e = copy_tree(&part.join("histograms"), &out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("leak.hlog is a symbolic link"), "{e}");
        assert!(!out.join("leak.hlog").exists());
        // A linked directory is refused as a whole.
        let linked = d.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(d.path(), linked.join("histograms")).unwrap();
        let e = copy_tree(&linked.join("histograms"), &d.path().join("out2"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("histograms is a symbolic link"), "{e}");
        assert!(!d.path().join("out2").exists());
        // Plain files are copied.
        std::fs::remove_file(part.join("histograms/leak.hlog")).unwrap();
        copy_tree(&part.join("histograms"), &d.path().join("out3")).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("out3/a.hlog")).unwrap(),
            "ok"
        );
    }
}
