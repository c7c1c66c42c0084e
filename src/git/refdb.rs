//! The one ref layer's reading half: which backend stores this
//! repository's refs, and every ref read (one ref, a namespace, `HEAD`,
//! the branches checked out in each worktree) through it.
//!
//! The files backend (loose refs and `packed-refs`) is read with gix, and
//! read as git reads it while `git pack-refs`, `gc` or `maintenance` run
//! meanwhile: a ref that moved from loose to packed is found in one or the
//! other, never missed (a listing is taken again when `packed-refs`
//! changed under it or a loose ref vanished while it was read). gix cannot
//! read reftable yet, so in a reftable repository (`extensions.refStorage
//! = reftable`, git 3.0's default) every read goes through git's own
//! backend: `git for-each-ref`, `git symbolic-ref`, `git rev-parse`,
//! `git worktree list`. The writing half is `store::refs::commit`.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::cmd;
use super::index_refresh::Stamp;

/// How a repository stores its refs, chosen once from its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Loose ref files and `packed-refs`: read and written with gix.
    Files,
    /// The reftable format: read and written through the `git` binary.
    Reftable,
}

impl Backend {
    /// The backend of `repo`, from `extensions.refStorage` (files when
    /// unset).
    pub fn of(repo: &gix::Repository) -> Backend {
        let config = repo.config_snapshot();
        match config.string("extensions.refStorage") {
            Some(v) if v.eq_ignore_ascii_case(b"reftable") => Backend::Reftable,
            _ => Backend::Files,
        }
    }
}

/// What a ref holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An object id (a blob, commit or tag).
    Id(ObjectId),
    /// Another ref's name (a symbolic ref).
    Symbolic(String),
    /// A ref git passes over ("ignoring broken ref"): a loose file that
    /// holds no id nor `ref:` line, or a name that is not UTF-8 (then the
    /// name it is listed under has its bytes escaped, so that two such
    /// names never read as one). Why.
    Broken(String),
}

impl Value {
    /// The object id, unless the ref is symbolic.
    pub fn id(&self) -> Option<ObjectId> {
        match self {
            Value::Id(id) => Some(*id),
            Value::Symbolic(_) | Value::Broken(_) => None,
        }
    }
}

/// How often a read is taken again when a concurrent `pack-refs` moved
/// refs under it.
const RACE_RETRIES: usize = 20;

/// What `name` holds, if it exists.
pub fn value(repo: &gix::Repository, name: &str) -> Result<Option<Value>> {
    match Backend::of(repo) {
        Backend::Files => retrying(|| files_value(repo, name)),
        Backend::Reftable => Ok(reftable_list(repo, name, false)?
            .into_iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, value, _)| value)),
    }
}

/// The object id `name` holds, if it exists and is not symbolic.
pub fn id(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    Ok(value(repo, name)?.and_then(|v| v.id()))
}

/// The object `name` leads to, through symbolic refs and tags, if any.
pub fn peeled(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    match Backend::of(repo) {
        Backend::Files => retrying(|| {
            repo.try_find_reference(name)
                .with_context(|| format!("cannot read {name}"))?
                .map(|mut r| r.peel_to_id().map(|id| id.detach()))
                .transpose()
                .with_context(|| format!("cannot read {name}"))
        }),
        Backend::Reftable => Ok(reftable_list(repo, name, true)?
            .into_iter()
            .find(|(n, _, _)| n == name)
            .and_then(|(_, _, peeled)| peeled)),
    }
}

/// Every ref below `prefix` (a namespace ending with `/`), by full name,
/// sorted by name.
pub fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, Value)>> {
    debug_assert!(prefix.ends_with('/'), "{prefix}");
    let mut out = match Backend::of(repo) {
        Backend::Files => retrying(|| files_list(repo, prefix))?,
        Backend::Reftable => reftable_list(repo, prefix, false)?
            .into_iter()
            .map(|(n, v, _)| (n, v))
            .collect(),
    };
    out.retain(|(n, _)| n.starts_with(prefix));
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Every ref below `prefix` that holds an object id, by the rest of its
/// name.
pub fn ids_under(
    repo: &gix::Repository,
    prefix: &str,
) -> Result<std::collections::BTreeMap<String, ObjectId>> {
    Ok(list(repo, prefix)?
        .into_iter()
        .filter_map(|(name, value)| Some((name[prefix.len()..].to_string(), value.id()?)))
        .collect())
}

/// `HEAD` of the current worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The branch it names (`refs/heads/…`), unless detached.
    pub branch: Option<String>,
    /// The commit it resolves to, unless the branch is unborn.
    pub id: Option<ObjectId>,
}

/// Read `HEAD` of the current worktree.
pub fn head(repo: &gix::Repository) -> Result<Head> {
    match Backend::of(repo) {
        Backend::Files => {
            let head = repo.head().context("cannot read HEAD")?;
            Ok(Head {
                branch: head
                    .referent_name()
                    .map(|n| n.as_bstr().to_str_lossy().into_owned()),
                id: head.id().map(|id| id.detach()),
            })
        }
        Backend::Reftable => {
            // A command reads HEAD more than once (the branch, then the
            // drift measured from it): git answers once for as long as the
            // reftable stacks it read from are the ones it read — the
            // worktree's (HEAD) and the common one (the branch HEAD names).
            // Every ref update replaces its stack's `tables.list` (a new
            // file renamed into place), so their stamps tell.
            let stamps = head_stamps(repo);
            let key = (repo.git_dir().to_path_buf(), stamps);
            static LAST: std::sync::Mutex<Option<(HeadKey, Head)>> = std::sync::Mutex::new(None);
            if stamps.0.is_some()
                && let Ok(last) = LAST.lock()
                && let Some((seen, head)) = last.as_ref()
                && *seen == key
            {
                return Ok(head.clone());
            }
            let head = reftable_head(repo)?;
            if stamps.0.is_some()
                && head_stamps(repo) == stamps
                && let Ok(mut last) = LAST.lock()
            {
                *last = Some((key, head.clone()));
            }
            Ok(head)
        }
    }
}

/// What a cached reftable `HEAD` was read under: the worktree's git dir and
/// the stamps of its stacks ([`head_stamps`]).
type HeadKey = (PathBuf, (Option<Stamp>, Option<Stamp>));

/// The stamps of the reftable stacks `HEAD` is read from: the worktree's
/// own and the common one (none apart in the main worktree, where they
/// are the same file).
fn head_stamps(repo: &gix::Repository) -> (Option<Stamp>, Option<Stamp>) {
    let list = |dir: &std::path::Path| Stamp::of(&dir.join("reftable").join("tables.list"));
    let own = list(repo.git_dir());
    let common = (repo.common_dir() != repo.git_dir())
        .then(|| list(repo.common_dir()))
        .flatten();
    (own, common)
}

/// `HEAD` of a reftable repository's current worktree, asked of git.
fn reftable_head(repo: &gix::Repository) -> Result<Head> {
    // One process for the common case, a born HEAD: its id, then the ref
    // it names (`HEAD` itself when detached).
    let both = cmd::run(
        repo,
        &["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"],
        None,
    )?;
    if both.ok
        && let [id, name] = both.text().lines().collect::<Vec<_>>()[..]
    {
        return Ok(Head {
            branch: (name != "HEAD").then(|| name.to_string()),
            id: Some(parse_id(repo, id)?),
        });
    }
    let symbolic = cmd::run(repo, &["symbolic-ref", "-q", "HEAD"], None)?;
    let branch = match symbolic.code {
        Some(0) => Some(symbolic.text().trim_end().to_string()),
        Some(1) => None,
        _ => bail!("cannot read HEAD: {}", cmd::reason(&symbolic.stderr)),
    };
    let resolved = cmd::run(repo, &["rev-parse", "-q", "--verify", "HEAD"], None)?;
    let id = match resolved.ok {
        true => Some(parse_id(repo, resolved.text().trim_end())?),
        false => None,
    };
    Ok(Head { branch, id })
}

/// In a reftable repository, the branch checked out in each worktree whose
/// directory exists (the main one first), as `git worktree list` reads
/// them; `None` in a files repository, where each worktree's `HEAD` file
/// says it.
pub fn worktree_branches(repo: &gix::Repository) -> Option<Vec<(PathBuf, String)>> {
    if Backend::of(repo) != Backend::Reftable {
        return None;
    }
    let run = cmd::run(repo, &["worktree", "list", "--porcelain", "-z"], None).ok()?;
    if !run.ok {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut root: Option<PathBuf> = None;
    for field in run.stdout.split(|b| *b == 0) {
        let field = field.to_str_lossy();
        if let Some(path) = field.strip_prefix("worktree ") {
            root = Some(PathBuf::from(path));
        } else if let (Some(branch), Some(dir)) = (field.strip_prefix("branch refs/heads/"), &root)
            && dir.is_dir()
        {
            out.push((dir.clone(), branch.to_string()));
        }
    }
    Some(out)
}

/// Run `read` again while it fails or sees a namespace that a concurrent
/// `pack-refs` was rewriting: it moves a ref from loose to packed by
/// writing `packed-refs` first and deleting the loose file after, so a
/// reader may find the loose file gone when it opens it.
fn retrying<T>(mut read: impl FnMut() -> Result<T>) -> Result<T> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match read() {
            Ok(value) => return Ok(value),
            Err(_) if attempt < RACE_RETRIES => {
                std::thread::sleep(std::time::Duration::from_millis(attempt as u64));
            }
            Err(err) => return Err(err),
        }
    }
}

fn files_value(repo: &gix::Repository, name: &str) -> Result<Option<Value>> {
    let Some(reference) = repo
        .try_find_reference(name)
        .with_context(|| format!("cannot read {name}"))?
    else {
        return Ok(None);
    };
    Ok(Some(match reference.target() {
        gix::refs::TargetRef::Object(id) => Value::Id(id.to_owned()),
        gix::refs::TargetRef::Symbolic(to) => Value::Symbolic(to.as_bstr().to_string()),
    }))
}

/// A listing of the files backend, as git takes it: the loose refs and
/// `packed-refs` read as one snapshot. When `packed-refs` was replaced
/// during the listing (a `pack-refs` moving refs from loose to packed) the
/// listing may have missed a ref that was in neither copy it read: it is
/// an error, and [`retrying`] takes it again.
fn files_list(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, Value)>> {
    let packed = repo.refs.packed_refs_path();
    let stamp = || {
        std::fs::metadata(&packed)
            .ok()
            .map(|m| (m.len(), m.modified().ok(), file_id(&m)))
    };
    let before = stamp();
    // Loose first, then packed: `pack-refs` writes packed-refs before it
    // deletes the loose files, so a ref moving meanwhile is met in one.
    if let Some(loose) = super::loose_refs::list(repo, prefix)? {
        let mut all = std::collections::BTreeMap::new();
        if let Some(packed) = repo
            .refs
            .cached_packed_buffer()
            .context("cannot read packed-refs")?
        {
            let data: &[u8] = (*packed).as_ref();
            for (name, id) in super::packed_refs::below(data, prefix)? {
                all.insert(name, Value::Id(id));
            }
        }
        // A loose ref stands over a packed one of the same name.
        all.extend(loose);
        if stamp() != before {
            bail!("packed-refs changed while {prefix} was read");
        }
        return Ok(all.into_iter().collect());
    }
    let platform = repo.references().context("cannot read references")?;
    let mut out = Vec::new();
    for reference in platform
        .prefixed(prefix)
        .with_context(|| format!("cannot read {prefix}"))?
    {
        let reference = reference.map_err(|e| anyhow!("cannot read a ref under {prefix}: {e}"))?;
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        let value = match reference.target() {
            gix::refs::TargetRef::Object(id) => Value::Id(id.to_owned()),
            gix::refs::TargetRef::Symbolic(to) => Value::Symbolic(to.as_bstr().to_string()),
        };
        out.push((name, value));
    }
    if stamp() != before {
        bail!("packed-refs changed while {prefix} was read");
    }
    Ok(out)
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> u64 {
    0
}

/// `git for-each-ref` below `pattern` (a namespace, or one ref name and
/// anything below it): each ref's name, value and, when `peel`, the object
/// it leads to.
fn reftable_list(
    repo: &gix::Repository,
    pattern: &str,
    peel: bool,
) -> Result<Vec<(String, Value, Option<ObjectId>)>> {
    let format = "--format=%(refname)%00%(symref)%00%(objectname)%00%(*objectname)";
    let run = cmd::run(repo, &["for-each-ref", format, pattern], None)?;
    if !run.ok {
        bail!("cannot read {pattern}: {}", cmd::reason(&run.stderr));
    }
    let mut out = Vec::new();
    for line in run.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let mut fields = line.split(|b| *b == 0).map(|f| f.to_str_lossy());
        let (Some(name), Some(symref), Some(object), peeled) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            bail!(
                "cannot read {pattern}: git for-each-ref answered '{}'",
                line.to_str_lossy()
            );
        };
        let value = if symref.is_empty() {
            Value::Id(parse_id(repo, &object)?)
        } else {
            Value::Symbolic(symref.into_owned())
        };
        let peeled = match (peel, peeled.as_deref()) {
            (false, _) => None,
            (true, Some(tag)) if !tag.is_empty() => Some(parse_id(repo, tag)?),
            (true, _) if object.is_empty() => None,
            (true, _) => Some(parse_id(repo, &object)?),
        };
        out.push((name.into_owned(), value, peeled));
    }
    Ok(out)
}

fn parse_id(repo: &gix::Repository, hex: &str) -> Result<ObjectId> {
    let id = ObjectId::from_hex(hex.as_bytes())
        .map_err(|_| anyhow!("git answered '{hex}' where an object id was expected"))?;
    if id.kind() != repo.object_hash() {
        bail!(
            "git answered '{hex}', not a {} object id",
            repo.object_hash()
        );
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::head;
    use crate::git::repo::open_at_for_reading;
    use crate::support::test_git::git;

    /// In a reftable repository, every change to `HEAD` — a commit in a
    /// linked worktree, a detach there, a commit on the main worktree's
    /// branch — is seen by the next read in the same process, though reads
    /// between changes are answered from memory.
    #[test]
    fn a_remembered_reftable_head_follows_every_change() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main");
        std::fs::create_dir(&main).unwrap();
        git(
            &main,
            &["init", "-q", "--ref-format=reftable", "-b", "trunk"],
            None,
        );
        git(&main, &["commit", "-q", "--allow-empty", "-m", "one"], None);
        git(
            &main,
            &["worktree", "add", "-q", "-b", "side", "../wt"],
            None,
        );
        let wt = tmp.path().join("wt");
        let read = |dir: &std::path::Path| {
            let repo = open_at_for_reading(dir).unwrap();
            let h = head(&repo).unwrap();
            (h.branch, h.id.map(|id| id.to_string()))
        };
        let rev = |dir: &std::path::Path| git(dir, &["rev-parse", "HEAD"], None).trim().to_string();
        let side = Some("refs/heads/side".to_string());
        let trunk = Some("refs/heads/trunk".to_string());
        assert_eq!(read(&wt), (side.clone(), Some(rev(&wt))));
        assert_eq!(read(&wt), (side.clone(), Some(rev(&wt))));
        git(&wt, &["commit", "-q", "--allow-empty", "-m", "two"], None);
        assert_eq!(read(&wt), (side.clone(), Some(rev(&wt))));
        git(&wt, &["checkout", "-q", "--detach"], None);
        assert_eq!(read(&wt), (None, Some(rev(&wt))));
        assert_eq!(read(&main), (trunk.clone(), Some(rev(&main))));
        git(
            &main,
            &["commit", "-q", "--allow-empty", "-m", "three"],
            None,
        );
        assert_eq!(read(&main), (trunk.clone(), Some(rev(&main))));
        git(&wt, &["checkout", "-q", "side"], None);
        git(&main, &["checkout", "-q", "--detach"], None);
        git(&wt, &["commit", "-q", "--allow-empty", "-m", "four"], None);
        assert_eq!(read(&wt), (side, Some(rev(&wt))));
        assert_eq!(read(&main), (None, Some(rev(&main))));
    }
}
