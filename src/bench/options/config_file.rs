//! `--config-file`: options from a file, read as sysbench reads one — `name=value` per line,
//! a value up to a space, ',' or '#', or between quotes of one kind; the command line wins.

use super::{OptionError, RawOptions};
use std::path::Path;

/// The value of one config-file line (after '='), as sysbench reads it; None for none.
fn value(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let mut chars = rest.chars();
    match chars.next()? {
        '#' => None,
        q @ ('"' | '\'') => {
            let body = &rest[1..];
            Some(body.split(q).next().unwrap_or(body).to_string())
        }
        _ => Some(
            rest.split(|c: char| c.is_whitespace() || c == ',' || c == '#')
                .next()
                .unwrap_or("")
                .to_string(),
        ),
    }
}

/// Adds the file's options that the command line did not give.
pub(super) fn merge(raw: &mut RawOptions, path: &Path) -> Result<(), OptionError> {
    let text = std::fs::read_to_string(path).map_err(|e| OptionError::BadValue {
        name: "config-file".into(),
        value: path.display().to_string(),
        why: e.to_string(),
    })?;
    for (n, line) in text.lines().enumerate() {
        let Some((name, rest)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if name.is_empty() || name.starts_with('#') || raw.given_any(name) {
            continue;
        }
        let v = value(rest).unwrap_or_default();
        raw.set(name, &v)
            .map_err(|e| OptionError::Usage(format!("{}:{}: {e}", path.display(), n + 1)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_sysbench_reads_them() {
        assert_eq!(value("8").as_deref(), Some("8"));
        assert_eq!(value(" 8 # threads").as_deref(), Some("8"));
        assert_eq!(value("1213,1020").as_deref(), Some("1213"));
        assert_eq!(value("\"a b,c\"").as_deref(), Some("a b,c"));
        assert_eq!(value("'say \"x\"'").as_deref(), Some("say \"x\""));
        assert_eq!(value("# nothing"), None);
    }

    #[test]
    fn the_command_line_wins_and_lines_are_named() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("opts");
        std::fs::write(
            &f,
            "threads=8\n# comment\ntable-size=500\nmysql-password=\"p w\"\n",
        )
        .unwrap();
        let args: Vec<String> = ["oltp_read_only", "--threads=2"]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--config-file={}", f.display())])
            .collect();
        let (_, raw, _) = super::super::parse_args(&args).unwrap();
        assert_eq!(raw.int("threads"), 2);
        assert_eq!(raw.int("table_size"), 500);
        assert_eq!(raw.get("mysql_password"), "p w");
        std::fs::write(&f, "threads=8\nthreadz=1\n").unwrap();
        let e = super::super::parse_args(&args).unwrap_err().to_string();
        assert!(e.contains(":2: invalid option: --threadz"), "{e}");
    }
}
