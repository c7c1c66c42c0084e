//! `git handoff drop KEY`: delete a brief's ref; its history stays.

use anyhow::Result;

use crate::cli::commands::{NamedKey, no_brief};
use crate::cli::{Output, report};
use crate::store;

/// Delete a brief (its history in refs/notes/handoffs stays)
///
/// Removes refs/handoffs/<KEY> with a compare-and-swap on the version read,
/// so a brief rewritten meanwhile is not dropped by mistake.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief, and whether to answer in JSON.
    #[command(flatten)]
    pub target: NamedKey,
}

/// Drop the brief.
pub fn run(args: Args) -> Result<Output> {
    let (key, repo) = args.target.open()?;
    let id = store::current_id(&repo, &key)?.ok_or_else(|| no_brief(&key))?;
    store::delete(&repo, &key, id)?;
    if args.target.format.is_json() {
        return Ok(report::line(&report::Dropped {
            key: &key,
            dropped: id.to_string(),
        }));
    }
    Ok(Output::human(format!(
        "Dropped brief '{key}' (was version {}); its history stays in {}.\n",
        store::short(&id),
        store::NOTES_REF
    )))
}
