//! Opening the repository and reading the git facts a brief records.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use crate::brief::keys;

/// How long to wait for a ref lock held by another process, in ms, unless
/// `core.filesRefLockTimeout` says otherwise (git's default is 100 ms, too
/// short for many agents writing at once).
pub const LOCK_TIMEOUT_MS: &str = "5000";

/// Open the repository that contains the current directory, honouring
/// `GIT_DIR`, `GIT_WORK_TREE` and the other variables git reads. A bare
/// repository is refused: briefs describe a working tree. Ready for writes:
/// see [`prepare_writes`].
pub fn open_cwd() -> Result<gix::Repository> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    open_at(&cwd)
}

/// Like [`open_cwd`], starting the search at `dir`.
pub fn open_at(dir: &Path) -> Result<gix::Repository> {
    let mut repo = open_at_for_reading(dir)?;
    prepare_writes(&mut repo)?;
    Ok(repo)
}

/// Like [`open_cwd`], for commands that only read: without the set-up that
/// only writes need ([`prepare_writes`]), which costs as much as the rest
/// of a read (resolving the committer reads the time-zone database).
pub fn open_cwd_for_reading() -> Result<gix::Repository> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    open_at_for_reading(&cwd)
}

/// Like [`open_cwd_for_reading`], starting the search at `dir`.
pub fn open_at_for_reading(dir: &Path) -> Result<gix::Repository> {
    let mut repo = match gix::discover_with_environment_overrides(dir) {
        Ok(repo) => repo,
        Err(err) => return Err(not_opened(dir, &err.to_string())),
    };
    if is_bare(&repo) {
        bail!(
            "'{}' is a bare repository; git-handoff needs a working tree: run it in a clone or worktree",
            repo.git_dir().display()
        );
    }
    super::config::apply_overrides(&mut repo)?;
    set_caches(&mut repo);
    set_shared(&repo);
    Ok(repo)
}

/// Why git-handoff needs a repository, and the way to one: the store is
/// git-native on purpose (no file fallback outside a repository).
const NO_REPOSITORY: &str = "briefs live in git refs (refs/handoffs/<key>, their history in git notes), so git-handoff needs a repository: run it inside one, or `git init` one";

/// Why no repository could be opened at `dir`, in git's words: when git
/// itself finds none, its own `fatal:` line (without the prefix); when git
/// finds one (a layout gix cannot open), that it is a repository and why it
/// cannot be read.
fn not_opened(dir: &Path, gix_error: &str) -> anyhow::Error {
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(dir)
        .args(["rev-parse", "--absolute-git-dir"]);
    match super::cmd::run_command(cmd, None) {
        Ok(run) if run.ok => anyhow!(
            "cannot open the repository at '{}': {gix_error}",
            run.text().trim_end()
        ),
        Ok(run) if run.stderr.contains("not a git repository") => {
            let reason = super::cmd::reason(&run.stderr);
            anyhow!("{}; {NO_REPOSITORY}", reason.trim_start_matches("fatal: "))
        }
        Ok(run) => anyhow!(
            "{}",
            super::cmd::reason(&run.stderr).trim_start_matches("fatal: ")
        ),
        Err(_) => anyhow!(
            "not a git repository (or any of the parent directories): {}; {NO_REPOSITORY}",
            dir.display()
        ),
    }
}

/// Whether `repo` is bare as git judges it (`git rev-parse
/// --is-bare-repository`): a linked worktree has a working tree even when
/// the repository it belongs to is bare.
fn is_bare(repo: &gix::Repository) -> bool {
    repo.workdir().is_none()
}

/// Apply `core.sharedRepository` to every file and folder this process
/// creates under the git dirs.
fn set_shared(repo: &gix::Repository) {
    let config = repo.config_snapshot();
    let value = config
        .string("core.sharedRepository")
        .map(|v| v.to_str_lossy().into_owned());
    let policy = match value {
        Some(v) => crate::support::shared::parse_policy(Some(&v)).unwrap_or(0),
        None => 0,
    };
    crate::support::shared::set_policy(
        policy,
        vec![
            canonical(repo.git_dir()),
            canonical(repo.common_dir()),
            repo.git_dir().to_path_buf(),
            repo.common_dir().to_path_buf(),
        ],
    );
}

/// The most memory the delta-base cache of packs may use. Briefs and trees
/// in a packed repository are deltas of each other in chains up to 50 long;
/// without the cache every read would undo the whole chain.
const PACK_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// The most memory the cache of decoded objects may use (trees looked up
/// again and again by path).
const OBJECT_CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Caches gix leaves off unless built with its `max-performance` feature
/// (which would also bring its thread pool): a delta-base cache for pack
/// reads, unless `core.deltaBaseCacheLimit` is 0, and an object cache.
fn set_caches(repo: &mut gix::Repository) {
    let pack_bytes = pack_cache_bytes(repo);
    if pack_bytes > 0 {
        repo.objects.set_pack_cache(move || {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                pack_bytes,
            ))
        });
    }
    repo.object_cache_size_if_unset(OBJECT_CACHE_BYTES);
}

/// The most memory a delta-base cache of packs may use here: 16 MiB, less
/// when `core.deltaBaseCacheLimit` says so, 0 for none.
pub fn pack_cache_bytes(repo: &gix::Repository) -> usize {
    repo.config_snapshot()
        .integer("core.deltaBaseCacheLimit")
        .and_then(|v| usize::try_from(v).ok())
        .map(|v| v.min(PACK_CACHE_BYTES))
        .unwrap_or(PACK_CACHE_BYTES)
}

/// gitoxide's last-resort committer name and email (after the environment,
/// `committer.*` and `user.*`), each with what history notes take there.
const COMMITTER_FALLBACK: [(&str, &str); 2] = [
    ("gitoxide.committer.nameFallback", "git-handoff"),
    ("gitoxide.committer.emailFallback", "git-handoff@localhost"),
];

/// What writes need and reads do not: a ref lock timeout suited to many
/// agents writing at once, and a committer identity for history notes.
pub fn prepare_writes(repo: &mut gix::Repository) -> Result<()> {
    let (timeout, fallback) = {
        let config = repo.config_snapshot();
        // Many agents write at once: wait for a ref lock (as git does with
        // core.filesRefLockTimeout) longer than git's 100 ms default.
        let timeout = config.integer("core.filesRefLockTimeout").is_none();
        // History notes are commits; without a configured identity they
        // are made by "git-handoff" rather than failing the write.
        // Installed as gitoxide's last-resort fallback, so the environment,
        // `committer.*` and `user.*` still win part by part; asking whether
        // an identity is configured would date it too (the system time
        // zone, a walk of the zoneinfo folder), which only a commit needs.
        let fallback: Vec<_> = COMMITTER_FALLBACK
            .into_iter()
            .filter(|(key, _)| config.string(*key).is_none())
            .collect();
        (timeout, fallback)
    };
    if !timeout && fallback.is_empty() {
        return Ok(());
    }
    let mut config = repo.config_snapshot_mut();
    if timeout {
        config
            .set_raw_value("core.filesRefLockTimeout", LOCK_TIMEOUT_MS)
            .context("cannot set the ref lock timeout")?;
    }
    for (key, value) in fallback {
        config
            .set_raw_value(key, value)
            .context("cannot set a committer identity for history notes")?;
    }
    config
        .commit()
        .context("cannot prepare the repository for writes")?;
    Ok(())
}

/// Refuse `path` when its deepest existing ancestor (itself included)
/// resolves outside the worktree at `root`, through a symlinked folder say.
/// `what` names it in the refusal (`"the narrative directory "`), or is empty.
pub fn refuse_outside(root: &Path, path: &Path, what: &str) -> Result<()> {
    let real_root = canonical(root);
    let mut probe = Some(path.to_path_buf());
    while let Some(dir) = probe {
        if dir.exists() {
            let real = canonical(&dir);
            if !real.starts_with(&real_root) {
                crate::refuse!(
                    "{what}'{}' resolves outside the worktree (to '{}'); refusing to follow it",
                    dir.display(),
                    real.display()
                );
            }
            return Ok(());
        }
        probe = dir.parent().map(Path::to_path_buf);
    }
    Ok(())
}

/// Canonicalize a path, falling back to the path itself when it cannot be.
pub fn canonical(path: &Path) -> PathBuf {
    gix::path::realpath(path)
        .ok()
        .or_else(|| std::fs::canonicalize(path).ok())
        .unwrap_or_else(|| path.to_path_buf())
}

/// The state of HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadState {
    /// On a branch with at least one commit.
    Branch {
        /// Short branch name, like `feat/x`.
        name: String,
        /// The commit it points at.
        sha: String,
    },
    /// On a branch with no commit yet.
    Unborn {
        /// Short branch name.
        name: String,
    },
    /// Detached at a commit.
    Detached {
        /// The commit checked out.
        sha: String,
    },
}

impl HeadState {
    /// The branch name, if HEAD is on one.
    pub fn branch(&self) -> Option<&str> {
        match self {
            HeadState::Branch { name, .. } | HeadState::Unborn { name } => Some(name),
            HeadState::Detached { .. } => None,
        }
    }

    /// The commit checked out, if any.
    pub fn sha(&self) -> Option<&str> {
        match self {
            HeadState::Branch { sha, .. } | HeadState::Detached { sha } => Some(sha),
            HeadState::Unborn { .. } => None,
        }
    }

    /// What `state.branch` records: the branch, or `HEAD` when detached.
    pub fn branch_label(&self) -> &str {
        self.branch().unwrap_or("HEAD")
    }
}

/// Read HEAD.
pub fn head_state(repo: &gix::Repository) -> Result<HeadState> {
    let head = super::refdb::head(repo)?;
    let name = head.branch.map(|b| {
        b.strip_prefix("refs/heads/")
            .map(str::to_string)
            .unwrap_or(b)
    });
    let sha = head.id.map(|id| id.to_string());
    Ok(match (name, sha) {
        (Some(name), Some(sha)) => HeadState::Branch { name, sha },
        (Some(name), None) => HeadState::Unborn { name },
        (None, Some(sha)) => HeadState::Detached { sha },
        (None, None) => {
            bail!("HEAD is neither a branch nor a commit; repair it with `git checkout <branch>`")
        }
    })
}

/// The commit HEAD resolves to, if any (not on an unborn branch).
pub fn head_id(repo: &gix::Repository) -> Option<gix::ObjectId> {
    super::refdb::head(repo).ok()?.id
}

/// The tree of the commit HEAD resolves to, if any.
pub fn head_tree_id(repo: &gix::Repository) -> Option<gix::ObjectId> {
    let id = head_id(repo)?;
    Some(repo.find_commit(id).ok()?.tree_id().ok()?.detach())
}

/// The key a keyless command uses here: `GIT_HANDOFF_KEY`, else the current
/// branch's key, else `HANDOFF` on a detached HEAD.
pub fn default_key(head: &HeadState) -> Result<String> {
    if let Ok(key) = std::env::var("GIT_HANDOFF_KEY")
        && !key.is_empty()
    {
        keys::validate(&key).map_err(|e| anyhow!("GIT_HANDOFF_KEY: {e}"))?;
        return Ok(key);
    }
    Ok(branch_key(head))
}

/// The key derived from the branch alone (`HANDOFF` when detached).
pub fn branch_key(head: &HeadState) -> String {
    head.branch()
        .and_then(keys::from_branch)
        .unwrap_or_else(|| keys::DETACHED_KEY.to_string())
}

/// Where the current worktree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    /// The worktree root, canonical.
    pub root: PathBuf,
    /// Whether it is a linked worktree.
    pub is_linked: bool,
    /// The common git dir, absolute and canonical.
    pub common_dir: PathBuf,
}

/// Describe the current worktree.
pub fn worktree_info(repo: &gix::Repository) -> Result<WorktreeInfo> {
    let root = repo
        .workdir()
        .ok_or_else(|| anyhow!("this repository has no working tree"))?;
    let is_linked = repo.worktree().is_some_and(|wt| !wt.is_main());
    Ok(WorktreeInfo {
        root: canonical(root),
        is_linked,
        common_dir: canonical(repo.common_dir()),
    })
}

/// Line counts of the working tree against HEAD, as `git diff --stat HEAD`
/// sums them (tracked files only; untracked files do not count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStat {
    /// Files whose content differs from HEAD.
    pub files: usize,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
}

impl DiffStat {
    /// The summary line as git prints it (without its leading space), or
    /// `None` for a clean tree.
    pub fn summary(&self) -> Option<String> {
        if self.files == 0 {
            return None;
        }
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                one.to_string()
            } else {
                many.to_string()
            }
        };
        let mut s = format!(
            "{} {} changed",
            self.files,
            plural(self.files, "file", "files")
        );
        if self.insertions > 0 || self.deletions == 0 {
            s.push_str(&format!(
                ", {} {}(+)",
                self.insertions,
                plural(self.insertions, "insertion", "insertions")
            ));
        }
        if self.deletions > 0 || self.insertions == 0 {
            s.push_str(&format!(
                ", {} {}(-)",
                self.deletions,
                plural(self.deletions, "deletion", "deletions")
            ));
        }
        Some(s)
    }
}

/// Compare the working tree (through the index) with HEAD's tree and count
/// changed files and lines. On an unborn branch every tracked file is new.
pub fn diff_stat(repo: &gix::Repository) -> Result<DiffStat> {
    Ok(diff_stat_files(repo)?.0)
}

/// [`diff_stat`], and the paths it counted as changed, sorted.
pub fn diff_stat_files(repo: &gix::Repository) -> Result<(DiffStat, Vec<String>)> {
    diff_stat_skipping(repo, &|_, _, _| false)
}

/// Whether a changed file is no work of the user's, from its path, HEAD's
/// bytes and the worktree's (a narrative that holds only entries the tool
/// added).
pub type Skip<'a> = &'a dyn Fn(&str, &[u8], &[u8]) -> bool;

/// [`diff_stat_files`] without the files `skip` says are no work.
pub fn diff_stat_skipping(repo: &gix::Repository, skip: Skip) -> Result<(DiffStat, Vec<String>)> {
    let mut stat = DiffStat::default();
    let mut files = Vec::new();
    each_changed_file(repo, |path, old, new, _| {
        if skip(path, old, new) {
            return;
        }
        stat.files += 1;
        files.push(path.to_string());
        if is_binary(old) || is_binary(new) {
            return;
        }
        let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
        let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
        for op in diff.ops() {
            for change in diff.iter_changes(op) {
                match change.tag() {
                    similar::ChangeTag::Insert => stat.insertions += 1,
                    similar::ChangeTag::Delete => stat.deletions += 1,
                    similar::ChangeTag::Equal => {}
                }
            }
        }
    })?;
    Ok((stat, files))
}

/// The changes of the working tree against HEAD as a unified diff (`git
/// diff HEAD`'s shape, three lines of context), cut after `max_lines`
/// lines; whether it was cut. Binary files are named, not shown.
pub fn worktree_diff(repo: &gix::Repository, max_lines: usize) -> Result<(String, bool)> {
    let mut out = String::new();
    let mut lines = 0;
    let mut cut = false;
    each_changed_file(repo, |path, old, new, mode| {
        if cut {
            return;
        }
        let modes = mode.map_or(String::new(), |(a, b)| {
            format!(
                "old mode {}\nnew mode {}\n",
                a.as_octal_str(),
                b.as_octal_str()
            )
        });
        let text = if old == new {
            format!("diff --git a/{path} b/{path}\n{modes}")
        } else if is_binary(old) || is_binary(new) {
            format!("diff --git a/{path} b/{path}\n{modes}Binary files differ\n")
        } else {
            let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
            let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
            let body = diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string();
            format!("diff --git a/{path} b/{path}\n{modes}{body}")
        };
        for line in text.lines() {
            if lines == max_lines {
                cut = true;
                return;
            }
            out.push_str(line);
            out.push('\n');
            lines += 1;
        }
    })?;
    Ok((out, cut))
}

/// The newest `n` commits of HEAD's history, newest first by commit date
/// (as `git log --oneline -n` lists them): short id and subject. None on
/// an unborn branch or when the history cannot be read.
pub fn recent_commits(repo: &gix::Repository, n: usize) -> Vec<(String, String)> {
    let Some(head) = head_id(repo) else {
        return Vec::new();
    };
    let Ok(walk) = repo
        .rev_walk([head])
        .sorting(gix::revision::walk::Sorting::ByCommitTime(
            Default::default(),
        ))
        .all()
    else {
        return Vec::new();
    };
    walk.take(n)
        .filter_map(|info| {
            let info = info.ok()?;
            let commit = info.object().ok()?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            let subject = message.lines().next().unwrap_or("").trim().to_string();
            Some((info.id.to_hex_with_len(7).to_string(), subject))
        })
        .collect()
}

/// Call `visit` with each tracked file whose content or mode differs from
/// HEAD's (path, HEAD's bytes, the worktree's — empty for a side that has
/// none — and, for a changed mode, HEAD's and the worktree's), in path
/// order. The executable bit counts only where `core.fileMode` says the
/// file system keeps it, as in git. On an unborn branch every tracked
/// file is new.
fn each_changed_file(
    repo: &gix::Repository,
    mut visit: impl FnMut(&str, &[u8], &[u8], Option<(EntryKind, EntryKind)>),
) -> Result<()> {
    let paths = changed_paths(repo)?;
    if paths.is_empty() {
        return Ok(());
    }
    // `core.fileMode`, as the index scan reads it.
    let file_mode = repo
        .filesystem_options()
        .map_or(true, |fs| fs.executable_bit);
    let mut head_tree = None;
    let root = repo.workdir().expect("checked when opened").to_path_buf();
    for (path, known) in paths {
        let old = match known {
            Known::Blob(id, mode) => Some((
                repo.find_object(id)
                    .context("cannot read a blob of HEAD")?
                    .detach()
                    .data,
                mode,
            )),
            Known::NotABlob => None,
            Known::Unknown => head_blob(repo, &mut head_tree, &path)?,
        };
        let new = worktree_file(&root, &path);
        let (old_mode, new_mode) = (old.as_ref().map(|o| o.1), new.as_ref().map(|n| n.1));
        let (old, new) = (old.map(|o| o.0), new.map(|n| n.0));
        let mode = match (old_mode, new_mode) {
            (Some(a), Some(b))
                if a != b && (file_mode || a == EntryKind::Link || b == EntryKind::Link) =>
            {
                Some((a, b))
            }
            _ => None,
        };
        if old.is_none() && new.is_none() || old == new && mode.is_none() {
            continue;
        }
        visit(
            &path,
            old.as_deref().unwrap_or_default(),
            new.as_deref().unwrap_or_default(),
            mode,
        );
    }
    Ok(())
}

/// The worktree's bytes at `path` below `root` (a symlink's target) and
/// its mode; `None` when there is no file (or only behind a symlinked
/// leading directory, which git never looks through).
fn worktree_file(root: &Path, path: &str) -> Option<(Vec<u8>, EntryKind)> {
    if beyond_symlink(root, path) {
        return None;
    }
    let file = root.join(path);
    let meta = std::fs::symlink_metadata(&file).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&file).ok()?;
        return Some((
            target.as_os_str().as_encoded_bytes().to_vec(),
            EntryKind::Link,
        ));
    }
    if !meta.is_file() {
        return None;
    }
    Some((std::fs::read(&file).ok()?, file_mode_of(&meta)))
}

/// A regular file's mode as git records it: executable when its owner
/// may run it.
#[cfg(unix)]
fn file_mode_of(meta: &std::fs::Metadata) -> EntryKind {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o100 != 0 {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    }
}

#[cfg(not(unix))]
fn file_mode_of(_: &std::fs::Metadata) -> EntryKind {
    EntryKind::Blob
}

/// HEAD's blob (or symlink) at `path` and its mode, HEAD's tree read once
/// into `tree`.
fn head_blob<'r>(
    repo: &'r gix::Repository,
    tree: &mut Option<Option<gix::Tree<'r>>>,
    path: &str,
) -> Result<Option<(Vec<u8>, EntryKind)>> {
    if tree.is_none() {
        *tree = Some(match head_tree_id(repo) {
            Some(id) => Some(repo.find_tree(id).context("cannot read HEAD's tree")?),
            None => None,
        });
    }
    let Some(tree) = tree.as_ref().and_then(Option::as_ref) else {
        return Ok(None);
    };
    Ok(match tree.lookup_entry_by_path(path).ok().flatten() {
        Some(entry) if entry.mode().is_blob() || entry.mode().is_link() => Some((
            entry
                .object()
                .context("cannot read a blob of HEAD")?
                .detach()
                .data,
            entry.mode().kind(),
        )),
        _ => None,
    })
}

/// Whether a leading directory of `rela` (below `root`) is a symlink.
fn beyond_symlink(root: &Path, rela: &str) -> bool {
    let mut dir = root.to_path_buf();
    let mut components = Path::new(rela).components().peekable();
    while let Some(component) = components.next() {
        if components.peek().is_none() {
            break;
        }
        dir.push(component);
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}

fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

/// What HEAD has at a changed path, when known without reading its tree.
enum Known {
    /// This blob (or symlink), with this mode.
    Blob(gix::ObjectId, EntryKind),
    /// No blob (a submodule).
    NotABlob,
    /// Look it up in HEAD's tree.
    Unknown,
}

/// Repository-relative paths of tracked files that differ between HEAD, the
/// index and the working tree.
fn changed_paths(repo: &gix::Repository) -> Result<BTreeMap<String, Known>> {
    if let Some(paths) = changed_paths_by_cache_tree(repo) {
        return paths;
    }
    let mut paths = BTreeMap::new();
    for item in status(repo, gix::status::UntrackedFiles::None)? {
        let item = item.context("cannot compute the status of the working tree")?;
        if let gix::status::Item::IndexWorktree(
            gix::status::index_worktree::Item::DirectoryContents { .. },
        ) = item
        {
            continue;
        }
        paths.insert(item.location().to_str_lossy().into_owned(), Known::Unknown);
    }
    Ok(paths)
}

/// HEAD, index and working tree compared, without rename tracking, with
/// untracked files as asked: the one status set-up both readers share.
fn status(
    repo: &gix::Repository,
    untracked: gix::status::UntrackedFiles,
) -> Result<gix::status::Iter> {
    // HEAD's tree as the ref layer reads it (gix would read HEAD itself,
    // which it cannot in a reftable repository).
    let head_tree =
        head_tree_id(repo).unwrap_or_else(|| gix::ObjectId::empty_tree(repo.object_hash()));
    repo.status(gix::progress::Discard)
        .context("cannot compute the status of the working tree")?
        .head_tree(head_tree)
        .untracked_files(untracked)
        .index_worktree_rewrites(None)
        .tree_index_track_renames(gix::status::tree_index::TrackRenames::Disabled)
        .into_iter(None)
        .context("cannot compute the status of the working tree")
}

/// Repository-relative paths that differ from HEAD in the working tree:
/// tracked changes and untracked files (ignored files excluded), sorted.
pub fn changed_files(repo: &gix::Repository) -> Result<Vec<String>> {
    let mut paths = BTreeSet::new();
    for item in status(repo, gix::status::UntrackedFiles::Files)? {
        let item = item.context("cannot compute the status of the working tree")?;
        paths.insert(item.location().to_str_lossy().into_owned());
    }
    Ok(paths.into_iter().collect())
}

/// The fast path of [`changed_paths`], as git takes it: when the index's
/// cache-tree says the index holds exactly HEAD's tree (as after a commit,
/// checkout or reset, until something is staged), only the index needs
/// comparing with the working tree, and each changed file's HEAD blob is
/// its index entry's. HEAD's tree is then never read (nor rebuilt as an
/// index), nor `.gitmodules`: `diff --stat` counts no submodule lines. The
/// index checksum is not verified, as git verifies it only in `fsck`.
/// `None` when the fast path does not apply.
fn changed_paths_by_cache_tree(repo: &gix::Repository) -> Option<Result<BTreeMap<String, Known>>> {
    // HEAD's target as recorded: peeling would look the object up in the
    // pack index, which this path is here to avoid loading.
    let head = head_id(repo)?;
    let head_tree = match repo
        .commit_graph_if_enabled()
        .ok()
        .flatten()
        .and_then(|graph| {
            graph
                .commit_by_id(head)
                .map(|c| c.root_tree_id().to_owned())
        }) {
        Some(tree) => tree,
        None => repo.find_commit(head).ok()?.tree_id().ok()?.detach(),
    };
    let read_at = super::index_refresh::Stamp::of(&repo.index_path());
    let index = gix::index::File::at(
        repo.index_path(),
        repo.object_hash(),
        true,
        gix::index::decode::Options::default(),
    )
    .ok()?;
    let cache_tree = index.tree()?;
    if index.link().is_some()
        || cache_tree.id != head_tree
        || cache_tree.num_entries != u32::try_from(index.entries().len()).ok()
    {
        return None;
    }
    // Unchanged by stat, but for the racily clean entries (written in the
    // same second as the index, as after a clone or checkout): those are
    // read once and compared, as git does, and the index is written back
    // so that the next reader trusts them by stat alone.
    if let Some(racy) = super::index_refresh::matches_by_stat(repo, &index)
        && super::index_refresh::unchanged(repo, &index, &racy)
    {
        super::index_refresh::write_back(repo, &index, &racy, read_at);
        return Some(Ok(BTreeMap::new()));
    }
    let mut recorder = gix::status::plumbing::index_as_worktree_with_renames::Recorder::default();
    let outcome = repo.index_worktree_status(
        &index,
        None::<&str>,
        &mut recorder,
        gix::status::plumbing::index_as_worktree::traits::FastEq,
        NoSubmodules,
        &mut gix::progress::Discard,
        &std::sync::atomic::AtomicBool::new(false),
        gix::status::index_worktree::Options::default(),
    );
    if let Err(e) = outcome {
        return Some(Err(anyhow!("{e}")).context("cannot compute the status of the working tree"));
    }
    let mut paths = BTreeMap::new();
    for record in recorder.records {
        if let gix::status::plumbing::index_as_worktree_with_renames::Entry::Modification {
            entry,
            rela_path,
            ..
        } = record
        {
            let known = if entry.mode.is_submodule() {
                Known::NotABlob
            } else {
                Known::Blob(
                    entry.id,
                    entry
                        .mode
                        .to_tree_entry_mode()
                        .map_or(EntryKind::Blob, |m| m.kind()),
                )
            };
            paths.insert(rela_path.to_str_lossy().into_owned(), known);
        }
    }
    Some(Ok(paths))
}

/// Submodules are reported unchanged: `diff --stat`'s line counts never
/// include them, and asking would read `.gitmodules` from HEAD's tree.
#[derive(Clone)]
struct NoSubmodules;

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
    type Output = ();

    fn status(
        &mut self,
        _entry: &gix::index::Entry,
        _rela_path: &gix::bstr::BStr,
    ) -> gix::Result<Option<()>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reads_like_git() {
        let s = |files, insertions, deletions| {
            DiffStat {
                files,
                insertions,
                deletions,
            }
            .summary()
        };
        assert_eq!(s(0, 0, 0), None);
        assert_eq!(s(1, 1, 0).unwrap(), "1 file changed, 1 insertion(+)");
        assert_eq!(s(2, 0, 3).unwrap(), "2 files changed, 3 deletions(-)");
        assert_eq!(
            s(3, 4, 1).unwrap(),
            "3 files changed, 4 insertions(+), 1 deletion(-)"
        );
        assert_eq!(
            s(1, 0, 0).unwrap(),
            "1 file changed, 0 insertions(+), 0 deletions(-)"
        );
    }
}

/// A branch checked out in one of the repository's worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The short branch name, like `feat/x`.
    pub branch: String,
    /// The worktree's root, canonical.
    pub root: PathBuf,
}

/// The branches checked out in every worktree of the repository (the main
/// one first, then the linked ones), read from each worktree's `HEAD` file
/// as `git worktree list` does. Detached worktrees, and linked worktrees
/// whose directory is gone, are left out.
pub fn checkouts(repo: &gix::Repository) -> Vec<Checkout> {
    if let Some(branches) = super::refdb::worktree_branches(repo) {
        return branches
            .into_iter()
            .map(|(root, branch)| Checkout {
                branch,
                root: canonical(&root),
            })
            .collect();
    }
    let mut out = Vec::new();
    let common = repo.common_dir();
    if let Ok(main) = repo.main_repo()
        && let Some(root) = main.workdir()
        && let Some(branch) = head_branch(&common.join("HEAD"))
    {
        out.push(Checkout {
            branch,
            root: canonical(root),
        });
    }
    for proxy in repo.worktrees().unwrap_or_default() {
        let Ok(root) = proxy.base() else { continue };
        if !root.is_dir() {
            continue;
        }
        if let Some(branch) = head_branch(&proxy.git_dir().join("HEAD")) {
            out.push(Checkout {
                branch,
                root: canonical(&root),
            });
        }
    }
    out
}

/// The branch a `HEAD` file names (`ref: refs/heads/<branch>`).
fn head_branch(head: &Path) -> Option<String> {
    let text = std::fs::read_to_string(head).ok()?;
    text.trim_end()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}
