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

/// Fails naming every loop in `e`.
fn assert_no_loop(e: &BTreeMap<String, BTreeSet<String>>) {
    let loops: Vec<String> = e
        .keys()
        .filter_map(|u| loop_through(u, e))
        .map(|l| l.join(" → "))
        .collect();
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
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
    assert_no_loop(&e);
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
/// any target exists, is the one exception. And no second MySQL client crate comes back
/// (mysql_async only as the tests' oracle).
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
    // mysql_async may be a dev-dependency — the oracle tests/oracle.rs compares our client
    // with — and nothing else.
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let product = manifest
        .split("[dev-dependencies]")
        .next()
        .unwrap_or_default();
    assert!(
        !product.contains("mysql_async"),
        "Cargo.toml names mysql_async outside [dev-dependencies]"
    );
    let dev = manifest
        .split("[dev-dependencies]")
        .nth(1)
        .unwrap_or_default();
    assert!(
        !dev.split("\n[")
            .nth(1)
            .unwrap_or_default()
            .contains("mysql_async"),
        "mysql_async in a section after [dev-dependencies]"
    );
}

/// The pipeline says what it does as events (pipeline/events.rs); how they show is the
/// command layer's (cmd/progress.rs), so a run can be watched as a bar, plain lines or JSON.
#[test]
fn nothing_under_pipeline_prints() {
    let mut files = Vec::new();
    rs_files(&src().join("pipeline"), &mut files);
    let mut wrong = Vec::new();
    for p in &files {
        let Some(text) = code(p) else { continue };
        let rel = p.strip_prefix(src()).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") {
                continue;
            }
            for what in [
                "println!",
                "eprintln!",
                "print!(",
                "eprint!(",
                "dbg!(",
                "indicatif",
            ] {
                if l.contains(what) {
                    wrong.push(format!("{rel}:{}: {}", n + 1, l));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A file's module path: `pipeline/sweep/run.rs` → ["pipeline", "sweep", "run"]; a mod.rs
/// is its directory's module.
fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if m.last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        m.pop();
    }
    m
}

/// `a::{b, c::{d, e}}` → a::b, a::c::d, a::c::e (spaces and `as` renames dropped).
fn expand_use(s: &str) -> Vec<String> {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    fn rec(prefix: &str, rest: &str, out: &mut Vec<String>) {
        let Some(open) = rest.find('{') else {
            let path = rest.split(" as ").next().unwrap_or(rest).replace(' ', "");
            out.push(format!("{prefix}{path}"));
            return;
        };
        let head = rest[..open].replace(' ', "");
        let (mut depth, mut item, mut items) = (0, String::new(), Vec::new());
        for ch in rest[open + 1..].chars() {
            match ch {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(ch);
        }
        items.push(item);
        for it in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
            rec(&format!("{prefix}{head}"), it, out);
        }
    }
    rec("", &s, &mut out);
    out
}

/// Every path a file's code names: its `use` items expanded, `crate::`/`super::`/`self::`
/// paths, and a module file's own children named bare (`run::Runner` after `mod run;`).
fn named_paths(text: &str) -> Vec<String> {
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 4..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(end) = rest.find(';') {
            out.extend(expand_use(&rest[..end]));
        }
    }
    let children: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect();
    let mut roots: Vec<String> = ["crate::", "super::", "self::"].map(String::from).to_vec();
    roots.extend(children.iter().map(|c| format!("{c}::")));
    for root in &roots {
        for (i, _) in text.match_indices(root.as_str()) {
            if text[..i].chars().last().is_some_and(ident) {
                continue;
            }
            let path: String = text[i..].chars().take_while(|&c| ident(c)).collect();
            let path = path.trim_end_matches(':');
            out.push(if root.starts_with("crate") || root.starts_with("s") {
                path.to_string()
            } else {
                format!("self::{path}")
            });
        }
    }
    out
}

/// File-level imports between the modules of src/ (`super::` and bare children included,
/// a re-export followed to the file that defines the item). A module's file using its own
/// submodules (mod.rs, or `compare.rs` with `mod render;`) is its entry point declaring and
/// dispatching to them, not an import, and is left out; a submodule using its parent's
/// items, or a sibling's, is an import.
fn file_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for p in &files {
        let Some(text) = code(p) else { continue };
        modules.insert(module_of(p.strip_prefix(src).unwrap()), text);
    }
    let resolve = |segs: &[String]| -> Option<Vec<String>> {
        (1..=segs.len())
            .rev()
            .map(|n| segs[..n].to_vec())
            .find(|m| modules.contains_key(m))
    };
    // (module, item) → the child module it re-exports the item from.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for (m, text) in &modules {
        for line in text.split(';') {
            let line = line.trim();
            let Some(items) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
            else {
                continue;
            };
            for path in expand_use(items) {
                let segs: Vec<&str> = path.split("::").filter(|s| *s != "self").collect();
                let mut child = m.clone();
                child.push(segs[0].to_string());
                if segs.len() >= 2 && modules.contains_key(&child) {
                    reexports.insert((m.clone(), segs[segs.len() - 1].to_string()), child);
                }
            }
        }
    }
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &modules {
        for path in named_paths(text) {
            let mut segs: Vec<String> = path.split("::").map(str::to_string).collect();
            let mut base = match segs[0].as_str() {
                "crate" => Vec::new(),
                "super" | "self" => m.clone(),
                _ => continue,
            };
            // A file's `self` is itself; its `super` its parent (a mod.rs: its directory's).
            while let Some(first) = segs.first().cloned() {
                match first.as_str() {
                    "crate" | "self" => {}
                    "super" => {
                        base.pop();
                    }
                    _ => break,
                }
                segs.remove(0);
            }
            base.extend(segs);
            let Some(mut to) = resolve(&base) else {
                continue;
            };
            if to.len() > m.len() && to.starts_with(m) {
                continue;
            }
            if let Some(next) = base.get(to.len()) {
                if let Some(child) = reexports.get(&(to.clone(), next.clone())) {
                    to = child.clone();
                }
            }
            if &to != m && !to.is_empty() {
                out.entry(m.join("/")).or_default().insert(to.join("/"));
            }
        }
    }
    out
}

/// No file of src/ reaches itself through the files it imports (#33: the sweep's eight
/// files that each imported `run` for its `Runner`, and `run` them).
#[test]
fn no_file_of_src_imports_itself_around_a_loop() {
    let e = file_edges(&src());
    // The reader sees real imports, `super::` ones and re-exports included, or this test
    // checks nothing.
    for (from, to) in [
        ("pipeline/sweep/paired", "pipeline/sweep/runner"),
        ("pipeline/sweep/duet", "pipeline/sweep/slices"),
        ("engine/wire/packet", "engine/wire/stream"),
        ("pipeline/sweep/run", "pipeline/sweep/runner"),
    ] {
        assert!(e[from].contains(to), "{from} → {to} not seen: {e:?}");
    }
    assert_no_loop(&e);
}

/// The measured window's bracket is written once (`sweep/bracket.rs`, `Bracket`): what is
/// read before a window and written after it — the record settled, its samples, the
/// server's CPU, the shares of the host others took, the counters and a dead server's
/// revival — is never assembled by a design. A figure read around every window is then
/// added in one place.
#[test]
fn the_measured_window_is_bracketed_in_one_place() {
    let mut files = Vec::new();
    rs_files(&src().join("pipeline"), &mut files);
    let steps = [
        "settle(",
        ".end_window(",
        "write_samples(",
        "set_shares(",
        "host_shares(",
        ".server_cpu_seconds()",
        ".window_start(",
        "host_cpu()",
    ];
    let mut wrong = Vec::new();
    for p in &files {
        let rel = p.strip_prefix(src()).unwrap().display().to_string();
        if rel.ends_with("sweep/bracket.rs") {
            continue;
        }
        let Some(text) = code(p) else { continue };
        for (n, line) in text.lines().enumerate() {
            let l = line.trim_start();
            if l.starts_with("//") || l.starts_with("pub") || l.starts_with("fn ") {
                continue;
            }
            for step in steps {
                if l.contains(step) {
                    wrong.push(format!("{rel}:{}: {}", n + 1, l));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "steps of the window's bracket outside bracket.rs: {wrong:#?}"
    );
}
