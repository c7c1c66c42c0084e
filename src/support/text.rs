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
