//! Whether two commits differ in one file alone: how drift and the
//! narrative tell a commit of the narrative log from work. Trees are read
//! through [`Packs`], a few reads per path component.

use gix::ObjectId;

use crate::git::packs::Packs;

/// Whether the trees of commits `from` and `to` differ in the file at
/// `path` and nowhere else, but for `attribute` lines in the root
/// `.gitattributes` (added or removed): two tree reads per path component.
pub fn only_differs_at(
    repo: &gix::Repository,
    packs: &mut Packs,
    (from, to): (ObjectId, ObjectId),
    path: &str,
    attribute: Option<&str>,
) -> bool {
    let (Some(a), Some(b)) = (tree_of(repo, packs, from), tree_of(repo, packs, to)) else {
        return false;
    };
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    a != b
        && !parts.is_empty()
        && confined_at_root(repo, packs, (a, b), &parts, attribute).unwrap_or(false)
}

/// [`only_differs_at`] for `commit` against its one parent (a merge or a
/// root commit is never the change of one file).
pub fn only_change_of(
    repo: &gix::Repository,
    packs: &mut Packs,
    commit: ObjectId,
    path: &str,
    attribute: Option<&str>,
) -> bool {
    let Some((kind, data)) = packs.object(repo, commit) else {
        return false;
    };
    if kind != gix::object::Kind::Commit {
        return false;
    }
    let parents: Vec<ObjectId> = gix::objs::CommitRefIter::from_bytes(&data, repo.object_hash())
        .parent_ids()
        .collect();
    matches!(parents[..], [parent] if only_differs_at(repo, packs, (parent, commit), path, attribute))
}

/// The tree of commit `id`.
fn tree_of(repo: &gix::Repository, packs: &mut Packs, id: ObjectId) -> Option<ObjectId> {
    let (kind, data) = packs.object(repo, id)?;
    if kind != gix::object::Kind::Commit {
        return None;
    }
    gix::objs::CommitRefIter::from_bytes(&data, repo.object_hash())
        .tree_id()
        .ok()
}

/// A tree entry: name, mode, id.
type TreeEntry = (Vec<u8>, u16, ObjectId);

/// The root `.gitattributes`.
const ATTRIBUTES: &[u8] = b".gitattributes";

/// [`confined`] for the root trees `a` and `b`, where `.gitattributes`
/// may also differ, by `attribute` lines alone.
fn confined_at_root(
    repo: &gix::Repository,
    packs: &mut Packs,
    (a, b): (ObjectId, ObjectId),
    parts: &[&str],
    attribute: Option<&str>,
) -> Option<bool> {
    let Some(line) = attribute.filter(|_| parts.first().map(|p| p.as_bytes()) != Some(ATTRIBUTES))
    else {
        return confined(repo, packs, Some(a), Some(b), parts);
    };
    let split = |entries: Vec<TreeEntry>| -> (Option<TreeEntry>, Vec<TreeEntry>) {
        let (attributes, rest): (Vec<_>, Vec<_>) =
            entries.into_iter().partition(|e| e.0 == ATTRIBUTES);
        (attributes.into_iter().next(), rest)
    };
    let (attributes_a, rest_a) = split(entries_of(repo, packs, Some(a))?);
    let (attributes_b, rest_b) = split(entries_of(repo, packs, Some(b))?);
    if attributes_a != attributes_b
        && !same_but_for(repo, packs, (attributes_a, attributes_b), line)
    {
        return Some(false);
    }
    confined_entries(repo, packs, (rest_a, rest_b), parts)
}

/// Whether two versions of a file (`None`: absent, as empty) hold the same
/// lines once every `line` is left out of both (not when one is not a
/// plain file or cannot be read).
fn same_but_for(
    repo: &gix::Repository,
    packs: &mut Packs,
    (a, b): (Option<TreeEntry>, Option<TreeEntry>),
    line: &str,
) -> bool {
    use gix::bstr::ByteSlice;
    let blob = gix::object::tree::EntryKind::Blob as u16;
    let mut lines = |entry: Option<TreeEntry>| -> Option<Vec<Vec<u8>>> {
        let Some((_, mode, id)) = entry else {
            return Some(Vec::new());
        };
        if mode != blob {
            return None;
        }
        let (kind, data) = packs.object(repo, id)?;
        (kind == gix::object::Kind::Blob).then(|| {
            data.lines()
                .filter(|l| l.trim() != line.as_bytes())
                .map(<[u8]>::to_vec)
                .collect()
        })
    };
    matches!((lines(a), lines(b)), (Some(a), Some(b)) if a == b)
}

/// The entries of tree `id` (`None`: absent, no entries); `None` when it
/// cannot be read.
fn entries_of(
    repo: &gix::Repository,
    packs: &mut Packs,
    id: Option<ObjectId>,
) -> Option<Vec<TreeEntry>> {
    let Some(id) = id else {
        return Some(Vec::new());
    };
    let data = packs.tree(repo, id)?;
    let decoded = gix::objs::TreeRef::from_bytes(&data, repo.object_hash()).ok()?;
    Some(
        decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_vec(), e.mode.value(), e.oid.to_owned()))
            .collect(),
    )
}

/// Whether every difference between trees `a` and `b` (`None`: absent, as
/// an empty tree) lies under `parts`; `None` when a tree cannot be read.
fn confined(
    repo: &gix::Repository,
    packs: &mut Packs,
    a: Option<ObjectId>,
    b: Option<ObjectId>,
    parts: &[&str],
) -> Option<bool> {
    if parts.is_empty() || a == b {
        return Some(true);
    }
    let entries = (entries_of(repo, packs, a)?, entries_of(repo, packs, b)?);
    confined_entries(repo, packs, entries, parts)
}

/// [`confined`], on the entries of the two trees.
fn confined_entries(
    repo: &gix::Repository,
    packs: &mut Packs,
    (ea, eb): (Vec<TreeEntry>, Vec<TreeEntry>),
    parts: &[&str],
) -> Option<bool> {
    let Some((first, rest)) = parts.split_first() else {
        return Some(true);
    };
    let (inside_a, others_a): (Vec<_>, Vec<_>) =
        ea.into_iter().partition(|e| e.0 == first.as_bytes());
    let (inside_b, others_b): (Vec<_>, Vec<_>) =
        eb.into_iter().partition(|e| e.0 == first.as_bytes());
    if others_a != others_b {
        return Some(false);
    }
    if rest.is_empty() {
        // The file itself: any change to it (added, removed, edited) counts.
        return Some(true);
    }
    let tree = gix::object::tree::EntryKind::Tree as u16;
    let subtree = |v: &[TreeEntry]| -> Result<Option<ObjectId>, ()> {
        match v.first() {
            None => Ok(None),
            Some((_, mode, id)) if *mode == tree => Ok(Some(*id)),
            Some(_) => Err(()),
        }
    };
    match (subtree(&inside_a), subtree(&inside_b)) {
        (Ok(x), Ok(y)) => confined(repo, packs, x, y, rest),
        // A file where the narrative's folder would be: not the narrative.
        _ => Some(false),
    }
}
