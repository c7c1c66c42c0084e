//! Renderers: turn computed values into text for people (a
//! [`crate::cli::Doc`] whose spans are labelled for the [`Painter`]) or
//! JSON for tools, one module per kind of output; the helpers all of them
//! share are here.

mod color;
mod list;
mod resume;
mod setup;
mod split;
mod sync;
mod usage;

pub use color::{Painter, color_wanted, remember};
pub use list::{ListRow, line_width, list_text, waiting_text};
pub use resume::{
    AUTO_NOTE, SubagentSource, draft_text, hook_context, reground_text, relevant_slice,
    resume_lines, resume_text, subagent_text,
};
pub use setup::{SetupRow, setup_text};
pub use split::{SplitProposal, SplitThread, split_invalid, split_proposal};
pub use sync::{fetch_text, push_text};
pub use usage::usage_text;

use serde::Serialize;

use crate::brief::Issue;

/// The validator's report: `handoff-validate: INVALID` and one line per error.
pub fn invalid(issues: &[Issue]) -> String {
    let mut out = String::from("handoff-validate: INVALID\n");
    for issue in issues {
        out.push_str(&issue_line(issue));
    }
    out
}

/// One validation error as its report line: `  - <path>: <message>`.
fn issue_line(issue: &Issue) -> String {
    format!("  - {}: {}\n", issue.path, issue.message.replace('\n', " "))
}

/// Any serializable value as pretty JSON with a trailing newline.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("serializable");
    s.push('\n');
    s
}

/// Cut a text to its first line and at most `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        line
    }
}
