//! What RECOVER re-reads before it rebuilds a brief, as the method has it:
//! the latest narrative entries, `git log --oneline -20` and `git diff` —
//! bounded, and redacted like everything a write stores. Reads only.

use anyhow::Result;

use crate::brief::redact;
use crate::git::repo;
use crate::narrative;

/// How many narrative entries are shown, newest first.
pub const ENTRIES: usize = 3;
/// The most lines shown of one entry.
pub const ENTRY_LINES: usize = 40;
/// How many commits are listed.
pub const COMMITS: usize = 20;
/// The most lines of diff shown.
pub const DIFF_LINES: usize = 200;

/// The material to re-read, redacted.
#[derive(Debug, Clone, Default)]
pub struct Reread {
    /// The narrative file, relative to the worktree root, when there is one.
    pub narrative: Option<String>,
    /// Its latest entries (at most [`ENTRIES`], each cut to
    /// [`ENTRY_LINES`] lines).
    pub entries: Vec<String>,
    /// The newest commits: short id and subject.
    pub commits: Vec<(String, String)>,
    /// `git diff --stat HEAD`'s summary line, when the tree is dirty.
    pub diff_summary: Option<String>,
    /// The diff against HEAD, at most [`DIFF_LINES`] lines.
    pub diff: String,
    /// Whether the diff was cut.
    pub diff_cut: bool,
    /// What redaction removed, by kind.
    pub redacted: redact::Counts,
}

/// Gather what to re-read in `repo`'s current worktree.
pub fn reread(repo: &gix::Repository) -> Result<Reread> {
    let options = redact::Options::from_repo(repo);
    let mut out = Reread::default();
    let clean = |text: &str, counts: &mut redact::Counts| {
        let (text, found) = redact::redact(text, options);
        redact::merge(counts, found);
        text
    };
    let root = repo::worktree_info(repo)?.root;
    if narrative::tree_path(repo).is_some()
        && let Ok(path) = narrative::path(repo, &root)
        && let Ok(text) = std::fs::read_to_string(&path)
    {
        out.narrative = path
            .strip_prefix(&root)
            .ok()
            .map(|p| p.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/"));
        if let Ok(parsed) = narrative::merge::parse(&text, "narrative") {
            for entry in parsed.entries.iter().take(ENTRIES) {
                let cut: Vec<&str> = entry.text.lines().take(ENTRY_LINES).collect();
                out.entries.push(clean(&cut.join("\n"), &mut out.redacted));
            }
        }
    }
    for (sha, subject) in repo::recent_commits(repo, COMMITS) {
        let subject = clean(&subject, &mut out.redacted);
        out.commits.push((sha, subject));
    }
    let (stat, _) = repo::diff_stat_files(repo)?;
    out.diff_summary = stat.summary();
    if out.diff_summary.is_some() {
        let (diff, cut) = repo::worktree_diff(repo, DIFF_LINES)?;
        out.diff = clean(&diff, &mut out.redacted);
        out.diff_cut = cut;
    }
    Ok(out)
}
