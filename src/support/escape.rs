//! Text that is safe to print: a brief's content must not drive the
//! terminal (or the narrative file) it ends up in.

/// `s` as one POSIX shell word: as it is when it needs no quoting (letters,
/// digits and `/._-+,:@%=`), else in single quotes.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether a terminal could act on `c` rather than show it: control
/// characters other than newline and tab (C0, DEL, C1: escape sequences,
/// carriage return, backspace, bell, NUL) and the bidirectional overrides
/// that reorder what is displayed.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe`] character written as a `\uXXXX` escape,
/// so that a brief's content cannot drive the terminal it is printed on.
/// The escape is JSON's own, so JSON text stays JSON with the same meaning.
pub fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII, newline and tab are safe byte by byte; only a text
    // with other bytes is looked at character by character.
    let safe = |b: &u8| matches!(b, b' '..=b'~' | b'\n' | b'\t');
    if text.as_bytes().iter().all(safe) || !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("../feat-x/a=b,c"), "../feat-x/a=b,c");
        assert_eq!(shell_quote("my dir"), "'my dir'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(rm -rf)"), "'$(rm -rf)'");
    }

    #[test]
    fn clean_escapes_what_a_terminal_would_act_on() {
        // Found by the hostile-input tests: a teammate's brief could print
        // escape sequences, carriage returns and bidi overrides raw.
        assert_eq!(clean("plain\n\ttext ✓"), "plain\n\ttext ✓");
        assert_eq!(
            clean("a\u{0}b\u{1b}[31m\r\u{7f}\u{9b}\u{202e}"),
            "a\\u0000b\\u001b[31m\\u000d\\u007f\\u009b\\u202e"
        );
        // JSON stays JSON with the same meaning.
        let json = serde_json::to_string(&"x\u{7f}\u{9b}\u{202e}").unwrap();
        let cleaned = clean(&json);
        assert_ne!(cleaned, json);
        let back: String = serde_json::from_str(&cleaned).unwrap();
        assert_eq!(back, "x\u{7f}\u{9b}\u{202e}");
    }
}
