//! `git handoff fetch [REMOTE]`: bring a remote's briefs and history, and
//! reconcile each key three-way.

use anyhow::Result;

use crate::cli::{Format, Output, render};
use crate::sync::{self, FetchReport, Status};
use crate::{git::repo, store::remotes};

/// Fetch briefs and their history from a remote and reconcile them
///
/// Runs `git fetch` into a staging namespace (never straight onto
/// refs/handoffs), merges the notes history (union of lines), then for each
/// key compares local, remote and base (the last version both sides agreed
/// on): unchanged here → fast-forward; unchanged there → local is ahead;
/// both changed → diverged, reported on every fetch until `resolve`, both
/// versions readable. A remote that holds an older version of a key (a
/// rollback by a stale clone's plain push) never replaces the local one.
/// Nothing from the remote is published here before it is validated; after
/// `redact --history`, secrets are not merged back in: a key whose remote
/// brief holds one is held alone and the remote's history is merged
/// without the lines that hold them. Never deletes a local brief. Exit 1
/// when a key diverged.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: handoff.remote, else the branch's upstream remote, else origin)
    pub remote: Option<String>,
    /// Merge history lines and briefs that carry a secret even after `redact --history` was run here
    #[arg(long)]
    pub allow_secrets: bool,
    /// Name every key taken or ahead, however many (by default more than
    /// eight of a kind are summed up in one line)
    #[arg(short, long)]
    pub verbose: bool,
    /// Print the report as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Fetch and render.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let remote = match &args.remote {
        Some(r) => remotes::checked_remote(&repo, r)?,
        None => remotes::default_remote(&repo)?,
    };
    let report = sync::fetch_with(
        &repo,
        &remote,
        sync::FetchOptions {
            allow_secrets: args.allow_secrets,
        },
    )
    .map_err(crate::cli::hints::sync)?;
    // The summing-up `error:` line goes to stderr after the report.
    let error = conflicts(&report);
    Ok(Output::report(args.format, &report, |r| {
        let mut text = render::fetch_text_with(r, true, args.verbose);
        text.push_str(&next_step(r));
        text.into()
    })
    .with_code(u8::from(error.is_some()))
    .with_trailer(error))
}

/// What to run after a fetch that brought briefs: resume the one it
/// brought, or list them when it brought several.
fn next_step(report: &FetchReport) -> String {
    let brought: Vec<&str> = report
        .keys
        .iter()
        .filter(|k| {
            matches!(
                k.status,
                Status::Created | Status::FastForwarded | Status::Restored
            )
        })
        .map(|k| k.key.as_str())
        .collect();
    match brought.as_slice() {
        [] => String::new(),
        [key] => format!(
            "Resume with: git handoff resume {}\n",
            crate::support::escape::shell_quote(key)
        ),
        _ => "See them with: git handoff (each with the command that resumes it)\n".into(),
    }
}

/// The `error:` line (exit 1) of a fetch where keys diverged or changed
/// during the fetch.
pub fn conflicts(report: &FetchReport) -> Option<String> {
    if !report.has_conflicts() {
        return None;
    }
    let names: Vec<&str> = report
        .keys
        .iter()
        .filter(|k| matches!(k.status, Status::Diverged | Status::Conflict))
        .map(|k| k.key.as_str())
        .collect();
    Some(format!(
        "error: {} with '{}': {}; compare with `git handoff diff KEY@{}`, merge with `git handoff resolve KEY --merge` (or `--keep-local`, `--take-remote`)",
        if names.len() == 1 {
            "a brief diverged"
        } else {
            "briefs diverged"
        },
        report.remote,
        names.join(", "),
        report.remote,
    ))
}
