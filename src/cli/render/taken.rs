//! What a command took from what a plain `git fetch` staged: the lines it
//! prints on stderr before its own output.

use crate::sync::{FetchReport, NotesMerge, Status};

/// How many taken briefs the note names.
const NAMED: usize = 5;

/// The lines for one remote's reconciliation of what `git fetch` brought:
/// the briefs taken (one line), then one line per key that needs a look
/// (diverged, rolled back, deleted there, ignored). Empty when nothing
/// changed.
pub fn taken_text(report: &FetchReport) -> String {
    let remote = &report.remote;
    let qr = crate::support::escape::shell_quote(remote);
    let mut taken = Vec::new();
    let mut lines = Vec::new();
    for k in &report.keys {
        let key = &k.key;
        let qk = crate::support::escape::shell_quote(key);
        match k.status {
            Status::Created => taken.push(format!("{key} (new)")),
            Status::FastForwarded => taken.push(match (&k.replaced, &k.local) {
                (Some(old), Some(new)) => format!(
                    "{key} (updated: {} -> {})",
                    old.id.to_hex_with_len(7),
                    new.id.to_hex_with_len(7)
                ),
                _ => format!("{key} (updated)"),
            }),
            Status::Restored => taken.push(format!("{key} (restored: dropped here, changed there)")),
            Status::Diverged => lines.push(format!(
                "warning: diverged from '{remote}': {key} (both versions kept; `git handoff diff {qk}@{qr}` compares them, `git handoff resolve {qk} --merge` merges them (or `--keep-local`, `--take-remote`))"
            )),
            Status::RolledBack => lines.push(format!(
                "warning: rolled back on '{remote}': {key} (it holds an older version; yours is kept; `git handoff push {qr}` repairs it)"
            )),
            Status::DeletedRemotely => lines.push(format!(
                "note: deleted on '{remote}': {key} (kept here; `git handoff drop {qk}` drops it too)"
            )),
            Status::Newer => lines.push(format!(
                "warning: newer: {key} ('{remote}' holds a brief written by a newer git-handoff (schema {}): upgrade to read it; nothing taken)",
                k.schema.as_deref().unwrap_or("?")
            )),
            Status::Invalid => lines.push(format!(
                "warning: ignored: {key} ('{remote}' holds a value that is not a valid brief; nothing taken)"
            )),
            Status::SecretKey => lines.push(format!(
                "warning: ignored: {key} (the key holds a secret; nothing taken, never stored here)"
            )),
            Status::HeldSecret => lines.push(format!(
                "warning: held: {key} ('{remote}' holds a brief with a secret; after `git handoff redact --history` here none is taken back; `git handoff fetch {qr}` says how to end it)"
            )),
            // Changed here meanwhile: the next command takes it again.
            Status::Conflict => {}
            Status::UpToDate
            | Status::Ahead
            | Status::LocalOnly
            | Status::DroppedHere
            | Status::Gone => {}
        }
    }
    let history = matches!(
        report.history,
        NotesMerge::Created(_) | NotesMerge::FastForwarded(_) | NotesMerge::Merged(_)
    );
    let mut out = String::new();
    if !taken.is_empty() {
        let more = taken.len().saturating_sub(NAMED);
        out.push_str(&format!(
            "note: took {} brief{} `git fetch` brought from '{remote}': {}{}\n",
            taken.len(),
            if taken.len() == 1 { "" } else { "s" },
            taken[..taken.len() - more].join(", "),
            if more > 0 {
                format!(" and {more} more (`git handoff list` lists them)")
            } else {
                String::new()
            }
        ));
    } else if history {
        out.push_str(&format!(
            "note: took the briefs' history `git fetch` brought from '{remote}'\n"
        ));
    }
    if !report.left_out.is_empty() {
        lines.push(format!(
            "warning: took the history `git fetch` brought from '{remote}' without {} that hold{} secrets (`git handoff fetch {qr}` says how to end it)",
            match report.left_out.len() {
                1 => "the line".to_string(),
                n => format!("{n} lines"),
            },
            if report.left_out.len() == 1 { "s" } else { "" }
        ));
    }
    if let NotesMerge::Ignored(id) = report.history {
        lines.push(format!(
            "warning: ignored the history on '{remote}' ({} is not a notes history; nothing taken)",
            id.to_hex_with_len(7)
        ));
    }
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
