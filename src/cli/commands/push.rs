//! `git handoff push [REMOTE] [KEY…]`: send briefs and their history, each
//! key with a lease.

use anyhow::Result;

use crate::cli::commands::checked_key;
use crate::cli::hints;
use crate::cli::{Format, Output, render};
use crate::sync::{self, HistoryPush, Outcome, PushOptions, PushReport};
use crate::{git::repo, store::remotes};

/// Send briefs and their history to a remote, each key with a lease
///
/// Pushes each key that is ahead with
/// --force-with-lease=refs/handoffs/<key>:<base> (the version last agreed
/// with the remote) and the history (fast-forward), in one git push. Only
/// when a lease fails (someone pushed since the last fetch), or when the
/// last fetch cannot tell (a diverged key, say), it fetches first, then
/// pushes with the same rules. A diverged key is never pushed; a key the
/// remote changed meanwhile is rejected by name while the others still go.
/// Exit 1 when any key was refused. Dropped keys are deleted remotely only
/// with --prune.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: handoff.remote, else the branch's upstream remote, else origin)
    pub remote: Option<String>,
    /// Push only these keys
    pub keys: Vec<String>,
    /// Also delete on the remote the keys dropped here (with a lease); with KEY, also a value there that is not a valid brief
    #[arg(long)]
    pub prune: bool,
    /// Show what would be pushed; fetch nothing and change nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// All keys and the history in one atomic push: all or nothing
    #[arg(long)]
    pub atomic: bool,
    /// Print the report as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Push and render.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let remote = match &args.remote {
        Some(r) if remotes::is_remote(&repo, r) => remotes::checked_remote(&repo, r)?,
        Some(r) => crate::refuse!(
            "'{r}' is not a remote of this repository; name the remote first (`git handoff push origin {}`); `git remote -v` lists the remotes",
            crate::support::escape::shell_quote(r)
        ),
        None => remotes::default_remote(&repo)?,
    };
    let keys = args
        .keys
        .iter()
        .map(|k| checked_key(k))
        .collect::<Result<Vec<_>>>()?;
    let mut report = sync::push(
        &repo,
        &remote,
        &PushOptions {
            keys,
            prune: args.prune,
            dry_run: args.dry_run,
            atomic: args.atomic,
        },
    )
    .map_err(hints::sync)?;
    hints::push_reasons(&mut report);
    // The summing-up `error:` line goes to stderr after the report it
    // refers to ("the report above").
    let error = refused(&report).or_else(|| skipped_by_name(&report, &args.keys));
    let code = code_not_there(&repo, &report);
    Ok(Output::report(args.format, &report, |r| {
        let mut text = render::push_text(r);
        for (key, branch, sha) in &code {
            text.push_str(&format!(
                "note: the commit '{key}' was written at ({sha}) is not on '{remote}/{branch}': briefs travel without the code; `git push {} {}` sends it\n",
                crate::support::escape::shell_quote(&r.remote),
                crate::support::escape::shell_quote(branch),
                remote = r.remote
            ));
        }
        text.into()
    })
    .with_code(u8::from(error.is_some()))
    .with_trailer(error))
}

/// The briefs just sent whose commit the remote's copy of their branch
/// (`refs/remotes/<remote>/<branch>`, as the last `git push` or `git
/// fetch` left it) does not hold: `(key, branch, short id)`. A teammate
/// who resumes one could not check it out.
fn code_not_there(repo: &gix::Repository, report: &PushReport) -> Vec<(String, String, String)> {
    // Briefs of one branch and commit (a whole team's, pushed at once)
    // ask once.
    let mut known: std::collections::HashMap<(gix::ObjectId, String), bool> =
        std::collections::HashMap::new();
    let mut there = |head: gix::ObjectId, branch: &str| {
        *known.entry((head, branch.to_string())).or_insert_with(|| {
            let tracking = format!("refs/remotes/{}/{branch}", report.remote);
            // Through refdb: gix alone does not read a reftable repository.
            crate::git::refdb::peeled(repo, &tracking)
                .ok()
                .flatten()
                .is_some_and(|tip| {
                    repo.merge_base(head, tip)
                        .is_ok_and(|base| base.is_some_and(|b| b.detach() == head))
                })
        })
    };
    report
        .keys
        .iter()
        .filter(|k| k.outcome == Outcome::Pushed)
        .filter_map(|k| {
            let blob = repo.find_blob(k.new?).ok()?;
            let brief: crate::brief::Brief = serde_json::from_slice(&blob.data).ok()?;
            let head = gix::ObjectId::from_hex(brief.state.head_sha.as_deref()?.as_bytes()).ok()?;
            let branch = brief.state.branch;
            (branch != "HEAD" && !there(head, &branch))
                .then(|| (k.key.clone(), branch, crate::store::short(&head)))
        })
        .take(CODE_NOTES)
        .collect()
}

/// The most briefs a push names whose code is not on the remote.
const CODE_NOTES: usize = 5;

/// The `error:` line (exit 1) of a push that named keys when a key it
/// named was skipped, as `git push` fails for a refspec it cannot send;
/// the report above says why each was skipped.
fn skipped_by_name(report: &PushReport, named: &[String]) -> Option<String> {
    let skipped: Vec<&str> = report
        .keys
        .iter()
        .filter(|k| k.outcome == Outcome::Skipped && named.contains(&k.key))
        .map(|k| k.key.as_str())
        .collect();
    if skipped.is_empty() || report.refused() {
        return None;
    }
    Some(format!(
        "error: not pushed to '{}': {}; the report above says why",
        report.remote,
        skipped.join(", ")
    ))
}

/// The `error:` line (exit 1) of a push that had a key or the history
/// refused, naming them and what to do.
fn refused(report: &PushReport) -> Option<String> {
    if !report.refused() {
        return None;
    }
    let names = |pick: fn(Outcome) -> bool| -> Vec<&str> {
        report
            .keys
            .iter()
            .filter(|k| pick(k.outcome))
            .map(|k| k.key.as_str())
            .collect()
    };
    let conflicts = names(|o| matches!(o, Outcome::Rejected | Outcome::Diverged));
    let secrets = names(|o| o == Outcome::Refused);
    let history = matches!(report.history, HistoryPush::Refused(_));
    let mut all: Vec<&str> = conflicts.iter().chain(&secrets).copied().collect();
    all.sort_unstable();
    if report.history.refused() {
        all.push("the history");
    }
    let mut hints = Vec::new();
    // A key the remote could not lock did not diverge: the lock is named
    // below, with its fix.
    let diverged = report.keys.iter().any(|k| k.outcome == Outcome::Diverged);
    if !conflicts.is_empty() && (diverged || report.stale_lock.is_none()) {
        // The key itself when there is one (quoted: a teammate names it).
        let key = match conflicts.as_slice() {
            [one] => crate::support::escape::shell_quote(one),
            _ => "<key>".to_string(),
        };
        hints.push(format!(
            "`git handoff fetch {}` shows where each stands, and `git handoff resolve {key} --merge` (or `--keep-local|--take-remote`) ends a divergence",
            crate::support::escape::shell_quote(&report.remote)
        ));
    }
    if matches!(report.history, HistoryPush::Rejected(_)) {
        hints.push(format!(
            "the history on '{}' kept moving while others pushed; nothing is lost: run `git handoff push {}` again",
            report.remote, report.remote
        ));
    }
    if matches!(report.history, HistoryPush::NotNotes(_)) {
        hints.push(format!(
            "'{}' holds no notes history at {}: replace it with the command above",
            report.remote,
            crate::store::NOTES_REF
        ));
    }
    if !secrets.is_empty() || history {
        hints.push(format!(
            "they hold secrets: `git handoff redact{}` removes them",
            if history { " --history" } else { "" }
        ));
    }
    if let Some(lock) = &report.stale_lock {
        hints.push(format!(
            "'{}' could not lock a ref: '{lock}' exists there; if no git process is running on '{}', remove it: rm '{lock}'",
            report.remote, report.remote
        ));
    }
    Some(format!(
        "error: not pushed to '{}': {}; {}",
        report.remote,
        all.join(", "),
        hints.join("; ")
    ))
}
