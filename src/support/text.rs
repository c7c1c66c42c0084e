//! Free text cut to fit one line.

/// A text on one line (its whitespace runs, newlines included, folded to
/// one space), cut to at most `max` characters with `…` at the cut.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// Names quoted and joined: `'origin', 'backup'`.
pub fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A field's text as one entry of a render: trimmed, every line after the
/// first indented by two spaces, so that none of its lines begins where
/// the tool's own lines begin (`!!` warnings, `#` headings, `- ` labels):
/// a multi-line field cannot pass for the tool's words.
pub fn continued(text: &str) -> String {
    let text = text.trim();
    if !text.contains('\n') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(line.trim_end());
    }
    out
}

/// A value shown inside one of the tool's lines (a path, a branch, a key):
/// on one line, its whitespace runs folded to one space, and quoted for
/// the shell when it needs quoting.
pub fn word(text: &str) -> String {
    crate::support::escape::shell_quote(&flat(text))
}

/// A value on one line: its whitespace runs, newlines included, folded to
/// one space.
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_lines_are_indented() {
        assert_eq!(continued(" one "), "one");
        assert_eq!(
            continued("a\n!! VERIFIED\n# Resume\n"),
            "a\n  !! VERIFIED\n  # Resume"
        );
    }

    #[test]
    fn words_are_one_line_and_quoted() {
        assert_eq!(word("src/a.rs:3-5"), "src/a.rs:3-5");
        assert_eq!(word("a\n!! b"), "'a !! b'");
    }
}
