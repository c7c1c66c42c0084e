//! The loose refs below a shared namespace, read the short way.
//!
//! gix reads a loose ref by its whole path: a `statx` and an `open` that
//! each walk every folder from `/`, then two reads, a seek and a close.
//! With a thousand briefs that is most of what a push or a listing costs
//! beyond git's own work. Here each folder is opened once and each ref
//! file relative to it: one `openat` of a single name, one read, one close.
//! What a ref says is decoded by gix ([`Reference::try_from_path`]), and
//! what counts as a ref is what gix counts: regular files whose full name
//! git would accept; folders are entered, anything else is passed over.
//!
//! [`Reference::try_from_path`]: gix::refs::file::loose::Reference::try_from_path

use anyhow::{Context, Result, anyhow};
use gix::bstr::{BString, ByteSlice};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::refdb::Value;

/// Folders are opened to read their entries; nothing is followed.
const DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
/// Ref files: a symlink is not opened (gix passes over it too).
const FILE: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The loose refs of `repo` below `prefix` (a namespace under the common
/// git dir, ending with `/`), by full name, unsorted; `None` where this
/// reader does not apply (a ref namespace is set) and gix must read them.
pub fn list(repo: &gix::Repository, prefix: &str) -> Result<Option<Vec<(String, Value)>>> {
    if repo.refs.namespace.is_some() {
        return Ok(None);
    }
    let dir = repo.common_dir().join(prefix);
    let root = match rustix::fs::open(&dir, DIR, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(Some(Vec::new())),
        Err(err) => return Err(err).with_context(|| format!("cannot read {prefix}")),
    };
    let mut out = Vec::new();
    let mut name = BString::from(prefix);
    walk(repo.object_hash(), root, &mut name, &mut out)?;
    Ok(Some(out))
}

/// Add the refs in folder `dir`, whose full name is `name`, to `out`.
fn walk(
    kind: gix::hash::Kind,
    dir: OwnedFd,
    name: &mut BString,
    out: &mut Vec<(String, Value)>,
) -> Result<()> {
    let folder = name.to_str_lossy().into_owned();
    let reading = |err: rustix::io::Errno| anyhow!("cannot read {folder}: {err}");
    let entries = rustix::fs::Dir::read_from(dir.as_fd()).map_err(reading)?;
    for entry in entries {
        let entry = entry.map_err(reading)?;
        let file = entry.file_name().to_bytes();
        if file == b"." || file == b".." {
            continue;
        }
        let len = name.len();
        name.extend_from_slice(file);
        let kind_of = match entry.file_type() {
            FileType::Unknown => rustix::fs::statat(dir.as_fd(), file, AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .unwrap_or(FileType::Unknown),
            known => known,
        };
        match kind_of {
            FileType::Directory => {
                if let Ok(sub) = rustix::fs::openat(dir.as_fd(), file, DIR, Mode::empty()) {
                    name.push(b'/');
                    walk(kind, sub, name, out)?;
                }
            }
            FileType::RegularFile
                if gix::validate::reference::name_partial(name.as_bstr()).is_ok() =>
            {
                out.extend(read(dir.as_fd(), file, name, kind)?);
            }
            _ => {}
        }
        name.truncate(len);
    }
    Ok(())
}

/// The ref in file `file` of folder `dir`, named `name`; none when it
/// went away since the folder was read.
fn read(
    dir: BorrowedFd<'_>,
    file: &[u8],
    name: &BString,
    kind: gix::hash::Kind,
) -> Result<Option<(String, Value)>> {
    let shown = || name.to_str_lossy().into_owned();
    let fd = match rustix::fs::openat(dir, file, FILE, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", shown())),
    };
    // A ref file is an id or `ref: <name>` and a newline: one read takes
    // it whole (a short read of a regular file is its end); a longer file
    // is read on to its end.
    let mut contents = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let n =
            rustix::io::read(&fd, &mut buf).with_context(|| format!("cannot read {}", shown()))?;
        contents.extend_from_slice(&buf[..n]);
        if n < buf.len() {
            break;
        }
    }
    // What git passes over ("ignoring broken ref") is listed as broken,
    // by a name that says what it is, never under another key's name.
    if std::str::from_utf8(name.as_ref()).is_err() {
        let escaped = name.as_slice().escape_ascii().to_string();
        return Ok(Some((
            escaped,
            Value::Broken("its name is not UTF-8".into()),
        )));
    }
    let full = gix::refs::FullName::try_from(name.clone())
        .map_err(|err| anyhow!("cannot read a ref under {}: {err}", shown()))?;
    let value = match gix::refs::file::loose::Reference::try_from_path(full, &contents, kind) {
        Ok(reference) => match reference.target {
            gix::refs::Target::Object(id) => Value::Id(id),
            gix::refs::Target::Symbolic(to) => Value::Symbolic(to.as_bstr().to_string()),
        },
        Err(_) => Value::Broken("it holds no object id (git ignores it as a broken ref)".into()),
    };
    Ok(Some((shown(), value)))
}

#[cfg(test)]
mod tests {
    use crate::git::refdb::{Value, list};
    use crate::git::repo::open_at_for_reading;
    use crate::support::test_git::git;

    /// The listing is git's: loose refs over packed ones of the same name,
    /// folders entered, symbolic refs kept symbolic, and lock files, names
    /// git refuses and empty folders passed over; but a symlink, which git
    /// follows wherever it leads, is passed over as gix does.
    #[test]
    fn a_listing_is_what_git_for_each_ref_lists() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"], None);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "one"], None);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "two"], None);
        let one = git(dir, &["rev-parse", "HEAD~1"], None);
        let two = git(dir, &["rev-parse", "HEAD"], None);
        let ns = "refs/handoff-fetch/origin/briefs/";
        for (name, id) in [("a", &one), ("b", &one), ("c", &one), ("deep/x", &one)] {
            git(
                dir,
                &["update-ref", &format!("{ns}{name}"), id.trim()],
                None,
            );
        }
        // Packed beside them: a neighbour whose name begins alike and a
        // ref to an annotated tag (its peeled line follows it).
        git(dir, &["tag", "-a", "-m", "t", "v1", one.trim()], None);
        let tag = git(dir, &["rev-parse", "v1"], None);
        git(dir, &["update-ref", &format!("{ns}t"), tag.trim()], None);
        git(
            dir,
            &[
                "update-ref",
                "refs/handoff-fetch/origin/briefs-old/a",
                one.trim(),
            ],
            None,
        );
        git(dir, &["pack-refs", "--all"], None);
        // Loose over packed, loose only, nested, symbolic.
        git(dir, &["update-ref", &format!("{ns}b"), two.trim()], None);
        git(dir, &["update-ref", &format!("{ns}d"), two.trim()], None);
        git(
            dir,
            &["update-ref", &format!("{ns}deep/er/y"), two.trim()],
            None,
        );
        git(
            dir,
            &["symbolic-ref", &format!("{ns}s"), "refs/heads/main"],
            None,
        );
        // What is no ref.
        let folder = dir.join(".git").join(ns);
        std::fs::write(folder.join("e.lock"), &two).unwrap();
        std::fs::write(folder.join("bad..name"), &two).unwrap();
        std::os::unix::fs::symlink(folder.join("d"), folder.join("link")).unwrap();
        std::fs::create_dir_all(folder.join("empty/deeper")).unwrap();

        let repo = open_at_for_reading(dir).unwrap();
        let ours: Vec<String> = list(&repo, ns)
            .unwrap()
            .into_iter()
            .map(|(name, value)| match value {
                Value::Id(id) => format!("{name} {id}"),
                Value::Symbolic(to) => format!("{name} -> {to}"),
                Value::Broken(why) => format!("{name} broken: {why}"),
            })
            .collect();
        let format =
            "--format=%(refname) %(if)%(symref)%(then)-> %(symref)%(else)%(objectname)%(end)";
        let theirs = git(dir, &["for-each-ref", format, ns], None);
        let link = format!("{ns}link ");
        let theirs: Vec<&str> = theirs.lines().filter(|l| !l.starts_with(&link)).collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours.len(), 8, "{ours:#?}");
        // A namespace that does not exist lists nothing.
        assert!(list(&repo, "refs/handoff-fetch/other/").unwrap().is_empty());
    }
}
