//! `git handoff drop KEY`: delete a brief's ref; its history stays.

use anyhow::Result;

use crate::cli::commands::{checked_key, no_brief};
use crate::cli::{Format, Output, report};
use crate::{git::repo, store};

/// Delete a brief (its history in refs/notes/handoffs stays)
///
/// Removes refs/handoffs/<KEY> with a compare-and-swap on the version read,
/// so a brief rewritten meanwhile is not dropped by mistake.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key
    pub key: String,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Drop the brief.
pub fn run(args: Args) -> Result<Output> {
    let key = checked_key(&args.key)?;
    let repo = repo::open_cwd()?;
    let id = store::current_id(&repo, &key)?.ok_or_else(|| no_brief(&key))?;
    store::delete(&repo, &key, id)?;
    if args.format.is_json() {
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
