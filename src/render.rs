//! Renderers: turn computed values into text for people or JSON for tools.

use serde::Serialize;

use crate::brief::Issue;

/// The validator's report: `handoff-validate: INVALID` and one line per error.
pub fn invalid(issues: &[Issue]) -> String {
    let mut out = String::from("handoff-validate: INVALID\n");
    for issue in issues {
        out.push_str(&format!(
            "  - {}: {}\n",
            issue.path,
            issue.message.replace('\n', " ")
        ));
    }
    out
}

/// One row of `git handoff list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListRow {
    /// The key.
    pub key: String,
    /// Whether it is the current branch's key.
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
}

/// `list` as aligned text: marker, key, age, branch, short head, done when.
pub fn list_text(rows: &[ListRow]) -> String {
    if rows.is_empty() {
        return "No briefs yet; `git handoff write` creates one.\n".to_string();
    }
    let width = |f: &dyn Fn(&ListRow) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let kw = width(&|r| r.key.chars().count());
    let aw = width(&|r| r.age_seconds.map(crate::clock::age).map_or(1, |a| a.len()));
    let bw = width(&|r| r.branch.as_deref().map_or(1, |b| b.chars().count()));
    let mut out = String::new();
    for r in rows {
        let marker = if r.current { '*' } else { ' ' };
        let age = r
            .age_seconds
            .map(crate::clock::age)
            .unwrap_or_else(|| "-".into());
        let branch = r.branch.as_deref().unwrap_or("-");
        let head = r
            .head_sha
            .as_deref()
            .map(|s| &s[..s.len().min(7)])
            .unwrap_or("-");
        let tail = match (&r.error, &r.done_when) {
            (Some(e), _) => format!("(unreadable: {e})"),
            (None, Some(d)) => d.lines().next().unwrap_or("").to_string(),
            (None, None) => String::new(),
        };
        let line = format!(
            "{marker} {:kw$}  {age:>aw$}  {branch:bw$}  {head:7}  {tail}",
            r.key
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Any serializable value as pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("serializable");
    s.push('\n');
    s
}
