//! The reports of `fetch` and `push` as text: one line per key that is
//! not simply up to date, then the history.

use crate::sync::{
    FetchReport, HistoryPush, NotesMerge, Outcome, PushReport, Route, Status, VersionInfo,
};

/// A key or remote as one word of a printed command line.
fn sh(word: &str) -> String {
    crate::support::escape::shell_quote(word)
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
pub fn fetch_text(report: &FetchReport, with_pushable: bool) -> String {
    fetch_text_with(report, with_pushable, false)
}

/// How many keys of one plain kind (created, fast-forwarded, ahead, local
/// only) a fetch report names one line each; more are summed up in one
/// line (`--verbose` names them all).
const NAMED_ALIKE: usize = 8;

/// [`fetch_text`]; `verbose` names every key.
pub fn fetch_text_with(report: &FetchReport, with_pushable: bool, verbose: bool) -> String {
    let remote = &report.remote;
    let mut lines = Vec::new();
    let alike = |status: Status| report.keys.iter().filter(|k| k.status == status).count();
    let mut summed = std::collections::BTreeSet::new();
    for k in &report.keys {
        let plain = matches!(
            k.status,
            Status::Created | Status::FastForwarded | Status::Ahead | Status::LocalOnly
        );
        if plain && !verbose && alike(k.status) > NAMED_ALIKE {
            if summed.insert(k.status as u8)
                && let Some(line) = summed_line(report, k.status, with_pushable)
            {
                lines.push(line);
            }
            continue;
        }
        if let Some(line) = key_line(k, remote, with_pushable) {
            lines.push(line);
        }
    }
    let history = history_line(report);
    let mut out = format!("From '{remote}':\n");
    if lines.is_empty() {
        out.push_str("  briefs: up to date\n");
    }
    for line in lines {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!("  {history}\n"));
    if let Some(warning) = bookkeeping_warning(remote, &report.bookkeeping) {
        out.push_str(&format!("warning: {warning}\n"));
    }
    let qr = sh(remote);
    for key in report.diverged().map(|k| &k.key) {
        let qk = sh(key);
        out.push_str(&format!(
            "hint: both versions of '{key}' stay readable: `git handoff show {qk}` (yours), `git handoff show {qk}@{qr}` (theirs); `git handoff resolve {qk} --merge` merges them (or `--keep-local|--take-remote`)\n"
        ));
    }
    out
}

/// One key's line of a fetch report; `None` for a key that needs none.
fn key_line(k: &crate::sync::KeyReport, remote: &str, with_pushable: bool) -> Option<String> {
    let key = &k.key;
    let (qr, qk) = (sh(remote), sh(key));
    Some(match k.status {
        Status::UpToDate | Status::Gone => return None,
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
            "ahead: {key} (local {}; `git handoff push {qr}` sends it)",
            short(&k.local)
        ),
        Status::LocalOnly if with_pushable => {
            format!("local only: {key} (`git handoff push {qr}` sends it)")
        }
        Status::Ahead | Status::LocalOnly => return None,
        Status::Diverged => format!(
            "diverged: {key} (local {}, remote {})",
            stamped(&k.local),
            stamped(&k.remote)
        ),
        Status::DroppedHere => {
            format!("dropped here: {key} (`git handoff push --prune {qr}` deletes it there)")
        }
        Status::DeletedRemotely => format!(
            "deleted on '{remote}': {key} (kept here; `git handoff drop {qk}` drops it too)"
        ),
        Status::Conflict => {
            format!("changed while fetching: {key} (left as it was; fetch again)")
        }
        Status::RolledBack => format!(
            "rolled back on '{remote}': {key}: the remote holds an older version ({}); kept {}; `git handoff push {qr}` repairs it",
            stamped(&k.remote),
            stamped(&k.local)
        ),
        Status::SecretKey => {
            format!("ignored: {key} (the key holds a secret; nothing taken, never stored here)")
        }
        Status::HeldSecret => {
            let rules = k
                .secret
                .as_ref()
                .map(|h| h.rules.join(", "))
                .unwrap_or_default();
            let next = match k.local {
                Some(_) => format!("`git handoff push {qr} {qk}` replaces it with yours"),
                None => format!("`git handoff push --prune {qr} {qk}` deletes it there"),
            };
            format!(
                "held: {key} ('{remote}' holds {}, which holds a secret ({rules}); after `git handoff redact --history` here none is taken back; the other keys went on; {next})",
                short(&k.remote)
            )
        }
        Status::Newer => format!(
            "newer: {key} ('{remote}' holds {}, written by a newer git-handoff (schema {}): upgrade to read it; nothing taken, and it is never replaced or deleted from here)",
            short(&k.remote),
            k.schema.as_deref().unwrap_or("?")
        ),
        Status::Invalid if k.local.is_some() => format!(
            "ignored: {key} ('{remote}' holds {}, which is not a valid brief; nothing taken; `git handoff push {qr}` replaces it)",
            short(&k.remote)
        ),
        Status::Invalid => format!(
            "ignored: {key} ('{remote}' holds {}, which is not a valid brief; nothing taken; `git handoff push --prune {qr} {qk}` deletes it there)",
            short(&k.remote)
        ),
    })
}

/// One line for many keys of one plain kind: how many, the first few,
/// and where to see them all.
fn summed_line(report: &FetchReport, status: Status, with_pushable: bool) -> Option<String> {
    let keys: Vec<String> = report
        .keys
        .iter()
        .filter(|k| k.status == status)
        .map(|k| k.key.clone())
        .collect();
    let word = match status {
        Status::Created => "created",
        Status::FastForwarded => "fast-forwarded",
        Status::Ahead if with_pushable => "ahead",
        Status::LocalOnly if with_pushable => "local only",
        _ => return None,
    };
    Some(format!(
        "{word}: {} briefs ({}, … and {} more; `git handoff fetch --verbose` names each, `git handoff list` shows them)",
        keys.len(),
        keys[..3].join(", "),
        keys.len() - 3
    ))
}

/// The fetch report's history line.
fn history_line(report: &FetchReport) -> String {
    let remote = &report.remote;
    let qr = sh(remote);
    match report.history {
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
            "history: merged with '{remote}' ({}: every version either side recorded; no brief is merged by this)",
            id.to_hex_with_len(7)
        ),
        NotesMerge::Held {
            commit,
            theirs,
            left_out,
        } => format!(
            "history: {} '{remote}' without {left_out} line{} that hold secrets ({}); '{remote}' keeps them until its history is replaced with this one: `git push --force-with-lease={NOTES}:{theirs} {qr} {NOTES}`",
            if commit.is_some() {
                "merged from"
            } else {
                "up to date with"
            },
            if left_out == 1 { "" } else { "s" },
            shown_list(&report.left_out),
            NOTES = crate::store::NOTES_REF,
        ),
        NotesMerge::Behind(id) => format!(
            "history: '{remote}' is behind ({} lacks versions this history holds; `git handoff push {qr}` sends them)",
            id.to_hex_with_len(7)
        ),
        NotesMerge::RolledBack { now, was } => format!(
            "history: rolled back on '{remote}' (it holds {}, older than the {} it held before; nothing is lost here; `git handoff push {qr}` repairs it)",
            now.to_hex_with_len(7),
            was.to_hex_with_len(7)
        ),
    }
}

/// The push report as text.
pub fn push_text(report: &PushReport) -> String {
    let remote = &report.remote;
    let qr = sh(remote);
    let mut out = String::new();
    match report.route {
        Route::Optimistic => out.push_str(&format!(
            "From '{remote}': not fetched (pushed optimistically on what the last fetch saw; every lease held)\n"
        )),
        Route::Retried => out.push_str(&format!(
            "A lease failed: '{remote}' changed since the last fetch; fetched, then pushed again:\n"
        )),
        Route::LastFetch | Route::FetchFirst => {}
    }
    if let Some(fetch) = &report.fetch {
        out.push_str(&fetch_text(fetch, false));
    }
    let would = if report.dry_run { "would " } else { "" };
    let mut lines = Vec::new();
    for k in &report.keys {
        let key = &k.key;
        let short = |id: Option<gix::ObjectId>| {
            id.map_or("(none)".to_string(), |id| id.to_hex_with_len(7).to_string())
        };
        let reason = k.reason.as_deref().unwrap_or("");
        lines.push(match k.outcome {
            Outcome::Pushed if k.lease.is_none() => {
                format!("{would}create: {key} ({})", short(k.new))
            }
            Outcome::Pushed => format!(
                "{would}push: {key} ({} -> {})",
                short(k.lease),
                short(k.new)
            ),
            Outcome::Deleted => format!("{would}delete: {key} (was {})", short(k.lease)),
            Outcome::Rejected => format!("rejected: {key} ({reason})"),
            Outcome::Diverged => format!("diverged, not pushed: {key} ({reason})"),
            Outcome::Refused => format!("refused: {key} ({reason})"),
            Outcome::Skipped => format!("skipped: {key} ({reason})"),
        });
    }
    let history = match &report.history {
        HistoryPush::None => None,
        HistoryPush::UpToDate => Some("history: up to date".to_string()),
        // The history goes even when a brief does not: said so, so that
        // the line does not read as the diverged brief's success.
        HistoryPush::Pushed(_) if report.keys.iter().any(|k| k.outcome == Outcome::Diverged) => {
            Some(format!(
                "history: {would}push (fast-forward; the lineage only, so that '{remote}' also knows both versions of what diverged)"
            ))
        }
        HistoryPush::Pushed(_) => Some(format!("history: {would}push (fast-forward)")),
        HistoryPush::Rejected(why) => Some(format!(
            "history: rejected ({why}); push again (`git handoff push {qr}`) to merge and send it"
        )),
        HistoryPush::Refused(why) => Some(format!("history: refused, not pushed ({why})")),
        HistoryPush::NotNotes(theirs) => Some(format!(
            "history: not pushed: '{remote}' holds {} at {NOTES}, which is not a notes history (fetch took nothing from it); replace it with this one: `git push --force-with-lease={NOTES}:{theirs} {qr} {NOTES}`",
            crate::store::short(theirs),
            NOTES = crate::store::NOTES_REF,
        )),
        HistoryPush::Held(theirs) => Some(format!(
            "history: not pushed: '{remote}''s history holds secrets this one left out; replace it with this one: `git push --force-with-lease={NOTES}:{theirs} {qr} {NOTES}`",
            NOTES = crate::store::NOTES_REF,
        )),
        HistoryPush::WouldMerge => Some(format!(
            "history: would merge '{remote}''s newer history first, then push"
        )),
    };
    out.push_str(&format!("To '{remote}':\n"));
    if lines.is_empty() {
        out.push_str("  briefs: up to date\n");
    }
    for line in lines {
        out.push_str(&format!("  {line}\n"));
    }
    if let Some(h) = history {
        out.push_str(&format!("  {h}\n"));
    }
    out
}

/// How many names a removal command lists one by one; more are listed by
/// `git ls-remote` in a pipeline.
const LISTED_NAMES: usize = 8;

/// What to say when `remote` holds refs of git-handoff's own bookkeeping
/// (`names`, as `git ls-remote` listed them): where they came from and the
/// exact command that removes them; `None` when there are none.
pub fn bookkeeping_warning(remote: &str, names: &[String]) -> Option<String> {
    use crate::support::escape::shell_quote;
    if names.is_empty() {
        return None;
    }
    let namespaces: Vec<String> = [
        "refs/handoff-fetch/",
        "refs/handoff-remotes/",
        "refs/handoff-push/",
    ]
    .iter()
    .filter(|p| names.iter().any(|n| n.starts_with(*p)))
    .map(|p| format!("{p}*"))
    .collect();
    let remote_word = shell_quote(remote);
    // A name that held a secret is shown redacted, and cannot be named in
    // a command: then the command lists them by pattern.
    let redacted = names.iter().any(|n| n.contains("[REDACTED:"));
    let command = if names.len() <= LISTED_NAMES && !redacted {
        let quoted: Vec<String> = names.iter().map(|n| shell_quote(n)).collect();
        format!("git push {remote_word} --delete {}", quoted.join(" "))
    } else {
        let patterns: Vec<String> = namespaces.iter().map(|p| shell_quote(p)).collect();
        format!(
            "git ls-remote {remote_word} {} | cut -f2 | xargs git push {remote_word} --delete",
            patterns.join(" ")
        )
    };
    Some(format!(
        "'{remote}' holds {} ref{} of git-handoff's own bookkeeping ({}), which a plain `git push --mirror` copies; nothing reads them there, and each clone keeps its own. Remove them: `{command}`",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        namespaces.join(", "),
    ))
}

/// At most three items, then how many more.
fn shown_list(items: &[String]) -> String {
    let mut shown: Vec<String> = items.iter().take(3).cloned().collect();
    if items.len() > 3 {
        shown.push(format!("and {} more", items.len() - 3));
    }
    shown.join("; ")
}
