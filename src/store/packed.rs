//! Many ref edits as one rewrite of `packed-refs`.
//!
//! A push that creates thousands of keys fills two bookkeeping namespaces
//! by the thousand: the outgoing pins (`refs/handoff-push/<pid>/`) and, once
//! the remote took them, the bases and staged values of every new key. As
//! loose refs each one costs a lock file, a ref file and a rename, several
//! times what `git push` itself spends creating the same refs on the
//! remote. Written here they cost one lock (`packed-refs.lock`, the lock
//! git takes for the same file) and one rename, whatever their number.
//!
//! A few edits go here too when every one of their refs lives packed in a
//! small file ([`lives_packed`]): the bookkeeping a push moves after the
//! remote took it (a key's base and staged value, the remote's history)
//! was packed by the fetch before, and `git pack-refs` has pruned the
//! folders a loose ref would need again. Written loose, those four refs
//! cost a push at 5,000 versions a tenth of its time on ext4 in lock files,
//! folders and renames; rewritten here, one lock and one rename.
//!
//! The edits are a compare-and-swap like a loose transaction: every
//! expected value is checked against the refs as they are under the lock,
//! and nothing is written when one does not hold. A name that has a loose
//! ref (which would shadow the packed value) is not written here at all:
//! the caller applies the batch as loose refs instead ([`Outcome::Loose`]).
//! A loose ref another writer creates for one of the names while the file
//! is rewritten shadows the packed value; that is seen after the rename and
//! answered as a lost race.
//!
//! Why not gix's own packed transaction (`file::Transaction` with
//! `PackedRefs::DeletionsAndNonSymbolicUpdates`): it still takes a loose
//! lock file for every ref (created and removed again, plus its reflog),
//! which is the per-ref cost this module exists to avoid. Measured on
//! this tree's test repository, 2,000 new refs in one batch: this
//! rewrite 0.12–0.15 s, gix's packed transaction 1.16–1.38 s, gix's loose
//! transaction 0.99–1.27 s. It serves the files backend only; a reftable
//! repository writes any batch as one table through git.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};
use gix::refs::Target;
use gix::refs::transaction::{Change, PreviousValue, RefEdit};

/// How many edits a batch holds before it is worth one rewrite of
/// `packed-refs` rather than a loose ref per name.
pub const PACKED_AT: usize = 128;

/// The size of `packed-refs` up to which a few edits of packed refs are
/// written where they live (see [`lives_packed`]): rewriting a file this
/// size costs about what the loose refs would, each a lock file, a rename
/// and often the folders `git pack-refs` pruned.
pub const SMALL_FILE: u64 = 1 << 20;

/// How long to wait for `packed-refs.lock` (git's `core.packedRefsTimeout`
/// default).
const LOCK_TIMEOUT: Duration = Duration::from_millis(1000);

/// The header git writes: every ref that peels has its `^` line, sorted.
const HEADER: &[u8] = b"# pack-refs with: peeled fully-peeled sorted \n";

/// What became of a batch.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every edit was applied.
    Applied,
    /// An expected value did not hold (nothing was written), or another
    /// writer created a loose ref for one of the names meanwhile.
    Lost,
    /// Not written here: a name has a loose ref or a reflog, an edit is not a plain
    /// object update or delete, or the repository wants what a packed write
    /// cannot give (a ref namespace, reflogs for every ref).
    Loose,
}

/// Whether a few `edits` are better written into `packed-refs`: every
/// name is packed already (and so, most likely, has no loose ref, which
/// [`edit`] checks under the lock) and the file is small. Bookkeeping a
/// fetch packed stays packed, instead of a loose ref each (git itself
/// rewrites the file to delete a packed ref, and writes an update loose).
pub fn lives_packed(repo: &gix::Repository, edits: &[RefEdit]) -> bool {
    let path = repo.refs.packed_refs_path();
    if edits.is_empty()
        || crate::git::refdb::Backend::of(repo) != crate::git::refdb::Backend::Files
        || std::fs::metadata(&path).map_or(true, |m| m.len() > SMALL_FILE)
    {
        return false;
    }
    let Ok(Some(buffer)) = repo.refs.cached_packed_buffer() else {
        return false;
    };
    edits
        .iter()
        .all(|e| matches!(buffer.try_find(e.name.as_ref()), Ok(Some(_))))
}

/// Apply `edits` as one rewrite of `packed-refs` (see the module docs).
pub fn edit(repo: &gix::Repository, edits: &[RefEdit]) -> Result<Outcome> {
    if crate::git::refdb::Backend::of(repo) != crate::git::refdb::Backend::Files
        || !eligible(repo, edits)
    {
        return Ok(Outcome::Loose);
    }
    let common = repo.common_dir();
    let at = |dir: &str, edit: &RefEdit| {
        common
            .join(dir)
            .join(edit.name.as_bstr().to_str_lossy().as_ref())
            .exists()
    };
    let loose = |edit: &RefEdit| at("", edit);
    // A ref with a reflog has its entries appended by a loose update.
    if edits.iter().any(|e| at("logs", e)) {
        return Ok(Outcome::Loose);
    }
    let path = repo.refs.packed_refs_path();
    let mut lock = gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(LOCK_TIMEOUT),
        None,
        crate::support::shared::policy_for(&path),
    )
    .with_context(|| format!("cannot lock '{}'", path.display()))?;
    if edits.iter().any(loose) {
        return Ok(Outcome::Loose);
    }
    let buffer = repo
        .refs
        .open_packed_buffer()
        .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
    let body: &[u8] = buffer.as_ref().map_or(&[], |b| b.as_ref());
    let Some(merged) = splice(body, edits)? else {
        return Ok(Outcome::Lost);
    };
    lock.with_mut(|f| {
        f.write_all(HEADER)?;
        f.write_all(&merged)
    })
    .with_context(|| format!("cannot write '{}'", lock.lock_path().display()))?;
    lock.commit()
        .map_err(|e| anyhow::anyhow!("cannot write '{}': {}", path.display(), e.error))?;
    crate::support::shared::adjust(&path);
    repo.refs
        .force_refresh_packed_buffer()
        .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
    Ok(if edits.iter().any(loose) {
        Outcome::Lost
    } else {
        Outcome::Applied
    })
}

/// Whether `edits` can be written into `packed-refs`: plain updates to an
/// object that is not a tag (whose peeled value a packed ref would have to
/// carry) and deletes, in a repository without a ref namespace and without
/// `core.logAllRefUpdates=always` (packed refs have no reflog).
fn eligible(repo: &gix::Repository, edits: &[RefEdit]) -> bool {
    let config = repo.config_snapshot();
    let always_log = config
        .string("core.logAllRefUpdates")
        .is_some_and(|v| v.eq_ignore_ascii_case(b"always"));
    if repo.namespace().is_some() || always_log {
        return false;
    }
    edits.iter().all(|edit| {
        !edit.deref
            && match &edit.change {
                Change::Update {
                    new: Target::Object(id),
                    expected,
                    ..
                } => {
                    plain(expected)
                        && repo
                            .find_header(*id)
                            .is_ok_and(|h| h.kind() != gix::object::Kind::Tag)
                }
                Change::Update { .. } => false,
                Change::Delete { expected, .. } => plain(expected),
            }
    })
}

/// An expectation a packed ref can be checked against.
fn plain(expected: &PreviousValue) -> bool {
    matches!(
        expected,
        PreviousValue::Any
            | PreviousValue::MustNotExist
            | PreviousValue::MustExistAndMatch(Target::Object(_))
    )
}

/// The body of `packed-refs` (sorted by name, as gix holds it) after
/// `edits`, spliced line by line: the lines no edit names are copied as
/// they are, peeled lines and all, and nothing is decoded but the names
/// compared and the values an edit expects. `None` when an expected value
/// does not hold.
fn splice(body: &[u8], edits: &[RefEdit]) -> Result<Option<Vec<u8>>> {
    let mut changes: BTreeMap<&BStr, (&PreviousValue, Option<ObjectId>)> = BTreeMap::new();
    for edit in edits {
        let change = match &edit.change {
            Change::Update {
                expected,
                new: Target::Object(id),
                ..
            } => (expected, Some(*id)),
            Change::Delete { expected, .. } => (expected, None),
            Change::Update { .. } => return Ok(None),
        };
        changes.insert(edit.name.as_bstr(), change);
    }
    let mut out = Vec::with_capacity(body.len() + 128 * changes.len());
    let mut pending = changes.into_iter().peekable();
    let mut lines = body.lines_with_terminator().peekable();
    while let Some(line) = lines.next() {
        let (id, name) = line
            .trim_end_with(|c| c == '\n' || c == '\r')
            .split_once_str(" ")
            .ok_or_else(|| anyhow::anyhow!("cannot read packed-refs: a line without a name"))?;
        let name = name.as_bstr();
        // Edits of names before this one create them.
        while let Some((created, (expected, new))) = pending.next_if(|(n, _)| *n < name) {
            if !holds(expected, None, new) {
                return Ok(None);
            }
            push_line(&mut out, created, new);
        }
        let mut peeled = Vec::new();
        while let Some(p) = lines.next_if(|l| l.first() == Some(&b'^')) {
            peeled.push(p);
        }
        match pending.next_if(|(n, _)| *n == name) {
            Some((name, (expected, new))) => {
                let now = ObjectId::from_hex(id)
                    .map_err(|e| anyhow::anyhow!("cannot read packed-refs: {e} in {name:?}"))?;
                if !holds(expected, Some(now), new) {
                    return Ok(None);
                }
                push_line(&mut out, name, new);
            }
            None => {
                for l in std::iter::once(line).chain(peeled) {
                    out.extend_from_slice(l);
                    if !l.ends_with(b"\n") {
                        out.push(b'\n');
                    }
                }
            }
        }
    }
    for (name, (expected, new)) in pending {
        if !holds(expected, None, new) {
            return Ok(None);
        }
        push_line(&mut out, name, new);
    }
    Ok(Some(out))
}

/// The line of `name` at `new` (none for a delete).
fn push_line(out: &mut Vec<u8>, name: &BStr, new: Option<ObjectId>) {
    if let Some(new) = new {
        out.extend_from_slice(new.to_hex().to_string().as_bytes());
        out.push(b' ');
        out.extend_from_slice(name);
        out.push(b'\n');
    }
}

/// Whether `expected` holds of a ref whose value is `now` and is to
/// become `new` (creating what already holds `new` is no conflict).
fn holds(expected: &PreviousValue, now: Option<ObjectId>, new: Option<ObjectId>) -> bool {
    match expected {
        PreviousValue::MustNotExist => now.is_none() || now == new,
        PreviousValue::MustExistAndMatch(Target::Object(id)) => now == Some(*id),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{Outcome, SMALL_FILE, edit, lives_packed, splice};
    use crate::store::refs::{delete, update};
    use crate::support::test_git::git;
    use gix::ObjectId;

    /// A repository with a commit, an annotated tag and a blob, its refs
    /// packed by git; the blob's id.
    fn packed_repo(dir: &std::path::Path) -> ObjectId {
        git(dir, &["init", "-q"], None);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "one"], None);
        git(dir, &["tag", "-a", "-m", "t", "v1"], None);
        git(
            dir,
            &["update-ref", "refs/handoff-remotes/o/briefs/old", "HEAD"],
            None,
        );
        git(dir, &["pack-refs", "--all"], None);
        let blob = git(dir, &["hash-object", "-w", "--stdin"], Some("brief\n"));
        ObjectId::from_hex(blob.trim().as_bytes()).unwrap()
    }

    fn id(dir: &std::path::Path, rev: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", rev], None).trim().as_bytes()).unwrap()
    }

    #[test]
    fn edits_land_in_packed_refs_as_git_reads_them() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let blob = packed_repo(dir);
        let head = id(dir, "HEAD");
        let peeled_before = git(dir, &["show-ref", "-d", "v1"], None);
        let repo = gix::open(dir).unwrap();
        let mut edits: Vec<_> = (0..3)
            .map(|i| {
                update(
                    format!("refs/handoff-remotes/o/briefs/k{i}"),
                    blob,
                    None,
                    "t",
                )
            })
            .collect();
        edits.push(delete("refs/handoff-remotes/o/briefs/old", head));
        edits.push(update("refs/handoff-fetch/o/briefs/k0", blob, None, "t"));
        assert_eq!(edit(&repo, &edits).unwrap(), Outcome::Applied);
        let listed = git(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/handoff-remotes",
                "refs/handoff-fetch",
            ],
            None,
        );
        let want: String = [
            "refs/handoff-fetch/o/briefs/k0",
            "refs/handoff-remotes/o/briefs/k0",
            "refs/handoff-remotes/o/briefs/k1",
            "refs/handoff-remotes/o/briefs/k2",
        ]
        .iter()
        .map(|n| format!("{n} {blob}\n"))
        .collect();
        assert_eq!(listed, want);
        // Nothing loose, the tag still peeled, and gix sees the new refs.
        assert!(!dir.join(".git/refs/handoff-remotes/o/briefs/k0").exists());
        assert_eq!(git(dir, &["show-ref", "-d", "v1"], None), peeled_before);
        let seen = repo
            .find_reference("refs/handoff-remotes/o/briefs/k1")
            .unwrap();
        assert_eq!(seen.id().detach(), blob);
        git(dir, &["fsck", "--no-progress"], None);
        // Moved again, then deleted, each as a compare-and-swap.
        let moved = vec![update(
            "refs/handoff-remotes/o/briefs/k1",
            head,
            Some(blob),
            "t",
        )];
        assert_eq!(edit(&repo, &moved).unwrap(), Outcome::Applied);
        assert_eq!(id(dir, "refs/handoff-remotes/o/briefs/k1"), head);
        let gone = vec![delete("refs/handoff-remotes/o/briefs/k1", head)];
        assert_eq!(edit(&repo, &gone).unwrap(), Outcome::Applied);
        assert!(!git(dir, &["for-each-ref"], None).contains("briefs/k1"));
    }

    #[test]
    fn a_compare_and_swap_that_does_not_hold_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let blob = packed_repo(dir);
        let before = std::fs::read(dir.join(".git/packed-refs")).unwrap();
        let repo = gix::open(dir).unwrap();
        let edits = vec![
            update("refs/handoff-remotes/o/briefs/new", blob, None, "t"),
            // `old` holds HEAD, not the blob.
            update("refs/handoff-remotes/o/briefs/old", blob, Some(blob), "t"),
        ];
        assert_eq!(edit(&repo, &edits).unwrap(), Outcome::Lost);
        let exists = vec![update("refs/handoff-remotes/o/briefs/old", blob, None, "t")];
        assert_eq!(edit(&repo, &exists).unwrap(), Outcome::Lost);
        assert_eq!(std::fs::read(dir.join(".git/packed-refs")).unwrap(), before);
        assert!(!dir.join(".git/packed-refs.lock").exists());
    }

    #[test]
    fn a_loose_ref_a_reflog_or_a_tag_value_is_left_to_loose_refs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let blob = packed_repo(dir);
        git(
            dir,
            &[
                "update-ref",
                "refs/handoff-remotes/o/briefs/loose",
                &blob.to_string(),
            ],
            None,
        );
        let before = std::fs::read(dir.join(".git/packed-refs")).unwrap();
        let repo = gix::open(dir).unwrap();
        // A packed value would be shadowed by the loose ref.
        let shadowed = vec![update(
            "refs/handoff-remotes/o/briefs/loose",
            id(dir, "HEAD"),
            Some(blob),
            "t",
        )];
        assert_eq!(edit(&repo, &shadowed).unwrap(), Outcome::Loose);
        assert_eq!(std::fs::read(dir.join(".git/packed-refs")).unwrap(), before);
        // A ref with a reflog (packed since) keeps getting its entries.
        git(
            dir,
            &[
                "update-ref",
                "--create-reflog",
                "refs/handoff-remotes/o/briefs/logged",
                "HEAD",
            ],
            None,
        );
        git(dir, &["pack-refs", "--all"], None);
        let before = std::fs::read(dir.join(".git/packed-refs")).unwrap();
        let logged = vec![update(
            "refs/handoff-remotes/o/briefs/logged",
            blob,
            Some(id(dir, "HEAD")),
            "t",
        )];
        assert_eq!(edit(&repo, &logged).unwrap(), Outcome::Loose);
        // A tag would need its peeled value.
        let tag = vec![update(
            "refs/handoff-remotes/o/briefs/t",
            id(dir, "v1"),
            None,
            "t",
        )];
        assert_eq!(edit(&repo, &tag).unwrap(), Outcome::Loose);
        assert_eq!(std::fs::read(dir.join(".git/packed-refs")).unwrap(), before);
    }

    #[test]
    fn a_few_edits_live_packed_only_when_every_name_is_packed_in_a_small_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let blob = packed_repo(dir);
        let head = id(dir, "HEAD");
        let repo = gix::open(dir).unwrap();
        let old = "refs/handoff-remotes/o/briefs/old";
        let moved = vec![update(old, blob, Some(head), "t")];
        assert!(lives_packed(&repo, &moved));
        let with_new = vec![
            update(old, blob, Some(head), "t"),
            update("refs/handoff-remotes/o/briefs/new", blob, None, "t"),
        ];
        assert!(
            !lives_packed(&repo, &with_new),
            "a new name is written loose"
        );
        // A big file costs more to rewrite than a few loose refs.
        let mut big = std::fs::read(dir.join(".git/packed-refs")).unwrap();
        let mut n = 0;
        while big.len() as u64 <= SMALL_FILE {
            big.extend(format!("{head} refs/zz/{n:08}\n").bytes());
            n += 1;
        }
        std::fs::write(dir.join(".git/packed-refs"), big).unwrap();
        let repo = gix::open(dir).unwrap();
        assert!(!lives_packed(&repo, &moved));
    }

    /// Lines no edit names are copied as they are (a peeled line stays
    /// with its ref, a last line without its newline gets one); a created
    /// name lands in order, a deleted or moved one loses its peeled line.
    #[test]
    fn a_splice_keeps_every_line_it_does_not_edit() {
        let (a, b) = ("1".repeat(40), "2".repeat(40));
        let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).unwrap();
        let body = format!("{a} refs/a\n{a} refs/c\n^{b}\n{b} refs/e");
        let edits = vec![
            update("refs/b", id(&b), None, "t"),
            update("refs/c", id(&b), Some(id(&a)), "t"),
            update("refs/f", id(&a), None, "t"),
        ];
        let out = splice(body.as_bytes(), &edits).unwrap().unwrap();
        let want = format!("{a} refs/a\n{b} refs/b\n{b} refs/c\n{b} refs/e\n{a} refs/f\n");
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let gone = vec![delete("refs/c", id(&a))];
        let out = splice(body.as_bytes(), &gone).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{a} refs/a\n{b} refs/e\n")
        );
        // An expectation that does not hold, before or at a line.
        let stale = vec![update("refs/c", id(&b), Some(id(&b)), "t")];
        assert_eq!(splice(body.as_bytes(), &stale).unwrap(), None);
        let exists = vec![update("refs/a", id(&b), None, "t")];
        assert_eq!(splice(body.as_bytes(), &exists).unwrap(), None);
        assert!(splice(b"no-space\n", &edits).is_err());
    }
}
