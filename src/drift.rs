//! Drift: what changed between the moment a brief was written and now — the
//! repository, branch, age, files, commits and working tree.

use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use serde::Serialize;

use crate::brief::Brief;
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
        Some(Walked::Since(commits)) => {
            report.commits = Commits::Since {
                count: commits.len(),
            };
            let brief_head = head_id.expect("walked from it");
            let pointers: Vec<_> = brief
                .files_read_first
                .iter()
                .filter(|p| !path_outside(strip_lines(&p.path)))
                .collect();
            let paths: Vec<&str> = pointers.iter().map(|p| strip_lines(&p.path)).collect();
            for (pointer, found) in pointers
                .iter()
                .zip(touched(repo, brief_head, commits, &paths))
            {
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
    let iter = platform.prefixed(crate::remotes::REMOTES_PREFIX).ok()?;
    for reference in iter.flatten() {
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        let Some((remote, key)) = crate::remotes::base_ref_parts(&name) else {
            continue;
        };
        if key == brief.key
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
    for reference in platform
        .prefixed(crate::remotes::REMOTES_PREFIX)
        .ok()?
        .flatten()
    {
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        let Some(remote) = crate::remotes::notes_ref_remote(&name) else {
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

enum Walked {
    Since(Vec<ObjectId>),
    NotInHistory,
}

/// Reachable from HEAD.
const VISIBLE: u8 = 1;
/// Reachable from the brief's head.
const HIDDEN: u8 = 2;
/// In the queue now; a painted commit that is not queued was expanded.
const QUEUED: u8 = 4;

/// When dates order the walk: how many more commits to take once nothing
/// visible-only is queued, in case clock skew hides an ancestry (git's
/// `SLOP`).
const SLOP: usize = 5;

/// A commit in the walk: its position in the commit-graph when the graph
/// has it (parents, generation and date are read from the graph, no object
/// is decoded and no id is looked up), else its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Node {
    Graph(u32),
    Object(ObjectId),
}

/// The walk's order: highest generation first (commits the commit-graph
/// does not cover rank above all it covers, as in git), then newest.
type Key = (u32, i64, Node);

/// One walk that answers both questions git needs two commands for
/// (`merge-base --is-ancestor` and `rev-list --count`): HEAD's history is
/// painted visible and the brief head's hidden, in one priority queue; the
/// commits since are those visible and not hidden. `None` when unknowable
/// (shallow boundary in the way, missing objects).
///
/// When the commit-graph covers the brief's head, the queue is ordered by
/// generation number below it, so every commit there is taken after all its
/// descendants and its paint is final: the walk stops as soon as nothing
/// visible-only is queued, or when the brief head is taken without being
/// visible (not an ancestor: everything above its generation has been
/// seen). Otherwise commit dates order the walk as they do for git: a
/// commit found hidden after it was taken passes that on to the ancestors
/// already seen, and the walk goes on for [`SLOP`] more commits.
fn walk(repo: &gix::Repository, brief_head: ObjectId, head: ObjectId) -> Option<Walked> {
    if brief_head == head {
        return Some(Walked::Since(Vec::new()));
    }
    // As git does, no commit-graph in a shallow repository: its commits'
    // parents may be missing here.
    let graph = if repo.is_shallow().unwrap_or(true) {
        None
    } else {
        repo.commit_graph_if_enabled().ok().flatten()
    };
    let mut walk = Walk {
        repo,
        flags: vec![0; graph.as_ref().map_or(0, |g| g.num_commits() as usize)],
        graph: graph.as_ref(),
        objects: std::collections::HashMap::new(),
        queue: std::collections::BinaryHeap::new(),
        pending: 0,
    };
    let head = walk.node(head);
    let brief = walk.node(brief_head);
    if !walk.paint(head, VISIBLE)? || !walk.paint(brief, HIDDEN)? {
        return None;
    }
    // Generation 0 means "not computed" (commit-graphs of old gits).
    let exact = match brief {
        Node::Graph(pos) => walk.graph_commit(pos).generation() > 0,
        Node::Object(_) => false,
    };
    let mut boundary = false;
    let mut taken = Vec::new();
    let mut slop = SLOP;
    loop {
        if walk.pending == 0 {
            if exact || slop == 0 {
                break;
            }
            slop -= 1;
        } else {
            slop = SLOP;
        }
        let Some((_, _, node)) = walk.queue.pop() else {
            break;
        };
        let flags = walk.take(node);
        if flags & (VISIBLE | HIDDEN) == VISIBLE {
            walk.pending -= 1;
            taken.push(node);
        }
        if node == brief && flags & VISIBLE == 0 && exact {
            break;
        }
        let paint = flags & (VISIBLE | HIDDEN);
        match node {
            Node::Graph(pos) => {
                // The graph is closed under parents: nothing can be missing.
                for parent in walk.graph_commit(pos).iter_parents() {
                    walk.paint(Node::Graph(parent.ok()?.0), paint)?;
                }
            }
            Node::Object(_) => {
                for parent in walk.parents(node)? {
                    if !walk.paint(parent, paint)? {
                        if !repo.is_shallow().unwrap_or(false) {
                            return None;
                        }
                        boundary = true;
                    }
                }
            }
        }
    }
    if walk.flags_of(brief) & VISIBLE != 0 {
        taken.retain(|node| walk.flags_of(*node) & HIDDEN == 0);
        let ids = taken.into_iter().map(|node| walk.id(node)).collect();
        Some(Walked::Since(ids))
    } else if boundary || repo.is_shallow().unwrap_or(true) {
        // The missing history may connect them.
        None
    } else {
        Some(Walked::NotInHistory)
    }
}

/// A commit outside the commit-graph, decoded once.
struct ObjectCommit {
    flags: u8,
    time: i64,
    parents: Vec<Node>,
}

/// The state of [`walk`].
struct Walk<'a> {
    repo: &'a gix::Repository,
    graph: Option<&'a gix::commitgraph::Graph>,
    /// Flags of the commit-graph's commits, by position.
    flags: Vec<u8>,
    /// The commits outside it; missing from the database: not here.
    objects: std::collections::HashMap<ObjectId, ObjectCommit>,
    queue: std::collections::BinaryHeap<Key>,
    /// Queued commits that are visible and not hidden.
    pending: usize,
}

fn visible_only(flags: u8) -> bool {
    flags & (VISIBLE | HIDDEN) == VISIBLE
}

impl<'a> Walk<'a> {
    fn node(&self, id: ObjectId) -> Node {
        match self.graph.and_then(|g| g.lookup(id)) {
            Some(pos) => Node::Graph(pos.0),
            None => Node::Object(id),
        }
    }

    fn graph_commit(&self, pos: u32) -> gix::commitgraph::file::Commit<'a> {
        self.graph
            .expect("graph nodes come from the graph")
            .commit_at(gix::commitgraph::Position(pos))
    }

    fn id(&self, node: Node) -> ObjectId {
        match node {
            Node::Graph(pos) => self.graph_commit(pos).id().to_owned(),
            Node::Object(id) => id,
        }
    }

    fn flags_of(&self, node: Node) -> u8 {
        match node {
            Node::Graph(pos) => self.flags[pos as usize],
            Node::Object(id) => self.objects.get(&id).map_or(0, |c| c.flags),
        }
    }

    fn flags_mut(&mut self, node: Node) -> Option<&mut u8> {
        match node {
            Node::Graph(pos) => Some(&mut self.flags[pos as usize]),
            Node::Object(id) => self.objects.get_mut(&id).map(|c| &mut c.flags),
        }
    }

    /// Take `node` from the queue: its flags.
    fn take(&mut self, node: Node) -> u8 {
        let flags = self.flags_mut(node).expect("queued commits are known");
        *flags &= !QUEUED;
        *flags
    }

    fn parents(&self, node: Node) -> Option<Vec<Node>> {
        match node {
            Node::Graph(pos) => self
                .graph_commit(pos)
                .iter_parents()
                .map(|p| p.ok().map(|p| Node::Graph(p.0)))
                .collect(),
            Node::Object(id) => Some(self.objects.get(&id)?.parents.clone()),
        }
    }

    /// Decode a commit outside the commit-graph. `Some(false)` when it is
    /// not in the database, `None` on a read error.
    fn load(&mut self, id: ObjectId) -> Option<bool> {
        if self.objects.contains_key(&id) {
            return Some(true);
        }
        let Some(object) = self.repo.try_find_object(id).ok()? else {
            return Some(false);
        };
        let commit = object.try_into_commit().ok()?;
        let time = commit.time().ok()?.seconds;
        let parents = commit.parent_ids().map(|p| self.node(p.detach())).collect();
        self.objects.insert(
            id,
            ObjectCommit {
                flags: 0,
                time,
                parents,
            },
        );
        Some(true)
    }

    /// Add `paint` to the commit's flags: queue it when first seen; when
    /// it was taken already and turns hidden, pass that on to the ancestors
    /// seen (as git's `mark_parents_uninteresting`). `Some(false)` when the
    /// commit is not in the database, `None` on a read error.
    fn paint(&mut self, node: Node, paint: u8) -> Option<bool> {
        if let Node::Object(id) = node
            && !self.load(id)?
        {
            return Some(false);
        }
        let flags = self.flags_mut(node).expect("loaded");
        let old = *flags;
        let new = old | paint;
        if new == old {
            return Some(true);
        }
        *flags = new;
        if old == 0 {
            *flags |= QUEUED;
            let key = match node {
                Node::Graph(pos) => {
                    let commit = self.graph_commit(pos);
                    let generation = Some(commit.generation())
                        .filter(|g| *g > 0)
                        .unwrap_or(u32::MAX);
                    (generation, commit.committer_timestamp() as i64, node)
                }
                Node::Object(id) => (u32::MAX, self.objects[&id].time, node),
            };
            self.queue.push(key);
            if visible_only(new) {
                self.pending += 1;
            }
        } else if old & QUEUED != 0 {
            if visible_only(old) && !visible_only(new) {
                self.pending -= 1;
            }
        } else if new & HIDDEN != 0 && old & HIDDEN == 0 {
            self.hide_ancestors(node)?;
        }
        Some(true)
    }

    /// Paint hidden the seen ancestors of `node`, which was taken already.
    /// (A late visible paint needs no such pass: through a hidden commit it
    /// cannot reach the brief head, and hidden commits are not counted.)
    fn hide_ancestors(&mut self, node: Node) -> Option<()> {
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            for parent in self.parents(node)? {
                let Some(flags) = self.flags_mut(parent) else {
                    continue;
                };
                let old = *flags;
                if old == 0 || old & HIDDEN != 0 {
                    continue;
                }
                *flags |= HIDDEN;
                if old & QUEUED != 0 {
                    if visible_only(old) {
                        self.pending -= 1;
                    }
                } else {
                    stack.push(parent);
                }
            }
        }
        Some(())
    }
}

/// One path's entry in many commits, memoised by commit and by tree:
/// consecutive commits share most subtrees, so a commit costs about one
/// root-tree decode. Trees and parents come from the commit-graph when it
/// has the commit (no commit object decoded).
struct PathAt<'a> {
    repo: &'a gix::Repository,
    graph: Option<gix::commitgraph::Graph>,
    components: Vec<&'a str>,
    by_commit: std::collections::HashMap<ObjectId, Option<ObjectId>>,
    by_tree: std::collections::HashMap<(usize, ObjectId), Option<ObjectId>>,
}

impl<'a> PathAt<'a> {
    fn new(repo: &'a gix::Repository, path: &'a str) -> PathAt<'a> {
        PathAt {
            repo,
            graph: if repo.is_shallow().unwrap_or(true) {
                None
            } else {
                repo.commit_graph_if_enabled().ok().flatten()
            },
            components: path
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect(),
            by_commit: Default::default(),
            by_tree: Default::default(),
        }
    }

    /// `commit`'s root tree and parents.
    fn commit(&self, commit: ObjectId) -> Option<(ObjectId, Vec<ObjectId>)> {
        if let Some(graph) = &self.graph
            && let Some(c) = graph.commit_by_id(commit)
        {
            let parents = c
                .iter_parents()
                .map(|p| p.ok().map(|p| graph.id_at(p).to_owned()))
                .collect::<Option<Vec<_>>>()?;
            return Some((c.root_tree_id().to_owned(), parents));
        }
        let c = self.repo.find_commit(commit).ok()?;
        let tree = c.tree_id().ok()?.detach();
        Some((tree, c.parent_ids().map(|p| p.detach()).collect()))
    }

    /// The path's entry id in `commit` (`Some(None)`: absent); `None` when
    /// unreadable.
    fn at(&mut self, commit: ObjectId) -> Option<Option<ObjectId>> {
        if let Some(known) = self.by_commit.get(&commit) {
            return Some(*known);
        }
        let (tree, _) = self.commit(commit)?;
        let entry = self.in_tree(tree, 0)?;
        self.by_commit.insert(commit, entry);
        Some(entry)
    }

    fn in_tree(&mut self, tree: ObjectId, depth: usize) -> Option<Option<ObjectId>> {
        if self.components.is_empty() {
            return Some(None);
        }
        if let Some(known) = self.by_tree.get(&(depth, tree)) {
            return Some(*known);
        }
        let found = {
            let t = self.repo.find_tree(tree).ok()?;
            t.find_entry(self.components[depth])
                .map(|e| (e.object_id(), e.mode().is_tree()))
        };
        let entry = match found {
            None => None,
            Some((id, _)) if depth + 1 == self.components.len() => Some(id),
            Some((id, true)) => self.in_tree(id, depth + 1)?,
            Some((_, false)) => None,
        };
        self.by_tree.insert((depth, tree), entry);
        Some(entry)
    }
}

/// For each of `paths` that differs between the brief's head and HEAD (the
/// first commit of `commits`): the net change and how many of `commits`
/// touched it (differ from every parent, as `git rev-list --count
/// <head>..HEAD -- <path>` counts). One pass over the commits serves every
/// path, so each commit's trees are read once (the object cache keeps them
/// between paths).
fn touched(
    repo: &gix::Repository,
    brief_head: ObjectId,
    commits: &[ObjectId],
    paths: &[&str],
) -> Vec<Option<(String, usize)>> {
    let mut out: Vec<Option<(String, usize)>> = vec![None; paths.len()];
    let Some(&newest) = commits.first() else {
        return out;
    };
    let mut active = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let mut at = PathAt::new(repo, path);
        let (Some(before), Some(after)) = (at.at(brief_head), at.at(newest)) else {
            continue;
        };
        if before == after {
            continue;
        }
        let change = match (before, after) {
            (None, Some(_)) => "added",
            (Some(_), None) => "deleted",
            _ => "modified",
        };
        active.push((i, at, change, 0usize, false));
    }
    for id in commits {
        let Some((_, parents)) = active.first().and_then(|(_, at, ..)| at.commit(*id)) else {
            active.iter_mut().for_each(|a| a.4 = true);
            break;
        };
        for (_, at, _, count, failed) in active.iter_mut() {
            let Some(mine) = at.at(*id) else {
                *failed = true;
                continue;
            };
            let differs = if parents.is_empty() {
                mine.is_some()
            } else {
                parents
                    .iter()
                    .all(|p| at.at(*p).map(|e| e != mine).unwrap_or(true))
            };
            if differs {
                *count += 1;
            }
        }
    }
    for (i, _, change, count, failed) in active {
        if !failed {
            out[i] = Some((change.to_string(), count));
        }
    }
    out
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
