//! The source tree's shape (docs/architecture.md): layers use the ones below them, and no
//! two modules of src/ import each other, directly or around a longer loop. Read from the
//! files themselves: every `crate::a::b` path in a module's code (its tests, which may use
//! the modules above it to check what it is for, left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module unit: `layer/module` (`pipeline/report`), or the top-level file (`exit`).
fn unit_of(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| *p != "mod")
        .collect();
    parts[..parts.len().min(2)].join("/")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's code without its tests: files of tests are skipped, and a file's own test
/// module (at its end, as everywhere in src/) is cut off.
fn code(p: &Path) -> Option<String> {
    let name = p.file_name()?.to_string_lossy();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return None;
    }
    let text = std::fs::read_to_string(p).ok()?;
    Some(match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    })
}

/// Every unit's imports of other units, from `crate::a::b` paths.
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let units: BTreeSet<String> = files
        .iter()
        .map(|p| unit_of(p.strip_prefix(src).unwrap()))
        .collect();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &files {
        let Some(text) = code(p) else { continue };
        let from = unit_of(p.strip_prefix(src).unwrap());
        for (i, _) in text.match_indices("crate::") {
            let path: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let two = segs.iter().take(2).copied().collect::<Vec<_>>().join("/");
            let to = if units.contains(&two) {
                two
            } else {
                segs.first().map_or(String::new(), |s| s.to_string())
            };
            if !to.is_empty() && to != from && units.contains(&to) {
                out.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    out
}

/// A loop of imports through `start`, if there is one.
fn loop_through(start: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if next == start {
                let mut p = path.clone();
                p.push(start.to_string());
                return Some(p);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_of_src_imports_itself_around_a_loop() {
    let e = edges(&src());
    // The reader sees real imports, or this test checks nothing.
    assert!(e["pipeline/report"].contains("pipeline/judge"), "{e:?}");
    assert!(e["pipeline/sweep"].contains("engine/exec"), "{e:?}");
    let loops: Vec<String> = e
        .keys()
        .filter_map(|u| loop_through(u, &e))
        .map(|l| l.join(" → "))
        .collect();
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

#[test]
fn layers_use_only_the_ones_below() {
    let e = edges(&src());
    let layer = |u: &str| u.split('/').next().unwrap().to_string();
    let mut wrong = Vec::new();
    for (from, tos) in &e {
        for to in tos {
            let (a, b) = (layer(from), layer(to));
            let bad = match a.as_str() {
                "engine" => ["pipeline", "bench", "cmd"].contains(&b.as_str()),
                "pipeline" => ["bench", "cmd"].contains(&b.as_str()),
                "bench" => ["pipeline", "cmd"].contains(&b.as_str()),
                // The process-wide modules import nothing from the layers.
                "exit" | "interrupt" | "owner" | "usage" | "affinity" | "shield" => {
                    ["engine", "pipeline", "bench", "cmd"].contains(&b.as_str())
                }
                _ => false,
            };
            if bad {
                wrong.push(format!("{from} → {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// One administrative client behind one module (#33): outside the engine nothing logs in
/// by itself — pipeline/, cmd/ and bench/ send statements through `engine::admin::Admin` (or
/// ask the engine to run a workload); the managed server's bootstrap, which runs before
/// any target exists, is the one exception. And no second MySQL client crate comes back.
#[test]
fn statements_go_through_the_admin_module() {
    let mut files = Vec::new();
    rs_files(&src(), &mut files);
    let code = |p: &PathBuf| -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(str::to_string)
            .collect()
    };
    let mut wrong = Vec::new();
    for p in &files {
        let rel = p.strip_prefix(src()).unwrap().display().to_string();
        let lines = code(p);
        if lines.iter().any(|l| l.contains("mysql_async")) {
            wrong.push(format!("{rel}: names mysql_async"));
        }
        let logs_in = lines
            .iter()
            .any(|l| l.contains("wire_connect") || l.contains("wire::Conn::connect"));
        if logs_in && !rel.starts_with("engine/") && rel != "pipeline/server/managed.rs" {
            wrong.push(format!("{rel}: opens its own connection"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("mysql_async"),
        "Cargo.toml names mysql_async"
    );
}
