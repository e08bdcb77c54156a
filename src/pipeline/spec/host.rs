//! The host tests' part of a sweep file: `[fileio]`, the fileio test's options by
//! sysbench's names, for `workloads = ["fileio"]`.

use super::raw::RawSweep;
use super::{Ctx, RunSpec, SpecError};
use std::ops::Range;

/// `[fileio]`: the fileio host test's options by sysbench's names (`file_total_size =
/// "1G"`, `file_test_mode = "rndwr"`, `file_extra_flags = ["direct"]`, …), checked by
/// the test itself; sysbench's defaults, and `rndrw` for the test mode sysbench requires.
pub(super) fn fileio(
    cx: &Ctx<'_>,
    raw: &RawSweep,
    run: &RunSpec,
) -> Result<Option<crate::engine::host::fileio::FileIoOptions>, SpecError> {
    use crate::engine::host::fileio::{FileIoOptions, DEFAULTS};
    let wanted = run
        .host_tests
        .contains(&crate::engine::host::HostKind::FileIo);
    let table = match (&raw.fileio, wanted) {
        (Some(t), false) => return Err(cx.err(t.span(), "[fileio] sets the fileio host test's options, but run.workloads has no \"fileio\": add it there, or remove [fileio]")),
        (None, false) => return Ok(None),
        (t, true) => t,
    };
    let mut given: std::collections::BTreeMap<String, (String, Range<usize>)> = Default::default();
    for (key, value) in table.iter().flat_map(|t| t.get_ref()) {
        let name = key.replace('-', "_");
        if !DEFAULTS.iter().any(|(n, _)| *n == name) {
            let names: Vec<&str> = DEFAULTS.iter().map(|(n, _)| *n).collect();
            let hint = names
                .iter()
                .map(|n| (strsim::levenshtein(&name, n), *n))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map(|(_, n)| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default();
            return Err(cx.err(
                value.span(),
                format!(
                    "fileio.{key}: not an option of the fileio test{hint}; [fileio] takes {}",
                    names.join(", ")
                ),
            ));
        }
        let text = match value.get_ref() {
            toml::Value::String(v) => v.clone(),
            toml::Value::Integer(v) => v.to_string(),
            toml::Value::Float(v) => v.to_string(),
            toml::Value::Boolean(v) => if *v { "on" } else { "off" }.to_string(),
            toml::Value::Array(list) if name == "file_extra_flags" => list
                .iter()
                .map(|x| x.as_str().map(str::to_string).ok_or(()))
                .collect::<Result<Vec<_>, ()>>()
                .map_err(|()| {
                    cx.err(
                        value.span(),
                        "fileio.file_extra_flags: a list of \"sync\", \"dsync\" and \"direct\"",
                    )
                })?
                .join(","),
            _ => {
                return Err(cx.err(
                    value.span(),
                    format!("fileio.{key}: a string, a number or a boolean"),
                ))
            }
        };
        given.insert(name, (text, value.span()));
    }
    let get = |n: &str| -> String {
        match (given.get(n), n) {
            (Some((v, _)), _) => v.clone(),
            (None, "file_test_mode") => "rndrw".into(),
            (None, _) => DEFAULTS
                .iter()
                .find(|(d, _)| *d == n)
                .map_or(String::new(), |(_, v)| v.to_string()),
        }
    };
    FileIoOptions::parse(&get).map(Some).map_err(|m| {
        let m = m.trim_start_matches("FATAL: ");
        // At the key the message names (sysbench names three by what they set), else
        // at the table.
        let named = |n: &str| {
            m.contains(&n.replace('_', "-"))
                || [
                    ("IO operations mode", "file_test_mode"),
                    ("I/O mode", "file_io_mode"),
                    ("fsync mode", "file_fsync_mode"),
                ]
                .iter()
                .any(|(words, key)| *key == n && m.contains(words))
        };
        let at = given
            .iter()
            .find(|(n, _)| named(n))
            .map(|(_, (_, span))| span.clone())
            .or_else(|| table.as_ref().map(|t| t.span()))
            .unwrap_or(0..0);
        cx.err(at, format!("[fileio]: {m}"))
    })
}
