//! `init`'s report: each setup item and its state.

use serde::Serialize;

/// One setup item in the report of `git handoff init`.
#[derive(Debug, Clone, Serialize)]
pub struct SetupRow {
    /// The item: a config key or a file.
    pub name: String,
    /// `ok` (already set up), `set` (set up now), `missing` (not set up;
    /// `init` would set it up), `blocked` (not set up, and `init` leaves it
    /// to you) or `failed`.
    pub status: String,
    /// What is there, what is missing, or what went wrong.
    pub detail: String,
}

/// The report of `init` (`check` false) or `init --check` as aligned text,
/// with a closing line that says what to do next.
pub fn setup_text(rows: &[SetupRow], check: bool) -> String {
    let nw = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!("{:7}  {:nw$}  {}\n", r.status, r.name, r.detail));
    }
    let not_ok = rows
        .iter()
        .filter(|r| r.status != "ok" && r.status != "set")
        .count();
    let changed = rows.iter().any(|r| r.status == "set");
    let attributes_set = rows
        .iter()
        .any(|r| r.status == "set" && r.name == crate::cli::commands::init::INFO_ATTRIBUTES);
    if not_ok > 0 && check {
        out.push_str(&format!(
            "{not_ok} of {} not set up; `git handoff init` sets up what is missing.\n",
            rows.len()
        ));
    } else if not_ok > 0 {
        out.push_str(&format!(
            "{not_ok} of {} not set up; see above for what to do.\n",
            rows.len()
        ));
    } else if check || !changed {
        out.push_str("Everything is set up; nothing to change.\n");
    } else if attributes_set {
        out.push_str("Set up, for this clone only: the working tree is unchanged. Each clone runs `git handoff init` once (git never shares config); a team may commit the narrative's line to .gitattributes instead.\n");
    } else {
        out.push_str("Set up.\n");
    }
    out
}
