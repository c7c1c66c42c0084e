//! Drift: what changed between the moment a brief was written and now — the
//! repository, branch, age, files, commits and working tree.

use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::Serialize;

use crate::brief::Brief;
use crate::changed::{Walked, touched, walk};
use crate::repo::{self, WorktreeInfo};
use crate::{clock, store};

/// The default age, in hours, from which a brief is stale.
pub const DEFAULT_STALE_HOURS: i64 = 24;

/// How the brief relates to this repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// A file to read first was touched by commits since the brief.
    Changed {
        /// The path as recorded.
        path: String,
        /// `modified`, `added` or `deleted` (net, brief head to HEAD).
        change: String,
        /// Commits since the brief that touched it.
        commits: usize,
    },
    /// The working tree has uncommitted changes now and had none then.
    Dirty {
        /// The `git diff --stat HEAD` summary now.
        summary: String,
    },
}

impl Warning {
    /// The warning as one `!! ` line.
    pub fn line(&self) -> String {
        match self {
            Warning::RepoMismatch { git_common_dir } => format!(
                "!! REPO MISMATCH: brief was written for another repository ({git_common_dir}); not resumed"
            ),
            Warning::BranchMismatch { brief, current } => {
                format!("!! BRANCH MISMATCH: brief is for '{brief}', you're on '{current}'")
            }
            Warning::Stale { hours, timestamp } => {
                let age = if *hours < 48 {
                    format!("~{hours}h")
                } else {
                    format!("~{}d", hours / 24)
                };
                format!("!! STALE: brief written {age} ago ({timestamp})")
            }
            Warning::Missing { path } => format!("!! MISSING: {path}"),
            Warning::Changed {
                path,
                change,
                commits,
            } => format!(
                "!! CHANGED: {path} — {commits} commit{} since the brief touched it ({change})",
                if *commits == 1 { "" } else { "s" }
            ),
            Warning::Dirty { summary } => {
                format!(
                    "!! DIRTY: uncommitted changes now ({summary}); the brief was written on a clean tree"
                )
            }
        }
    }
}

/// Where HEAD stands relative to the brief's head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Commits {
    /// The brief's head is an ancestor of HEAD, this many commits behind.
    Since {
        /// `git rev-list --count <head_sha>..HEAD`.
        count: usize,
    },
    /// The brief's head is not an ancestor of HEAD.
    NotInHistory {
        /// Its short id.
        sha7: String,
    },
    /// Not known: no head recorded, unknown to this object database, or a
    /// shallow boundary in the way.
    Unknown,
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
}

impl Report {
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

/// Compute the drift of `brief` (stored as `stored_id`) against the
/// repository's current state.
pub fn report(
    repo: &gix::Repository,
    brief: &Brief,
    stored_id: Option<ObjectId>,
    now: i64,
    depth: Depth,
) -> Result<Report> {
    let here = repo::worktree_info(repo)?;
    let head = repo::head_state(repo)?;
    let origin = origin(repo, brief, stored_id, &here);
    let mut report = Report {
        origin: origin.clone(),
        warnings: Vec::new(),
        commits: Commits::Unknown,
        unchecked: Vec::new(),
    };
    if origin == Origin::Mismatch {
        report.warnings.push(Warning::RepoMismatch {
            git_common_dir: brief.state.worktree.git_common_dir.clone(),
        });
        return Ok(report);
    }

    let current = head.branch_label().to_string();
    if brief.state.branch != current {
        report.warnings.push(Warning::BranchMismatch {
            brief: brief.state.branch.clone(),
            current,
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

    let base = if brief.files_read_first.is_empty() {
        PathBuf::new()
    } else {
        files_base(brief, &here, &origin)
    };
    for pointer in &brief.files_read_first {
        match resolve_pointer(&base, &pointer.path) {
            PointerCheck::Present => {}
            PointerCheck::Missing => report.warnings.push(Warning::Missing {
                path: pointer.path.clone(),
            }),
            PointerCheck::Outside => report.unchecked.push(pointer.path.clone()),
        }
    }

    if depth == Depth::Quick {
        return Ok(report);
    }

    // A full id is not looked up here: the walk finds it in the
    // commit-graph without loading the pack index, or finds it missing.
    let head_id = brief.state.head_sha.as_deref().and_then(|sha| {
        if sha.len() == 40 {
            ObjectId::from_hex(sha.as_bytes()).ok()
        } else {
            resolve(repo, Some(sha))
        }
    });
    let walked = match (
        head_id,
        head.sha()
            .and_then(|s| ObjectId::from_hex(s.as_bytes()).ok()),
    ) {
        (Some(brief_head), Some(now_head)) => walk(repo, brief_head, now_head),
        _ => None,
    };
    match &walked {
        Some(Walked::Since(since)) => {
            report.commits = Commits::Since {
                count: since.count(),
            };
            let pointers: Vec<_> = brief
                .files_read_first
                .iter()
                .filter(|p| !path_outside(strip_lines(&p.path)))
                .collect();
            let paths: Vec<&str> = pointers.iter().map(|p| strip_lines(&p.path)).collect();
            for (pointer, found) in pointers.iter().zip(touched(repo, since, &paths)) {
                if let Some((change, count)) = found {
                    report.warnings.push(Warning::Changed {
                        path: pointer.path.clone(),
                        change,
                        commits: count,
                    });
                }
            }
        }
        Some(Walked::NotInHistory) => {
            let sha = head_id.expect("walked from it");
            report.commits = Commits::NotInHistory {
                sha7: store::short(&sha),
            };
        }
        None => {}
    }

    if brief.state.diff_summary.is_none()
        && let Ok(stat) = repo::diff_stat(repo)
        && let Some(summary) = stat.summary()
    {
        report.warnings.push(Warning::Dirty { summary });
    }
    Ok(report)
}

/// Resolve a recorded head (7–40 hex) to an object in this database.
fn resolve(repo: &gix::Repository, sha: Option<&str>) -> Option<ObjectId> {
    let sha = sha?;
    if sha.len() == 40 {
        let id = ObjectId::from_hex(sha.as_bytes()).ok()?;
        return repo.has_object(id).then_some(id);
    }
    repo.rev_parse_single(sha).ok().map(|id| id.detach())
}

/// The rule of DESIGN.md: same common dir → same repository; head commit
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
    let platform = repo.references().ok()?;
    let iter = platform.prefixed("refs/remotes/").ok()?;
    let suffix = format!("/handoffs/{}", brief.key);
    for reference in iter.flatten() {
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        let Some(rest) = name.strip_prefix("refs/remotes/") else {
            continue;
        };
        if let Some(remote) = rest.strip_suffix(&suffix)
            && !remote.contains('/')
            && stored_id.is_some()
            && reference.target().try_id().map(|id| id.to_owned()) == stored_id
        {
            return Some(remote.to_string());
        }
    }
    // The history line of this version, in a remote's fetched notes.
    let sha = ObjectId::from_hex(brief.state.head_sha.as_deref()?.as_bytes()).ok()?;
    let line = brief.to_compact_json();
    let platform = repo.references().ok()?;
    for reference in platform.prefixed("refs/notes/remotes/").ok()?.flatten() {
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        let Some(remote) = name
            .strip_prefix("refs/notes/remotes/")
            .and_then(|r| r.strip_suffix("/handoffs"))
        else {
            continue;
        };
        let Ok(notes) = repo.notes().and_then(|n| n.with_refs([name.as_str()])) else {
            continue;
        };
        let mut notes = notes;
        let Ok(found) = notes.get(sha) else { continue };
        if found.iter().any(|n| {
            n.blob
                .data
                .lines()
                .any(|l| l == line.as_bytes() || same_brief(l, brief))
        }) {
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

/// `src/a.rs:10-20` → `src/a.rs`, when the suffix is a line range.
pub fn strip_lines(path: &str) -> &str {
    match path.rsplit_once(':') {
        Some((p, lines))
            if !p.is_empty()
                && !lines.is_empty()
                && lines
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '-' || c == ',') =>
        {
            p
        }
        _ => path,
    }
}

/// Whether a recorded path leaves the worktree (absolute or through `..`).
pub fn path_outside(path: &str) -> bool {
    let p = Path::new(path);
    p.is_absolute()
        || p.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        })
}

/// Where a recorded path really is (symlinks followed), when it exists and
/// stays inside `root`; `None` when it is missing or leads out of the
/// worktree, also through a symlink. Whoever reads a pointed-at file reads
/// it through this.
pub fn resolve_inside(root: &Path, path: &str) -> Option<PathBuf> {
    if path_outside(path) {
        return None;
    }
    let real = root.join(path).canonicalize().ok()?;
    let real_root = root.canonicalize().ok()?;
    real.starts_with(&real_root).then_some(real)
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
