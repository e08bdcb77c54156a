//! Text that came from outside (a server's error message or version, a value it sent) made
//! safe to print: control characters and bidirectional overrides shown as escapes, so a
//! message cannot recolour the terminal, ring its bell, overwrite a line or reorder what a
//! reader sees — on the terminal, in summary.txt, report.md and cron's mail alike.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal as itself: C0 controls and DEL, C1 controls, and the
/// Unicode bidirectional marks, embeddings, overrides and isolates.
fn hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every hidden character written as an escape a reader recognises: `\e` (ESC),
/// `\a`, `\b`, `\t`, `\n`, `\r`, `\x0b` for the other C0 controls and DEL, `\u{202e}` above.
/// Borrowed, with no copy, when there is nothing to escape.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && hidden(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_and_bidi_character_is_made_visible() {
        let mut all: Vec<char> = (0u32..0x20)
            .chain(0x7f..0xa0)
            .filter_map(char::from_u32)
            .collect();
        all.extend(['\u{61c}', '\u{200e}', '\u{200f}']);
        all.extend(('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}'));
        for c in all {
            let s = format!("a{c}b");
            let v = visible(&s);
            assert!(!v.chars().any(hidden), "{:?} left {:?}", c, v);
            assert!(v.starts_with('a') && v.ends_with('b') && v.len() > 3, "{v}");
            assert!(v.is_ascii(), "{c:?} → {v}");
        }
        assert_eq!(
            visible("\u{1b}[31mRED\u{1b}[0m evil \u{7} message"),
            "\\e[31mRED\\e[0m evil \\a message"
        );
        assert_eq!(visible("x\u{202e}y\r\n"), "x\\u{202e}y\\r\\n");
        assert_eq!(visible("\u{0}\u{7f}\u{85}"), "\\x00\\x7f\\u{85}");
    }

    #[test]
    fn plain_text_and_other_unicode_pass_unchanged_without_a_copy() {
        for s in [
            "Access denied for user 'u'@'h'",
            "Дубликат «ключа» — ü é 中文",
            "",
        ] {
            assert!(matches!(visible(s), Cow::Borrowed(x) if x == s));
        }
    }
}
