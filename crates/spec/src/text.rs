//! Text that came from outside servebench, made safe to print, and the words for a file that
//! starts with a byte-order mark. One sanitizer for every string a server sent (an error
//! body, a version, a log tail, a generated answer) before it reaches a terminal: a server
//! must not be able to move the cursor, retitle the window or recolour the output.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `s` with every control character but newline and tab (C0, DEL, C1 — ANSI escape
/// sequences among them) and every bidirectional override written as a visible escape
/// (`\x1b`, `\u{202e}`), so it prints as the text it is. Borrowed when nothing is escaped.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `bytes` start with the UTF-8 byte-order mark (EF BB BF).
pub fn starts_with_bom(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\xef\xbb\xbf")
}

/// What to say of a file that starts with a byte-order mark, which JSON and JSONL readers
/// refuse (`expected value at line 1 column 1` said nothing of the cause).
pub const BOM_WORDS: &str = "the file starts with a UTF-8 byte-order mark (bytes EF BB BF), \
                             which JSON does not allow: save it as UTF-8 without a BOM (e.g. \
                             `sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_print_as_text() {
        assert_eq!(printable("plain ünïcode\nline"), "plain ünïcode\nline");
        assert_eq!(
            printable("\x1b]0;pwned\x07\x1b[31mred\u{9b}\u{202e}"),
            "\\x1b]0;pwned\\x07\\x1b[31mred\\x9b\\u{202e}"
        );
        assert_eq!(printable("a\rb"), "a\\x0db");
        assert!(matches!(printable("ok"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_bom_is_told_apart() {
        assert!(starts_with_bom(b"\xef\xbb\xbf{}"));
        assert!(!starts_with_bom(b"{}"));
    }
}
