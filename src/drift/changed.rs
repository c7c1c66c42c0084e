//! CHANGED: which of a brief's files to read first were touched since it
//! was written, and by how many commits — git's `git log <brief head>..<tip>
//! -- <file>` count for each file, from one commit walk for all of them.
//!
//! [`History::walk`] paints the tip's history visible and the brief head's hidden in
//! one queue (ancestry and `rev-list --count` in one pass), on the
//! commit-graph when there is one. [`touched`] then follows git's default
//! history simplification over those commits, reading root trees and
//! parents from the graph, skipping every commit whose changed-path Bloom
//! filter ([`crate::drift::bloom`]) says "definitely not" and comparing trees
//! (memoised by tree id per path component) for every "maybe".

use std::collections::HashMap;
use std::sync::Arc;

use gix::ObjectId;

use crate::drift::bloom;
use crate::git::packs::{FastMap, Packs};
use crate::git::repo;

/// The answer of [`walk`].
pub enum Walked {
    /// The brief head is an ancestor of the tip: the commits since.
    Since(Box<Since>),
    /// The brief head is not an ancestor of the tip.
    NotInHistory,
}

/// The commits reachable from the tip and not from the brief head, with
/// what the walk learnt about them (graph positions, decoded commits), so
/// that [`touched`] reads parents and root trees without decoding again.
pub struct Since {
    graph: Option<Arc<gix::commitgraph::Graph>>,
    objects: FastMap<ObjectId, ObjectCommit>,
    /// Newest first; the first is the tip.
    commits: Vec<Node>,
    brief: Node,
}

impl Since {
    /// How many commits: `git rev-list --count <brief head>..<tip>`.
    pub fn count(&self) -> usize {
        self.commits.len()
    }

    /// The ids of the first `n` commits of the walk, the tip first.
    pub fn newest(&self, n: usize) -> Vec<ObjectId> {
        self.commits
            .iter()
            .take(n)
            .filter_map(|&node| self.id(node))
            .collect()
    }

    fn graph_commit(&self, pos: u32) -> gix::commitgraph::file::Commit<'_> {
        self.graph
            .as_ref()
            .expect("graph nodes come from the graph")
            .commit_at(gix::commitgraph::Position(pos))
    }

    /// A commit's id.
    fn id(&self, node: Node) -> Option<ObjectId> {
        match node {
            Node::Graph(pos) => Some(self.graph_commit(pos).id().to_owned()),
            Node::Object(id) => Some(id),
        }
    }

    /// A commit's root tree, from the graph or the decoded commit.
    fn tree(&self, node: Node) -> Option<ObjectId> {
        match node {
            Node::Graph(pos) => Some(self.graph_commit(pos).root_tree_id().to_owned()),
            Node::Object(id) => self.objects.get(&id).map(|c| c.tree),
        }
    }

    /// A commit's parents, in order.
    fn parents(&self, node: Node) -> Option<Vec<Node>> {
        parents_of(self.graph.as_deref(), &self.objects, node)
    }
}

/// A commit's parents, in order: from the commit-graph, or from the
/// commits decoded outside it (`None` when it was not decoded).
fn parents_of(
    graph: Option<&gix::commitgraph::Graph>,
    objects: &FastMap<ObjectId, ObjectCommit>,
    node: Node,
) -> Option<Vec<Node>> {
    match node {
        Node::Graph(pos) => graph
            .expect("graph nodes come from the graph")
            .commit_at(gix::commitgraph::Position(pos))
            .iter_parents()
            .map(|p| p.ok().map(|p| Node::Graph(p.0)))
            .collect(),
        Node::Object(id) => Some(objects.get(&id)?.parents.clone()),
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Node {
    Graph(u32),
    Object(ObjectId),
}

/// The walk's order: highest generation first (commits the commit-graph
/// does not cover rank above all it covers, as in git), then newest.
type Key = (u32, i64, Node);

/// What every walk of one repository reads once: its commit-graph (none
/// in a shallow repository, as in git: its commits' parents may be missing
/// here) and whether it is shallow.
pub struct History<'r> {
    repo: &'r gix::Repository,
    graph: Option<Arc<gix::commitgraph::Graph>>,
    /// `None` when unknowable.
    shallow: Option<bool>,
}

impl<'r> History<'r> {
    /// Read `repo`'s commit-graph and shallowness.
    pub fn open(repo: &'r gix::Repository) -> History<'r> {
        let shallow = repo.is_shallow().ok();
        let graph = if shallow.unwrap_or(true) {
            None
        } else {
            repo.commit_graph_if_enabled().ok().flatten().map(Arc::new)
        };
        History {
            repo,
            graph,
            shallow,
        }
    }

    /// Whether `brief_head` is an ancestor of `tip`, and the commits since
    /// (the walk is described at the private `walk` below).
    pub fn walk(&self, brief_head: ObjectId, tip: ObjectId) -> Option<Walked> {
        walk(self, brief_head, tip)
    }
}

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
fn walk(history: &History, brief_head: ObjectId, tip: ObjectId) -> Option<Walked> {
    let graph = history.graph.clone();
    let mut walk = Walk {
        repo: history.repo,
        shallow: history.shallow,
        flags: vec![0; graph.as_ref().map_or(0, |g| g.num_commits() as usize)],
        graph: graph.as_deref(),
        objects: FastMap::default(),
        queue: std::collections::BinaryHeap::new(),
        pending: 0,
    };
    let head = walk.node(tip);
    let brief = walk.node(brief_head);
    let commits = if brief_head == tip {
        Vec::new()
    } else {
        match walk.run(head, brief)? {
            Some(commits) => commits,
            None => return Some(Walked::NotInHistory),
        }
    };
    if let Node::Object(id) = brief {
        // The brief head's tree is read by `touched`.
        walk.load(id)?;
    }
    let objects = std::mem::take(&mut walk.objects);
    Some(Walked::Since(Box::new(Since {
        graph,
        objects,
        commits,
        brief,
    })))
}

impl Walk<'_> {
    /// The walk proper: `Some(Some(commits))` when `brief` is an ancestor
    /// of `head`, `Some(None)` when it is not, `None` when unknowable.
    fn run(&mut self, head: Node, brief: Node) -> Option<Option<Vec<Node>>> {
        let shallow = self.shallow;
        let walk = self;
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
                            if !shallow.unwrap_or(false) {
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
            Some(Some(taken))
        } else if boundary || shallow.unwrap_or(true) {
            // The missing history may connect them.
            None
        } else {
            Some(None)
        }
    }
}

/// A commit outside the commit-graph, decoded once.
struct ObjectCommit {
    flags: u8,
    time: i64,
    tree: ObjectId,
    parents: Vec<Node>,
}

/// The state of [`walk`].
struct Walk<'a> {
    repo: &'a gix::Repository,
    shallow: Option<bool>,
    graph: Option<&'a gix::commitgraph::Graph>,
    /// Flags of the commit-graph's commits, by position.
    flags: Vec<u8>,
    /// The commits outside it; missing from the database: not here.
    objects: FastMap<ObjectId, ObjectCommit>,
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
        parents_of(self.graph, &self.objects, node)
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
        let tree = commit.tree_id().ok()?.detach();
        let parents = commit.parent_ids().map(|p| self.node(p.detach())).collect();
        self.objects.insert(
            id,
            ObjectCommit {
                flags: 0,
                time,
                tree,
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

/// A path's entry in a tree: its kind and id; `None` when absent.
type Entry = Option<(gix::objs::tree::EntryKind, ObjectId)>;

/// The entries of the brief's files in commits' trees, memoised by commit
/// and by tree id per path component (consecutive commits share most
/// subtrees: one `d000/` lookup per distinct `d000` tree, not per commit).
/// The most memory the delta-base cache of tree reads may use: enough for
/// the chains of consecutive commits' trees; a larger one measured slower
/// (more memory to fault in and free) and only adds to the peak.
const TREE_CACHE_BYTES: usize = 1 << 20;

/// One root-tree decode answers every path. Trees are read from packs
/// with every delta base kept ([`Packs`]).
struct Trees<'a> {
    repo: &'a gix::Repository,
    since: &'a Since,
    packs: Packs,
    /// Each path's components.
    paths: Vec<Vec<&'a str>>,
    /// The paths [`Trees::at`] looks up (indices in `paths`); the others'
    /// entries it leaves `None`.
    active: Vec<usize>,
    /// Where each commit's entries start in `entries`.
    by_node: FastMap<Node, usize>,
    /// The entries of every path, commit after commit (one allocation,
    /// not one a commit).
    entries: Vec<Entry>,
    /// (tree, depth, path) → the path's entry below that tree.
    by_tree: FastMap<(ObjectId, usize, usize), Entry>,
}

impl<'a> Trees<'a> {
    fn new(repo: &'a gix::Repository, since: &'a Since, paths: &[&'a str]) -> Trees<'a> {
        Trees {
            repo,
            since,
            packs: Packs::new(repo, repo::pack_cache_bytes(repo).min(TREE_CACHE_BYTES)),
            paths: paths.iter().map(|p| components(p)).collect(),
            active: (0..paths.len()).collect(),
            by_node: FastMap::with_capacity_and_hasher(since.commits.len() + 1, Default::default()),
            entries: Vec::with_capacity((since.commits.len() + 1) * paths.len()),
            by_tree: FastMap::default(),
        }
    }

    /// The entries of the active paths in `node`; `None` when unreadable.
    fn at(&mut self, node: Node) -> Option<&[Entry]> {
        let n = self.paths.len();
        let start = match self.by_node.get(&node) {
            Some(&start) => start,
            None => {
                let tree = self.since.tree(node)?;
                let start = self.entries.len();
                self.entries.resize(start + n, None);
                let active = std::mem::take(&mut self.active);
                let mut out = std::mem::take(&mut self.entries);
                let resolved = self.resolve(tree, 0, &active, &mut out[start..]);
                self.active = active;
                self.entries = out;
                if resolved.is_none() {
                    self.entries.truncate(start);
                    return None;
                }
                self.by_node.insert(node, start);
                start
            }
        };
        Some(&self.entries[start..start + n])
    }

    /// Look up only `paths` from now on (a subset of the active ones, so
    /// the entries known stay right).
    fn restrict(&mut self, paths: &[usize]) {
        self.active = paths.to_vec();
    }

    /// The entries named by the components at `depth` of `paths` in
    /// `tree`, scanning it once and stopping when all are found.
    fn entries(&mut self, tree: ObjectId, depth: usize, paths: &[usize]) -> Option<Vec<Entry>> {
        let data = self.packs.tree(self.repo, tree)?;
        let mut found = vec![None; paths.len()];
        let mut left = paths.len();
        for entry in gix::objs::TreeRefIter::from_bytes(&data, self.repo.object_hash()) {
            let entry = entry.ok()?;
            for (n, &p) in paths.iter().enumerate() {
                if found[n].is_none() && entry.filename == self.paths[p][depth].as_bytes() {
                    found[n] = Some((entry.mode.kind(), entry.oid.to_owned()));
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        Some(found)
    }

    /// The entries of `paths` (indices) below `tree`, whose components
    /// from `depth` on are still to look up, into `out`.
    fn resolve(
        &mut self,
        tree: ObjectId,
        depth: usize,
        paths: &[usize],
        out: &mut [Entry],
    ) -> Option<()> {
        // Root trees are memoised by commit (`by_node`): almost every
        // commit has its own, so memoising them by id too only costs.
        let memo = depth > 0;
        let mut missing = Vec::new();
        for &p in paths {
            let known = if memo {
                self.by_tree.get(&(tree, depth, p))
            } else {
                None
            };
            match known {
                Some(known) => out[p] = *known,
                None => missing.push(p),
            }
        }
        if missing.is_empty() {
            return Some(());
        }
        let mut below: Vec<(ObjectId, Vec<usize>)> = Vec::new();
        let entries = self.entries(tree, depth, &missing)?;
        for (&p, found) in missing.iter().zip(entries) {
            out[p] = match found {
                Some(entry) if depth + 1 == self.paths[p].len() => Some(entry),
                Some((gix::objs::tree::EntryKind::Tree, id)) => {
                    match below.iter_mut().find(|(t, _)| *t == id) {
                        Some((_, ps)) => ps.push(p),
                        None => below.push((id, vec![p])),
                    }
                    None
                }
                _ => None,
            };
        }
        for (subtree, ps) in below {
            self.resolve(subtree, depth + 1, &ps, out)?;
        }
        if memo {
            for p in missing {
                self.by_tree.insert((tree, depth, p), out[p]);
            }
        }
        Some(())
    }
}

/// A recorded path's components (`./` and empty ones dropped).
fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// The Bloom keys of each path and of its leading directories (git adds a
/// changed path's directories to the filter too), per layer settings.
struct Keys<'a> {
    filters: Option<bloom::Filters>,
    paths: Vec<Vec<&'a str>>,
    keys: HashMap<(bloom::Settings, usize), Vec<bloom::Key>>,
}

impl Keys<'_> {
    /// Whether `node`'s filter says `path` is definitely unchanged against
    /// its first parent. `false` (maybe) without a filter.
    fn unchanged(&mut self, node: Node, path: usize) -> bool {
        let (Some(filters), Node::Graph(pos)) = (&self.filters, node) else {
            return false;
        };
        let Some((filter, settings)) = filters.filter(pos) else {
            return false;
        };
        let components = &self.paths[path];
        let keys = self
            .keys
            .entry((settings, path))
            .or_insert_with(|| bloom::path_keys(components, settings));
        bloom::definitely_not(filter, keys)
    }
}

/// One path's state in [`touched`]'s pass: which commits the simplified
/// history reaches, and how many of them it shows.
struct Count {
    reached: Vec<bool>,
    shown: usize,
    /// The first commit shown: none of its descendants here is.
    newest: Option<Node>,
}

/// How one file to read first changed since the brief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    /// `modified`, `added` or `deleted` (net, brief head to tip).
    pub change: String,
    /// How many commits since touched it, as `git log` counts them.
    pub commits: usize,
    /// The newest of them (no descendant of it touched the file).
    pub newest: Option<ObjectId>,
}

/// For each of `paths` that differs between the brief's head and the tip:
/// the net change and how many commits since touched it, as `git log
/// --format=%H <brief head>..<tip> -- <path> | wc -l` counts them: git's
/// default history simplification (a merge that is TREESAME to a parent
/// the walk shows follows that parent alone, and is not shown), one pass
/// over the commits in topological order for every path at once.
///
/// One approximation: git decides whether a merge's parent is hidden (an
/// ancestor of the brief head, so not followed) when it reaches the merge,
/// in date order; this uses the final answer, which is git's whenever
/// commit dates do not run backwards across the brief head.
///
/// `None` when a tree of these commits is not in the object database (a
/// partial clone, `--filter=tree:0`, fetches them only when git asks):
/// see [`touched_by_git`].
pub fn touched(
    repo: &gix::Repository,
    since: &Since,
    paths: &[&str],
) -> Option<Vec<Option<Touched>>> {
    let mut out: Vec<Option<Touched>> = vec![None; paths.len()];
    let Some(&tip) = since.commits.first() else {
        return Some(out);
    };
    let mut trees = Trees::new(repo, since, paths);
    let before = trees.at(since.brief).map(<[Entry]>::to_vec)?;
    let after = trees.at(tip).map(<[Entry]>::to_vec)?;
    let active: Vec<usize> = (0..paths.len())
        .filter(|&i| before[i] != after[i])
        .collect();
    if active.is_empty() {
        return Some(out);
    }
    trees.restrict(&active);
    let mut keys = Keys {
        filters: read_filters(repo, since),
        paths: paths.iter().map(|p| components(p)).collect(),
        keys: HashMap::new(),
    };
    if keys.filters.is_none() {
        // Every root tree will be read: find them all in the pack indexes
        // at once. (With filters, most are never read.)
        let roots = since.commits.iter().filter_map(|c| since.tree(*c));
        trees.packs.locate(roots.collect());
    }
    let counts = simplify(since, &active, &mut trees, &mut keys)?;
    for (n, &i) in active.iter().enumerate() {
        let change = match (before[i], after[i]) {
            (None, Some(_)) => "added",
            (Some(_), None) => "deleted",
            _ => "modified",
        };
        out[i] = Some(Touched {
            change: change.to_string(),
            commits: counts[n].shown,
            newest: counts[n].newest.and_then(|node| since.id(node)),
        });
    }
    Some(out)
}

/// [`touched`] answered by git itself, for a repository whose trees are not
/// all here: `git diff --name-status` between the brief's head and the tip,
/// then `git log -- <path>` for each path that differs. In a partial clone
/// git fetches the trees it needs from the promisor remote, as `git log`
/// does for its user. The error is git's reason when it cannot.
pub fn touched_by_git(
    repo: &gix::Repository,
    since: &Since,
    paths: &[&str],
) -> Result<Vec<Option<Touched>>, String> {
    let mut out: Vec<Option<Touched>> = vec![None; paths.len()];
    let (Some(brief), Some(tip)) = (
        since.id(since.brief),
        since.commits.first().and_then(|c| since.id(*c)),
    ) else {
        return Ok(out);
    };
    let git = |args: &[String]| -> Result<Vec<u8>, String> {
        let mut all = vec!["--literal-pathspecs".to_string()];
        all.extend_from_slice(args);
        match crate::git::cmd::run(repo, &all, None) {
            Ok(run) if run.ok => Ok(run.stdout),
            Ok(run) => Err(crate::git::cmd::reason(&run.stderr)),
            Err(err) => Err(err.to_string()),
        }
    };
    let mut args: Vec<String> = ["diff", "--no-renames", "--name-status", "-z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend([brief.to_string(), tip.to_string(), "--".to_string()]);
    args.extend(paths.iter().map(|p| p.to_string()));
    let listed = git(&args)?;
    let fields: Vec<&[u8]> = listed.split(|b| *b == 0).collect();
    for (i, path) in paths.iter().enumerate() {
        let wanted = components(path).join("/");
        let mut change = None;
        for pair in fields.chunks(2) {
            let [status, file] = pair else { continue };
            let file = String::from_utf8_lossy(file);
            if file == wanted {
                change = Some(match status.first() {
                    Some(b'A') => "added",
                    Some(b'D') => "deleted",
                    _ => "modified",
                });
            } else if file.starts_with(&format!("{wanted}/")) && change.is_none() {
                change = Some("modified");
            }
        }
        let Some(change) = change else { continue };
        let log = git(&[
            "log".to_string(),
            "--format=%H".to_string(),
            format!("{brief}..{tip}"),
            "--".to_string(),
            wanted.clone(),
        ])?;
        let ids: Vec<ObjectId> = String::from_utf8_lossy(&log)
            .lines()
            .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
            .collect();
        out[i] = Some(Touched {
            change: change.to_string(),
            commits: ids.len(),
            newest: ids.first().copied(),
        });
    }
    Ok(out)
}

/// The Bloom filters of the walk's commit-graph, unless
/// `commitGraph.readChangedPaths` is false.
fn read_filters(repo: &gix::Repository, since: &Since) -> Option<bloom::Filters> {
    let graph = since.graph.as_ref()?;
    if repo
        .config_snapshot()
        .boolean("commitGraph.readChangedPaths")
        == Some(false)
    {
        return None;
    }
    bloom::Filters::open(repo.objects.store_ref().path(), graph)
}

/// git's default history simplification over `since`'s commits for each
/// of `paths` (indices): children before parents, each commit reached by a
/// path's simplified history compared with its parents. `None` when a
/// commit or tree cannot be read.
fn simplify(
    since: &Since,
    paths: &[usize],
    trees: &mut Trees,
    keys: &mut Keys,
) -> Option<Vec<Count>> {
    let n = since.commits.len();
    let index: FastMap<Node, usize> = since
        .commits
        .iter()
        .enumerate()
        .map(|(i, c)| (*c, i))
        .collect();
    let parents: Vec<Vec<Node>> = since
        .commits
        .iter()
        .map(|c| since.parents(*c))
        .collect::<Option<_>>()?;
    // Kahn's order: a commit once all its children here are done.
    let mut children = vec![0usize; n];
    for ps in &parents {
        for p in ps {
            if let Some(&j) = index.get(p) {
                children[j] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| children[i] == 0).collect();
    let mut counts: Vec<Count> = paths
        .iter()
        .map(|_| Count {
            reached: (0..n).map(|i| i == 0).collect(),
            shown: 0,
            newest: None,
        })
        .collect();
    while let Some(i) = ready.pop() {
        let node = since.commits[i];
        for (&path, count) in paths.iter().zip(counts.iter_mut()) {
            if !count.reached[i] {
                continue;
            }
            let step = step(node, &parents[i], path, since, &index, trees, keys)?;
            count.shown += usize::from(step.shown);
            if step.shown && count.newest.is_none() {
                count.newest = Some(node);
            }
            for j in step.follow {
                count.reached[j] = true;
            }
        }
        for p in &parents[i] {
            if let Some(&j) = index.get(p) {
                children[j] -= 1;
                if children[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    Some(counts)
}

/// What one commit does in one path's simplified history.
struct Step {
    /// Whether `git log -- <path>` shows it.
    shown: bool,
    /// The parents (indices in the commits since) the history goes on to.
    follow: Vec<usize>,
}

/// git's `try_to_simplify_commit` for one commit and one path: TREESAME to
/// a relevant parent (one of the commits since, or the brief head itself)
/// → follow that parent alone, not shown; otherwise follow every parent,
/// shown when it differs from every relevant parent (from any parent when
/// none is relevant). A root is shown when it has the path.
fn step(
    node: Node,
    parents: &[Node],
    path: usize,
    since: &Since,
    index: &FastMap<Node, usize>,
    trees: &mut Trees,
    keys: &mut Keys,
) -> Option<Step> {
    if parents.is_empty() {
        if keys.unchanged(node, path) {
            return Some(Step {
                shown: false,
                follow: Vec::new(),
            });
        }
        let shown = trees.at(node)?[path].is_some();
        return Some(Step {
            shown,
            follow: Vec::new(),
        });
    }
    let (mut relevant, mut relevant_change, mut irrelevant_change) = (0, false, false);
    for (k, parent) in parents.iter().enumerate() {
        let in_since = index.get(parent).copied();
        let is_relevant = in_since.is_some() || *parent == since.brief;
        relevant += usize::from(is_relevant);
        let same = (k == 0 && keys.unchanged(node, path)) || {
            let mine = trees.at(node)?[path];
            trees.at(*parent)?[path] == mine
        };
        if same && is_relevant {
            return Some(Step {
                shown: false,
                follow: in_since.into_iter().collect(),
            });
        }
        if !same {
            if is_relevant {
                relevant_change = true;
            } else {
                irrelevant_change = true;
            }
        }
    }
    Some(Step {
        shown: if relevant > 0 {
            relevant_change
        } else {
            irrelevant_change
        },
        follow: parents
            .iter()
            .filter_map(|p| index.get(p).copied())
            .collect(),
    })
}
