//! What `list` shows of a stored brief, and a cache of it keyed by blob id.
//!
//! A blob never changes, so neither does its summary: `list` reads and
//! validates a brief once, then takes its summary from
//! `<common git dir>/handoff-list.cache`. The cache is derived data: a
//! missing, unreadable or outdated file is rebuilt, and deleting it is safe.
//! Like every file the tool writes, it holds filtered text only: a
//! summary is redacted before it is kept, and the file names the rules and
//! options it was filtered with, so that a file filtered otherwise is
//! discarded and rebuilt.

use std::path::PathBuf;

use gix::ObjectId;
use gix::hashtable::HashMap;

use crate::brief::Brief;
use crate::brief::redact::{self, Options};
use crate::support::atomic;

/// The cache file's name in the common git dir.
const FILE: &str = "handoff-list.cache";

/// The cache file's first line, for the rules and options its text was
/// filtered with; another first line discards the file (a build that
/// validates or filters differently must not trust this one's entries).
fn header(options: Options) -> String {
    let mut off = options.off.to_vec();
    off.sort_unstable();
    format!(
        "git-handoff list cache 2, schema 1, rules {} ({}), emails {}, off {}\n",
        redact::rules_digest(),
        redact::engine_version(),
        options.emails,
        off.join(",")
    )
}

/// The fields `list` shows of a valid brief, redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// `state.branch`.
    pub branch: String,
    /// `state.head_sha`.
    pub head_sha: Option<String>,
    /// `timestamp`.
    pub timestamp: String,
    /// `resume.done_when`.
    pub done_when: String,
}

impl Summary {
    /// The summary of `brief`, its text redacted with `options`.
    pub fn of(brief: Brief, options: Options) -> Summary {
        let filtered = |text: String| redact::redact(&text, options).0;
        Summary {
            branch: filtered(brief.state.branch),
            head_sha: brief.state.head_sha,
            timestamp: brief.timestamp,
            done_when: filtered(brief.resume.done_when),
        }
    }
}

/// Drop the cache file of `repo` (after `redact`: no copy of a removed
/// secret may stay behind, even one keyed by a blob no longer stored).
pub fn forget(repo: &gix::Repository) {
    let _ = std::fs::remove_file(repo.common_dir().join(FILE));
}

/// Summaries of valid briefs by blob id, loaded from and saved to the cache
/// file. Every failure to read or write it is silent: it only costs time.
#[derive(Debug, Default)]
pub struct Cache {
    path: Option<PathBuf>,
    /// What summaries are filtered with.
    options: Options,
    entries: HashMap<ObjectId, Summary>,
    added: bool,
}

impl Cache {
    /// Load the cache of `repo`.
    pub fn load(repo: &gix::Repository) -> Cache {
        let path = repo.common_dir().join(FILE);
        let options = Options::from_repo(repo);
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|data| parse(&data, &header(options)))
            .unwrap_or_default();
        Cache {
            path: Some(path),
            options,
            entries,
            added: false,
        }
    }

    /// The cached summary of blob `id`.
    pub fn get(&self, id: &ObjectId) -> Option<&Summary> {
        self.entries.get(id)
    }

    /// Remember the summary of blob `id`, a brief that validated (its
    /// text redacted).
    pub fn insert(&mut self, id: ObjectId, brief: Brief) {
        self.entries.insert(id, Summary::of(brief, self.options));
        self.added = true;
    }

    /// Write the cache back if anything was added or `keep` drops entries
    /// (blobs no longer stored). Written with git's lock-file protocol; a
    /// concurrent writer wins and this write is skipped.
    pub fn save(&mut self, keep: impl Fn(&ObjectId) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|id, _| keep(id));
        let Some(path) = self.path.as_ref() else {
            return;
        };
        if !self.added && self.entries.len() == before {
            return;
        }
        let _ = atomic::write_unless_locked(path, &render(&self.entries, &header(self.options)));
        self.added = false;
    }

    /// The summaries, to move into a listing.
    pub fn into_entries(self) -> HashMap<ObjectId, Summary> {
        self.entries
    }
}

fn render(entries: &HashMap<ObjectId, Summary>, header: &str) -> Vec<u8> {
    let mut ids: Vec<&ObjectId> = entries.keys().collect();
    ids.sort();
    let mut out = String::from(header);
    for id in ids {
        let s = &entries[id];
        out.push_str(&id.to_string());
        for field in [
            s.timestamp.as_str(),
            s.branch.as_str(),
            s.head_sha.as_deref().unwrap_or(""),
            s.done_when.as_str(),
        ] {
            out.push('\t');
            escape(field, &mut out);
        }
        out.push('\n');
    }
    out.into_bytes()
}

fn parse(data: &[u8], header: &str) -> Option<HashMap<ObjectId, Summary>> {
    let text = std::str::from_utf8(data).ok()?;
    let body = text.strip_prefix(header)?;
    let mut entries = HashMap::default();
    for line in body.split_terminator('\n') {
        let mut fields = line.split('\t');
        let id = ObjectId::from_hex(fields.next()?.as_bytes()).ok()?;
        let timestamp = unescape(fields.next()?)?;
        let branch = unescape(fields.next()?)?;
        let head = unescape(fields.next()?)?;
        let done_when = unescape(fields.next()?)?;
        if fields.next().is_some() {
            return None;
        }
        entries.insert(
            id,
            Summary {
                branch,
                head_sha: (!head.is_empty()).then_some(head),
                timestamp,
                done_when,
            },
        );
    }
    Some(entries)
}

fn escape(field: &str, out: &mut String) {
    for c in field.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

fn unescape(field: &str) -> Option<String> {
    if !field.as_bytes().contains(&b'\\') {
        return Some(field.to_string());
    }
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_a_round_trip_with_awkward_text() {
        let mut entries = HashMap::default();
        let id = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        entries.insert(
            id,
            Summary {
                branch: "feat/x\ty".into(),
                head_sha: None,
                timestamp: "2026-01-01T00:00:00Z".into(),
                done_when: "line one\nline\\two\r".into(),
            },
        );
        let other = ObjectId::from_hex(b"1123456789abcdef0123456789abcdef01234567").unwrap();
        entries.insert(
            other,
            Summary {
                branch: "main".into(),
                head_sha: Some("abcdef1".into()),
                timestamp: "2026-01-02T00:00:00Z".into(),
                done_when: "".into(),
            },
        );
        let header = header(Options::default());
        assert_eq!(parse(&render(&entries, &header), &header), Some(entries));
    }

    #[test]
    fn another_header_or_a_damaged_line_discards_the_file() {
        let header = header(Options::default());
        assert_eq!(parse(b"git-handoff list cache 0\n", &header), None);
        // a file filtered by other rules or options
        let old = "git-handoff list cache 1, schema 1\n";
        assert_eq!(parse(old.as_bytes(), &header), None);
        let other = Options {
            emails: false,
            off: &[],
        };
        assert_eq!(parse(header.as_bytes(), &super::header(other)), None);
        let mut data = header.as_bytes().to_vec();
        data.extend_from_slice(b"0123456789abcdef0123456789abcdef01234567\tt\tb\n");
        assert_eq!(parse(&data, &header), None);
        let mut data = header.as_bytes().to_vec();
        data.extend_from_slice(b"0123456789abcdef0123456789abcdef01234567\tt\tb\t\td\\q\n");
        assert_eq!(parse(&data, &header), None);
    }
}
