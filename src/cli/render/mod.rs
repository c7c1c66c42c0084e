//! Renderers: turn computed values into text for people (a
//! [`crate::cli::Doc`] whose spans are labelled for the [`Painter`]) or
//! JSON for tools, one module per kind of output; the helpers all of them
//! share are here.

mod color;
pub mod fence;
pub mod graph;
mod list;
mod notes;
mod reread;
mod resume;
mod setup;
mod split;
mod sync;
mod taken;
mod usage;

pub use color::{Painter, color_wanted, remember};
pub use fence::fenced;
pub use list::{ListRow, line_width, list_text, waiting_text};
pub use notes::{
    failed_text, missing_flags, notes_text, refusal_text, warning, warning_kind, warnings_text,
};
pub use reread::reread_text;
pub use resume::{
    AUTO_NOTE, SubagentSource, draft_text, hook_context, recheck, reground_text, relevant_slice,
    resume_for_model, resume_lines, resume_text, subagent_text,
};
pub use setup::{SetupRow, setup_text};
pub use split::{SplitProposal, SplitThread, split_invalid, split_proposal};
pub use sync::{bookkeeping_warning, fetch_text, fetch_text_with, push_text};
pub use taken::taken_text;
pub use usage::usage_text;

pub use crate::support::text::one_line;

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

/// One validation error as its report line: `  - <path>: <message>`,
/// redacted (a schema message quotes the value it refused, a path the
/// object key it is at).
fn issue_line(issue: &Issue) -> String {
    let line = format!("{}: {}", issue.path, issue.message.replace('\n', " "));
    format!("  - {}\n", crate::brief::redact::redact_text(&line).0)
}

/// Any serializable value as pretty JSON with a trailing newline.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("serializable");
    s.push('\n');
    s
}
