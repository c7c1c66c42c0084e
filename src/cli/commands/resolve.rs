//! `git handoff resolve KEY --keep-local|--take-remote`: end a divergence.

use anyhow::Result;

use crate::cli::commands::checked_key;
use crate::cli::{Format, Output};
use crate::store::remotes;
use crate::sync::{self, Resolution};

/// End a divergence: keep the local version or take the remote's
///
/// Works on the state of the last fetch. --keep-local moves the base to
/// the remote's version, so the next push replaces it there; --take-remote
/// makes the remote's version the local brief. The version not kept stays
/// in the history (`git handoff log KEY`).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("side").required(true).args(["keep_local", "take_remote"])))]
pub struct Args {
    /// The diverged brief's key
    pub key: String,
    /// Keep the local version (the next push sends it)
    #[arg(long)]
    pub keep_local: bool,
    /// Take the remote's version
    #[arg(long)]
    pub take_remote: bool,
    /// The remote (default: handoff.remote, else the branch's upstream remote, else origin)
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Resolve and render.
pub fn run(args: Args) -> Result<Output> {
    let key = checked_key(&args.key)?;
    let repo = crate::cli::staged::open()?;
    let remote = match &args.remote {
        Some(r) => remotes::checked_remote(&repo, r)?,
        None => remotes::default_remote(&repo)?,
    };
    let resolution = if args.keep_local {
        Resolution::KeepLocal
    } else {
        Resolution::TakeRemote
    };
    let done = sync::resolve(&repo, &remote, &key, resolution)?;
    if args.format.is_json() {
        return Ok(Output::json(&done));
    }
    let (ours, theirs) = (
        done.local.id.to_hex_with_len(7),
        done.theirs.id.to_hex_with_len(7),
    );
    let (qr, qk) = (
        crate::support::escape::shell_quote(&remote),
        crate::support::escape::shell_quote(&key),
    );
    Ok(Output::human(match resolution {
        Resolution::KeepLocal => format!(
            "Resolved '{key}': kept local {ours}; `git handoff push {qr}` replaces {remote}'s {theirs} (it stays in `git handoff log {qk}`).\n"
        ),
        Resolution::TakeRemote => format!(
            "Resolved '{key}': took {remote}'s {theirs}; your {ours} stays in `git handoff log {qk}`.\n"
        ),
    }))
}
