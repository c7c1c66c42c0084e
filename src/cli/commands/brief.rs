//! `git handoff brief [KEY]`: an in-memory subagent brief, never stored.

use anyhow::Result;

use crate::cli::commands::{Selection, refuse_ambiguous, select};
use crate::cli::{Format, Output, render};
use crate::git::repo;

/// The default cap on a subagent brief's lines.
pub const DEFAULT_MAX_LINES: usize = 30;

/// Print a subagent brief (## Task …) of at most 30 lines, never stored
///
/// Task (from --task, else the brief's next step), scope, locked decisions,
/// what not to retry, open risks, files to read first and what to return.
/// It fits the cap (handoff.briefMaxLines, default 30) by construction: the
/// lists keep the items most relevant to the task and scope, and one line
/// `(+N more: git handoff resume KEY)` stands for the rest. Only a task and
/// scope too long for the cap on their own make it fail (exit 1): the
/// subtask is too broad and should be re-decomposed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: the current branch's)
    pub key: Option<String>,
    /// The subagent's task (default: the brief's resume_by)
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,
    /// What the subagent may touch (repeatable)
    #[arg(long, value_name = "TEXT")]
    pub scope: Vec<String>,
}

/// Select, render, enforce the cap.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading()?;
    render::remember(&repo);
    let stored = match select(&repo, args.key.as_deref())? {
        Selection::Found { stored, .. } => stored,
        Selection::Ambiguous(rows) => return Ok(refuse_ambiguous(&rows, "brief", Format::Human)),
    };
    let brief = stored.brief()?;
    let cap = repo
        .config_snapshot()
        .integer("handoff.briefMaxLines")
        .filter(|n| *n > 0)
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_MAX_LINES);
    match render::subagent_text(&brief, args.task.as_deref(), &args.scope, cap) {
        Ok(text) => Ok(Output::human(text)),
        Err(lines) => crate::refuse!(
            "the task, scope and return contract alone are {lines} lines, over the cap of {cap}: the subtask is too broad; re-decompose it (a shorter --task and fewer --scope lines) or raise handoff.briefMaxLines"
        ),
    }
}
