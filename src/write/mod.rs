//! The write path: every brief that is stored goes through [`write`] —
//! choose the key, compose it from the input and what git says now,
//! redact, lint, validate, store (compare-and-swap, with the history), add
//! the narrative entry. It prints nothing: it returns an [`Outcome`] (what
//! was stored, what the checks found, the warnings), or a [`Failed`] with
//! the same notes and the error, a [`Refusal`] listing every problem when
//! the input is the reason.
//!
//! The front ends (`write`, `recover`, `split`, `import` on the command
//! line, the MCP tools) parse their arguments into a [`Source`] and
//! [`Options`], call [`write`], and render the outcome.

pub mod checks;
mod narrate;
pub mod patch;
pub mod plan;
pub mod reread;
mod single;

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::brief::lint::Finding;
use crate::brief::redact::Counts;
use crate::brief::{Brief, Issue};
use crate::git::compose::{GitFacts, Mode};
use crate::git::repo::HeadState;
use crate::{narrative, store};

use checks::Checks;
pub use plan::Plan;

/// The line count of a brief's resume render, for lint's `over-long` rule
/// (the render belongs to the front end, which hands it in).
pub type RenderLines = fn(&Brief) -> usize;

/// How a write checks and narrates.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Redact secrets before anything is stored (off: stored as given,
    /// with a warning).
    pub redact: bool,
    /// Lint the composed briefs.
    pub lint: bool,
    /// Lint findings are errors: nothing is written (also
    /// `handoff.strict`).
    pub strict: bool,
    /// Add the narrative entry (`write`, `split`; also off when
    /// `handoff.narrative` is false).
    pub narrative: bool,
    /// The resume render's line count, for lint (not measured without it).
    pub render_lines: Option<RenderLines>,
}

impl Default for Options {
    /// Redact, lint (warnings unless `handoff.strict`), narrate.
    fn default() -> Options {
        Options {
            redact: true,
            lint: true,
            strict: false,
            narrative: true,
            render_lines: None,
        }
    }
}

/// What to write.
pub enum Source<'a> {
    /// `write`: a partial brief that becomes the whole brief (mode WRITE),
    /// with a narrative entry.
    Brief(Single<'a>),
    /// `recover`: corrections over the stored brief (its fields replace
    /// the stored ones; mode RECOVER, timestamp now); no narrative entry.
    Corrections(Single<'a>),
    /// `split`: the threads of a plan, written in one transaction with one
    /// combined narrative entry — or, without `write`, only composed and
    /// checked (a proposal).
    Plan {
        /// The plan.
        plan: Plan,
        /// Store the briefs (else: propose them).
        write: bool,
    },
    /// `import`: briefs as they were recorded, stored in one transaction,
    /// redacted but neither composed nor linted.
    Recorded(Vec<store::Update>),
}

/// A step between choosing the key and composing: given the repository,
/// the key, the partial brief so far and the git facts, the partial brief
/// to compose (the command line's editor).
pub type Edit<'a> = Box<dyn FnOnce(&gix::Repository, &str, Value, &GitFacts) -> Result<Value> + 'a>;

/// A step on the stored brief before the corrections are merged onto it
/// (`recover --from-transcript`: the session's draft grounds it).
pub type Ground<'a> = Box<dyn FnOnce(&gix::Repository, &mut Value) -> Result<()> + 'a>;

/// One brief's input: the partial brief, the patch of the field flags,
/// how its key is chosen, its narrative sections.
#[derive(Default)]
pub struct Single<'a> {
    /// The partial brief (a JSON object; an empty one when absent).
    pub brief: Map<String, Value>,
    /// Applied after `brief` (and, for corrections, after the stored
    /// brief): objects merge, scalars replace, lists extend ([`patch`]).
    pub patch: Option<Value>,
    /// The key asked for; the brief's own `key` must agree with it.
    pub key: Option<String>,
    /// Target the current branch's key, even over a sticky key.
    pub key_from_branch: bool,
    /// The narrative entry's sections as markdown (`### ` sections).
    pub narrative: Option<String>,
    /// A step before composing ([`Edit`]).
    pub edit: Option<Edit<'a>>,
    /// For corrections, a step on the stored brief before they are
    /// merged ([`Ground`]).
    pub ground: Option<Ground<'a>>,
    /// `write --update`: start from the stored brief (its timestamp and
    /// mode dropped: they are now's) and apply `brief` to it as a JSON
    /// Merge Patch (RFC 7386) rather than composing `brief` alone.
    pub update: bool,
    /// The version the caller checked (`None` inside: no brief), as the
    /// compare-and-swap value instead of the one read as the write begins:
    /// the write replaces exactly that one or fails with a conflict (the
    /// hooks' draft, which must never replace a brief written meanwhile).
    pub expected: Option<Option<gix::ObjectId>>,
}

/// What a write did, and what its checks found.
#[derive(Debug)]
pub struct Outcome {
    /// The briefs composed, in order (one for `write` and `recover`).
    pub briefs: Vec<Composed>,
    /// What was stored; `None` for a proposal.
    pub stored: Option<Stored>,
    /// The plan, redacted, for a split.
    pub plan: Option<Plan>,
    /// The warnings, lint findings and redactions.
    pub notes: Notes,
}

/// One composed brief.
#[derive(Debug, Clone)]
pub struct Composed {
    /// The brief, redacted.
    pub brief: Brief,
    /// The version it replaces (or would), read when the write began.
    pub previous: Option<gix::ObjectId>,
    /// A split thread's own `files_read_first` paths (not the shared ones).
    pub owns: Vec<String>,
}

/// What was stored.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The new version of each brief, in the order of [`Outcome::briefs`].
    pub ids: Vec<gix::ObjectId>,
    /// Whether the history notes were written (not before the first
    /// commit).
    pub history: bool,
    /// The narrative entry's file, when one was added.
    pub narrative: Option<Narrated>,
    /// The keys whose divergence with remotes the write carried on.
    pub still_diverged: Vec<(String, Vec<String>)>,
}

/// The narrative file an entry was added to.
#[derive(Debug, Clone)]
pub struct Narrated {
    /// Relative to the worktree root, `/`-separated.
    pub path: String,
    /// Whether git tracks it.
    pub tracked: bool,
    /// Whether git ignores it: it stays in its worktree by design, and
    /// nobody is asked to commit it.
    pub ignored: bool,
    /// How many lines the entry added to it.
    pub lines: usize,
    /// Whether the entry took the place of this session's uncommitted
    /// entry for the key (`write --update`) rather than being prepended.
    pub amended: bool,
}

/// What the checks found and the warnings of a write, kept in a refusal
/// too.
#[derive(Debug, Clone, Default)]
pub struct Notes {
    /// The warnings, in the order they arose.
    pub warnings: Vec<Warning>,
    /// The lint findings of each brief.
    pub findings: Vec<Keyed>,
    /// Whether findings are errors (then nothing was written).
    pub strict: bool,
    /// The secrets redacted, by kind (never the values).
    pub redacted: Counts,
}

/// A lint finding and the key of its brief.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Keyed {
    /// The brief's key.
    pub key: String,
    /// The finding.
    #[serde(flatten)]
    pub finding: Finding,
}

/// Something a write did that the caller should know; facts only, worded
/// by the front end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// Redaction is off: secrets are stored as given.
    NoRedact,
    /// What choosing the key had to say (a branch switch under a sticky
    /// key, an unreadable sticky file), worded by [`crate::git::sticky::choose`].
    KeyChoice(String),
    /// A plan with more threads than [`plan::MAX_RECOMMENDED_THREADS`].
    ManyThreads(usize),
    /// The brief is stored, but the worktree's sticky key could not be
    /// remembered: why.
    NotRemembered(String),
    /// No commit yet: the briefs are stored without history notes.
    NoHistory {
        /// HEAD's branch, when a worktree was read.
        branch: Option<String>,
        /// How many briefs were stored.
        briefs: usize,
    },
    /// The narrative file the entry went to is not tracked by git.
    NarrativeUntracked(String),
    /// Imported briefs (how many) recorded no full commit id, so no
    /// history note could be added for them (the repository has commits).
    NoHeadRecorded(usize),
    /// The key had diverged from these remotes' versions, and the new
    /// version, written on top of the local line, still has: it is not
    /// pushed until `resolve`.
    StillDiverged {
        /// The key.
        key: String,
        /// The remotes, sorted.
        remotes: Vec<String>,
    },
    /// A whole-brief write replaced a stored version whose list entries
    /// it does not carry: what was left behind, by field.
    Replaced {
        /// The key.
        key: String,
        /// The replaced version's short id.
        version: String,
        /// `(field, entries of the replaced version not in the new one)`,
        /// only the fields that lost some.
        dropped: Vec<(&'static str, usize)>,
    },
}

/// A write that failed: the notes gathered up to the failure, and the
/// error (a [`Refusal`] when the input is the reason).
#[derive(Debug)]
pub struct Failed {
    /// The warnings and findings so far.
    pub notes: Notes,
    /// What went wrong.
    pub error: anyhow::Error,
}

impl From<anyhow::Error> for Failed {
    fn from(error: anyhow::Error) -> Failed {
        Failed {
            notes: Notes::default(),
            error,
        }
    }
}

impl From<Failed> for anyhow::Error {
    fn from(failed: Failed) -> anyhow::Error {
        failed.error
    }
}

/// The input cannot be written as it is: nothing was written. Each variant
/// lists every problem found.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The composed brief is invalid.
    #[error("brief '{key}' is invalid; nothing was written")]
    Invalid {
        /// The key written.
        key: String,
        /// Whether a brief is stored under it.
        stored: bool,
        /// Every schema error.
        issues: Vec<Issue>,
    },
    /// The recovered brief is invalid.
    #[error("{}", unrecoverable(.key, .stored, .missing))]
    Unrecoverable {
        /// The key recovered.
        key: String,
        /// Whether a brief is stored under it.
        stored: bool,
        /// The required fields missing, as `resume.done_when`.
        missing: Vec<String>,
        /// Every schema error.
        issues: Vec<Issue>,
    },
    /// Threads of a plan are invalid.
    #[error(
        "{} of {total} threads {} invalid; nothing was written",
        invalid.len(),
        if invalid.len() == 1 { "is" } else { "are" }
    )]
    Threads {
        /// Each invalid thread's label and errors.
        invalid: Vec<(String, Vec<Issue>)>,
        /// How many threads the plan has.
        total: usize,
    },
    /// Lint is strict and found something (the findings are in the notes).
    #[error("{}", strict_refusal(.keys, *.findings))]
    Strict {
        /// The keys with findings.
        keys: Vec<String>,
        /// How many findings.
        findings: usize,
    },
}

impl Refusal {
    /// The schema errors, when the refusal is about them.
    pub fn issues(&self) -> Vec<&Issue> {
        match self {
            Refusal::Invalid { issues, .. } | Refusal::Unrecoverable { issues, .. } => {
                issues.iter().collect()
            }
            Refusal::Threads { invalid, .. } => invalid.iter().flat_map(|(_, i)| i).collect(),
            Refusal::Strict { .. } => Vec::new(),
        }
    }
}

fn unrecoverable(key: &str, stored: &bool, missing: &[String]) -> String {
    if !stored && !missing.is_empty() {
        format!(
            "no stored brief for '{key}', and the fields given leave {} missing; nothing was written",
            missing.join(", ")
        )
    } else {
        format!("the recovered brief '{key}' is invalid; nothing was written")
    }
}

fn strict_refusal(keys: &[String], findings: usize) -> String {
    let s = if findings == 1 { "" } else { "s" };
    match keys {
        [key] => format!(
            "brief '{key}' has {findings} lint finding{s} and lint is strict; nothing was written"
        ),
        keys => format!(
            "briefs {} have {findings} lint finding{s} and lint is strict; nothing was written",
            keys.iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The stored brief `recover` would start from is not a JSON object.
#[derive(Debug, thiserror::Error)]
#[error("brief '{key}' ({short}) is not a JSON object, so recover cannot start from it")]
pub struct NotAnObject {
    /// The key.
    pub key: String,
    /// The stored version, short.
    pub short: String,
}

/// Write briefs to `repo`: the one way every brief is stored. See the
/// module documentation for the steps; nothing is printed.
pub fn write(repo: &gix::Repository, source: Source, options: &Options) -> Result<Outcome, Failed> {
    let mut checks = Checks::new(repo, options);
    let result = match source {
        Source::Brief(single) => single::write(repo, single, Mode::Write, options, &mut checks),
        Source::Corrections(single) => {
            single::write(repo, single, Mode::Recover, options, &mut checks)
        }
        Source::Plan { plan, write } => plan::write(repo, plan, write, options, &mut checks),
        Source::Recorded(updates) => recorded(repo, updates, &mut checks),
    };
    match result {
        Ok(mut outcome) => {
            outcome.notes = checks.notes;
            Ok(outcome)
        }
        Err(error) => Err(Failed {
            notes: checks.notes,
            error,
        }),
    }
}

/// When lint is strict and found anything: the refusal naming the briefs.
fn refuse_strict(checks: &Checks) -> Result<()> {
    let notes = &checks.notes;
    if !notes.strict || notes.findings.is_empty() {
        return Ok(());
    }
    let mut keys: Vec<String> = Vec::new();
    for f in &notes.findings {
        if !keys.contains(&f.key) {
            keys.push(f.key.clone());
        }
    }
    Err(Refusal::Strict {
        keys,
        findings: notes.findings.len(),
    }
    .into())
}

/// Whether a write adds a narrative entry: the options ask for one and
/// `handoff.narrative` does not turn it off.
fn narrates(repo: &gix::Repository, options: &Options) -> bool {
    options.narrative && !narrative::disabled(repo)
}

/// `import`: briefs as recorded, redacted, stored in one transaction.
fn recorded(
    repo: &gix::Repository,
    updates: Vec<store::Update>,
    checks: &mut Checks,
) -> Result<Outcome> {
    let briefs: Vec<Composed> = updates
        .into_iter()
        .map(|u| Composed {
            brief: checks.redact_brief(u.brief),
            previous: u.expected,
            owns: Vec::new(),
        })
        .collect();
    let stored = store_all(repo, &briefs, "handoff: import", None, None)?;
    let headless = briefs
        .iter()
        .filter(|c| {
            c.brief
                .state
                .head_sha
                .as_deref()
                .is_none_or(|sha| sha.len() != repo.object_hash().len_in_hex())
        })
        .count();
    if headless > 0 && crate::git::repo::head_id(repo).is_some() {
        // Not "no commit yet": the briefs themselves name no commit.
        checks
            .notes
            .warnings
            .push(Warning::NoHeadRecorded(headless));
    } else {
        after_store(checks, &stored, None, briefs.len());
    }
    Ok(Outcome {
        briefs,
        stored: Some(stored),
        plan: None,
        notes: Notes::default(),
    })
}

/// Hand the push gate what this write stored, checked now while the rules
/// the briefs woke are compiled: the push after it need not compile them
/// again (see [`crate::sync::gate::vouch`]).
fn vouch_for_push(repo: &gix::Repository, updates: &[store::Update], written: &store::Written) {
    let briefs: Vec<String> = updates.iter().map(|u| u.brief.to_pretty_json()).collect();
    let texts: Vec<&[u8]> = briefs
        .iter()
        .map(String::as_bytes)
        .chain(written.lines.iter().map(String::as_bytes))
        .collect();
    crate::sync::gate::vouch(repo, &texts);
}

/// Store the briefs in one ref transaction (compare-and-swap on each, with
/// their history notes), then move the staged narrative into place.
fn store_all(
    repo: &gix::Repository,
    briefs: &[Composed],
    reflog: &str,
    pending: Option<narrative::Pending>,
    root: Option<&std::path::Path>,
) -> Result<Stored> {
    let updates: Vec<store::Update> = briefs
        .iter()
        .map(|c| store::Update {
            expected: c.previous,
            brief: c.brief.clone(),
        })
        .collect();
    let written = store::write(repo, &updates, reflog)?;
    vouch_for_push(repo, &updates, &written);
    let mut still_diverged = Vec::new();
    for ((key, id), c) in written.ids.iter().zip(briefs) {
        let Some(previous) = c.previous else { continue };
        let remotes = store::remotes::carry_divergences(repo, key, previous, *id)?;
        if !remotes.is_empty() {
            still_diverged.push((key.clone(), remotes));
        }
    }
    let lines = pending.as_ref().map_or(0, narrative::Pending::lines_added);
    let amended = pending.as_ref().is_some_and(narrative::Pending::amended);
    let file = pending.map(narrative::Pending::commit).transpose()?;
    let narrative = file.map(|file| {
        let rel = root
            .and_then(|root| file.strip_prefix(root).ok())
            .unwrap_or(&file)
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/");
        let tracked = narrative::tracked(repo, &rel);
        Narrated {
            tracked,
            ignored: !tracked && narrative::ignored(repo, &rel),
            lines,
            amended,
            path: rel,
        }
    });
    Ok(Stored {
        ids: written.ids.into_iter().map(|(_, id)| id).collect(),
        history: written.history,
        narrative,
        still_diverged,
    })
}

/// The warnings of a store: history notes skipped (no commit yet), the
/// narrative file untracked.
fn after_store(checks: &mut Checks, stored: &Stored, head: Option<&HeadState>, briefs: usize) {
    let warnings = &mut checks.notes.warnings;
    for (key, remotes) in &stored.still_diverged {
        warnings.push(Warning::StillDiverged {
            key: key.clone(),
            remotes: remotes.clone(),
        });
    }
    if !stored.history {
        warnings.push(Warning::NoHistory {
            branch: head.map(|h| h.branch_label().to_string()),
            briefs,
        });
    }
    if let Some(narrated) = stored
        .narrative
        .as_ref()
        .filter(|n| !n.tracked && !n.ignored)
    {
        warnings.push(Warning::NarrativeUntracked(narrated.path.clone()));
    }
}
