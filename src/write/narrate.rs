//! The narrative entries a write adds: one per `write` (from the brief,
//! with the commits since the key's previous version), one combined entry
//! per split. Staged under the narrative's lock before the refs move, so
//! that a stored brief always gets its entry.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::brief::Brief;
use crate::git::compose::GitFacts;
use crate::support::{clock, text::one_line};
use crate::write::checks::Checks;
use crate::write::{Composed, plan::Plan, plan::strings};
use crate::{narrative, store};

/// Lock the narrative of the worktree at `root` and stage `entry`, which
/// passes the redaction filter as a whole (it holds commit subjects too).
/// The lock records the versions of `briefs` the write stores.
pub(crate) fn stage(
    repo: &gix::Repository,
    root: &Path,
    entry: &narrative::Entry,
    briefs: &[&Brief],
    checks: &mut Checks,
) -> Result<narrative::Pending> {
    let path = narrative::path(repo, root)?;
    let versions = briefs
        .iter()
        .map(|b| {
            let id = store::history::version_id(repo, &b.to_pretty_json())?;
            Ok((b.key.clone(), id.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    let stored = |key: &str, id: &str| version_stored(repo, key, id);
    narrative::Pending::prepare(
        &path,
        &checks.redact_text(&entry.render()),
        narrative::lock_wait(repo),
        &narrative::Staging {
            versions,
            stored: &stored,
        },
    )
}

/// Whether version `id` of `key` is stored: the brief holds it, or its
/// history does (another worktree wrote the key since).
fn version_stored(repo: &gix::Repository, key: &str, id: &str) -> bool {
    let Ok(id) = gix::ObjectId::from_hex(id.as_bytes()) else {
        return false;
    };
    store::current_id(repo, key).is_ok_and(|c| c == Some(id))
        || store::history::log(repo, key).is_ok_and(|log| log.index_of(&id).is_some())
}

/// The entry of a `write` of `brief`: the commits since the version it
/// replaces (`expected`, as read when the write began), then the sections
/// of `markdown` when given.
pub(crate) fn brief_entry(
    repo: &gix::Repository,
    brief: &Brief,
    expected: Option<gix::ObjectId>,
    markdown: Option<&str>,
) -> Result<narrative::Entry> {
    let previous_head = match expected {
        Some(id) => store::load(repo, &store::ref_name(&brief.key), &brief.key, id)
            .ok()
            .and_then(|stored| stored.brief().ok())
            .and_then(|b| b.state.head_sha),
        None => None,
    };
    let commits = narrative::Commits::since(repo, previous_head.as_deref());
    let mut entry = narrative::entry_from_brief(brief, None, &commits);
    if let Some(md) = markdown {
        narrative::apply_markdown(&mut entry, md)?;
    }
    Ok(entry)
}

/// The one combined entry of a split: what was split and where, the shared
/// decisions, and each thread's pointers.
pub(crate) fn split_entry(plan: &Plan, threads: &[Composed], git: &GitFacts) -> narrative::Entry {
    let keys: Vec<&str> = threads.iter().map(|t| t.brief.key.as_str()).collect();
    let decisions = narrative::decisions_section(
        &strings(&plan.shared, &["state", "decisions"]),
        &strings(&plan.shared, &["state", "rejected_paths"]),
    );
    narrative::Entry {
        date: clock::date_of(&clock::format(git.now)).to_string(),
        label: format!("split: {}", keys.join(", ")),
        title: plan.why.clone(),
        sections: vec![
            (narrative::SECTIONS[0].into(), split_done(&keys, git)),
            ("Shared decisions (cross-cutting)".into(), decisions),
            (narrative::SECTIONS[3].into(), split_pointers(plan, threads)),
        ],
    }
}

/// "What was done" of a split: where it was split, into which threads.
fn split_done(keys: &[&str], git: &GitFacts) -> String {
    let at = match git.head.sha() {
        Some(sha) => format!("at {} on `{}`", &sha[..7], git.head.branch_label()),
        None => format!("on `{}` (no commit yet)", git.head.branch_label()),
    };
    let mut done = format!(
        "- Split the work {at} into {} threads: {}",
        keys.len(),
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(diff) = &git.diff_summary {
        done.push_str(&format!("; uncommitted: {diff}"));
    }
    done.push_str("\n- Each thread is a self-contained brief; the shared part below is copied into every one\n");
    done
}

/// The pointers of a split: each thread's next step and checks, its own
/// files, the shared risks and the files every thread reads first.
fn split_pointers(plan: &Plan, threads: &[Composed]) -> String {
    let mut pointers = String::new();
    for t in threads {
        pointers.push_str(&format!(
            "- `{key}`: {next} — next check: {check}; done when: {done} (`git handoff resume {quoted}`)\n",
            key = t.brief.key,
            quoted = crate::support::escape::shell_quote(&t.brief.key),
            next = one_line(&t.brief.resume.resume_by, 100),
            check = one_line(&t.brief.state.next_acceptance_check, 100),
            done = one_line(&t.brief.resume.done_when, 100),
        ));
    }
    // Each thread's own files, as `<key>: <path>:<lines>`.
    for t in threads {
        for path in &t.owns {
            pointers.push_str(&format!(
                "- {}: `{}`\n",
                t.brief.key,
                narrative::inline(path)
            ));
        }
    }
    for risk in strings(&plan.shared, &["state", "open_risks"]) {
        pointers.push_str(&format!("- Risk: {}\n", narrative::inline(&risk)));
    }
    let shared = plan
        .shared
        .get("files_read_first")
        .and_then(Value::as_array);
    for f in shared.into_iter().flatten() {
        if let (Some(path), Some(why)) = (
            f.get("path").and_then(Value::as_str),
            f.get("why").and_then(Value::as_str),
        ) {
            pointers.push_str(&format!(
                "- Read first (every thread): `{}` — {}\n",
                narrative::inline(path),
                narrative::inline(why)
            ));
        }
    }
    pointers
}
