//! Every JSON report a command prints with `--json`, typed, in one place.
//! The field names are the JSON keys scripts read: never rename one.
//!
//! These reports serialize with their keys sorted at every level
//! ([`pretty`], [`line`]), the form they have always had; the reports that
//! serialize in field order live with the value they describe:
//! `list`/`list --archived` ([`crate::cli::render::ListRow`]), `log`,
//! `push` and `fetch` (`sync`'s reports), `init` rows
//! ([`crate::cli::render::SetupRow`]), `export`/`import` rows, `usage`
//! (`agent::usage::Meter`), `resolve` (`sync`'s resolution), `fork list`
//! (`agent::fork::Artifact`) and `pipeline list` rows.
//!
//! | command | report |
//! |---|---|
//! | `write` | [`Written`] |
//! | `recover` | [`Recovered`] |
//! | `resume` | [`Resumed`]; keyless and ambiguous: [`Ambiguous`] |
//! | `reground` | [`Reground`] |
//! | `split` | [`SplitProposed`], [`SplitWritten`] of [`SplitThread`] |
//! | `diff` | [`Diff`] of two [`DiffSide`] |
//! | `drop` | [`Dropped`] (one line) |
//! | `restore` | [`Restored`] (one line) |
//! | `prune` | [`Pruned`] |
//! | `redact` | [`Redacted`] |
//! | `lint` | [`Linted`] |
//! | `init` | [`Setup`] |
//! | `pipeline save`, `pipeline show` | [`PipelineSaved`], [`PipelineShown`] |
//! | `fork`, `handback` | [`Forked`], [`HandedBack`] (one line) |
//! | `hook` | [`HookContext`], [`HookMessage`] (the harness's JSON) |
//!
//! The MCP server's structured results are the reports above, and for the
//! tools without a `--json`: `validate` ([`Validity`]), a refused `write`,
//! `recover` or `split` ([`Refused`]), `brief` ([`SubagentBrief`]).

use serde::Serialize;

use crate::brief::{Brief, FilePointer, Issue, lint::Finding, redact::Counts};
use crate::cli::Output;
use crate::cli::render::{self, ListRow, SetupRow, SplitProposal};
use crate::drift;
use crate::write::{Keyed, Notes};

/// `report` as pretty JSON with its keys sorted at every level.
pub fn pretty<T: Serialize + ?Sized>(report: &T) -> Output {
    Output::json(&sorted(report))
}

/// `report` as one JSON line with its keys sorted at every level.
pub fn line<T: Serialize + ?Sized>(report: &T) -> Output {
    Output::json_line(&sorted(report))
}

/// The value of `report`, whose maps keep their keys sorted.
fn sorted<T: Serialize + ?Sized>(report: &T) -> serde_json::Value {
    serde_json::to_value(report).expect("reports serialize")
}

/// The version a write stored, as `write --json` and `recover --json`
/// both begin.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Version<'a> {
    /// The key written.
    pub key: &'a str,
    /// Its ref, `refs/handoffs/<key>`.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The new version's blob id.
    pub id: String,
    /// The version it replaced, if any.
    pub previous: Option<String>,
    /// Whether the history note was written.
    pub history: bool,
}

impl<'a> Version<'a> {
    /// The version `id` of `key`, replacing `previous`.
    pub fn new(
        key: &'a str,
        id: gix::ObjectId,
        previous: Option<gix::ObjectId>,
        history: bool,
    ) -> Version<'a> {
        Version {
            key,
            ref_name: crate::store::ref_name(key),
            id: id.to_string(),
            previous: previous.map(|p| p.to_string()),
            history,
        }
    }
}

/// What the checks of a write found, as `write`, `recover` and `split`
/// report it (`--json`, the MCP tools' structured content).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Checked<'a> {
    /// Each lint finding: `key`, `rule`, `field`, `message`, `fix`.
    pub findings: &'a [Keyed],
    /// The secrets redacted, by kind (`{"github_token": 1}`), never the
    /// values.
    pub redacted: &'a Counts,
    /// The warnings, in order.
    pub warnings: Vec<WarningLine>,
}

impl<'a> Checked<'a> {
    /// The report of `notes`.
    pub fn of(notes: &'a Notes) -> Checked<'a> {
        Checked {
            findings: &notes.findings,
            redacted: &notes.redacted,
            warnings: notes
                .warnings
                .iter()
                .map(|w| WarningLine {
                    kind: render::warning_kind(w),
                    message: render::warning(w).1,
                })
                .collect(),
        }
    }
}

/// One warning of a write.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct WarningLine {
    /// What it is about: `no-redact`, `key-choice`, `many-threads`,
    /// `key-not-remembered`, `no-history`, `narrative-untracked`.
    pub kind: &'static str,
    /// What the command line prints after `warning: ` or `note: `.
    pub message: String,
}

/// `write --json`: what was stored.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Written<'a> {
    /// Key, ref, id, previous version, history.
    #[serde(flatten)]
    pub version: Version<'a>,
    /// Findings, redactions, warnings.
    #[serde(flatten)]
    pub checked: Checked<'a>,
    /// The narrative file's path, relative to the worktree root (`null`
    /// when `handoff.narrative` is false).
    pub narrative: Option<String>,
    /// Whether git tracks the narrative file (`null` without one).
    pub narrative_tracked: Option<bool>,
    /// How many lines the narrative entry prepended (`null` without one).
    pub narrative_lines: Option<usize>,
    /// The key's tier, as the method counts it: 1 a key named, 2 the
    /// branch's key, 3 `HANDOFF` on a detached HEAD.
    pub tier: u8,
    /// What was stored: `full` (brief, history note, narrative entry),
    /// `brief+history`, `brief+narrative` or `brief` (no commit yet).
    pub stored: &'static str,
    /// The resume prompt.
    pub prompt: String,
}

/// `recover --json`: the rebuilt brief's version.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Recovered<'a> {
    /// Key, ref, id, previous version, history.
    #[serde(flatten)]
    pub version: Version<'a>,
    /// Findings, redactions, warnings.
    #[serde(flatten)]
    pub checked: Checked<'a>,
    /// `RECOVER`.
    pub mode: &'a str,
    /// The resume prompt.
    pub prompt: &'a str,
}

/// `resume --json`: the brief, structured warnings, commit drift.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Resumed<'a> {
    /// The key.
    pub key: &'a str,
    /// The version id.
    pub id: String,
    /// `false` for another project's brief.
    pub resumed: bool,
    /// Where the brief was written, relative to here.
    pub origin: &'a drift::Origin,
    /// The drift warnings, in order.
    pub warnings: &'a [drift::Warning],
    /// Commits since the brief's head (`null` when not in history or unknown).
    pub commits_since: Option<usize>,
    /// Present and `true` when those commits changed nothing but the
    /// narrative log (the entry `write` added, committed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub commits_only_narrative: bool,
    /// How many of those commits changed nothing but the narrative log,
    /// when some but not all did (counted up to 50 commits); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub commits_narrative: usize,
    /// The newest of those commits (at most three, the tip first), each
    /// `{"sha7", "subject"}`; absent when there are none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub recent_commits: &'a [drift::RecentCommit],
    /// Whether the brief's head is in the history measured (`null` unknown).
    pub in_history: Option<bool>,
    /// The CHANGED warnings alone.
    pub changed_files: Vec<&'a drift::Warning>,
    /// Files to read first whose line range only moved (not CHANGED):
    /// each `{"path", "now"}`, the range where the lines are now; absent
    /// when none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub moved_ranges: &'a [drift::Moved],
    /// The parts of the brief that name a CHANGED file, to re-check
    /// (`the next step`, `done-when`, `the next check`, `the tests`,
    /// `the decisions`); absent when none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub recheck: Vec<&'static str>,
    /// Files to read first outside the worktree, not checked.
    pub unchecked_paths: &'a [String],
    /// The line of work drift is measured on.
    pub measured_on: &'a drift::MeasuredOn,
    /// The worktree the work happens in.
    pub worktree: &'a Option<String>,
    /// The other stored keys.
    pub other_keys: &'a [String],
    /// The resume prompt.
    pub prompt: String,
    /// Present for a brief of mode `AUTO`: drafted from the transcript, not
    /// written by the session; verify before acting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<&'static str>,
    /// For an AUTO draft stored over a brief someone wrote: that version's
    /// id, abbreviated (`git handoff diff KEY` shows the change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_over: Option<String>,
    /// The brief itself.
    pub brief: &'a Brief,
}

/// The MCP `resume` tool's structured result: each fact once. `text` is
/// the render a model reads (the drift warnings first, then the brief in a
/// marked block that says where it came from); the brief as JSON only when
/// the call asks for it (`include_brief`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ResumedForModel<'a> {
    /// The key.
    pub key: &'a str,
    /// The version id.
    pub id: String,
    /// `false` for another project's brief.
    pub resumed: bool,
    /// The render: warnings first, then the brief's marked block.
    pub text: String,
    /// The brief itself, redacted as the text is; present only when asked
    /// for (`include_brief`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<&'a Brief>,
}

/// The `--json` answer of a keyless read that refuses to guess.
#[derive(Debug, Serialize)]
pub struct Ambiguous<'a> {
    /// Always `false`.
    pub resumed: bool,
    /// Always `ambiguous`.
    pub reason: &'static str,
    /// The stored briefs.
    pub briefs: &'a [ListRow],
}

impl<'a> Ambiguous<'a> {
    /// The answer for these rows.
    pub fn new(briefs: &'a [ListRow]) -> Ambiguous<'a> {
        Ambiguous {
            resumed: false,
            reason: "ambiguous",
            briefs,
        }
    }
}

/// `reground --json`: goal, first five decisions, files in view.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Reground<'a> {
    /// The key.
    pub key: &'a str,
    /// `resume.done_when`.
    pub done_when: &'a str,
    /// `state.next_acceptance_check`.
    pub next_acceptance_check: &'a str,
    /// The first five decisions.
    pub decisions: &'a [String],
    /// `state.preferences`: the user's preferences and feedback (omitted
    /// when there are none).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub preferences: &'a [String],
    /// `files_read_first`.
    pub files_read_first: &'a [FilePointer],
}

impl<'a> Reground<'a> {
    /// The reground of `brief`.
    pub fn of(brief: &'a Brief) -> Reground<'a> {
        let decisions = &brief.state.decisions;
        Reground {
            key: &brief.key,
            done_when: &brief.resume.done_when,
            next_acceptance_check: &brief.state.next_acceptance_check,
            decisions: &decisions[..decisions.len().min(5)],
            preferences: &brief.state.preferences,
            files_read_first: &brief.files_read_first,
        }
    }
}

/// `split --json` without `--yes`: the proposal, nothing written.
#[derive(Debug, Serialize)]
pub struct SplitProposed<'a> {
    /// Always `false`.
    pub written: bool,
    /// The proposed threads.
    pub proposal: &'a SplitProposal,
    /// The briefs that would be written.
    pub briefs: Vec<&'a Brief>,
    /// Findings, redactions, warnings.
    #[serde(flatten)]
    pub checked: Checked<'a>,
}

/// `split --yes --json`: the briefs written in one transaction.
#[derive(Debug, Serialize)]
pub struct SplitWritten<'a> {
    /// Always `true`.
    pub written: bool,
    /// Whether the history notes were written.
    pub history: bool,
    /// The narrative file (`null` when `handoff.narrative` is false).
    pub narrative: Option<String>,
    /// One entry per brief written.
    pub threads: Vec<SplitThread>,
    /// Findings, redactions, warnings.
    #[serde(flatten)]
    pub checked: Checked<'a>,
}

/// One brief written by `split`.
#[derive(Debug, Serialize)]
pub struct SplitThread {
    /// Its key.
    pub key: String,
    /// Its ref.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The new version's blob id.
    pub id: String,
    /// The version it replaced, if any.
    pub previous: Option<String>,
    /// Its resume prompt.
    pub prompt: String,
}

/// `diff --json`: two versions and how they differ.
#[derive(Debug, Serialize)]
pub struct Diff<'a> {
    /// The key.
    pub key: &'a str,
    /// The older side.
    pub old: DiffSide<'a>,
    /// The newer side.
    pub new: DiffSide<'a>,
    /// The fields that changed.
    pub fields: &'a [String],
    /// Lines added in the pretty JSON.
    pub insertions: usize,
    /// Lines removed from the pretty JSON.
    pub deletions: usize,
    /// The unified diff.
    pub diff: &'a str,
}

/// One side of a [`Diff`].
#[derive(Debug, Serialize)]
pub struct DiffSide<'a> {
    /// How the version was named (`key@{1}`, `key`).
    pub label: &'a str,
    /// Its blob id.
    pub id: String,
    /// When it was written.
    pub timestamp: &'a str,
}

/// `drop --json` (one line).
#[derive(Debug, Serialize)]
pub struct Dropped<'a> {
    /// The key dropped.
    pub key: &'a str,
    /// The version it held.
    pub dropped: String,
}

/// `restore --json` (one line).
#[derive(Debug, Serialize)]
pub struct Restored<'a> {
    /// The key restored.
    pub key: &'a str,
    /// The version restored.
    pub restored: String,
    /// Secrets the current rules found in the archived brief, redacted
    /// before it was restored, by rule.
    #[serde(skip_serializing_if = "Counts::is_empty")]
    pub redacted: Counts,
}

/// `prune --json`: what was (or would be) archived and deleted.
#[derive(Debug, Serialize)]
pub struct Pruned<'a, R: Serialize> {
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// `--archive-after` in days.
    pub archive_after_days: i64,
    /// `--delete-after` in days.
    pub delete_after_days: i64,
    /// One row per brief acted on.
    pub actions: &'a [R],
}

/// `redact --json`: what was (or would be) redacted.
#[derive(Debug, Serialize)]
pub struct Redacted<'a> {
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// The briefs with secrets.
    pub briefs: &'a [String],
    /// The archived briefs (`refs/handoff-archive/`) with secrets.
    pub archived: &'a [String],
    /// Secrets found in the briefs and the archived briefs, by rule.
    pub brief_secrets: &'a Counts,
    /// Whether the history was rewritten (`null` without `--history`).
    pub history_rewritten: Option<bool>,
    /// History notes rewritten (`null` without `--history`).
    pub history_notes: Option<usize>,
    /// Notes commits rewritten (`null` without `--history`).
    pub history_commits: Option<usize>,
    /// Secrets found in the history, by rule.
    pub history_secrets: &'a Counts,
}

/// `lint --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Linted<'a> {
    /// Whether findings are errors.
    pub strict: bool,
    /// The findings.
    pub findings: &'a [Finding],
}

/// `init --json`.
#[derive(Debug, Serialize)]
pub struct Setup<'a> {
    /// Whether every item is set up.
    pub ok: bool,
    /// Whether anything was set up now.
    pub changed: bool,
    /// One row per item.
    pub items: &'a [SetupRow],
}

/// `pipeline save --json`.
#[derive(Debug, Serialize)]
pub struct PipelineSaved<'a> {
    /// The template's name.
    pub name: &'a str,
    /// Its path, relative to the worktree root.
    pub path: &'a str,
    /// `saved`, `replaced` or `exists`.
    pub status: &'a str,
    /// Whether it is the skeleton.
    pub skeleton: bool,
}

/// `pipeline show --json`.
#[derive(Debug, Serialize)]
pub struct PipelineShown<'a> {
    /// The template's name.
    pub name: &'a str,
    /// Its path, relative to the worktree root.
    pub path: String,
    /// Its text.
    pub markdown: &'a str,
    /// What it lacks.
    pub problems: Vec<String>,
}

/// `fork --json` (one line).
#[derive(Debug, Serialize)]
pub struct Forked<'a> {
    /// The fork file.
    pub path: String,
    /// Always `fork`.
    pub kind: &'static str,
    /// What the fork is for.
    pub purpose: &'a str,
    /// Whether a hand-back is expected.
    pub hand_back: bool,
}

/// `handback --json` (one line).
#[derive(Debug, Serialize)]
pub struct HandedBack<'a> {
    /// The hand-back file.
    pub path: String,
    /// Always `handback`.
    pub kind: &'static str,
    /// The fork it answers.
    pub fork: &'a str,
}

/// `hook session-start`, `hook user-prompt-submit`: context for the
/// harness to inject.
#[derive(Debug, Serialize)]
pub struct HookContext {
    /// The harness's envelope.
    #[serde(rename = "hookSpecificOutput")]
    pub hook_specific_output: HookSpecific,
}

/// The envelope of a [`HookContext`].
#[derive(Debug, Serialize)]
pub struct HookSpecific {
    /// The event answered: `SessionStart`, `UserPromptSubmit`.
    #[serde(rename = "hookEventName")]
    pub hook_event_name: &'static str,
    /// The text injected.
    #[serde(rename = "additionalContext")]
    pub additional_context: String,
}

/// `hook pre-compact`: a message for the session.
#[derive(Debug, Serialize)]
pub struct HookMessage {
    /// The message.
    #[serde(rename = "systemMessage")]
    pub system_message: String,
}

/// MCP `validate` (and an invalid `write`): whether the brief is valid
/// and every schema error.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Validity<'a> {
    /// Whether there is no error.
    pub valid: bool,
    /// Each error: `path` and `message`.
    pub errors: &'a [Issue],
}

/// MCP `write`, `recover`, `split` refused: nothing was written; every
/// error and what the checks found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Refused<'a> {
    /// Always `false`.
    pub valid: bool,
    /// The error line.
    pub error: String,
    /// Each schema error: `path` and `message` (none for strict lint).
    pub errors: Vec<&'a Issue>,
    /// Findings, redactions, warnings.
    #[serde(flatten)]
    pub checked: Checked<'a>,
}

/// MCP `list`: the rows `list --json` prints, under `briefs`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Listed<'a> {
    /// One row per brief.
    pub briefs: &'a [ListRow],
}

/// MCP `log`: the versions `log --json` prints, under `versions`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Logged<'a> {
    /// One row per version, newest first.
    pub versions: &'a [crate::cli::commands::log::Row],
}

/// MCP `brief`: the subagent brief and its length.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SubagentBrief {
    /// The brief's text.
    pub brief: String,
    /// Its lines.
    pub lines: usize,
}

/// `recover --show --json`: what to re-read before rebuilding a brief.
#[derive(Debug, Serialize)]
pub struct Reread<'a> {
    /// The key `recover` would rebuild.
    pub key: &'a str,
    /// The narrative file, relative to the worktree root.
    pub narrative: Option<&'a str>,
    /// Its latest entries, newest first, each cut to 40 lines.
    pub entries: &'a [String],
    /// The newest 20 commits.
    pub commits: Vec<ShortCommit<'a>>,
    /// `git diff --stat HEAD`'s summary, when the tree is dirty.
    pub diff_summary: Option<&'a str>,
    /// The diff against HEAD, at most 200 lines.
    pub diff: &'a str,
    /// Whether the diff was cut.
    pub diff_cut: bool,
    /// What redaction removed, by kind.
    pub redacted: &'a std::collections::BTreeMap<&'static str, usize>,
}

/// A commit as `git log --oneline` shows it.
#[derive(Debug, Serialize)]
pub struct ShortCommit<'a> {
    /// The short id.
    pub sha: &'a str,
    /// The subject.
    pub subject: &'a str,
}

impl<'a> Reread<'a> {
    /// The report of `found` for `key`.
    pub fn new(key: &'a str, found: &'a crate::write::reread::Reread) -> Reread<'a> {
        Reread {
            key,
            narrative: found.narrative.as_deref(),
            entries: &found.entries,
            commits: found
                .commits
                .iter()
                .map(|(sha, subject)| ShortCommit { sha, subject })
                .collect(),
            diff_summary: found.diff_summary.as_deref(),
            diff: &found.diff,
            diff_cut: found.diff_cut,
            redacted: &found.redacted,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
