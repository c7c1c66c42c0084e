//! The words a user reads after a typed error from a lower layer: the fact
//! the error states, then what to run next (`git handoff …`). Lower layers
//! never name a command; this is where their errors learn to.

use crate::agent::fork::ForkError;
use crate::store::history::VersionError;
use crate::store::remotes::{CannotMigrate, NoRemote};
use crate::store::{StoreError, Unreadable};
use crate::sync::{Held, HistoryPush, PushError, PushReport, ResolveError};
use crate::write::{NotAnObject, Refusal};

/// A key, remote or name as one word of a printed command line.
fn sh(word: &str) -> String {
    crate::support::escape::shell_quote(word)
}

/// The one line `main` and the MCP server print for an error: the error
/// and its causes, then — when the root cause is a typed error of a lower
/// layer — what to run next.
pub fn message(err: &anyhow::Error) -> String {
    let mut text = format!("{err:#}");
    if let Some(next) = next_step(err.root_cause()) {
        text.push_str(&next);
    }
    // An error often quotes what it was given (a key, a file name, a
    // value): it passes the redaction filter like every text we write.
    crate::brief::redact::redact_text(&text.replace('\n', " ")).0
}

/// A store error as one line with what to run next (for a report row).
pub fn store(err: &StoreError) -> String {
    format!("{err}{}", next_step(err).unwrap_or_default())
}

/// What to run next after a typed error, to append to its message.
fn next_step(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(err) = err.downcast_ref::<StoreError>() {
        return match err {
            StoreError::Conflict(keys) if keys.len() == 1 => Some(format!(
                " (`git handoff show {}` shows the new version)",
                sh(&keys[0])
            )),
            StoreError::SecretKey { .. } => Some(" (`git handoff write KEY`)".to_string()),
            _ => None,
        };
    }
    if let Some(err) = err.downcast_ref::<ForkError>() {
        return Some(match err {
            ForkError::NoFile => {
                "; `git handoff fork list` shows the fork and hand-back files".to_string()
            }
            ForkError::NotAForkName { .. } => "; `git handoff fork list` shows them".to_string(),
            ForkError::Consumed { name, .. } => {
                let qn = sh(name);
                format!(" until `git handoff fork done {qn}` deletes it")
            }
            ForkError::Missing { .. } => "; `git handoff fork list` shows what is left".to_string(),
            ForkError::TooMany { .. } => {
                "; consume some with `git handoff fork consume FILE`".to_string()
            }
        });
    }
    if let Some(err) = err.downcast_ref::<Unreadable>() {
        return Some(format!(
            "; `git handoff show {}` prints it as stored",
            sh(&err.key)
        ));
    }
    if let Some(err) = err.downcast_ref::<Refusal>() {
        return Some(refusal_next(err));
    }
    if let Some(NotAnObject { key, .. }) = err.downcast_ref::<NotAnObject>() {
        let qk = sh(key);
        return Some(format!(
            "; give the whole brief with `git handoff recover {qk} -F FILE`, or `git handoff drop {qk}` first"
        ));
    }
    if err.is::<CannotMigrate>() {
        return Some(" (the next `git handoff fetch` rebuilds it)".to_string());
    }
    if err.is::<NoRemote>() {
        return Some(
            "; name one (`git handoff push NAME`), set `git config handoff.remote NAME`, or add one with `git remote add origin URL`"
                .to_string(),
        );
    }
    match err.downcast_ref::<ResolveError>()? {
        ResolveError::NotDiverged { remote, .. } => Some(format!(
            " (`git handoff fetch {}` reports diverged keys)",
            sh(remote)
        )),
        ResolveError::NotABrief { key, .. } => Some(format!(
            ". Keep yours with `git handoff resolve {} --keep-local` (the next push replaces it there)",
            sh(key)
        )),
    }
}

/// What to do after the write path refused: how to correct the brief.
/// Missing fields are named by their flags; a key already stored is
/// pointed at `write --update`, which starts from the stored brief.
fn refusal_next(err: &Refusal) -> String {
    let missing =
        |issues: &[crate::brief::Issue]| crate::cli::render::missing_flags(issues).join(", ");
    match err {
        Refusal::Invalid {
            key,
            stored: true,
            issues,
        } => {
            let missing = missing(issues);
            let lead = if missing.is_empty() {
                String::new()
            } else {
                format!(": missing {missing}")
            };
            format!(
                "{lead}. `write` replaces the whole brief: to change only some fields of the stored one, run `git handoff write {} --update` with the same flags (it starts from the stored brief)",
                sh(key)
            )
        }
        Refusal::Invalid { issues, .. } if !missing(issues).is_empty() => format!(
            ": missing {}; give them as flags or in -F FILE",
            missing(issues)
        ),
        Refusal::Invalid { .. } => " (`git handoff schema` prints the schema)".to_string(),
        Refusal::Unrecoverable {
            stored: false,
            missing,
            ..
        } if !missing.is_empty() => {
            " (give them with -F or flags such as --done-when, --resume-by, --next-check)"
                .to_string()
        }
        Refusal::Unrecoverable { .. } => {
            " (correct the fields listed above with -F or flags)".to_string()
        }
        Refusal::Threads { .. } => " (fix the plan and run again)".to_string(),
        Refusal::Strict { .. } => " (fix them, or --no-lint)".to_string(),
    }
}

/// A version argument's error with the command that shows the versions,
/// the keys or the remote's briefs.
pub fn version(err: VersionError) -> anyhow::Error {
    let next = match &err {
        VersionError::NotANumber { .. }
        | VersionError::NoSuchRemote { .. }
        | VersionError::Ambiguous { .. } => return anyhow::Error::new(err),
        VersionError::Unreadable { key, .. } => format!(
            "; use @{{N}} (0 is the newest), a version id from `git handoff log {}`, or @REMOTE",
            sh(key)
        ),
        VersionError::NoCurrent { key } => {
            format!("; `git handoff log {}` lists its earlier versions", sh(key))
        }
        VersionError::NoHistory { .. } => "; `git handoff list` shows the keys".to_string(),
        VersionError::OutOfRange { key, count } => format!(
            " (@{{0}} to @{{{}}}); `git handoff log {}` lists them",
            count - 1,
            sh(key)
        ),
        VersionError::NoSuchId { key, .. } => {
            format!("; `git handoff log {}` lists the version ids", sh(key))
        }
        VersionError::NotFetched { remote, .. } => {
            format!("; run `git handoff fetch {}` first", sh(remote))
        }
    };
    // Still the check's answer "no" (exit 1), with the hint added.
    crate::refused(format!("{err}{next}"))
}

/// A push's or a fetch's typed refusal with what to run next (still the
/// answer "no", exit 1); any other error unchanged.
pub fn sync(err: anyhow::Error) -> anyhow::Error {
    if let Some(PushError::UnknownKey { .. }) = err.downcast_ref::<PushError>() {
        return crate::refused(format!(
            "{err}; `git handoff list` shows the keys; nothing was pushed"
        ));
    }
    err
}

/// Word why each key of a push was held (and why the history was
/// refused), with what to run next, before the report is rendered.
pub fn push_reasons(report: &mut PushReport) {
    let remote = report.remote.clone();
    for k in &mut report.keys {
        if let Some(why) = &k.held {
            k.reason = Some(held(why, &remote, &k.key));
        }
    }
    if let HistoryPush::Refused(why) = &mut report.history {
        why.push_str("; `git handoff redact --history` removes them");
    }
}

/// Why one key was not pushed, and what to run next.
fn held(why: &Held, remote: &str, key: &str) -> String {
    let (qr, qk) = (sh(remote), sh(key));
    match why {
        Held::DeletedThere => format!(
            "deleted on '{remote}'; `git handoff push {qr} {qk}` restores it there, `git handoff drop {qk}` drops it here"
        ),
        Held::Diverged => format!(
            "both sides changed; `git handoff diff {qk}@{qr}` compares, `git handoff resolve {qk} --merge` merges them (or `--keep-local`, `--take-remote` keeps one)"
        ),
        Held::DroppedHere => {
            format!("dropped here; `git handoff push --prune` deletes it on '{remote}'")
        }
        Held::NotHere => format!("not here; `git handoff fetch {qr}` brings it"),
        Held::Newer(schema) => format!(
            "'{remote}' holds a brief written by a newer git-handoff (schema {schema}): upgrade to read it; it is never replaced or deleted from here"
        ),
        Held::NotABrief(id) => format!(
            "not here, and '{remote}' holds {}, which is not a valid brief; `git handoff push --prune {qr} {qk}` deletes it there",
            id.to_hex_with_len(7)
        ),
        Held::ValidThere => format!(
            "'{remote}' holds a valid brief that was not dropped here: --prune deletes only junk and what `git handoff drop` dropped; `git handoff fetch {qr}` brings it, `git handoff drop {qk}` then `git handoff push --prune {qr} {qk}` deletes it"
        ),
        Held::SecretKey(rule) => format!(
            "the key holds a secret ({rule}) and would become a ref name on '{remote}'; `git handoff drop` it and write the brief under another key"
        ),
        Held::SecretThere { rules, here } => format!(
            "'{remote}''s version holds a secret ({}), never taken back here after `git handoff redact --history`; {}",
            rules.join(", "),
            if *here {
                format!("`git handoff push {qr} {qk}` replaces it with yours")
            } else {
                format!("`git handoff push --prune {qr} {qk}` deletes it there")
            }
        ),
        Held::Secrets { total, kinds } => format!(
            "holds {total} secret{} ({}); `git handoff redact` removes {}",
            if *total == 1 { "" } else { "s" },
            kinds.join(", "),
            if *total == 1 { "it" } else { "them" }
        ),
        Held::Stale => format!(
            "'{remote}' changed it since the last fetch; `git handoff fetch {qr}` shows the new version, then push again"
        ),
        Held::AtomicSibling => {
            "not pushed: another ref of this atomic push was refused".to_string()
        }
        Held::Refused(summary) => format!(
            "'{remote}' refused it: {summary}; if someone pushed '{key}' meanwhile, `git handoff fetch {qr}` shows it, then push again"
        ),
        Held::Unreported(reason) => format!("git push did not report it: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_errors_read_as_before() {
        let key = "k".to_string();
        let cases = [
            (
                VersionError::OutOfRange {
                    key: key.clone(),
                    count: 2,
                },
                "'k' has 2 versions (@{0} to @{1}); `git handoff log k` lists them",
            ),
            (
                VersionError::Unreadable {
                    arg: "zz".into(),
                    key: key.clone(),
                },
                "'zz' names no version; use @{N} (0 is the newest), a version id from `git handoff log k`, or @REMOTE",
            ),
            (
                VersionError::NotFetched {
                    key: key.clone(),
                    remote: "origin".into(),
                },
                "no brief 'k' from remote 'origin'; run `git handoff fetch origin` first",
            ),
            (
                VersionError::NotANumber { arg: "@{x}".into() },
                "'@{x}': in @{N}, N is a number (0 is the newest version)",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(version(err).to_string(), want);
        }
    }

    #[test]
    fn typed_errors_below_read_as_before() {
        let conflict = anyhow::Error::from(StoreError::Conflict(vec!["k".into()]));
        assert_eq!(
            message(&conflict.context("cannot write")),
            "cannot write: brief 'k' changed while writing; run again (`git handoff show k` shows the new version)"
        );
        let secret = anyhow::Error::from(StoreError::SecretKey {
            rule: "github_token".into(),
        });
        assert_eq!(
            message(&secret),
            "the key holds a secret (github_token); nothing was written. Keys become ref names and history lines: name the brief with a key without it (`git handoff write KEY`)"
        );
        let not_a_brief = anyhow::Error::from(ResolveError::NotABrief {
            key: "k".into(),
            remote: "origin".into(),
            id: "abc1234".into(),
        });
        assert_eq!(
            message(&not_a_brief),
            "'origin' holds abc1234 for 'k', which is not a valid brief of this key; nothing was changed. Keep yours with `git handoff resolve k --keep-local` (the next push replaces it there)"
        );
        assert_eq!(
            message(&anyhow::Error::from(NoRemote)),
            "no remote to share with: there is no 'origin'; name one (`git handoff push NAME`), set `git config handoff.remote NAME`, or add one with `git remote add origin URL`"
        );
        let unreadable = anyhow::Error::from(Unreadable {
            key: "k".into(),
            short: "abc1234".into(),
            why: "not JSON".into(),
        });
        assert_eq!(
            message(&unreadable.context("cannot resume")),
            "cannot resume: brief 'k' (abc1234) is unreadable: not JSON; `git handoff show k` prints it as stored"
        );
        let consumed = anyhow::Error::from(ForkError::Consumed {
            shown: "/t/handoff-x-2026-01-01.md".into(),
            kept: "/t/handoff-x-2026-01-01.md.consumed".into(),
            name: "handoff-x-2026-01-01.md".into(),
        });
        assert_eq!(
            message(&consumed),
            "'/t/handoff-x-2026-01-01.md' was consumed already; it is kept as '/t/handoff-x-2026-01-01.md.consumed' until `git handoff fork done handoff-x-2026-01-01.md` deletes it"
        );
        for (err, want) in [
            (
                ForkError::NoFile,
                "no file given; `git handoff fork list` shows the fork and hand-back files",
            ),
            (
                ForkError::NotAForkName { arg: "x".into() },
                "'x' is not a fork or hand-back file name (handoff-<purpose>-<date>.md); `git handoff fork list` shows them",
            ),
            (
                ForkError::Missing { shown: "f".into() },
                "'f' does not exist (done already?); `git handoff fork list` shows what is left",
            ),
            (
                ForkError::TooMany {
                    stem: "handoff-x".into(),
                    dir: "/t".into(),
                },
                "99 files named handoff-x*.md exist in /t; consume some with `git handoff fork consume FILE`",
            ),
        ] {
            assert_eq!(message(&anyhow::Error::from(err)), want);
        }
        assert_eq!(message(&anyhow::anyhow!("plain\nerror")), "plain error");
    }
}
