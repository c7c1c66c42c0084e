//! `git handoff brief [KEY]`: an in-memory subagent brief, never stored.

use anyhow::{Result, bail};

use crate::commands::{Selection, refuse_ambiguous, select};
use crate::{Output, render, repo};

/// The default cap on a subagent brief's lines.
pub const DEFAULT_MAX_LINES: usize = 30;

/// Print a subagent brief (## Task …) of at most 30 lines, never stored
///
/// Task (from --task, else the brief's next step), scope, locked decisions,
/// what not to retry, open risks, files to read first and what to return.
/// Over the cap (handoff.briefMaxLines, default 30) nothing is printed and
/// the command fails: the subtask is too broad and should be re-decomposed.
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
    let stored = match select(&repo, args.key.as_deref())? {
        Selection::Found { stored, .. } => stored,
        Selection::Ambiguous(rows) => return Ok(refuse_ambiguous(&rows, "brief", false)),
    };
    let brief = stored.brief()?;
    let cap = repo
        .config_snapshot()
        .integer("handoff.briefMaxLines")
        .filter(|n| *n > 0)
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_MAX_LINES);
    let text = render::subagent_text(&brief, args.task.as_deref(), &args.scope);
    let lines = text.lines().count();
    if lines > cap {
        bail!(
            "the subagent brief is {lines} lines, over the cap of {cap}: the subtask is too broad; re-decompose it (a narrower --task and --scope) or raise handoff.briefMaxLines"
        );
    }
    Ok(Output::text(text))
}
