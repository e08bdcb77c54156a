//! The sweep file's small words: durations, names that become paths, server variable
//! names, TOML literals as SET GLOBAL values, where an array's element is, "did you mean"
//! for an unknown key, and multiples ("2×cores", "1.2 × buffer_pool").

use super::config;
use std::ops::Range;
use toml::Spanned;

/// Parses a duration: `90`, `90s`, `5m`, `1h`.
pub fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix('h') {
        (n, 3600)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1)
    } else {
        (s, 1)
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
}

/// Where element `i` of the array at `span` of `text` is: the array re-read on its own
/// (a `toml::Value` keeps no spans inside it).
pub(super) fn element_span(text: &str, span: Range<usize>, i: usize) -> Option<Range<usize>> {
    #[derive(serde::Deserialize)]
    struct One {
        v: Vec<Spanned<toml::Value>>,
    }
    let prefix = "v = ";
    let one: One = toml::from_str(&format!("{prefix}{}", text.get(span.clone())?)).ok()?;
    let s = one.v.get(i)?.span();
    let shift = span.start as isize - prefix.len() as isize;
    Some((s.start as isize + shift) as usize..(s.end as isize + shift) as usize)
}

/// A share strictly between 0 and 1 (a sweep file's `drop`, `resolution`).
pub(super) fn fraction(x: f64) -> bool {
    x > 0.0 && x < 1.0
}

/// Adds "did you mean" to serde's unknown-field message.
pub(super) fn unknown_field_hint(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    if let Some(why) = config::overrides::set_elsewhere(field) {
        return format!("'{field}': {why}");
    }
    let all: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    // Spelling variants ('-' for '_', sysbench 0.5's oltp_ names) are accepted, not listed.
    let names: Vec<&str> = all
        .iter()
        .copied()
        .filter(|n| !n.contains('-'))
        .filter(|n| n.strip_prefix("oltp_").is_none_or(|b| !all.contains(&b)))
        .collect();
    let best = names
        .iter()
        .map(|n| (strsim::levenshtein(field, n), *n))
        .min()
        .filter(|(d, _)| *d <= 3);
    match best {
        Some((_, n)) => format!(
            "unknown key '{field}' (did you mean '{n}'?); valid keys: {}",
            names.join(", ")
        ),
        None => format!("unknown key '{field}'; valid keys: {}", names.join(", ")),
    }
}

pub(super) fn toml_literal(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "on" } else { "off" }.to_string()),
        _ => None,
    }
}

/// A server variable's name: letters, digits and '_' (it is written into SET GLOBAL).
pub fn var_name_ok(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A sweep, target or config name: it becomes a directory and a path segment, so letters,
/// digits, '-', '_' and '.', starting with a letter or digit (no hidden `.name`, no `..`).
pub fn name_ok(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !s.contains("..")
}

/// What `name_ok` asks for, for error messages.
pub const NAME_RULE: &str =
    "use letters, digits, '-', '_' or '.', starting with a letter or digit, without '..'";

/// "N × word" (also `x`, `*`), or `word` alone for 1 → N, a positive number; None when the
/// text is not a multiple of `word` (threads' "2×cores", `[data] size`'s "1.2 × memory").
pub(super) fn times(text: &str, word: &str) -> Option<f64> {
    let rest = text.trim().strip_suffix(word)?.trim_end();
    if rest.is_empty() {
        return Some(1.0);
    }
    let n = rest
        .strip_suffix('×')
        .or_else(|| rest.strip_suffix('x'))
        .or_else(|| rest.strip_suffix('*'))?
        .trim();
    n.parse::<f64>().ok().filter(|m| m.is_finite() && *m > 0.0)
}
