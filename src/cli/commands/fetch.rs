//! `git handoff fetch [REMOTE]`: bring a remote's briefs and history, and
//! reconcile each key three-way.

use anyhow::Result;

use crate::cli::{Format, Output};
use crate::sync::{self, FetchReport, NotesMerge, Status, VersionInfo};
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
/// `redact --history`, secrets are not merged back in. Never deletes a
/// local brief. Exit 1 when a key diverged.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: handoff.remote, else the branch's upstream remote, else origin)
    pub remote: Option<String>,
    /// Merge history lines and briefs that carry a secret even after `redact --history` was run here
    #[arg(long)]
    pub allow_secrets: bool,
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
    let code = conflicts(&report);
    Ok(Output::report(args.format, &report, |r| text(r, true).into()).with_code(code))
}

/// Exit code of a fetch: 1 (with one line on stderr) when keys diverged or
/// changed during the fetch.
pub fn conflicts(report: &FetchReport) -> u8 {
    if !report.has_conflicts() {
        return 0;
    }
    let names: Vec<&str> = report
        .keys
        .iter()
        .filter(|k| matches!(k.status, Status::Diverged | Status::Conflict))
        .map(|k| k.key.as_str())
        .collect();
    eprintln!(
        "error: {} with '{}': {}; compare with `git handoff diff KEY @{}`, end it with `git handoff resolve KEY --keep-local` or `--take-remote`",
        if names.len() == 1 {
            "a brief diverged"
        } else {
            "briefs diverged"
        },
        report.remote,
        names.join(", "),
        report.remote,
    );
    1
}

fn short(v: &Option<VersionInfo>) -> String {
    v.as_ref()
        .map_or("-".into(), |v| v.id.to_hex_with_len(7).to_string())
}

fn stamped(v: &Option<VersionInfo>) -> String {
    match v {
        Some(v) => format!(
            "{} {}",
            v.id.to_hex_with_len(7),
            v.timestamp.as_deref().unwrap_or("?")
        ),
        None => "-".into(),
    }
}

/// The fetch report as text: one line per key that is not simply up to
/// date, then the history. `with_pushable` includes the keys a push would
/// send (left out when the push report follows).
pub fn text(report: &FetchReport, with_pushable: bool) -> String {
    let remote = &report.remote;
    let mut lines = Vec::new();
    for k in &report.keys {
        let key = &k.key;
        let line = match k.status {
            Status::UpToDate | Status::Gone => continue,
            Status::Created => format!("created: {key} ({})", stamped(&k.local)),
            Status::FastForwarded => format!(
                "fast-forwarded: {key} ({} -> {})",
                short(&k.replaced),
                short(&k.local)
            ),
            Status::Restored => format!(
                "restored: {key} ({}; dropped here, changed on '{remote}')",
                stamped(&k.local)
            ),
            Status::Ahead if with_pushable => format!(
                "ahead: {key} (local {}; `git handoff push {remote}` sends it)",
                short(&k.local)
            ),
            Status::LocalOnly if with_pushable => {
                format!("local only: {key} (`git handoff push {remote}` sends it)")
            }
            Status::Ahead | Status::LocalOnly => continue,
            Status::Diverged => format!(
                "diverged: {key} (local {}, remote {})",
                stamped(&k.local),
                stamped(&k.remote)
            ),
            Status::DroppedHere => format!(
                "dropped here: {key} (`git handoff push --prune {remote}` deletes it there)"
            ),
            Status::DeletedRemotely => format!(
                "deleted on '{remote}': {key} (kept here; `git handoff drop {key}` drops it too)"
            ),
            Status::Conflict => {
                format!("changed while fetching: {key} (left as it was; fetch again)")
            }
            Status::RolledBack => format!(
                "rolled back on '{remote}': {key}: the remote holds an older version ({}); kept {}; `git handoff push {remote}` repairs it",
                stamped(&k.remote),
                stamped(&k.local)
            ),
            Status::SecretKey => {
                format!("ignored: {key} (the key holds a secret; nothing taken, never stored here)")
            }
            Status::Invalid => format!(
                "ignored: {key} ('{remote}' holds {}, which is not a valid brief; nothing taken; `git handoff push {remote}` replaces it)",
                short(&k.remote)
            ),
        };
        lines.push(line);
    }
    let history = match report.history {
        NotesMerge::NoRemoteHistory => format!("history: '{remote}' has none yet"),
        NotesMerge::UpToDate => "history: up to date".to_string(),
        NotesMerge::Created(id) | NotesMerge::FastForwarded(id) => {
            format!("history: fast-forwarded to {}", id.to_hex_with_len(7))
        }
        NotesMerge::Ignored(id) => format!(
            "history: ignored ('{remote}' holds {} at refs/notes/handoffs, which is not a notes history; nothing taken)",
            id.to_hex_with_len(7)
        ),
        NotesMerge::Merged(id) => format!(
            "history: merged with '{remote}' ({}, union of both)",
            id.to_hex_with_len(7)
        ),
    };
    let mut out = format!("From '{remote}':\n");
    if lines.is_empty() {
        out.push_str("  briefs: up to date\n");
    }
    for line in lines {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!("  {history}\n"));
    for key in report.diverged().map(|k| &k.key) {
        out.push_str(&format!(
            "hint: both versions of '{key}' stay readable: `git handoff show {key}` (yours), `git handoff show {key}@{remote}` (theirs); `git handoff resolve {key} --keep-local|--take-remote` ends it\n"
        ));
    }
    out
}
