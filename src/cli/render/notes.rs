//! The words of a write's notes: its warnings, lint findings and
//! redactions as the lines `write`, `recover`, `split` and `import` print
//! on stderr (and the MCP tools append to their text), and a refusal's
//! report.

use crate::brief::Issue;
use crate::brief::redact;
use crate::cli::render::{invalid, split_invalid};
use crate::write::plan::MAX_RECOMMENDED_THREADS;
use crate::write::{Failed, Keyed, Notes, Refusal, Warning};

/// The level (`warning` or `note`) and the words of a warning.
pub fn warning(w: &Warning) -> (&'static str, String) {
    match w {
        Warning::NoRedact => (
            "warning",
            "--no-redact: secrets are stored as given; `git handoff push` will refuse to send them"
                .to_string(),
        ),
        Warning::KeyChoice(text) => ("warning", text.clone()),
        Warning::ManyThreads(n) => (
            "warning",
            format!(
                "{n} threads; fewer, coarser threads (at most {MAX_RECOMMENDED_THREADS}) are easier to resume and to merge back — consider folding some together, or RECOVER instead: `git handoff recover` rebuilds one brief from the stored one and git"
            ),
        ),
        Warning::NotRemembered(why) => (
            "warning",
            format!("the brief is stored, but this worktree's key could not be remembered: {why}"),
        ),
        Warning::NoHistory { branch: None, .. } => (
            "note",
            "no commit here yet; the briefs are stored but their history notes are skipped"
                .to_string(),
        ),
        Warning::NoHistory {
            branch: Some(branch),
            briefs,
        } => (
            "note",
            if *briefs == 1 {
                format!(
                    "no commit on '{branch}' yet; the brief is stored but its history note is skipped until the first commit"
                )
            } else {
                format!(
                    "no commit on '{branch}' yet; the briefs are stored but their history notes are skipped until the first commit"
                )
            },
        ),
        Warning::NoHeadRecorded(n) => (
            "note",
            if *n == 1 {
                "the imported brief records no full commit id (state.head_sha), so no history note was added for it; the brief is stored".to_string()
            } else {
                format!(
                    "{n} imported briefs record no full commit id (state.head_sha), so no history notes were added for them; the briefs are stored"
                )
            },
        ),
        Warning::NarrativeUntracked(rel) => (
            "note",
            format!("{rel} is not tracked yet: commit it with your work (`git add {rel}`)"),
        ),
        Warning::StillDiverged { key, remotes } => (
            "warning",
            format!(
                "'{key}' is still diverged from {}: this version is written on top of yours, not theirs, and is not pushed until `git handoff resolve {} --merge` (or `--keep-local|--take-remote`)",
                crate::support::text::quoted_list(remotes),
                crate::support::escape::shell_quote(key)
            ),
        ),
        Warning::Replaced {
            key,
            version,
            dropped,
        } => (
            "note",
            format!(
                "this write replaced '{key}' whole; of version {version}, {} are not in it (`git handoff write --update` keeps what you do not give; `git handoff show {} --version {version}` has them)",
                and_list(
                    &dropped
                        .iter()
                        .map(|(field, n)| format!("{n} {}", singular(field, *n)))
                        .collect::<Vec<_>>()
                ),
                crate::support::escape::shell_quote(key)
            ),
        ),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A field's name for `n` entries: "decisions", or "decision" for one.
fn singular(field: &str, n: usize) -> String {
    let one = match field {
        "decisions" => "decision",
        "rejected paths" => "rejected path",
        "preferences" => "preference",
        "open risks" => "open risk",
        "files to read first" => "file to read first",
        other => other,
    };
    if n == 1 { one } else { field }.to_string()
}

/// A short name for a warning's kind, as JSON reports it.
pub fn warning_kind(w: &Warning) -> &'static str {
    match w {
        Warning::NoRedact => "no-redact",
        Warning::KeyChoice(_) => "key-choice",
        Warning::ManyThreads(_) => "many-threads",
        Warning::NotRemembered(_) => "key-not-remembered",
        Warning::NoHistory { .. } => "no-history",
        Warning::NarrativeUntracked(_) => "narrative-untracked",
        Warning::NoHeadRecorded(_) => "no-head-recorded",
        Warning::StillDiverged { .. } => "still-diverged",
        Warning::Replaced { .. } => "replaced",
    }
}

/// Whether a warning arises after the briefs are stored (it is printed
/// after the findings and the redaction note).
fn after_store(w: &Warning) -> bool {
    matches!(
        w,
        Warning::NotRemembered(_)
            | Warning::NoHistory { .. }
            | Warning::NoHeadRecorded(_)
            | Warning::StillDiverged { .. }
    )
}

fn warning_lines<'a>(notes: &'a Notes, pick: impl Fn(&Warning) -> bool + 'a) -> String {
    notes
        .warnings
        .iter()
        // The stored output says it already, in its own words.
        .filter(|w| !matches!(w, Warning::NarrativeUntracked(_)) && pick(w))
        .map(|w| {
            let (level, text) = warning(w);
            format!("{level}: {text}\n")
        })
        .collect()
}

/// The findings as lines, `warning:` or (strict) `error:`, each with its
/// brief's key: `warning: [feat] resume.done_when: vague-check: …`.
fn finding_lines(findings: &[Keyed], strict: bool) -> String {
    let level = if strict { "error" } else { "warning" };
    let mut out = String::new();
    for keyed in findings {
        let prefix = format!("[{}] ", keyed.key);
        for line in format!("{level}: {}\n", keyed.finding.line()).lines() {
            let (level, rest) = line.split_once(": ").unwrap_or(("warning", line));
            out.push_str(&format!("{level}: {prefix}{rest}\n"));
        }
    }
    out
}

/// What a write's notes say, as its lines on stderr: the warnings that
/// arose before anything was stored, the findings, and — when the briefs
/// were `stored` — the secrets redacted and the warnings of the store.
pub fn notes_text(notes: &Notes, stored: bool) -> String {
    let mut out = warning_lines(notes, |w| !after_store(w));
    out.push_str(&finding_lines(&notes.findings, notes.strict));
    if stored {
        if let Some(summary) = redact::summary(&notes.redacted) {
            out.push_str(&format!("note: {summary} before writing\n"));
        }
        out.push_str(&warning_lines(notes, after_store));
    }
    out
}

/// What a failed write says before its error line: the warnings so far,
/// then [`refusal_text`].
pub fn failed_text(failed: &Failed) -> String {
    let mut out = warning_lines(&failed.notes, |w| !after_store(w));
    out.push_str(&refusal_report(failed, true));
    out
}

/// The report of a refusal: the schema errors (`handoff-validate:
/// INVALID`, or per thread `handoff-split: INVALID`), or the strict
/// findings as errors; for the MCP tools, whose input is JSON, a missing
/// field is named by its schema path.
pub fn refusal_text(failed: &Failed) -> String {
    refusal_report(failed, false)
}

/// [`refusal_text`]; with `flags`, a missing field a command-line flag
/// gives is named by that flag.
fn refusal_report(failed: &Failed, flags: bool) -> String {
    let mut out = String::new();
    match failed.error.downcast_ref::<Refusal>() {
        Some(Refusal::Invalid { issues, .. } | Refusal::Unrecoverable { issues, .. }) => {
            out.push_str(&if flags {
                invalid_naming_flags(issues)
            } else {
                invalid(issues)
            });
        }
        Some(Refusal::Threads { invalid, .. }) => out.push_str(&split_invalid(invalid)),
        _ => {}
    }
    out.push_str(&finding_lines(&failed.notes.findings, failed.notes.strict));
    out
}

/// The field flags of `write` and `recover`, by the schema path of the
/// field each one sets.
const FIELD_FLAGS: &[(&str, &str)] = &[
    ("resume.done_when", "--done-when"),
    ("resume.resume_by", "--resume-by"),
    ("resume.prompt", "--prompt"),
    ("state.next_acceptance_check", "--next-check"),
];

/// The flag that gives the field a schema error says is missing
/// (`resume: "resume_by" is a required property` → `--resume-by`).
pub fn missing_flag(issue: &Issue) -> Option<&'static str> {
    let field = issue
        .message
        .strip_prefix('"')?
        .strip_suffix("\" is a required property")?;
    let path = format!("{}.{field}", issue.path);
    FIELD_FLAGS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, flag)| *flag)
}

/// Every missing field a flag gives, as that flag.
pub fn missing_flags(issues: &[Issue]) -> Vec<&'static str> {
    issues.iter().filter_map(missing_flag).collect()
}

/// A refused write's schema errors, a missing field that a flag gives
/// named by its flag (`  - missing --resume-by`), the rest as the
/// validator says them.
fn invalid_naming_flags(issues: &[Issue]) -> String {
    let (flagged, rest): (Vec<&Issue>, Vec<&Issue>) =
        issues.iter().partition(|i| missing_flag(i).is_some());
    let rest: Vec<Issue> = rest.into_iter().cloned().collect();
    let mut out = if rest.is_empty() {
        String::from("handoff-validate: INVALID\n")
    } else {
        invalid(&rest)
    };
    for issue in flagged {
        let flag = missing_flag(issue).expect("partitioned");
        out.push_str(&format!("  - missing {flag}\n"));
    }
    out
}

/// Every warning of `notes` as its line (but that the narrative is not
/// tracked, which a stored write's own text says), for the MCP tools.
pub fn warnings_text(notes: &Notes) -> String {
    warning_lines(notes, |_| true)
}
