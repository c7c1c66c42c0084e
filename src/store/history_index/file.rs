//! The history index on disk, laid out so that one key's lines are read
//! without reading any other key's:
//!
//! ```text
//! git-handoff history index 4
//! <tip> <tip> …                                   the tips it covers
//! <dir len> <dir digest> <commits len> <commits digest> <sections len>
//! <offset> <len> <digest> <key as JSON>           one per key, sorted (the directory)
//! <commit> <generation> <parent> …                one per notes commit covered
//! <generation> <line number> <ts> <id>\t<line>    the key's lines, key by key (sections)
//! ```
//!
//! Offsets count from the first section. Each digest is the repository's
//! hash of the header, the tips line and the part it covers, so a part
//! edited, cut short or copied from another file does not match and the
//! file is not used (it is rebuilt from git). The directory's digest covers
//! each section's digest, and the file's length must be the sum of its
//! parts.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Entry, Index};

/// The file's first line; another first line discards the file.
const HEADER: &str = "git-handoff history index 4\n";

fn tips_line(tips: &[ObjectId]) -> String {
    let hex: Vec<String> = tips.iter().map(|t| t.to_string()).collect();
    format!("{}\n", hex.join(" "))
}

/// The digest of one part of a file for `tips`.
fn digest(kind: gix::hash::Kind, tips: &str, part: &[u8]) -> Option<String> {
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(HEADER.as_bytes());
    hasher.update(tips.as_bytes());
    hasher.update(part);
    hasher.try_finalize().ok().map(|id| id.to_string())
}

/// The file holding `index`.
pub(super) fn render(kind: gix::hash::Kind, index: &Index) -> Option<Vec<u8>> {
    let tips = tips_line(&index.tips);
    let mut by_key: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for entry in index.entries.values() {
        by_key.entry(entry.key.as_str()).or_default().push(entry);
    }
    let (mut directory, mut sections) = (Vec::new(), Vec::new());
    for (key, mut entries) in by_key {
        entries.sort_by_key(|e| (e.generation, e.index));
        let start = sections.len();
        for e in entries {
            sections.extend_from_slice(
                format!("{} {} {} {}\t", e.generation, e.index, e.ts, e.id).as_bytes(),
            );
            sections.extend_from_slice(&e.line);
            sections.push(b'\n');
        }
        let part = &sections[start..];
        let key = serde_json::to_string(key).ok()?;
        let line = format!(
            "{start} {} {} {key}\n",
            part.len(),
            digest(kind, &tips, part)?
        );
        directory.extend_from_slice(line.as_bytes());
    }
    let mut commits = Vec::new();
    for (id, (generation, parents)) in &index.commits {
        let parents: Vec<String> = parents.iter().map(|p| p.to_string()).collect();
        commits.extend_from_slice(format!("{id} {generation} {}\n", parents.join(" ")).as_bytes());
    }
    let meta = format!(
        "{} {} {} {} {}\n",
        directory.len(),
        digest(kind, &tips, &directory)?,
        commits.len(),
        digest(kind, &tips, &commits)?,
        sections.len()
    );
    let mut out = Vec::with_capacity(
        HEADER.len() + tips.len() + meta.len() + directory.len() + commits.len() + sections.len(),
    );
    for part in [
        HEADER.as_bytes(),
        tips.as_bytes(),
        meta.as_bytes(),
        &directory,
        &commits,
        &sections,
    ] {
        out.extend_from_slice(part);
    }
    Some(out)
}

/// The sizes and digests of a file's parts, read from its first lines.
struct Head {
    tips: Vec<ObjectId>,
    tips_line: String,
    dir_len: usize,
    dir_digest: String,
    commits_len: usize,
    commits_digest: String,
    sections_len: usize,
    /// Where the directory starts.
    start: u64,
}

fn ids(s: &str) -> Option<Vec<ObjectId>> {
    s.split(' ')
        .filter(|s| !s.is_empty())
        .map(|h| ObjectId::from_hex(h.as_bytes()).ok())
        .collect()
}

/// Read the first lines, and check the file is as long as they say.
fn head(reader: &mut impl BufRead, file_len: u64) -> Option<Head> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if line != HEADER {
        return None;
    }
    let mut tips_line = String::new();
    reader.read_line(&mut tips_line).ok()?;
    let tips = ids(tips_line.strip_suffix('\n')?)?;
    let mut meta = String::new();
    reader.read_line(&mut meta).ok()?;
    let mut parts = meta.strip_suffix('\n')?.split(' ');
    let dir_len = parts.next()?.parse().ok()?;
    let dir_digest = parts.next()?.to_string();
    let commits_len = parts.next()?.parse().ok()?;
    let commits_digest = parts.next()?.to_string();
    let sections_len: usize = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    let start = (HEADER.len() + tips_line.len() + meta.len()) as u64;
    let total = start + (dir_len + commits_len + sections_len) as u64;
    (total == file_len).then_some(Head {
        tips,
        tips_line,
        dir_len,
        dir_digest,
        commits_len,
        commits_digest,
        sections_len,
        start,
    })
}

/// One directory line: offset, length and digest of a key's section, and
/// the key as JSON.
fn dir_line(line: &[u8]) -> Option<(usize, usize, &str, &[u8])> {
    let mut parts = line.splitn(4, |b| *b == b' ');
    let offset = parts.next()?.to_str().ok()?.parse().ok()?;
    let len = parts.next()?.to_str().ok()?.parse().ok()?;
    let digest = parts.next()?.to_str().ok()?;
    Some((offset, len, digest, parts.next()?))
}

/// The entries of one section of `key`.
fn section(key: &str, data: &[u8], out: &mut Vec<Entry>) -> Option<()> {
    for line in ByteSlice::lines(data) {
        let tab = line.find_byte(b'\t')?;
        let (head, text) = (line[..tab].to_str().ok()?, &line[tab + 1..]);
        let mut parts = head.split(' ');
        out.push(Entry {
            generation: parts.next()?.parse().ok()?,
            index: parts.next()?.parse().ok()?,
            ts: parts.next()?.parse().ok()?,
            id: ObjectId::from_hex(parts.next()?.as_bytes()).ok()?,
            key: key.to_string(),
            line: text.to_vec(),
        });
        if parts.next().is_some() {
            return None;
        }
    }
    Some(())
}

/// The lines of `key` in the file at `path`, reading only the head, the
/// directory and that key's section: `None` when the file is missing, for
/// other tips, or damaged; empty when it holds no line of `key`.
pub(super) fn read_key(
    path: &Path,
    kind: gix::hash::Kind,
    tips: &[ObjectId],
    key: &str,
) -> Option<Vec<Entry>> {
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut reader = BufReader::new(file);
    let head = head(&mut reader, len)?;
    if head.tips != tips {
        return None;
    }
    let mut directory = vec![0; head.dir_len];
    reader.read_exact(&mut directory).ok()?;
    if digest(kind, &head.tips_line, &directory)? != head.dir_digest {
        return None;
    }
    let want = serde_json::to_string(key).ok()?;
    let mut out = Vec::new();
    for line in ByteSlice::lines(&directory[..]) {
        let (offset, size, sum, name) = dir_line(line)?;
        if name != want.as_bytes() {
            continue;
        }
        if offset + size > head.sections_len {
            return None;
        }
        let at = head.start + (head.dir_len + head.commits_len + offset) as u64;
        reader.seek(SeekFrom::Start(at)).ok()?;
        let mut data = vec![0; size];
        reader.read_exact(&mut data).ok()?;
        if digest(kind, &head.tips_line, &data)? != sum {
            return None;
        }
        section(key, &data, &mut out)?;
        break;
    }
    Some(out)
}

/// Whether the file at `path` is one for `tips`, as its head says (of
/// the right length; its parts are not read, so not checked).
pub(super) fn is_for(path: &Path, tips: &[ObjectId]) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return false;
    };
    head(&mut BufReader::new(file), len).is_some_and(|head| head.tips == tips)
}

/// The whole index in the file at `path`, every part checked: `None` when
/// the file is missing or damaged.
pub(super) fn read(path: &Path, kind: gix::hash::Kind) -> Option<Index> {
    let data = std::fs::read(path).ok()?;
    let mut reader = &data[..];
    let head = head(&mut reader, data.len() as u64)?;
    let start = head.start as usize;
    let directory = &data[start..start + head.dir_len];
    let commits = &data[start + head.dir_len..][..head.commits_len];
    let sections = &data[start + head.dir_len + head.commits_len..];
    if digest(kind, &head.tips_line, directory)? != head.dir_digest
        || digest(kind, &head.tips_line, commits)? != head.commits_digest
    {
        return None;
    }
    let mut index = Index {
        tips: head.tips.clone(),
        ..Index::default()
    };
    for line in ByteSlice::lines(commits) {
        let mut parts = line.to_str().ok()?.splitn(3, ' ');
        let id = ObjectId::from_hex(parts.next()?.as_bytes()).ok()?;
        let generation = parts.next()?.parse().ok()?;
        index.commits.insert(id, (generation, ids(parts.next()?)?));
    }
    let mut entries = Vec::new();
    for line in ByteSlice::lines(directory) {
        let (offset, size, sum, name) = dir_line(line)?;
        let part = sections.get(offset..offset + size)?;
        if digest(kind, &head.tips_line, part)? != sum {
            return None;
        }
        let key: String = serde_json::from_slice(name).ok()?;
        section(&key, part, &mut entries)?;
    }
    for entry in entries {
        index.entries.insert(entry.line.clone(), entry);
    }
    Some(index)
}
