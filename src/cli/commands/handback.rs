//! `git handoff handback --to FORKFILE …`: the side session's result, written
//! beside its fork file for the parent to consume.

use anyhow::{Result, anyhow};

use crate::agent::fork::{self, HandbackDoc, Header, Kind};
use crate::cli::commands::redacted;
use crate::cli::{Format, Output, report};
use crate::{git::repo, support::clock};

/// Write a fork's hand-back: result, changes, how to merge, open items
///
/// The hand-back goes beside the fork file, named after it
/// (handoff-<purpose>-<date>-handback.md); the parent session reads it with
/// `git handoff fork consume FILE` (which keeps it as FILE.consumed) and,
/// once the merge is confirmed, deletes the fork file and its hand-back
/// with `git handoff fork done FORKFILE`. The fork file may have been
/// consumed already.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The fork file this answers: its path in the temp dir, or its name
    #[arg(long, value_name = "FORKFILE")]
    pub to: String,
    /// What the side task achieved
    #[arg(long, value_name = "TEXT")]
    pub result: String,
    /// A changed file or a finding (repeatable)
    #[arg(long = "change", value_name = "PATH")]
    pub changes: Vec<String>,
    /// How the parent should merge the result
    #[arg(long, value_name = "TEXT")]
    pub merge_guidance: Option<String>,
    /// Something still open (repeatable)
    #[arg(long = "open", value_name = "TEXT")]
    pub open: Vec<String>,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Write the hand-back.
pub fn run(args: Args) -> Result<Output> {
    let result = args.result.trim();
    if result.is_empty() {
        crate::refuse!(
            "the hand-back needs a result: --result TEXT says what the side task achieved"
        );
    }
    let dir = fork::dir();
    let fork_path = fork::resolve(&dir, &args.to)?;
    let name = fork_path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("resolved to a file name")
        .to_string();
    let (repo_dir, purpose) = if let Some(found) = fork::existing(&fork_path) {
        let (header, _) = fork::read(&found)?;
        if header.kind != Kind::Fork {
            crate::refuse!(
                "'{}' is a hand-back, not a fork file; --to takes the fork file the hand-back answers",
                fork_path.display()
            );
        }
        (header.repo, header.purpose)
    } else {
        let (slug, _) = fork::parse_fork_name(&name).ok_or_else(|| {
            anyhow!(
                "'{name}' is not a fork file name (handoff-<purpose>-<date>.md); --to takes the fork file the hand-back answers"
            )
        })?;
        let repo = repo::open_cwd().map_err(|_| {
            anyhow!(
                "the fork file '{}' is gone (consumed) and this is not a git repository; run handback inside the repository the fork came from",
                fork_path.display()
            )
        })?;
        let common = repo::worktree_info(&repo)?.common_dir;
        (common.display().to_string(), slug.replace('-', " "))
    };
    let options = repo::open_cwd()
        .map(|repo| crate::brief::redact::Options::from_repo(&repo))
        .unwrap_or_default();
    let now = clock::now().map_err(crate::refused)?;
    let doc = HandbackDoc {
        header: Header {
            kind: Kind::Handback,
            repo: repo_dir,
            purpose,
            date: clock::date(now),
            key: None,
            hand_back: false,
            fork: Some(name.clone()),
        },
        result: result.to_string(),
        changes: args.changes.clone(),
        merge_guidance: args.merge_guidance.clone(),
        open: args.open.clone(),
    };
    let path = fork::create(&dir, &fork::handback_stem(&name), |_| {
        redacted(&doc.render(), "the hand-back file", options)
    })?;
    if args.format.is_json() {
        return Ok(report::line(&report::HandedBack {
            path: path.display().to_string(),
            kind: "handback",
            fork: &name,
        }));
    }
    Ok(Output::human(format!("{}\n", path.display())))
}
