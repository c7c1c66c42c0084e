//! `git handoff reground [KEY]`: compact re-injection of the goal.

use anyhow::Result;

use crate::cli::commands::{Selection, read_input, refuse_ambiguous, select};
use crate::{cli::Output, cli::render, git::repo};

/// Print the goal, the first five locked decisions and the files to keep in view
///
/// Compact and read-only, with no warnings: for re-grounding a long
/// session in what it is for. With -F, from a brief file (a file-based
/// handoff's JSON) instead of a stored brief.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: the current branch's)
    pub key: Option<String>,
    /// Re-ground from a brief file (or - for stdin) instead of a stored brief
    #[arg(
        short = 'F',
        long = "file",
        value_name = "FILE|-",
        conflicts_with = "key"
    )]
    pub file: Option<String>,
    /// Print the brief's goal fields as JSON
    #[arg(long)]
    pub json: bool,
}

/// Select and render.
pub fn run(args: Args) -> Result<Output> {
    let brief = match &args.file {
        Some(source) => crate::brief::Brief::from_slice(&read_input(source)?).map_err(|e| {
            crate::refusal!("'{source}' is not a valid brief: {e}; `git handoff validate {source}` lists every problem")
        })?,
        None => {
            let repo = repo::open_cwd_for_reading()?;
            match select(&repo, args.key.as_deref())? {
                Selection::Found { stored, .. } => stored.brief()?,
                Selection::Ambiguous(rows) => {
                    return Ok(refuse_ambiguous(&rows, "reground", args.json));
                }
            }
        }
    };
    if args.json {
        return Ok(Output::ok(render::json(&serde_json::json!({
            "key": brief.key,
            "done_when": brief.resume.done_when,
            "next_acceptance_check": brief.state.next_acceptance_check,
            "decisions": brief.state.decisions.iter().take(5).collect::<Vec<_>>(),
            "files_read_first": brief.files_read_first,
        }))));
    }
    Ok(Output::text(render::reground_text(&brief)))
}
