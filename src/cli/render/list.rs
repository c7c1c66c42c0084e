//! `list` and the overview: the rows of stored briefs, fitted to the
//! terminal's width, and the briefs waiting here.

use serde::Serialize;

use crate::cli::output::{Doc, Style};

/// One row of `git handoff list`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ListRow {
    /// The key.
    pub key: String,
    /// Whether it is the brief a keyless `resume` reads (this session's
    /// key, else the current branch's).
    pub current: bool,
    /// The version id (blob id).
    pub id: String,
    /// The branch it was written on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The head commit it was written at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// When it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Seconds since it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<i64>,
    /// Its done-when check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_when: Option<String>,
    /// Why it could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The remotes whose version it has diverged from (as the last fetch
    /// found): not pushed until resolved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diverged: Vec<String>,
}

/// The width `list` rows are cut to: `COLUMNS` when set, else the
/// terminal's width when stdout is one, else 80.
pub fn line_width() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

/// `list` as aligned text: marker, key, age, branch, short head, done when;
/// each row cut to `width` characters with `…` (the done-when text is what
/// gives way). The current key's row is labelled [`Style::Current`].
pub fn list_text(rows: &[ListRow], line_width: usize) -> Doc {
    if rows.is_empty() {
        return Doc::from("No briefs yet; `git handoff write` creates one.\n");
    }
    let text = list_lines(rows, line_width);
    let mut doc = Doc::new();
    for (line, row) in text.lines().zip(rows) {
        if row.current {
            doc.styled_line(Style::Current, line);
        } else {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    doc
}

/// The rows of [`list_text`], one line each.
fn list_lines(rows: &[ListRow], line_width: usize) -> String {
    use std::fmt::Write;
    let ages: Vec<String> = rows
        .iter()
        .map(|r| {
            r.age_seconds
                .map_or_else(|| "-".into(), crate::support::clock::age)
        })
        .collect();
    let width = |f: &dyn Fn(&ListRow) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let aw = ages.iter().map(|a| a.len()).max().unwrap_or(0);
    let (kw, bw) = columns(
        width(&|r| r.key.chars().count()),
        aw,
        width(&|r| r.branch.as_deref().map_or(1, |b| b.chars().count())),
        line_width,
    );
    let mut out = String::with_capacity(rows.len() * (kw + aw + bw + 60));
    for (r, age) in rows.iter().zip(&ages) {
        let start = out.len();
        let marker = if r.current { '*' } else { ' ' };
        let key = cut_cell(&r.key, kw);
        let branch = cut_cell(r.branch.as_deref().unwrap_or("-"), bw);
        let head = r
            .head_sha
            .as_deref()
            .map(|s| &s[..s.len().min(7)])
            .unwrap_or("-");
        // Padding by hand: `format!` widths cost more than the rest.
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
        out.push(marker);
        out.push(' ');
        out.push_str(&key);
        pad(&mut out, kw.saturating_sub(key.chars().count()) + 2);
        pad(&mut out, aw.saturating_sub(age.len()));
        out.push_str(age);
        out.push_str("  ");
        out.push_str(&branch);
        pad(&mut out, bw.saturating_sub(branch.chars().count()) + 2);
        out.push_str(head);
        pad(&mut out, 7usize.saturating_sub(head.chars().count()) + 2);
        if !r.diverged.is_empty() {
            let _ = write!(out, "[diverged: {}] ", r.diverged.join(", "));
        }
        match (&r.error, &r.done_when) {
            (Some(e), _) => {
                let _ = write!(out, "(unreadable: {e})");
            }
            (None, Some(d)) => out.push_str(d.lines().next().unwrap_or("")),
            (None, None) => {}
        }
        let line = out[start..].trim_end().len();
        out.truncate(start + line);
        cut_to(&mut out, start, line_width);
        out.push('\n');
    }
    out
}

/// The widths of the key and branch columns in a line of `line_width`:
/// what the rows need, unless that leaves the facts after them (age, branch,
/// head and [`DONE_WHEN_ROOM`] characters of done-when) no room; then the
/// key column gives way first, down to [`MIN_CELL`], and the branch column
/// is held to a quarter of the line. A long key is cut, never the facts.
fn columns(key: usize, age: usize, branch: usize, line_width: usize) -> (usize, usize) {
    let branch = branch.min((line_width / 4).max(MIN_CELL));
    // marker and space, two spaces after key, age and branch, head and two.
    let fixed = 2 + 2 + age + 2 + branch + 2 + 7 + 2 + DONE_WHEN_ROOM;
    let key = key.min(line_width.saturating_sub(fixed).max(MIN_CELL));
    (key, branch)
}

/// The narrowest a cut key or branch column gets.
const MIN_CELL: usize = 12;

/// The characters of done-when a row keeps room for before its key is cut.
const DONE_WHEN_ROOM: usize = 16;

/// `text` in at most `width` characters, the last one `…` when cut.
fn cut_cell(text: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= width {
        return text.into();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut.into()
}

/// Cut the line that begins at `start` to `width` characters, the last one
/// `…` when anything was cut.
fn cut_to(out: &mut String, start: usize, width: usize) {
    let line = &out[start..];
    if line.chars().count() <= width {
        return;
    }
    let keep = line
        .char_indices()
        .nth(width.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    out.truncate(start + keep);
    let trimmed = out[start..].trim_end().len();
    out.truncate(start + trimmed);
    out.push('…');
}

/// One line per waiting brief, at most `named`, then `+N more`: its key,
/// branch, the worktree that has the branch checked out (with the `cd`),
/// its age and the command that resumes it.
pub fn waiting_text(briefs: &[crate::cli::inventory::Waiting], named: usize) -> String {
    let mut out = String::new();
    for w in briefs.iter().take(named) {
        let place = match w.worktree.as_deref() {
            Some(_) if w.here => ", checked out here".to_string(),
            Some(root) => format!(
                ", checked out in {root} (cd {})",
                crate::support::escape::shell_quote(root)
            ),
            None => String::new(),
        };
        let age = w
            .age_seconds
            .map(crate::support::clock::age)
            .unwrap_or_else(|| "-".into());
        let diverged = match w.diverged.as_slice() {
            [] => String::new(),
            remotes => format!(
                " — diverged from {}: `git handoff resolve {} --merge`",
                remotes.join(", "),
                crate::support::escape::shell_quote(&w.key)
            ),
        };
        out.push_str(&format!(
            "- {} (branch '{}'{place}, written {age} ago): `git handoff resume {}`{diverged}\n",
            w.key,
            crate::support::text::flat(&w.branch),
            crate::support::escape::shell_quote(&w.key)
        ));
    }
    if briefs.len() > named {
        out.push_str(&format!(
            "+{} more: `git handoff list`\n",
            briefs.len() - named
        ));
    }
    out
}
