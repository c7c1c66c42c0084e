//! `git handoff show [KEY]`: print a stored brief, an earlier version or a
//! remote's version.

use anyhow::Result;

use crate::cli::commands::{checked_key, no_brief};
use crate::cli::{Format, Output};
use crate::store;
use crate::store::history::{self, Selector};

/// Print a stored brief as JSON, exactly as stored
///
/// Without KEY, shows the brief a keyless `resume` reads (this session's
/// key, else the current branch's). The same bytes as
/// `git cat-file -p refs/handoffs/<key>`. KEY@{N} shows an earlier version
/// (@{0} is the newest in `git handoff log KEY`, @{1} the one before),
/// KEY@REMOTE the remote's version as of the last fetch.
#[derive(Debug, clap::Args)]
#[command(disable_version_flag = true)]
pub struct Args {
    /// The brief's key (default: this session's key, else the current branch's); KEY@{N} or KEY@REMOTE
    pub key: Option<String>,
    /// Show the version with this id (or a unique prefix), as listed by `git handoff log`
    #[arg(long, value_name = "ID")]
    pub version: Option<String>,
    /// Print JSON (the stored brief is JSON already; accepted for symmetry)
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Show the brief.
pub fn run(args: Args) -> Result<Output> {
    let repo = crate::cli::staged::open_for_reading()?;
    let (key, mut selector) = match &args.key {
        Some(spec) => history::parse_key_spec(&repo, spec)?,
        None => (
            crate::cli::commands::keyless_key_here(&repo)?,
            Selector::Current,
        ),
    };
    let key = checked_key(&key)?;
    if let Some(version) = &args.version {
        if selector != Selector::Current {
            crate::refuse!("give either KEY@… or --version, not both");
        }
        selector =
            history::parse_selector(&repo, &key, version).map_err(crate::cli::hints::version)?;
    }
    let data = match &selector {
        Selector::Current => {
            store::read(&repo, &key)?
                .ok_or_else(|| no_brief(&key))?
                .data
        }
        selector => crate::cli::commands::version(&repo, &key, selector)?.data,
    };
    let mut text = String::from_utf8_lossy(&data).into_owned().into_bytes();
    if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    Ok(Output::verbatim(text))
}
