//! Drift: what changed between the moment a brief was written and now — the
//! repository, branch, age, files, commits and working tree.
//!
//! The `drift` layer also holds the commit walk behind the CHANGED counts
//! ([`changed`]), the commit-graph's Bloom filters ([`bloom`]) and the
//! mapping of a pointer's line range to its place now ([`lines`]).
//! Read-only.

pub mod bloom;
pub mod changed;
pub mod lines;

pub use crate::brief::paths::{path_outside, resolve_inside, strip_lines};

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Result;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::Serialize;

use crate::brief::Brief;
use crate::drift::changed::{History, Since, Walked, touched};
use crate::git::confined;
use crate::git::packs::Packs;
use crate::git::repo::{self, WorktreeInfo};
use crate::support::escape::shell_quote;
use crate::support::text::{flat, word};
use crate::{git::measure, store, support::clock};

/// The default age, in hours, from which a brief is stale.
pub const DEFAULT_STALE_HOURS: i64 = 24;

/// How the brief relates to this repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// Written in this repository (same common git dir): any of its worktrees.
    SameRepository,
    /// Written in another clone of this project: its head commit is here.
    OtherClone {
        /// The worktree root it was written in.
        root: String,
    },
    /// A teammate's brief that arrived from a remote; its head commit is not here.
    FromRemote {
        /// The remote it came from.
        remote: String,
    },
    /// Nothing ties the brief to this repository.
    Mismatch,
}

/// One drift warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Warning {
    /// Written for a different repository.
    RepoMismatch {
        /// The common git dir it was written in.
        git_common_dir: String,
    },
    /// Written on another branch.
    BranchMismatch {
        /// The brief's branch.
        brief: String,
        /// The current branch (`HEAD` when detached).
        current: String,
        /// Another worktree of this repository that has the brief's branch
        /// checked out: where to `cd` to work on it.
        #[serde(skip_serializing_if = "Option::is_none")]
        worktree: Option<String>,
        /// What the drift below is measured on instead of HEAD: the brief's
        /// branch or its remote-tracking branch (`origin/feat/x`).
        #[serde(skip_serializing_if = "Option::is_none")]
        measured_on: Option<String>,
        /// Whether the brief's branch exists here at all (locally or as a
        /// remote-tracking branch).
        exists: bool,
        /// When it exists only as a remote-tracking branch: the command
        /// that checks it out (`git switch <branch>`).
        #[serde(skip_serializing_if = "Option::is_none")]
        switch: Option<String>,
    },
    /// Older than the stale threshold.
    Stale {
        /// Whole hours since it was written.
        hours: i64,
        /// When it was written.
        timestamp: String,
    },
    /// A file to read first no longer exists.
    Missing {
        /// The path as recorded.
        path: String,
    },
    /// A file to read first was touched by commits since the brief (for
    /// a line range: lines inside it were edited, deleted or inserted, by
    /// commits or by uncommitted changes; lines that only moved are not).
    Changed {
        /// The path as recorded.
        path: String,
        /// `modified`, `added` or `deleted` (net, brief head to HEAD).
        change: String,
        /// Commits since the brief that touched it (0: only uncommitted
        /// changes did).
        commits: usize,
        /// The newest of them: short id and subject.
        #[serde(skip_serializing_if = "Option::is_none")]
        newest: Option<CommitLine>,
        /// For a line range: where its lines are now, like `5-8`.
        #[serde(skip_serializing_if = "Option::is_none")]
        now: Option<String>,
        /// For a line range: every one of its lines was deleted.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        lines_deleted: bool,
    },
    /// A check that could not be made, and why (objects missing from a
    /// partial or shallow clone that git could not fetch).
    Unmeasured {
        /// The check (`CHANGED`, `Commits since`).
        what: String,
        /// Why.
        reason: String,
    },
    /// The working tree has uncommitted changes now and had none then.
    Dirty {
        /// The `git diff --stat HEAD` summary now.
        summary: String,
        /// The worktree they are in (the one the work happens in).
        worktree: String,
        /// The first changed files (at most [`DIRTY_NAMED`]), as `git diff
        /// --stat HEAD` counts them.
        files: Vec<String>,
        /// How many more changed files there are.
        more: usize,
    },
    /// The key has diverged from these remotes' versions (as the last
    /// fetch found): neither was written on top of the other.
    Diverged {
        /// The key.
        key: String,
        /// The remotes, sorted.
        remotes: Vec<String>,
    },
}

impl Warning {
    /// A CHANGED warning as its line: the pointer, its lines' place now,
    /// the commits that touched it (or that uncommitted changes did).
    fn changed_line(&self) -> String {
        let Warning::Changed {
            path,
            change,
            commits,
            newest,
            now,
            lines_deleted,
        } = self
        else {
            return String::new();
        };
        let place = match (now, lines_deleted) {
            (_, true) => " (its lines were deleted)".to_string(),
            (Some(now), false) => format!(" (now {now})"),
            (None, false) => String::new(),
        };
        if *commits == 0 {
            return format!(
                "!! CHANGED: {}{place} — uncommitted changes touch its lines",
                word(path)
            );
        }
        format!(
            "!! CHANGED: {}{place} — {commits} commit{} since the brief touched it ({change}){}",
            word(path),
            if *commits == 1 { "" } else { "s" },
            newest
                .as_ref()
                .map(|c| {
                    let which = if *commits == 1 { ":" } else { ", newest:" };
                    format!("{which} {} {}", c.sha7, c.subject)
                })
                .unwrap_or_default()
        )
    }

    /// The warning as one `!! ` line.
    pub fn line(&self) -> String {
        match self {
            Warning::RepoMismatch { git_common_dir } => format!(
                "!! REPO MISMATCH: brief was written for another repository ({}); not resumed",
                flat(git_common_dir)
            ),
            Warning::BranchMismatch {
                brief,
                current,
                worktree,
                measured_on,
                exists,
                switch,
            } => {
                // The brief's branch, as its writer recorded it: on one line.
                let brief = &flat(brief);
                let at = worktree
                    .as_deref()
                    .map(|w| format!(", checked out in {w} (cd {})", shell_quote(w)))
                    .unwrap_or_default();
                let on = match (measured_on, exists) {
                    (Some(on), _) => format!(" — drift below is measured on '{on}'"),
                    (None, false) => format!(
                        "; '{brief}' exists nowhere here (deleted, or never fetched) — drift below is measured on '{current}'"
                    ),
                    (None, true) => String::new(),
                };
                let on = match switch {
                    Some(cmd) => format!("{on}; `{cmd}` checks it out"),
                    None => on,
                };
                let sep = if at.is_empty() { ',' } else { ';' };
                format!(
                    "!! BRANCH MISMATCH: brief is for '{brief}'{at}{sep} you're on '{current}'{on}"
                )
            }
            Warning::Stale { hours, timestamp } => {
                let age = if *hours < 48 {
                    format!("~{hours}h")
                } else {
                    format!("~{}d", hours / 24)
                };
                format!("!! STALE: brief written {age} ago ({timestamp})")
            }
            Warning::Missing { path } => format!("!! MISSING: {}", word(path)),
            Warning::Changed { .. } => self.changed_line(),
            Warning::Diverged { key, remotes } => {
                let first = remotes.first().map(String::as_str).unwrap_or("origin");
                let (qk, first) = (shell_quote(key), shell_quote(&format!("{key}@{first}")));
                format!(
                    "!! DIVERGED: '{key}' has diverged from {} (neither version was written on top of the other); this is yours, theirs is `git handoff show {first}`; `git handoff resolve {qk} --merge` merges them (or `--keep-local|--take-remote`)",
                    crate::support::text::quoted_list(remotes)
                )
            }
            Warning::Unmeasured { what, reason } => {
                format!("!! {what} not measured: {reason}")
            }
            Warning::Dirty {
                summary,
                worktree,
                files,
                more,
            } => {
                let mut named = files.join(", ");
                if *more > 0 {
                    named.push_str(&format!(" and {more} more"));
                }
                let named = if named.is_empty() {
                    String::new()
                } else {
                    format!(": {named}")
                };
                format!(
                    "!! DIRTY: uncommitted changes now in {worktree} ({summary}){named}; the brief was written on a clean tree"
                )
            }
        }
    }
}

/// A commit as one line: short id and subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommitLine {
    /// The short id.
    pub sha7: String,
    /// The subject, cut to 72 characters.
    pub subject: String,
}

/// The short id and subject of commit `id`, when it can be read.
fn newest_commit(repo: &gix::Repository, id: ObjectId) -> Option<CommitLine> {
    let commit = repo.find_commit(id).ok()?;
    let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
    let subject = message.lines().next().unwrap_or("").trim();
    Some(CommitLine {
        sha7: store::short(&id),
        subject: if subject.chars().count() > 72 {
            format!("{}…", subject.chars().take(71).collect::<String>())
        } else {
            subject.to_string()
        },
    })
}

/// Where HEAD stands relative to the brief's head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Commits {
    /// The brief's head is an ancestor of HEAD, this many commits behind.
    Since {
        /// `git rev-list --count <head_sha>..HEAD`.
        count: usize,
        /// The commits since changed nothing but the narrative log: the
        /// tree of the tip differs from the brief head's only in that file
        /// (the entry `write` added, committed).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        only_narrative: bool,
        /// How many of those commits changed nothing but the narrative log
        /// (each against its one parent); counted up to [`NARRATIVE_WALK`]
        /// commits since, else 0.
        #[serde(skip_serializing_if = "is_zero")]
        narrative: usize,
        /// The newest of those commits (at most [`RECENT`]), the tip first:
        /// what changed, in the commits' own words.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        recent: Vec<RecentCommit>,
    },
    /// The brief's head is in none of the histories checked.
    NotInHistory {
        /// Its short id.
        sha7: String,
        /// The branches whose history was checked (the brief's line of
        /// work, then the current branch when it differs).
        histories: Vec<String>,
    },
    /// Not known: no head recorded, unknown to this object database, or a
    /// shallow boundary in the way.
    Unknown,
}

/// How many of the commits since the brief a report names.
pub const RECENT: usize = 3;

/// One commit made since the brief was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RecentCommit {
    /// Its short id.
    pub sha7: String,
    /// Its subject line, redacted as every printed line of user data.
    pub subject: String,
}

/// The newest commits of a walk, with their subjects; a commit that cannot
/// be read is left out.
fn recent_commits(repo: &gix::Repository, packs: &mut Packs, since: &Since) -> Vec<RecentCommit> {
    since
        .newest(RECENT)
        .into_iter()
        .filter_map(|id| {
            let data = commit_bytes(repo, packs, id)?;
            let message = gix::objs::CommitRefIter::from_bytes(&data, repo.object_hash())
                .message()
                .ok()?
                .to_str_lossy();
            // The whole message redacted first, then its first line: a
            // secret that spans lines is found before the cut.
            let redacted = crate::brief::redact::redact_text(&message).0;
            let subject = redacted.lines().next().unwrap_or("").trim().to_string();
            Some(RecentCommit {
                sha7: store::short(&id),
                subject,
            })
        })
        .collect()
}

/// The bytes of commit `id`, read through `git::packs`: a resume that
/// reads a few commits and trees then never has gix open (and validate)
/// a pack index.
fn commit_bytes(
    repo: &gix::Repository,
    packs: &mut Packs,
    id: ObjectId,
) -> Option<crate::git::packs::Bytes> {
    let (kind, data) = packs.object(repo, id)?;
    (kind == gix::object::Kind::Commit).then_some(data)
}

/// The narrative log as drift tells its commits apart from work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrative {
    /// Its path in the tree.
    pub path: String,
    /// The line that registers its merge driver in the root
    /// `.gitattributes` (what `git handoff init` adds there): a commit of
    /// the narrative that carries this line along, added or removed, is
    /// still the narrative's alone.
    pub attribute: Option<String>,
}

/// What to compute: the cheap checks only (for hooks), or everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Repository, branch, age and missing files: no walk, no status.
    Quick,
    /// Also the commit walk, changed files and the working tree.
    Full,
}

/// Everything resume says about drift.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// How the brief relates to this repository.
    pub origin: Origin,
    /// The warnings, in their fixed order.
    pub warnings: Vec<Warning>,
    /// Commit drift (always `Unknown` for [`Depth::Quick`]).
    pub commits: Commits,
    /// Paths outside the worktree that were not checked.
    pub unchecked: Vec<String>,
    /// Files to read first whose line range only moved: not CHANGED,
    /// read at their new place.
    pub moved: Vec<Moved>,
    /// The line of work the drift is measured on.
    pub measured_on: MeasuredOn,
    /// The worktree the work happens in (the one that has the brief's branch
    /// checked out, else this one); `None` when no worktree has it.
    pub worktree: Option<String>,
    /// For an AUTO draft stored over a brief someone wrote: that version,
    /// abbreviated, and its mode.
    pub auto_over: Option<(String, String)>,
}

/// A file to read first whose recorded line range holds the same lines
/// at another place now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Moved {
    /// The path as recorded, with its range (`t.py:3-5`).
    pub path: String,
    /// Where the lines are now (`5-7`).
    pub now: String,
}

/// The branch and tip drift is measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MeasuredOn {
    /// The branch: the brief's, its remote-tracking branch
    /// (`origin/feat/x`), or the current one (`HEAD` when detached).
    pub branch: String,
    /// The tip commit, when there is one.
    pub tip: Option<String>,
    /// The current branch, for the fallback to HEAD.
    #[serde(skip)]
    pub current: String,
}

impl MeasuredOn {
    fn of(
        target: &measure::Target,
        brief_branch: &str,
        current: &str,
        head: Option<ObjectId>,
    ) -> MeasuredOn {
        let (branch, tip) = match target {
            measure::Target::Local { tip, .. } => (brief_branch.to_string(), Some(*tip)),
            measure::Target::Remote { name, tip } => (name.clone(), Some(*tip)),
            measure::Target::Here | measure::Target::Nowhere => (current.to_string(), head),
        };
        MeasuredOn {
            branch,
            tip: tip.map(|t| t.to_string()),
            current: current.to_string(),
        }
    }
}

impl Report {
    /// A report with no drift at all: same repository, no warnings,
    /// nothing known about commits (for tests that render a brief alone).
    #[cfg(test)]
    pub(crate) fn none() -> Report {
        Report {
            origin: Origin::SameRepository,
            warnings: Vec::new(),
            commits: Commits::Unknown,
            unchecked: Vec::new(),
            moved: Vec::new(),
            measured_on: MeasuredOn {
                branch: String::new(),
                tip: None,
                current: String::new(),
            },
            worktree: None,
            auto_over: None,
        }
    }

    /// Whether the brief belongs to another project.
    pub fn is_mismatch(&self) -> bool {
        self.origin == Origin::Mismatch
    }
}

/// The stale threshold: `GIT_HANDOFF_STALE_HOURS`, else `handoff.staleHours`,
/// else 24. Unparseable values are skipped.
pub fn stale_hours(repo: &gix::Repository) -> i64 {
    if let Some(h) = std::env::var("GIT_HANDOFF_STALE_HOURS")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|h| *h >= 0)
    {
        return h;
    }
    repo.config_snapshot()
        .integer("handoff.staleHours")
        .filter(|h| *h >= 0)
        .unwrap_or(DEFAULT_STALE_HOURS)
}

/// The version an AUTO draft (stored as `id`) was stored over, by the
/// history, when that one was not a draft itself: abbreviated, and its
/// mode.
fn auto_over(repo: &gix::Repository, brief: &Brief, id: ObjectId) -> Option<(String, String)> {
    if brief.mode != "AUTO" {
        return None;
    }
    let parent = crate::store::lineage::parent_of(repo, &brief.key, id).ok()??;
    let stored = crate::store::history::stored_form(repo, &brief.key, parent).ok()??;
    let over = Brief::from_slice(stored.as_bytes()).ok()?;
    (over.mode != "AUTO").then(|| (parent.to_hex_with_len(7).to_string(), over.mode))
}

/// Compute the drift of `brief` (stored as `stored_id`) against the
/// repository's current state, measured on the brief's own line of work
/// (see [`crate::git::measure`]). `narrative` is the narrative log
/// (`None` when it is off), so that commits which only added its entry
/// are told apart from work.
pub fn report(
    repo: &gix::Repository,
    brief: &Brief,
    stored_id: Option<ObjectId>,
    now: i64,
    depth: Depth,
    narrative: Option<&Narrative>,
) -> Result<Report> {
    let here = repo::worktree_info(repo)?;
    let head = repo::head_state(repo)?;
    let head_id = head
        .sha()
        .and_then(|s| ObjectId::from_hex(s.as_bytes()).ok());
    let origin = origin(repo, brief, stored_id, &here);
    let current = head.branch_label().to_string();
    let target = measure::rule(&measure::facts(repo, &brief.state.branch, &current));
    let mut report = Report {
        origin: origin.clone(),
        warnings: Vec::new(),
        commits: Commits::Unknown,
        unchecked: Vec::new(),
        moved: Vec::new(),
        measured_on: MeasuredOn::of(&target, &brief.state.branch, &current, head_id),
        worktree: worktree_of(&target, &here),
        auto_over: stored_id.and_then(|id| auto_over(repo, brief, id)),
    };
    if origin == Origin::Mismatch {
        report.warnings.push(Warning::RepoMismatch {
            git_common_dir: brief.state.worktree.git_common_dir.clone(),
        });
        return Ok(report);
    }
    if brief.state.branch != current {
        report.warnings.push(Warning::BranchMismatch {
            brief: brief.state.branch.clone(),
            current,
            worktree: target.elsewhere().map(|p| p.display().to_string()),
            measured_on: target.tip().map(|_| report.measured_on.branch.clone()),
            exists: target != measure::Target::Nowhere,
            switch: matches!(target, measure::Target::Remote { .. })
                .then(|| format!("git switch {}", shell_quote(&brief.state.branch))),
        });
    }
    if let Some(written) = clock::parse(&brief.timestamp) {
        let hours = (now - written).max(0) / 3600;
        if hours >= stale_hours(repo) {
            report.warnings.push(Warning::Stale {
                hours,
                timestamp: brief.timestamp.clone(),
            });
        }
    }
    missing(repo, brief, &here, &target, &mut report);
    diverged(repo, brief, stored_id, &mut report);
    if depth == Depth::Quick {
        return Ok(report);
    }
    commits(repo, brief, &target, head_id, narrative, &mut report);
    dirty(repo, brief, &target, narrative, &mut report);
    Ok(report)
}

/// DIVERGED: the stored brief has diverged from a remote's version, as
/// the last fetch found it (and while both are still the ones it saw).
fn diverged(repo: &gix::Repository, brief: &Brief, stored: Option<ObjectId>, report: &mut Report) {
    if stored.is_none() || crate::store::current_id(repo, &brief.key).ok().flatten() != stored {
        return;
    }
    if let Ok(mut keys) = crate::store::remotes::diverged_keys(repo)
        && let Some(remotes) = keys.remove(&brief.key)
    {
        report.warnings.push(Warning::Diverged {
            key: brief.key.clone(),
            remotes,
        });
    }
}

/// The worktree the work happens in: the one that has the brief's branch
/// checked out, else this one.
fn worktree_of(target: &measure::Target, here: &WorktreeInfo) -> Option<String> {
    match (target.elsewhere(), target.tip()) {
        (Some(path), _) => Some(path.display().to_string()),
        (None, Some(_)) => None,
        (None, None) => Some(here.root.display().to_string()),
    }
}

/// MISSING: each file to read first that is gone from the line of work —
/// from the worktree that has it checked out, or from the branch's tip
/// when no worktree has it.
fn missing(
    repo: &gix::Repository,
    brief: &Brief,
    here: &WorktreeInfo,
    target: &measure::Target,
    report: &mut Report,
) {
    if brief.files_read_first.is_empty() {
        return;
    }
    // The worktree that has the branch, else the tip's tree when the
    // branch is checked out nowhere, else the recorded or this worktree.
    let tip = target.tip().filter(|_| target.elsewhere().is_none());
    let base = match target.elsewhere() {
        Some(path) => path.to_path_buf(),
        None => files_base(brief, here, &report.origin),
    };
    for pointer in &brief.files_read_first {
        let path = as_relative(brief, Some(&base), &pointer.path);
        let check = match (crate::brief::paths::absolute_exists(&path), tip) {
            (Some(true), _) => PointerCheck::Present,
            (Some(false), _) => PointerCheck::Missing,
            (None, Some(tip)) => pointer_at(repo, tip, &path),
            (None, None) => resolve_pointer(&base, &path),
        };
        match check {
            PointerCheck::Present => {}
            PointerCheck::Missing => report.warnings.push(Warning::Missing {
                path: pointer.path.clone(),
            }),
            PointerCheck::Outside => report.unchecked.push(pointer.path.clone()),
        }
    }
}

/// A recorded path as the worktree-relative path it is
/// ([`crate::brief::paths::relative_to`] the brief's worktree and `base`).
fn as_relative<'p>(brief: &Brief, base: Option<&Path>, recorded: &'p str) -> Cow<'p, str> {
    let root = Path::new(&brief.state.worktree.root);
    match base {
        Some(base) => crate::brief::paths::relative_to(&[root, base], recorded),
        None => crate::brief::paths::relative_to(&[root], recorded),
    }
}

/// Whether a file to read first exists in the tree of commit `tip`.
fn pointer_at(repo: &gix::Repository, tip: ObjectId, recorded: &str) -> PointerCheck {
    let path = strip_lines(recorded);
    if path_outside(path) {
        return PointerCheck::Outside;
    }
    // What cannot be read is not reported missing.
    let entry = repo
        .find_commit(tip)
        .ok()
        .and_then(|commit| commit.tree().ok())
        .map(|tree| tree.lookup_entry_by_path(path));
    match entry {
        Some(Ok(None)) => PointerCheck::Missing,
        _ => PointerCheck::Present,
    }
}

/// Commit drift and CHANGED, walked from the brief's head to the tip of the
/// line of work; when the head is not in that history but is in HEAD's
/// (the branch was rewritten after a merge), measured on HEAD instead.
fn commits(
    repo: &gix::Repository,
    brief: &Brief,
    target: &measure::Target,
    head_id: Option<ObjectId>,
    narrative: Option<&Narrative>,
    report: &mut Report,
) {
    // A full id is not looked up here: the walk finds it in the
    // commit-graph without loading the pack index, or finds it missing.
    let Some(brief_head) = brief.state.head_sha.as_deref().and_then(|sha| {
        if sha.len() == repo.object_hash().len_in_hex() {
            ObjectId::from_hex(sha.as_bytes()).ok()
        } else {
            resolve(repo, Some(sha))
        }
    }) else {
        return;
    };
    let Some(mut tip) = target.tip().or(head_id) else {
        return;
    };
    let history = History::open(repo);
    let mut packs = Packs::new(repo, 1 << 20);
    let mut walked = history.walk(brief_head, tip);
    if matches!(walked, Some(Walked::NotInHistory))
        && let Some(head) = head_id.filter(|h| *h != tip)
    {
        let mut histories = vec![report.measured_on.branch.clone()];
        match history.walk(brief_head, head) {
            Some(Walked::NotInHistory) => {
                histories.push(report.measured_on.current.clone());
                report.commits = Commits::NotInHistory {
                    sha7: store::short(&brief_head),
                    histories,
                };
                return;
            }
            other => {
                report.measured_on.branch = report.measured_on.current.clone();
                report.measured_on.tip = Some(head.to_string());
                tip = head;
                walked = other;
            }
        }
    }
    match walked {
        Some(Walked::Since(since)) => {
            let count = since.count();
            let only_narrative = count > 0
                && narrative.is_some_and(|narrative| {
                    confined::only_differs_at(
                        repo,
                        &mut packs,
                        (brief_head, tip),
                        &narrative.path,
                        narrative.attribute.as_deref(),
                    )
                });
            report.commits = Commits::Since {
                count,
                only_narrative,
                narrative: match narrative {
                    Some(narrative) if !only_narrative => {
                        narrative_commits(repo, &mut packs, &since, narrative)
                    }
                    _ => 0,
                },
                recent: recent_commits(repo, &mut packs, &since),
            };
            changed(repo, brief, &since, (brief_head, tip), report);
        }
        Some(Walked::NotInHistory) => {
            report.commits = Commits::NotInHistory {
                sha7: store::short(&brief_head),
                histories: vec![report.measured_on.branch.clone()],
            };
        }
        // The brief's head itself is not here (a teammate's commit not
        // fetched yet): the origin line says so and how to get it.
        None if !repo.has_object(brief_head) => {}
        None => {
            let why = if repo.is_shallow().unwrap_or(false) {
                "crosses this shallow clone's boundary (`git fetch --unshallow` brings the rest)"
            } else {
                "has commits missing from this repository"
            };
            report.warnings.push(Warning::Unmeasured {
                what: "COMMITS".into(),
                reason: format!(
                    "the history from the brief's head {} to '{}' {why}; CHANGED is not measured either",
                    store::short(&brief_head),
                    report.measured_on.branch
                ),
            });
        }
    }
}

/// The most commits since a brief whose narrative-only ones are counted.
pub const NARRATIVE_WALK: usize = 50;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How many of the commits since changed nothing but the narrative, each
/// against its only parent (a merge never counts); 0 past
/// [`NARRATIVE_WALK`] commits.
fn narrative_commits(
    repo: &gix::Repository,
    packs: &mut Packs,
    since: &Since,
    narrative: &Narrative,
) -> usize {
    if since.count() > NARRATIVE_WALK {
        return 0;
    }
    let attribute = narrative.attribute.as_deref();
    since
        .newest(NARRATIVE_WALK)
        .into_iter()
        .filter(|&id| confined::only_change_of(repo, packs, id, &narrative.path, attribute))
        .count()
}

/// CHANGED: the files to read first that the commits since touched; a
/// line range is mapped through the diff from the brief's head to now
/// ([`ranges`]).
fn changed(
    repo: &gix::Repository,
    brief: &Brief,
    since: &Since,
    ends: (ObjectId, ObjectId),
    report: &mut Report,
) {
    let relative: Vec<Cow<'_, str>> = brief
        .files_read_first
        .iter()
        .map(|p| as_relative(brief, None, &p.path))
        .collect();
    let inside: Vec<(&crate::brief::FilePointer, &str)> = brief
        .files_read_first
        .iter()
        .zip(&relative)
        .filter(|(_, rel)| !path_outside(strip_lines(rel)))
        .map(|(p, rel)| (p, rel.as_ref()))
        .collect();
    let paths: Vec<&str> = inside.iter().map(|(_, rel)| strip_lines(rel)).collect();
    if paths.is_empty() {
        return;
    }
    let found = match touched(repo, since, &paths) {
        Some(found) => found,
        // Trees that are not here (a partial clone): git fetches them.
        None => match changed::touched_by_git(repo, since, &paths) {
            Ok(found) => found,
            Err(reason) => {
                report.warnings.push(Warning::Unmeasured {
                    what: "CHANGED".into(),
                    reason: format!(
                        "the trees of the commits since the brief are not in this repository and git could not read them ({reason})"
                    ),
                });
                return;
            }
        },
    };
    let now = Now::of(report, ends.1);
    for ((pointer, rel), found) in inside.iter().zip(found) {
        let mapped = lines::Range::of(rel)
            .and_then(|range| ranges(repo, ends.0, &now, strip_lines(rel), range));
        let (now, lines_deleted) = match mapped {
            None if found.is_none() => continue,
            None => (None, false),
            Some(lines::Mapped::Same) => continue,
            Some(lines::Mapped::Moved(to)) => {
                report.moved.push(Moved {
                    path: pointer.path.clone(),
                    now: to.to_string(),
                });
                continue;
            }
            Some(lines::Mapped::Edited(to)) => (Some(to.to_string()), false),
            Some(lines::Mapped::Deleted) => (None, true),
        };
        let (change, commits, newest) = match found {
            Some(found) => (found.change, found.commits, found.newest),
            None => ("modified".to_string(), 0, None),
        };
        report.warnings.push(Warning::Changed {
            path: pointer.path.clone(),
            change,
            commits,
            newest: newest.and_then(|id| newest_commit(repo, id)),
            now,
            lines_deleted,
        });
    }
}

/// Where a file's text is now: the worktree the work happens in, else the
/// tip of the line of work.
enum Now {
    Worktree(PathBuf),
    Tip(ObjectId),
}

impl Now {
    fn of(report: &Report, tip: ObjectId) -> Now {
        match &report.worktree {
            Some(root) => Now::Worktree(PathBuf::from(root)),
            None => Now::Tip(tip),
        }
    }
}

/// A file's text in the tree of `commit`; `None` when it is not there or
/// cannot be read.
fn text_at(repo: &gix::Repository, commit: ObjectId, path: &str) -> Option<String> {
    let entry = repo
        .find_commit(commit)
        .ok()?
        .tree()
        .ok()?
        .lookup_entry_by_path(path)
        .ok()??;
    let blob = entry.object().ok()?;
    String::from_utf8(blob.data.clone()).ok()
}

/// Where `range` of `path`, as of the brief's head, is now: mapped through
/// the line diff from the brief's head to the worktree (or the tip). `None`
/// when either text cannot be read (then the commits alone decide).
fn ranges(
    repo: &gix::Repository,
    head: ObjectId,
    now: &Now,
    path: &str,
    range: lines::Range,
) -> Option<lines::Mapped> {
    let old = text_at(repo, head, path)?;
    let new = match now {
        Now::Worktree(root) => std::fs::read_to_string(resolve_inside(root, path)?).ok()?,
        Now::Tip(tip) => text_at(repo, *tip, path)?,
    };
    lines::map(&old, &new, range)
}

/// How many changed files a DIRTY line names.
pub const DIRTY_NAMED: usize = 5;

/// DIRTY: uncommitted changes in the worktree the work happens in (the one
/// that has the brief's branch checked out, else this one). The entry a
/// write added to the narrative, not committed yet, is the write's own:
/// alone, it is no drift.
fn dirty(
    repo: &gix::Repository,
    brief: &Brief,
    target: &measure::Target,
    narrative: Option<&Narrative>,
    report: &mut Report,
) {
    if brief.state.diff_summary.is_some() {
        return;
    }
    let other = match target.elsewhere().map(repo::open_at_for_reading) {
        Some(Ok(other)) => Some(other),
        Some(Err(_)) => return,
        None => None,
    };
    let worktree = other.as_ref().unwrap_or(repo);
    if let Ok((stat, files)) = repo::diff_stat_files(worktree)
        && let Some(summary) = stat.summary()
        && !(files.len() == 1 && narrative.is_some_and(|n| n.path == files[0]))
    {
        let root = repo::worktree_info(worktree)
            .map(|w| w.root.display().to_string())
            .unwrap_or_default();
        report.warnings.push(Warning::Dirty {
            summary,
            worktree: root,
            more: files.len().saturating_sub(DIRTY_NAMED),
            files: files.into_iter().take(DIRTY_NAMED).collect(),
        });
    }
}

/// Resolve a recorded head (7–40 hex, or 64 in a SHA-256 repository) to
/// an object in this database: a full id by itself, an abbreviated one
/// when it names exactly one object (never a ref: a head is a commit id).
fn resolve(repo: &gix::Repository, sha: Option<&str>) -> Option<ObjectId> {
    let sha = sha?;
    let full = repo.object_hash().len_in_hex();
    if sha.len() == full {
        let id = ObjectId::from_hex(sha.as_bytes()).ok()?;
        return repo.has_object(id).then_some(id);
    }
    if sha.len() > full || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let padded = format!("{sha}{}", "0".repeat(full - sha.len()));
    let prefix =
        gix::hash::Prefix::new(&ObjectId::from_hex(padded.as_bytes()).ok()?, sha.len()).ok()?;
    match repo.objects.lookup_prefix(prefix, None) {
        Ok(Some(Ok(id))) => Some(id),
        _ => None,
    }
}

/// The origin rule (docs/guide.md, "Resume and drift"): same common dir → same repository; head commit
/// here → another clone; the version arrived from a remote → a teammate's;
/// otherwise a mismatch.
fn origin(
    repo: &gix::Repository,
    brief: &Brief,
    stored_id: Option<ObjectId>,
    here: &WorktreeInfo,
) -> Origin {
    let recorded = Path::new(&brief.state.worktree.git_common_dir);
    if recorded == here.common_dir || repo::canonical(recorded) == here.common_dir {
        return Origin::SameRepository;
    }
    if resolve(repo, brief.state.head_sha.as_deref()).is_some() {
        return Origin::OtherClone {
            root: brief.state.worktree.root.clone(),
        };
    }
    if let Some(remote) = from_remote(repo, brief, stored_id) {
        return Origin::FromRemote { remote };
    }
    Origin::Mismatch
}

/// The remote whose staging refs hold (or whose fetched history notes list)
/// this version of the brief.
fn from_remote(
    repo: &gix::Repository,
    brief: &Brief,
    stored_id: Option<ObjectId>,
) -> Option<String> {
    let refs = crate::git::refdb::list(repo, crate::store::remotes::REMOTES_PREFIX).ok()?;
    for (name, value) in &refs {
        let Some((remote, key)) = crate::store::remotes::base_ref_parts(name) else {
            continue;
        };
        if key == brief.key
            && !remote.contains('/')
            && stored_id.is_some()
            && value.id() == stored_id
        {
            return Some(remote.to_string());
        }
    }
    // The history line of this version, in a remote's fetched notes.
    let sha = ObjectId::from_hex(brief.state.head_sha.as_deref()?.as_bytes()).ok()?;
    let line = brief.to_compact_json();
    for (name, value) in &refs {
        let Some(remote) = crate::store::remotes::notes_ref_remote(name) else {
            continue;
        };
        let Some(tip) = value.id() else { continue };
        let Ok(Some(note)) = crate::store::note_of(repo, tip, sha) else {
            continue;
        };
        if note
            .lines()
            .any(|l| l == line.as_bytes() || same_brief(l, brief))
        {
            return Some(remote.to_string());
        }
    }
    None
}

fn same_brief(line: &[u8], brief: &Brief) -> bool {
    Brief::from_slice(line)
        .map(|b| &b == brief)
        .unwrap_or(false)
}

/// Where relative `files_read_first` paths resolve: the recorded worktree
/// when it still exists and belongs to this repository, else this one.
fn files_base(brief: &Brief, here: &WorktreeInfo, origin: &Origin) -> PathBuf {
    let recorded = PathBuf::from(&brief.state.worktree.root);
    if recorded == here.root {
        // This very worktree: no need to open it again.
        return recorded;
    }
    if *origin == Origin::SameRepository
        && recorded.is_dir()
        && let Ok(other) = gix::open(&recorded)
        && other.workdir().is_some()
        && repo::canonical(other.common_dir()) == here.common_dir
    {
        return recorded;
    }
    here.root.clone()
}

enum PointerCheck {
    Present,
    Missing,
    Outside,
}

fn resolve_pointer(base: &Path, recorded: &str) -> PointerCheck {
    let path = strip_lines(recorded);
    if path_outside(path) {
        return PointerCheck::Outside;
    }
    if base.join(recorded).symlink_metadata().is_ok() || base.join(path).symlink_metadata().is_ok()
    {
        PointerCheck::Present
    } else {
        PointerCheck::Missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_stripped_and_escapes_detected() {
        assert_eq!(strip_lines("src/a.rs:10-20"), "src/a.rs");
        assert_eq!(strip_lines("src/a.rs:7"), "src/a.rs");
        assert_eq!(strip_lines("src/a.rs"), "src/a.rs");
        assert_eq!(strip_lines("c:weird"), "c:weird");
        assert!(path_outside("../x"));
        assert!(path_outside("/etc/passwd"));
        assert!(path_outside("a/../../x"));
        assert!(!path_outside("a/b.rs"));
    }

    #[test]
    fn stale_reads_hours_then_days() {
        let w = |hours| {
            Warning::Stale {
                hours,
                timestamp: "t".into(),
            }
            .line()
        };
        assert_eq!(w(31), "!! STALE: brief written ~31h ago (t)");
        assert_eq!(w(47), "!! STALE: brief written ~47h ago (t)");
        assert_eq!(w(48), "!! STALE: brief written ~2d ago (t)");
        assert_eq!(w(100), "!! STALE: brief written ~4d ago (t)");
    }
}
