//! Fork and hand-back files: markdown documents in the OS temp dir (never in
//! the repository) that split a side task off into an independent session
//! and bring its result back. Each file starts with a one-line header
//! naming its kind and the repository (its canonical common git dir), so
//! listings show only this repository's files. Consuming a file keeps it,
//! renamed `<name>.consumed` (a child that crashes after picking its fork up
//! can read it again); `fork done` deletes a fork and its hand-back once
//! the merge is confirmed. Nothing is removed by age.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use crate::git::repo::canonical;
use crate::support::atomic::{self, CreateError};
use crate::support::escape::shell_quote;
use crate::support::slug;

/// Every fork and hand-back file name starts with this.
pub const FILE_PREFIX: &str = "handoff-";

/// A hand-back's file name is its fork's stem plus this (and `.md`).
pub const HANDBACK_SUFFIX: &str = "-handback";

/// The header line starts with this and ends with ` -->`.
const HEADER_START: &str = "<!-- git-handoff ";
const HEADER_END: &str = " -->";

/// A consumed file keeps its name plus this suffix until `fork done`.
pub const CONSUMED_SUFFIX: &str = ".consumed";

/// Where `path` is kept once consumed.
pub fn consumed_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(CONSUMED_SUFFIX);
    path.with_file_name(name)
}

/// The most read from a file that claims to be a fork or hand-back.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A side task split off for another session.
    Fork,
    /// The side session's result, for the parent.
    Handback,
}

impl Kind {
    /// `fork` or `hand-back`, for people.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Fork => "fork",
            Kind::Handback => "hand-back",
        }
    }
}

/// The machine-readable first line of a fork or hand-back file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Fork or hand-back.
    pub kind: Kind,
    /// The repository's canonical common git dir.
    pub repo: String,
    /// The side task's purpose.
    pub purpose: String,
    /// The date the file was written, `YYYY-MM-DD`.
    pub date: String,
    /// The brief key the fork was drawn from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Whether a hand-back is expected (forks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hand_back: bool,
    /// The fork file this answers (hand-backs): its file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<String>,
}

impl Header {
    /// The header as the file's first line (with its newline).
    pub fn line(&self) -> String {
        let json = serde_json::to_string(self)
            .expect("a header always serializes")
            .replace("-->", "--\\u003e");
        format!("{HEADER_START}{json}{HEADER_END}\n")
    }

    /// Parse a file's first line; `None` if it is not our header.
    pub fn parse(line: &str) -> Option<Header> {
        let json = line
            .trim_end()
            .strip_prefix(HEADER_START)?
            .strip_suffix(HEADER_END)?;
        serde_json::from_str(json).ok()
    }
}

/// Where fork and hand-back files live: the OS temp dir (`TMPDIR`
/// honoured), canonical.
pub fn dir() -> PathBuf {
    canonical(&std::env::temp_dir())
}

/// Whether `name` has the shape of a fork or hand-back file name:
/// `handoff-` + letters, digits and `-` + `.md`. Never a path.
pub fn is_file_name(name: &str) -> bool {
    name.strip_prefix(FILE_PREFIX)
        .and_then(|rest| rest.strip_suffix(".md"))
        .is_some_and(slug::is_slug)
}

/// Why a fork or hand-back file cannot be used. The messages state the
/// fact; the command layer adds what to run next (`cli::hints`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForkError {
    /// An empty FILE argument.
    #[error("no file given")]
    NoFile,
    /// A FILE whose name is not a fork or hand-back file name.
    #[error("'{arg}' is not a fork or hand-back file name (handoff-<purpose>-<date>.md)")]
    NotAForkName {
        /// The argument as given.
        arg: String,
    },
    /// A fork file that was consumed already.
    #[error("'{shown}' was consumed already; it is kept as '{kept}'")]
    Consumed {
        /// The path as given.
        shown: String,
        /// Where the consumed file is kept.
        kept: String,
        /// The fork file's name.
        name: String,
    },
    /// A file that does not exist.
    #[error("'{shown}' does not exist (done already?)")]
    Missing {
        /// The path.
        shown: String,
    },
    /// Every numbered name of a stem is taken.
    #[error("99 files named {stem}*.md exist in {dir}")]
    TooMany {
        /// The file name stem.
        stem: String,
        /// The temp dir.
        dir: String,
    },
}

/// Resolve a FILE argument to a fork or hand-back file in `dir`: a bare
/// file name is looked up there; a path must lead there (after resolving
/// symlinks and `..`). Anything else, or a name that is not a fork or
/// hand-back file name, is refused.
pub fn resolve(dir: &Path, arg: &str) -> Result<PathBuf> {
    if arg.trim().is_empty() {
        return Err(ForkError::NoFile.into());
    }
    let given = Path::new(arg);
    let name = given
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.strip_suffix(CONSUMED_SUFFIX).unwrap_or(n))
        .filter(|n| is_file_name(n))
        .ok_or_else(|| ForkError::NotAForkName {
            arg: arg.to_string(),
        })?;
    let parent = given.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent
        && canonical(parent) != dir
    {
        crate::refuse!(
            "'{arg}' is not in the temp dir {}; fork and hand-back files live only there",
            dir.display()
        );
    }
    Ok(dir.join(name))
}

/// A fork or hand-back file found in the temp dir.
#[derive(Debug, Clone, Serialize)]
pub struct Artifact {
    /// Its full path (ending `.consumed` once consumed).
    pub path: PathBuf,
    /// Its header.
    #[serde(flatten)]
    pub header: Header,
    /// Whether it was consumed: kept as `<name>.consumed` until `fork done`.
    pub consumed: bool,
}

/// Read a fork or hand-back file: its header and the text after it.
/// Refuses symlinks, non-files, oversized files and files without our
/// header.
pub fn read(path: &Path) -> Result<(Header, String)> {
    let shown = path.display();
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if consumed_path(path).is_file() => ForkError::Consumed {
            shown: shown.to_string(),
            kept: consumed_path(path).display().to_string(),
            name: path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
        }
        .into(),
        std::io::ErrorKind::NotFound => ForkError::Missing {
            shown: shown.to_string(),
        }
        .into(),
        _ => anyhow!("cannot read '{shown}': {e}"),
    })?;
    if !meta.file_type().is_file() {
        crate::refuse!("'{shown}' is not a regular file; refusing to read or delete it");
    }
    if meta.len() > MAX_FILE_BYTES {
        bail!("'{shown}' is larger than 1 MiB; it is not a fork or hand-back file");
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read '{shown}' as UTF-8 text"))?;
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let header = Header::parse(first).ok_or_else(|| {
        crate::refusal!(
            "'{shown}' is not a fork or hand-back file (no git-handoff header); it was left untouched"
        )
    })?;
    Ok((header, rest.to_string()))
}

/// The header of a regular file (not a symlink), reading only its first
/// line (at most 64 KiB); `None` if it has none.
fn read_header(path: &Path) -> Option<Header> {
    use std::io::{BufRead, Read};
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(64 * 1024))
        .read_line(&mut line)
        .ok()?;
    Header::parse(&line)
}

/// The fork and hand-back files in `dir` whose header names `repo` (or
/// one of `aliases`, e.g. its redacted form), consumed ones included (they
/// wait for `fork done`), sorted by date then name. Unreadable or foreign
/// files are skipped.
pub fn list(dir: &Path, repo: &str, aliases: &[String]) -> Result<Vec<Artifact>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let (stem, consumed) = match name.strip_suffix(CONSUMED_SUFFIX) {
            Some(stem) => (stem, true),
            None => (name, false),
        };
        if !is_file_name(stem) {
            continue;
        }
        let path = dir.join(name);
        let Some(header) = read_header(&path) else {
            continue;
        };
        if header.repo == repo || aliases.contains(&header.repo) {
            out.push(Artifact {
                path,
                header,
                consumed,
            });
        }
    }
    out.sort_by(|a, b| (&a.header.date, &a.path).cmp(&(&b.header.date, &b.path)));
    Ok(out)
}

/// Print-and-keep: claim the file by renaming it to `<name>.consumed` (so
/// two consumers never both get it), then read it. It stays there until
/// [`done`]. Returns its header and the text after the header.
pub fn consume(path: &Path) -> Result<(Header, String)> {
    read(path)?;
    let claimed = consumed_path(path);
    std::fs::rename(path, &claimed).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!(
            "'{}' was consumed by someone else meanwhile",
            path.display()
        ),
        _ => anyhow!("cannot consume '{}': {e}", path.display()),
    })?;
    read(&claimed).inspect_err(|_| {
        let _ = std::fs::rename(&claimed, path);
    })
}

/// The file at `path` or, consumed, at `<path>.consumed`, whichever exists.
pub fn existing(path: &Path) -> Option<PathBuf> {
    [path.to_path_buf(), consumed_path(path)]
        .into_iter()
        .find(|p| p.symlink_metadata().is_ok())
}

/// After the merge is confirmed: delete the fork file at `path` (consumed
/// or not) and every hand-back that answers it. Only regular files with a
/// git-handoff header are deleted. Returns the deleted paths.
pub fn done(path: &Path) -> Result<Vec<PathBuf>> {
    let fork = existing(path).ok_or_else(|| ForkError::Missing {
        shown: path.display().to_string(),
    })?;
    let (header, _) = read(&fork)?;
    if header.kind != Kind::Fork {
        bail!(
            "'{}' is a hand-back; `fork done` takes the fork file it answers",
            path.display()
        );
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = handback_stem(name);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut doomed = vec![fork];
    for n in 1..=99 {
        let back = match n {
            1 => dir.join(format!("{stem}.md")),
            n => dir.join(format!("{stem}-{n}.md")),
        };
        doomed.extend(existing(&back).filter(|p| read(p).is_ok()));
    }
    for p in &doomed {
        std::fs::remove_file(p).with_context(|| format!("cannot delete '{}'", p.display()))?;
    }
    Ok(doomed)
}

/// Create `<dir>/<stem>.md`, or `<stem>-2.md`, `-3` … when that exists,
/// with the content `render` gives for the chosen path; never replaces a
/// file. Returns the path.
pub fn create(dir: &Path, stem: &str, render: impl Fn(&Path) -> String) -> Result<PathBuf> {
    for n in 1..=99 {
        let name = if n == 1 {
            format!("{stem}.md")
        } else {
            format!("{stem}-{n}.md")
        };
        let path = dir.join(name);
        if path.symlink_metadata().is_ok() {
            continue;
        }
        match atomic::create_new(&path, &render(&path)) {
            Ok(()) => return Ok(path),
            Err(CreateError::Exists(_)) => continue,
            Err(CreateError::Other(e)) => return Err(e),
        }
    }
    Err(ForkError::TooMany {
        stem: stem.to_string(),
        dir: dir.display().to_string(),
    }
    .into())
}

/// The stem of a fork file: `handoff-<slug>-<date>`.
pub fn fork_stem(purpose_slug: &str, date: &str) -> String {
    format!("{FILE_PREFIX}{purpose_slug}-{date}")
}

/// The stem of the hand-back of the fork file named `fork_name`.
pub fn handback_stem(fork_name: &str) -> String {
    let stem = fork_name.strip_suffix(".md").unwrap_or(fork_name);
    format!("{stem}{HANDBACK_SUFFIX}")
}

/// A pointer in a fork file: a path (with optional `:lines`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// `PATH[:LINES]`, a brief or a narrative section.
    pub target: String,
    /// Why it matters, if said.
    pub why: Option<String>,
}

/// Everything a fork file says.
#[derive(Debug, Clone)]
pub struct ForkDoc {
    /// Its header.
    pub header: Header,
    /// What "just this slice" excludes, when known (the parent's goal).
    pub parent_goal: Option<String>,
    /// Pointers, in order.
    pub pointers: Vec<Pointer>,
    /// Suggested skills.
    pub skills: Vec<String>,
    /// Key context to start.
    pub context: Vec<String>,
    /// Decisions Made: the parent's locked decisions (from its brief).
    pub decisions: Vec<String>,
    /// Artifacts: what the parent's work has produced so far (changed
    /// files, the brief).
    pub artifacts: Vec<String>,
    /// Current State: branch and head, uncommitted work, tests, next step.
    pub current_state: Vec<String>,
}

fn bullets(items: &[String]) -> String {
    if items.is_empty() {
        return "—\n".to_string();
    }
    items.iter().map(|i| format!("- {}\n", i.trim())).collect()
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl ForkDoc {
    /// The file's text: header, then Date, Purpose, Scope, Pointers,
    /// Suggested Skills, Key Context to Start, Decisions Made, Artifacts,
    /// Current State and, when a hand-back is expected, Hand-Back Expected.
    /// `path` is where the file goes, for the hand-back command.
    pub fn render(&self, path: &Path) -> String {
        let h = &self.header;
        let purpose = one_line(&h.purpose);
        let mut out = h.line();
        out.push_str(&format!("# Fork — {purpose}\n\n"));
        out.push_str(&format!("## Date\n{}\n\n", h.date));
        out.push_str(&format!("## Purpose\n{}\n\n", h.purpose.trim()));
        out.push_str(&format!(
            "## Scope\nJust this slice: {purpose}. Nothing else — "
        ));
        match &self.parent_goal {
            Some(goal) => out.push_str(&format!(
                "the parent session keeps its own task ({}); do not take it over or rewrite its brief.\n\n",
                one_line(goal)
            )),
            None => out.push_str("the parent session keeps its own task; do not take it over.\n\n"),
        }
        let pointers: Vec<String> = self
            .pointers
            .iter()
            .map(|p| match &p.why {
                Some(why) => format!("{} — {}", p.target.trim(), one_line(why)),
                None => p.target.trim().to_string(),
            })
            .collect();
        out.push_str("## Pointers\n");
        out.push_str(&bullets(&pointers));
        out.push_str("\n## Suggested Skills\n");
        out.push_str(&bullets(&self.skills));
        out.push_str("\n## Key Context to Start\n");
        out.push_str(&bullets(&self.context));
        out.push_str("\n## Decisions Made\n");
        out.push_str(&bullets(&self.decisions));
        out.push_str("\n## Artifacts\n");
        out.push_str(&bullets(&self.artifacts));
        out.push_str("\n## Current State\n");
        out.push_str(&bullets(&self.current_state));
        if h.hand_back {
            out.push_str(&format!(
                "\n## Hand-Back Expected\nWhen done, write the hand-back (it lands beside this file):\n\n    git handoff handback --to {} --result \"…\" [--change PATH]… [--merge-guidance \"…\"] [--open \"…\"]…\n\nthen tell the parent session its path; the parent reads it with `git handoff fork consume FILE` and, once the merge is confirmed, deletes both with `git handoff fork done FORK`.\n",
                shell_quote(&path.display().to_string())
            ));
        }
        out
    }
}

/// Everything a hand-back file says.
#[derive(Debug, Clone)]
pub struct HandbackDoc {
    /// Its header (`fork` names the fork file).
    pub header: Header,
    /// Result summary.
    pub result: String,
    /// Changes / findings: paths or short notes.
    pub changes: Vec<String>,
    /// How to merge the result, if said.
    pub merge_guidance: Option<String>,
    /// What is still open.
    pub open: Vec<String>,
}

impl HandbackDoc {
    /// The file's text: header, then Date, Result Summary, Changes /
    /// Findings, Merge Guidance and Open Items.
    pub fn render(&self) -> String {
        let h = &self.header;
        let mut out = h.line();
        out.push_str(&format!("# Hand-back — {}\n\n", one_line(&h.purpose)));
        if let Some(fork) = &h.fork {
            out.push_str(&format!("Answers the fork `{fork}`.\n\n"));
        }
        out.push_str(&format!("## Date\n{}\n\n", h.date));
        out.push_str(&format!("## Result Summary\n{}\n\n", self.result.trim()));
        out.push_str("## Changes / Findings\n");
        out.push_str(&bullets(&self.changes));
        out.push_str("\n## Merge Guidance\n");
        match self.merge_guidance.as_deref().map(str::trim) {
            Some(g) if !g.is_empty() => out.push_str(&format!("{g}\n")),
            _ => out.push_str("—\n"),
        }
        out.push_str("\n## Open Items\n");
        out.push_str(&bullets(&self.open));
        out
    }
}

fn ends_with_date(s: &str) -> bool {
    s.len() >= 10
        && s.is_char_boundary(s.len() - 10)
        && crate::support::clock::parse_date(&s[s.len() - 10..]).is_some()
}

/// `s` without a trailing `-N` (one or two digits) when what precedes it
/// satisfies `keep`.
fn strip_counter(s: &str, keep: impl Fn(&str) -> bool) -> &str {
    match s.rsplit_once('-') {
        Some((head, n))
            if (1..=2).contains(&n.len())
                && n.bytes().all(|b| b.is_ascii_digit())
                && keep(head) =>
        {
            head
        }
        _ => s,
    }
}

/// The slug and date of a fork file name
/// `handoff-<slug>-<YYYY-MM-DD>[-N].md`; `None` for anything else,
/// hand-back names included.
pub fn parse_fork_name(name: &str) -> Option<(String, String)> {
    let stem = name.strip_prefix(FILE_PREFIX)?.strip_suffix(".md")?;
    if strip_counter(stem, |h| h.ends_with(HANDBACK_SUFFIX)).ends_with(HANDBACK_SUFFIX) {
        return None;
    }
    let base = strip_counter(stem, ends_with_date);
    if !ends_with_date(base) {
        return None;
    }
    let (slug, date) = base.split_at(base.len() - 10);
    let slug = slug.strip_suffix('-')?;
    slug::is_slug(slug).then(|| (slug.to_string(), date.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: Kind) -> Header {
        Header {
            kind,
            repo: "/tmp/x/.git".into(),
            purpose: "fix --> the <!-- thing".into(),
            date: "2026-11-30".into(),
            key: Some("main".into()),
            hand_back: true,
            fork: None,
        }
    }

    #[test]
    fn header_round_trips_even_with_comment_markers() {
        let h = header(Kind::Fork);
        let line = h.line();
        assert_eq!(line.matches("-->").count(), 1, "{line}");
        assert_eq!(Header::parse(line.trim_end()), Some(h));
        assert_eq!(Header::parse("<!-- something else -->"), None);
        assert_eq!(Header::parse("# Fork"), None);
    }

    #[test]
    fn file_names_are_never_paths() {
        assert!(is_file_name("handoff-fix-it-2026-11-30.md"));
        assert!(is_file_name("handoff-fix-it-2026-11-30-handback.md"));
        for bad in [
            "handoff-.md",
            "handoff-../x.md",
            "handoff-a/b.md",
            "notes.md",
            "handoff-a.txt",
            "handoff--a.md",
        ] {
            assert!(!is_file_name(bad), "{bad}");
        }
    }

    #[test]
    fn fork_names_parse() {
        assert_eq!(
            parse_fork_name("handoff-fix-it-2026-11-30.md"),
            Some(("fix-it".into(), "2026-11-30".into()))
        );
        assert_eq!(
            parse_fork_name("handoff-fix-it-2026-11-30-2.md"),
            Some(("fix-it".into(), "2026-11-30".into()))
        );
        assert_eq!(
            parse_fork_name("handoff-fix-it-2026-11-30-handback.md"),
            None
        );
        assert_eq!(
            parse_fork_name("handoff-fix-it-2026-11-30-handback-2.md"),
            None
        );
        assert_eq!(
            parse_fork_name("handoff-fix-handback-2026-11-30.md"),
            Some(("fix-handback".into(), "2026-11-30".into()))
        );
        assert_eq!(parse_fork_name("handoff-fix-it.md"), None);
    }

    #[test]
    fn resolve_stays_in_the_temp_dir() {
        let dir = tempfile::tempdir().unwrap();
        let d = canonical(dir.path());
        let name = "handoff-a-2026-11-30.md";
        assert_eq!(resolve(&d, name).unwrap(), d.join(name));
        assert_eq!(
            resolve(&d, &d.join(name).display().to_string()).unwrap(),
            d.join(name)
        );
        assert!(resolve(&d, &format!("/etc/{name}")).is_err());
        assert!(resolve(&d, "../etc/passwd").is_err());
        assert!(resolve(&d, "").is_err());
    }
}
