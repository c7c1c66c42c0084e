//! `git handoff show [KEY]`: print a stored brief.

use anyhow::Result;

use crate::commands::{checked_key, no_brief};
use crate::{Output, repo, store};

/// Print a stored brief as JSON, exactly as stored
///
/// Without KEY, shows the current branch's brief. The same bytes as
/// `git cat-file -p refs/handoffs/<key>`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: the current branch's)
    pub key: Option<String>,
    /// Print JSON (the stored brief is JSON already; accepted for symmetry)
    #[arg(long)]
    pub json: bool,
}

/// Show the brief.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let key = match args.key {
        Some(k) => checked_key(&k)?,
        None => repo::default_key(&repo::head_state(&repo)?)?,
    };
    let stored = store::read(&repo, &key)?.ok_or_else(|| no_brief(&key))?;
    let mut text = String::from_utf8_lossy(&stored.data).into_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(Output::ok(text))
}
