//! The optimistic push: one round trip when nothing changed remotely.
//!
//! The plan is made with no network, from what the last fetch left: the
//! local briefs, the bases (`refs/handoff-remotes/<remote>/…`, the values
//! both sides last agreed on) and the values that fetch staged. Every key
//! that is ahead goes with a lease on its base (a create with none: a
//! refspec without `+` only creates), and the history with a lease on
//! the remote's last-known notes tip, which the local history contains
//! (a fast-forward of exactly that tip, so what leaves is exactly what
//! the secret gate checked), all in one `git push`.
//!
//! What this plan cannot decide without the remote's current state is
//! left to a push that fetches first, as every push did before: a dry
//! run; a remote never fetched; after `redact --history` (what is held
//! is decided by a fetch); a selected key whose staged value is not its
//! base (diverged, deleted there, held, not a brief, or staged by a plain
//! `git fetch` and not taken yet); a staged history that is not the one
//! last published, a local history that does not contain it, or one the
//! secret gate refuses (never sent either way); nothing to send (a push
//! with nothing of its own still checks the remote, and repairs a
//! rollback its fetch finds). When a lease fails (another clone pushed
//! meanwhile), what the remote took stands, and the push fetches,
//! reconciles and sends the rest again with the usual rules, so that the
//! outcome is the one a push that fetched first gives.

use std::collections::BTreeSet;

use anyhow::Result;

use super::git::{accepted, git_reason};
use super::push::{
    Held, HistoryPush, NotesSend, PushAnswer, PushOptions, PushReport, PushedKey, Route, Send,
    Sent, plan_keys, rejection, selected_keys, send_with_history, unpushable_history,
};
use super::refs::Sides;
use crate::store::{NOTES_REF, history, remotes};

/// What an optimistic push came to.
pub(super) enum Attempt {
    /// The plan needs the remote's current state: nothing was sent.
    Undecided,
    /// Sent, and every answer is final.
    Done(First),
    /// Sent, and a lease failed (the remote moved since the last fetch):
    /// fetch, reconcile and send again all but [`First::settled`].
    Retry(First),
}

/// What an optimistic push settled.
pub(super) struct First {
    /// The keys whose result is final: with [`Attempt::Retry`], those the
    /// remote took, or refused for another reason than a lease.
    keys: Vec<PushedKey>,
    /// The history's result, when final (with [`Attempt::Retry`], only
    /// when the remote took it).
    history: Option<HistoryPush>,
    /// A lock file the remote named.
    stale_lock: Option<String>,
}

impl First {
    /// The report of a push whose every lease held.
    pub(super) fn report(self, remote: &str) -> PushReport {
        let mut keys = self.keys;
        keys.sort_by(|a, b| a.key.cmp(&b.key));
        PushReport {
            remote: remote.to_string(),
            dry_run: false,
            route: Route::Optimistic,
            fetch: None,
            keys,
            history: self.history.unwrap_or(HistoryPush::None),
            stale_lock: self.stale_lock,
        }
    }

    /// The keys the retry leaves alone.
    pub(super) fn settled(&self) -> BTreeSet<String> {
        self.keys.iter().map(|k| k.key.clone()).collect()
    }

    /// The report of the whole push: what this settled, then what the
    /// push after the fetch (`again`) did.
    pub(super) fn then(self, mut again: PushReport) -> PushReport {
        let retried: BTreeSet<String> = again.keys.iter().map(|k| k.key.clone()).collect();
        again
            .keys
            .extend(self.keys.into_iter().filter(|k| !retried.contains(&k.key)));
        again.keys.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(pushed @ HistoryPush::Pushed(_)) = self.history
            && matches!(again.history, HistoryPush::UpToDate | HistoryPush::None)
        {
            again.history = pushed;
        }
        again.stale_lock = self.stale_lock.or(again.stale_lock);
        again.route = Route::Retried;
        again
    }
}

/// The optimistic plan: the sides as the last fetch left them, the keys
/// held here (refused by the gate, or skipped), the sends, and the
/// history to send with what the report says of it until the push answers.
struct Plan {
    sides: Sides,
    keys: Vec<PushedKey>,
    sends: Vec<Send>,
    notes: Option<NotesSend>,
    history: HistoryPush,
}

/// Push optimistically (see the module's doc): plan with no network, and
/// send in one `git push` unless the command line would overflow.
pub(super) fn attempt(
    repo: &gix::Repository,
    remote: &str,
    options: &PushOptions,
) -> Result<Attempt> {
    let Some(plan) = plan(repo, remote, options)? else {
        return Ok(Attempt::Undecided);
    };
    // Each key was planned on the version graph of the history the remote
    // held at the last fetch: sent with that history's lease, all or none
    // (when they fit one push), so that a key never lands over a value
    // whose meaning another clone's history changed meanwhile (a version
    // recorded with the same blob); the retry plans it on the merged graph.
    let (sent, _) = send_with_history(repo, remote, options, &plan.sides, plan.sends, plan.notes)?;
    let Sent {
        keys: answered,
        notes,
        stale_lock,
    } = sent;
    let history = match notes {
        Some(answer) => history_answer(options, &answer),
        None => Some(plan.history),
    };
    let lease_failed = answered.iter().any(|k| k.held == Some(Held::Stale));
    if history.is_some() && !lease_failed {
        let mut keys = plan.keys;
        keys.extend(answered);
        return Ok(Attempt::Done(First {
            keys,
            history,
            stale_lock,
        }));
    }
    let keys = answered
        .into_iter()
        .filter(|k| !matches!(k.held, Some(Held::Stale | Held::AtomicSibling)))
        .collect();
    Ok(Attempt::Retry(First {
        keys,
        history: history.filter(|h| matches!(h, HistoryPush::Pushed(_))),
        stale_lock,
    }))
}

/// The plan, or `None` when it needs the remote's current state.
fn plan(repo: &gix::Repository, remote: &str, options: &PushOptions) -> Result<Option<Plan>> {
    if options.dry_run || !remotes::was_fetched(repo, remote) || super::gate::history_redacted(repo)
    {
        return Ok(None);
    }
    let sides = Sides::read(repo, remote)?;
    // A key named that exists neither here nor in the last fetch: the
    // remote may hold it now.
    let Ok(selected) = selected_keys(&sides, remote, options) else {
        return Ok(None);
    };
    // The last fetched value of every key must be the one last agreed on.
    if selected
        .iter()
        .any(|key| sides.base.get(key) != sides.remote.get(key))
    {
        return Ok(None);
    }
    let Some((notes, history)) = plan_notes(repo, remote)? else {
        return Ok(None);
    };
    // With every staged value its base, a key whose brief is its base too
    // is up to date: when all are and the history is, nothing goes (the
    // push that fetches first plans the keys, not this one too).
    let ahead = selected
        .iter()
        .any(|key| sides.local.get(key) != sides.base.get(key));
    if !ahead && notes.is_none() {
        return Ok(None);
    }
    let (keys, sends) = plan_keys(repo, &sides, selected, options)?;
    if sends.is_empty() && notes.is_none() {
        return Ok(None);
    }
    Ok(Some(Plan {
        sides,
        keys,
        sends,
        notes,
        history,
    }))
}

/// The history to send, with a lease on the remote's last-known tip, and
/// what the report says of it until the push answers; `None` when that
/// needs the remote's current state: its staged tip is not the one last
/// published (a plain `git fetch` staged another, or an invalid one was
/// left staged), the local history lacks the published one, or the gate
/// refuses what the remote lacks of it.
fn plan_notes(
    repo: &gix::Repository,
    remote: &str,
) -> Result<Option<(Option<NotesSend>, HistoryPush)>> {
    let known = history::peel(repo, &remotes::notes_ref(remote))?;
    if history::peel(repo, &remotes::staged_notes_ref(remote))? != known {
        return Ok(None);
    }
    let ours = history::peel(repo, NOTES_REF)?;
    let ours = match (ours, known) {
        (None, None) => return Ok(Some((None, HistoryPush::None))),
        (None, Some(_)) => return Ok(None),
        (Some(o), k) if Some(o) == k => return Ok(Some((None, HistoryPush::UpToDate))),
        (Some(o), Some(k)) if super::notes::contains(repo, o, k)? != Some(true) => {
            return Ok(None);
        }
        (Some(o), _) => o,
    };
    // A history the gate refuses is never sent; what the refusal names
    // depends on the remote's history now (merged, it changes what the
    // remote lacks), so that push fetches first.
    if unpushable_history(repo, ours, known)?.is_some() {
        return Ok(None);
    }
    let notes = NotesSend {
        tip: ours,
        lease: Some(known),
    };
    Ok(Some((
        Some(notes),
        HistoryPush::Rejected("not pushed".into()),
    )))
}

/// The history's result from the remote's answer; `None` when the push
/// must fetch and send it again: its lease failed (another clone pushed
/// history since the last fetch) or the remote refused it (a push after a
/// fetch then merges what the remote holds and sends again too). A
/// taken history's bookkeeping moved with the keys' (`apply_results`).
fn history_answer(options: &PushOptions, (run, results): &PushAnswer) -> Option<HistoryPush> {
    match results.get(NOTES_REF) {
        Some((flag, summary)) if accepted(*flag) => Some(HistoryPush::Pushed(summary.clone())),
        // All or nothing, and refused for another reason than its lease
        // (another ref of the push was): as a push after a fetch says.
        Some((_, summary)) if options.atomic && rejection(summary) != Held::Stale => {
            Some(HistoryPush::Rejected(summary.clone()))
        }
        Some(_) => None,
        None => Some(HistoryPush::Rejected(git_reason(&run.stderr))),
    }
}
