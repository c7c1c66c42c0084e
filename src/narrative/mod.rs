//! The narrative log: `<worktree root>/.claude/PROJECT_STATE.md` (or
//! `handoff.narrative`), newest entry first, directly below its header.
//! Entries are prepended under a lock file and renamed into place, so the
//! file is always either the old or the new version and concurrent writers
//! lose nothing.
//!
//! The `narrative` layer also holds the log merge of the merge driver
//! ([`merge`]). Writes only the narrative file.

pub mod merge;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use crate::brief::Brief;
use crate::git::repo;

/// The default narrative path, relative to the worktree root.
pub const DEFAULT_PATH: &str = ".claude/PROJECT_STATE.md";

/// The header a new narrative file starts with.
pub const HEADER: &str = "# Project state\n\nA log of decisions, reasons, rejected paths and surprises, newest entry first.\nEach `git handoff write` adds an entry directly below this header.\n";

/// How long to wait for another writer's lock on the file, by default.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// How long to wait for the narrative lock: `handoff.lockTimeout` (ms),
/// else [`LOCK_WAIT`].
pub fn lock_wait(repo: &gix::Repository) -> Duration {
    repo.config_snapshot()
        .integer("handoff.lockTimeout")
        .filter(|ms| *ms >= 0)
        .map(|ms| Duration::from_millis(ms as u64))
        .unwrap_or(LOCK_WAIT)
}

/// The narrative section titles, in order.
pub const SECTIONS: [&str; 4] = [
    "What was done",
    "Decisions (with rationale)",
    "Surprises / lessons",
    "Pointers",
];

/// Whether `handoff.narrative` turns the narrative off: a false boolean
/// (`false`, `no`, `off`, `0`) in place of a path. Writes then add no entry
/// and create no file or directory.
pub fn disabled(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .string("handoff.narrative")
        .is_some_and(|v| {
            matches!(
                v.to_string().trim().to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0"
            )
        })
}

/// Whether git tracks the narrative file at `rel` (relative to the worktree
/// root, `/`-separated): in the index of `repo`'s worktree.
pub fn tracked(repo: &gix::Repository, rel: &str) -> bool {
    repo.index_or_empty()
        .map(|index| index.entry_by_path(rel.into()).is_some())
        .unwrap_or(false)
}

/// Whether git ignores the file at `rel` (a `.gitignore` rule, the repo's
/// `info/exclude`, `core.excludesFile`): an ignored narrative stays in its
/// worktree by design, so nobody is asked to commit it.
pub fn ignored(repo: &gix::Repository, rel: &str) -> bool {
    let Ok(index) = repo.index_or_empty() else {
        return false;
    };
    let Ok(mut excludes) = repo.excludes(
        &index,
        None,
        gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
    ) else {
        return false;
    };
    excludes
        .at_path(rel, Some(gix::index::entry::Mode::FILE))
        .is_ok_and(|platform| platform.is_excluded())
}

/// The narrative's path as configured, relative to the worktree root:
/// `handoff.narrative`, else [`DEFAULT_PATH`] (also when it is off).
fn configured(repo: &gix::Repository) -> String {
    repo.config_snapshot()
        .string("handoff.narrative")
        .map(|v| v.to_string())
        .filter(|v| !v.trim().is_empty() && !disabled(repo))
        .unwrap_or_else(|| DEFAULT_PATH.to_string())
}

/// Whether a relative path names a file and stays inside the worktree
/// lexically (no `..`, not absolute).
fn is_inside(rel: &Path) -> bool {
    let escapes = rel.is_absolute()
        || rel.components().any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::Prefix(_) | Component::RootDir
            )
        });
    !escapes && rel.file_name().is_some()
}

/// The narrative's path in a commit's tree (`/`-separated, from the
/// worktree root), or `None` when the narrative is off or misconfigured.
pub fn tree_path(repo: &gix::Repository) -> Option<String> {
    if disabled(repo) {
        return None;
    }
    let rel = configured(repo);
    is_inside(Path::new(&rel)).then(|| {
        Path::new(&rel)
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/")
    })
}

/// Where the narrative of the worktree at `root` lives: `handoff.narrative`
/// (relative to the root) or [`DEFAULT_PATH`] (also when the setting turns
/// the narrative off, see [`disabled`]). Refuses paths that leave the
/// worktree, also through a symlinked directory.
pub fn path(repo: &gix::Repository, root: &Path) -> Result<PathBuf> {
    let rel = configured(repo);
    let rel_path = Path::new(&rel);
    if !is_inside(rel_path) {
        bail!(
            "handoff.narrative = '{rel}' must be a file path inside the worktree, like {DEFAULT_PATH}; fix it with `git config handoff.narrative {DEFAULT_PATH}`"
        );
    }
    let full = root.join(rel_path);
    // The deepest existing ancestor must resolve inside the worktree.
    if let Some(dir) = full.parent() {
        repo::refuse_outside(root, dir, "the narrative directory ")?;
    }
    if full.is_symlink() {
        bail!(
            "the narrative file '{}' is a symlink; refusing to follow it",
            full.display()
        );
    }
    Ok(full)
}

/// The heading line of the newest narrative entry written for `key` (its
/// label is the key, or a split's list that names it), with the narrative's
/// path relative to the worktree root: what a reference to the entry names.
/// `None` when the narrative is off, missing or holds no entry for `key`.
pub fn newest_heading(
    repo: &gix::Repository,
    root: &Path,
    key: &str,
) -> Result<Option<(String, String)>> {
    let Some(rel) = tree_path(repo) else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(path(repo, root)?) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Ok(parsed) = merge::parse(&text, "narrative") else {
        return Ok(None);
    };
    let heading = parsed
        .entries
        .into_iter()
        .find(|entry| label_names(&entry.heading, key))
        .map(|entry| entry.heading);
    Ok(heading.map(|h| (rel, h)))
}

/// The newest entry of `text` (a narrative) written for `key`: its whole
/// text, heading included, as [`merge::parse`] gives it.
pub fn newest_entry(text: &str, key: &str) -> Option<String> {
    let parsed = merge::parse(&to_lf(text), "narrative").ok()?;
    parsed
        .entries
        .into_iter()
        .find(|entry| label_names(&entry.heading, key))
        .map(|entry| entry.text)
}

/// Whether `text` (a narrative) holds an entry whose text is `entry`.
pub fn holds_entry(text: &str, entry: &str) -> bool {
    merge::parse(&to_lf(text), "narrative")
        .is_ok_and(|parsed| parsed.entries.iter().any(|e| e.text == entry))
}

/// `existing` with its entry `old` (whole text, as [`newest_entry`] gives
/// it) replaced by `entry`, in the file's own line endings; `None` when
/// `existing` does not hold `old`.
pub fn replace_entry(existing: &str, old: &str, entry: &str) -> Option<String> {
    let lf = to_lf(existing);
    let at = lf.find(old)?;
    let entry = entry.trim_end_matches('\n');
    let text = format!("{}{entry}{}", &lf[..at], &lf[at + old.len()..]);
    Some(if is_crlf(existing) {
        to_crlf(&text)
    } else {
        text
    })
}

/// Whether an entry heading's `[label]` is `key` or a split's list naming it.
fn label_names(heading: &str, key: &str) -> bool {
    let Some(label) = heading
        .split_once(" — [")
        .and_then(|(_, rest)| rest.split_once("] "))
        .map(|(label, _)| label)
    else {
        return false;
    };
    match label.strip_prefix("split: ") {
        Some(list) => list.split(", ").any(|k| k == key),
        None => label == key,
    }
}

/// One narrative entry, before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// What goes in the brackets: the key, or `split: a, b`.
    pub label: String,
    /// The heading's title.
    pub title: String,
    /// `(section title, markdown body)` in order.
    pub sections: Vec<(String, String)>,
}

impl Entry {
    /// Render as markdown: the one `## ` heading line, then `### ` sections.
    /// Characters a terminal would act on are escaped (NUL would also make
    /// the file binary to git and to the merge driver).
    pub fn render(&self) -> String {
        crate::support::escape::clean(&self.render_raw()).into_owned()
    }

    fn render_raw(&self) -> String {
        let mut out = format!(
            "## {} — [{}] {}\n",
            inline(&self.date),
            inline(&self.label),
            one_line(&self.title)
        );
        for (title, body) in &self.sections {
            out.push_str(&format!("\n### {title}\n"));
            let body = body.trim_end();
            if body.is_empty() {
                out.push_str("—\n");
            } else {
                out.push_str(body);
                out.push('\n');
            }
        }
        out
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > 100 {
        let cut: String = line.chars().take(99).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// A brief's value on one line: its lines joined with spaces. A value
/// spanning lines could otherwise start a line of the narrative with `## `
/// (a forged entry), a code fence that swallows every older entry, or a
/// conflict marker, and the merge driver could no longer read the file.
pub fn inline(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn bullets<'a>(items: impl IntoIterator<Item = &'a str>, prefix: &str) -> String {
    items
        .into_iter()
        .map(|i| format!("- {prefix}{}\n", inline(i)))
        .collect()
}

/// The commits of a key's line of work since its previous narrative entry
/// (the previous brief's `head_sha`): subjects, newest first, at most
/// [`MAX_COMMITS`], and how many more there were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commits {
    /// Commit subjects, newest first.
    pub subjects: Vec<String>,
    /// Commits beyond the subjects listed.
    pub more: usize,
}

/// How many commit subjects an entry lists.
pub const MAX_COMMITS: usize = 5;

impl Commits {
    /// The commits reachable from HEAD and not from `since` (the previous
    /// brief's head); without `since`, none: a first entry has no "since".
    /// Unreadable history yields none rather than failing the write.
    pub fn since(repo: &gix::Repository, since: Option<&str>) -> Commits {
        let Some(since) = since.and_then(|s| gix::ObjectId::from_hex(s.as_bytes()).ok()) else {
            return Commits::default();
        };
        let Some(head) = crate::git::repo::head_id(repo) else {
            return Commits::default();
        };
        if head == since || repo.find_object(since).is_err() {
            return Commits::default();
        }
        let Ok(walk) = repo.rev_walk([head]).with_hidden([since]).all() else {
            return Commits::default();
        };
        let narrative = tree_path(repo);
        let mut packs = crate::git::packs::Packs::new(repo, 1 << 20);
        let mut out = Commits::default();
        for info in walk.take(1000).flatten() {
            if out.subjects.len() == MAX_COMMITS {
                out.more += 1;
                continue;
            }
            let Ok(commit) = info.object() else {
                continue;
            };
            // A commit of nothing but the narrative (the entry a write
            // added) is no work done.
            if narrative.as_deref().is_some_and(|path| {
                crate::git::confined::only_change_of(repo, &mut packs, commit.id, path, None)
            }) {
                continue;
            }
            // The whole message redacted first, then its first line: a
            // secret that spans lines is found before the cut.
            let message = String::from_utf8_lossy(commit.message_raw_sloppy());
            let redacted = crate::brief::redact::redact_text(&message).0;
            let subject = redacted.lines().next().unwrap_or("").trim().to_string();
            out.subjects.push(subject);
        }
        out
    }
}

/// A decision as the method writes it: `**<decision>** — <why>.`, from a
/// `decision — why` string (or any separator
/// [`crate::brief::split_decision`] accepts); a bare decision is bold
/// alone.
pub fn decision_line(decision: &str) -> String {
    let decision = inline(decision);
    let (what, why) = crate::brief::split_decision(&decision);
    match why {
        Some(why) => format!("**{what}** — {}", sentence(why)),
        None => format!("**{what}**"),
    }
}

/// `s` ending with a full stop (unless it ends with punctuation already).
fn sentence(s: &str) -> String {
    let s = s.trim();
    if s.ends_with(['.', '!', '?', ')', '`']) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// The Decisions section: each decision with its why; the rejected
/// alternatives follow the decision they belong to when there is one
/// decision, else they close the section as one `Rejected:` line.
pub fn decisions_section(decisions: &[String], rejected: &[String]) -> String {
    let rejected: Vec<String> = rejected
        .iter()
        .map(|r| inline(r).trim_end_matches('.').to_string())
        .collect();
    let rejected_line =
        (!rejected.is_empty()).then(|| format!("Rejected: {}.", rejected.join("; ")));
    let mut out = String::new();
    for d in decisions {
        let mut line = decision_line(d);
        if decisions.len() == 1
            && let Some(r) = &rejected_line
        {
            // A bare `**decision**` gets its full stop before the next sentence.
            if !line.ends_with(['.', '!', '?', ')', '`']) {
                line.push('.');
            }
            line.push_str(&format!(" {r}"));
        }
        out.push_str(&format!("- {line}"));
        out.push('\n');
    }
    if decisions.len() != 1
        && let Some(r) = &rejected_line
    {
        out.push_str(&format!("- {r}\n"));
    }
    out
}

/// Derive an entry from a brief, as the method writes it: what was done
/// (the commits since the key's previous entry, tests, uncommitted work),
/// decisions with their why and the rejected alternatives, pointers (the
/// brief, the next check, open risks, files to read first). "Surprises /
/// lessons" is left out: only the writer knows them (`--narrative`).
/// `blob` is the stored version's short id.
pub fn entry_from_brief(brief: &Brief, blob: Option<&str>, commits: &Commits) -> Entry {
    let s = &brief.state;
    let done = done_section(brief, commits);
    let decisions = decisions_section(&s.decisions, &s.rejected_paths);

    let key = inline(&brief.key);
    let mut pointers = format!(
        "- Brief: `git handoff resume {}`",
        crate::support::escape::shell_quote(&key)
    );
    if let Some(blob) = blob {
        pointers.push_str(&format!(" (refs/handoffs/{key}, version {blob})"));
    }
    pointers.push('\n');
    pointers.push_str(&format!("- Next: {}\n", inline(&brief.resume.resume_by)));
    pointers.push_str(&format!(
        "- Done when: {}\n",
        inline(&brief.resume.done_when)
    ));
    pointers.push_str(&format!(
        "- Next check: {}\n",
        inline(&s.next_acceptance_check)
    ));
    pointers.push_str(&bullets(
        s.open_risks.iter().map(String::as_str),
        "Open risk: ",
    ));
    for f in &brief.files_read_first {
        pointers.push_str(&format!(
            "- Read first: `{}` — {}\n",
            inline(&f.path),
            inline(&f.why)
        ));
    }
    Entry {
        date: crate::support::clock::date_of(&brief.timestamp).to_string(),
        label: brief.key.clone(),
        title: brief.resume.resume_by.clone(),
        sections: vec![
            (SECTIONS[0].into(), done),
            (SECTIONS[1].into(), decisions),
            (SECTIONS[3].into(), pointers),
        ],
    }
}

/// The most bullets "What was done" holds.
pub const MAX_DONE: usize = 5;

/// "What was done": work actually done — the commits since the key's
/// previous entry, uncommitted changes, test results — in at most
/// [`MAX_DONE`] bullets (the last one counting what did not fit); `—` when
/// there is none yet. What comes next is a pointer, not work done.
fn done_section(brief: &Brief, commits: &Commits) -> String {
    let s = &brief.state;
    // Each bullet with how many things it stands for.
    let mut items: Vec<(String, usize)> = commits.subjects.iter().map(|c| (inline(c), 1)).collect();
    if commits.more > 0 {
        items.push((
            format!("… and {} earlier commits", commits.more),
            commits.more,
        ));
    }
    if let Some(diff) = &s.diff_summary {
        items.push((format!("Uncommitted: {}", inline(diff)), 1));
    }
    items.extend(s.tests.iter().map(|t| {
        (
            format!("Test `{}`: {}", inline(&t.cmd), inline(&t.result)),
            1,
        )
    }));
    if items.len() > MAX_DONE {
        let left: usize = items[MAX_DONE - 1..].iter().map(|(_, n)| n).sum();
        items.truncate(MAX_DONE - 1);
        items.push((
            format!(
                "… and {left} more (`git log` and `git handoff resume {}` have them)",
                crate::support::escape::shell_quote(&inline(&brief.key))
            ),
            left,
        ));
    }
    if items.is_empty() {
        return "—\n".to_string();
    }
    items.iter().map(|(i, _)| format!("- {i}\n")).collect()
}

/// Merge a hand-written narrative (markdown with `### ` sections, an
/// optional first-line `# Title`) into a derived entry: its sections replace
/// the derived ones of the same title, unknown sections are appended, text
/// before the first section goes into "What was done". Any other `#`/`##`
/// heading is refused: an entry has exactly one `## ` line.
pub fn apply_markdown(entry: &mut Entry, markdown: &str) -> Result<()> {
    // Read the text as it will be written (control characters escaped), so
    // that a fence is a fence here exactly when it is one in the file.
    let markdown = crate::support::escape::clean(markdown);
    let mut title = None;
    let mut current: Option<String> = None;
    let mut parsed: Vec<(String, String)> = Vec::new();
    let mut preamble = String::new();
    let mut in_fence = false;
    let mut fence_line = 0;
    for (n, line) in markdown.lines().enumerate() {
        if line.starts_with("<<<<<<<") || line.starts_with(">>>>>>>") {
            bail!(
                "narrative line {}: a conflict marker; resolve the conflict in the narrative text first",
                n + 1
            );
        }
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            fence_line = n + 1;
        }
        if !in_fence && let Some(rest) = line.strip_prefix("### ") {
            current = Some(rest.trim().to_string());
            parsed.push((rest.trim().to_string(), String::new()));
            continue;
        }
        if !in_fence && (line.starts_with("# ") || line.starts_with("## ")) {
            if n == 0 {
                title = Some(line.trim_start_matches('#').trim().to_string());
                continue;
            }
            bail!(
                "narrative line {}: '{}' is a top-level heading; an entry has one `## ` line, write sections as `### Title`",
                n + 1,
                line.chars().take(60).collect::<String>()
            );
        }
        match &current {
            Some(_) => {
                let body = &mut parsed.last_mut().expect("a section is open").1;
                body.push_str(line);
                body.push('\n');
            }
            None => {
                preamble.push_str(line);
                preamble.push('\n');
            }
        }
    }
    if in_fence {
        bail!(
            "narrative line {fence_line}: this code fence is never closed, so it would swallow every older entry; close it"
        );
    }
    if let Some(t) = title.filter(|t| !t.is_empty()) {
        entry.title = t;
    }
    if !preamble.trim().is_empty() {
        parsed.insert(0, (SECTIONS[0].to_string(), preamble));
    }
    for (name, body) in parsed {
        let body = body.trim_matches('\n').to_string() + "\n";
        match entry
            .sections
            .iter_mut()
            .find(|(t, _)| t.eq_ignore_ascii_case(&name))
        {
            Some(slot) => slot.1 = body,
            // A known section goes to its place in the method's order.
            None => match SECTIONS.iter().position(|t| t.eq_ignore_ascii_case(&name)) {
                Some(rank) => {
                    let at = entry
                        .sections
                        .iter()
                        .position(|(t, _)| {
                            SECTIONS
                                .iter()
                                .position(|k| k.eq_ignore_ascii_case(t))
                                .is_none_or(|r| r > rank)
                        })
                        .unwrap_or(entry.sections.len());
                    entry.sections.insert(at, (name, body));
                }
                None => entry.sections.push((name, body)),
            },
        }
    }
    Ok(())
}

/// Insert a rendered entry into the narrative text: directly below the
/// header block (everything before the first `## ` line), above earlier
/// entries. A missing or empty file gets [`HEADER`]; a file that does not
/// start with a `# ` heading gets the header and keeps all its text below.
pub fn prepend(existing: Option<&str>, entry: &str) -> String {
    let entry = entry.trim_end_matches('\n');
    let existing = existing.unwrap_or("");
    if existing.trim().is_empty() {
        return format!("{HEADER}\n{entry}\n");
    }
    if !existing.starts_with("# ") {
        return format!("{HEADER}\n{entry}\n\n{existing}");
    }
    let split = entry_start(existing).unwrap_or(existing.len());
    let (header, rest) = existing.split_at(split);
    let header = header.trim_end_matches(['\n', '\r', ' ']);
    if rest.is_empty() {
        format!("{header}\n\n{entry}\n")
    } else {
        format!("{header}\n\n{entry}\n\n{rest}")
    }
}

/// Whether `text` ends its lines with CRLF throughout (at least one line
/// break, every `\n` preceded by `\r`).
pub fn is_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && text.matches("\r\n").count() == lf
}

/// `text` with CRLF line breaks turned into LF; other text is unchanged.
pub fn to_lf(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("\r\n") {
        text.replace("\r\n", "\n").into()
    } else {
        text.into()
    }
}

/// `text` (LF line breaks) with every line break written CRLF.
pub fn to_crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// Prepend `entry` (LF text) to `existing` in the file's own line endings:
/// a CRLF file gets a CRLF entry and stays CRLF throughout.
pub fn prepend_keeping_endings(existing: Option<&str>, entry: &str) -> String {
    match existing {
        Some(text) if is_crlf(text) => to_crlf(&prepend(Some(&to_lf(text)), entry)),
        _ => prepend(existing, entry),
    }
}

/// Whether `new` is `old` with only whole entries added, each one of the
/// tool's (`## YYYY-MM-DD — [label] title`): the narrative then holds no
/// work of the user's, only what writes prepended. Line endings aside.
pub fn only_entries_added(old: &str, new: &str) -> bool {
    let (Ok(old), Ok(new)) = (
        merge::parse(&to_lf(old), "HEAD"),
        merge::parse(&to_lf(new), "worktree"),
    ) else {
        return false;
    };
    let header_kept = old.header.trim() == new.header.trim() || old.header.trim().is_empty();
    let mut olds = old.entries.iter().peekable();
    let mut added_are_ours = true;
    for entry in &new.entries {
        if olds.peek().is_some_and(|o| o.text == entry.text) {
            olds.next();
        } else {
            added_are_ours &= entry.heading.contains(" — [");
        }
    }
    header_kept && olds.peek().is_none() && added_are_ours
}

/// Byte offset of the first line starting with `## `.
fn entry_start(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("## ") {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// A narrative update prepared under its lock: the lock file
/// (`<file>.lock`, git-handoff's own: it records its owner and the
/// versions the write stores) is held while the new content waits in
/// `<file>.staged`; [`Pending::commit`] renames that into place, dropping
/// it leaves the file untouched. A lock a killed write left is taken over
/// (`support::owned_lock`), and that write's staged update is finished
/// when its versions were stored, dropped when they were not.
pub struct Pending {
    _lock: crate::support::owned_lock::Owned,
    staged: PathBuf,
    path: PathBuf,
    /// How many lines the entry adds to the file.
    added: usize,
    /// Whether the entry replaced an earlier one.
    amended: bool,
}

/// What a write stages the narrative for: the versions it is about to
/// store, and how to tell whether a version was stored (for the update a
/// killed write left).
pub struct Staging<'a> {
    /// (key, version id) of every brief the write stores.
    pub versions: Vec<(String, String)>,
    /// Whether version `id` (second) of `key` (first) is stored.
    pub stored: &'a dyn Fn(&str, &str) -> bool,
}

fn staged_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".staged");
    PathBuf::from(name)
}

fn lock_narrative(
    path: &Path,
    wait: Duration,
    versions: &[(String, String)],
) -> Result<crate::support::owned_lock::Owned> {
    use crate::support::owned_lock::{LockError, Owned};
    let lock = format!("{}.lock", path.display());
    let extra: String = versions
        .iter()
        .map(|(key, id)| format!("version {id} {key}\n"))
        .collect();
    Owned::acquire_with(Path::new(&lock), wait, &extra).map_err(|err| match err {
        // A lock of an earlier version holds its staged update itself.
        LockError::Unowned { .. } => anyhow!(
            "cannot lock the narrative: '{lock}' exists; another git-handoff may be writing. If none is, it was killed mid-write: keep its update with mv '{lock}' '{}', or drop it with rm '{lock}'",
            path.display()
        ),
        err => anyhow!("cannot lock the narrative: {err}"),
    })
}

/// Finish or undo the update of a killed write whose lock was taken over
/// (`record`): its staged file goes into place when every version it was
/// storing is stored (the brief has its entry), and is removed otherwise.
fn finish_killed(path: &Path, staged: &Path, record: &str, staging: &Staging) -> Result<()> {
    if !staged.exists() {
        return Ok(());
    }
    let versions: Vec<(&str, &str)> = record
        .lines()
        .filter_map(|l| l.strip_prefix("version ")?.split_once(' '))
        .collect();
    let stored = !versions.is_empty() && versions.iter().all(|(id, key)| (staging.stored)(key, id));
    if stored {
        std::fs::rename(staged, path)
            .with_context(|| format!("cannot replace {}", path.display()))?;
    } else {
        std::fs::remove_file(staged)
            .with_context(|| format!("cannot remove {}", staged.display()))?;
    }
    Ok(())
}

impl Pending {
    /// Lock the narrative at `path`, read it, and stage it with `entry`
    /// prepended, or in place of the entry `amend` when the file still
    /// holds it. Waits up to `wait` for another writer (see [`lock_wait`]).
    pub fn prepare(
        path: &Path,
        entry: &str,
        amend: Option<&str>,
        wait: Duration,
        staging: &Staging,
    ) -> Result<Pending> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let lock = lock_narrative(path, wait, &staging.versions)?;
        let staged = staged_path(path);
        if let Some(record) = lock.taken_over() {
            finish_killed(path, &staged, record, staging)?;
        }
        let existing = match std::fs::read(path) {
            Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
                anyhow!(
                    "{} is not UTF-8 text; fix or move it, then run again",
                    path.display()
                )
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let amended = existing
            .as_deref()
            .zip(amend)
            .and_then(|(text, old)| replace_entry(text, old, entry));
        let replaced = amended.is_some();
        let text = amended.unwrap_or_else(|| prepend_keeping_endings(existing.as_deref(), entry));
        let added = text
            .lines()
            .count()
            .saturating_sub(existing.as_deref().map_or(0, |e| e.lines().count()));
        let pending = Pending {
            _lock: lock,
            staged,
            path: path.to_path_buf(),
            added,
            amended: replaced,
        };
        std::fs::write(&pending.staged, text.as_bytes())
            .with_context(|| format!("cannot write {}", pending.staged.display()))?;
        crate::support::failpoint::reach("narrative-staged");
        Ok(pending)
    }

    /// How many lines the staged entry adds to the file (the entry and the
    /// blank line that separates it; the header too for a new file).
    pub fn lines_added(&self) -> usize {
        self.added
    }

    /// Whether the entry replaced an earlier one rather than being
    /// prepended.
    pub fn amended(&self) -> bool {
        self.amended
    }

    /// Rename the staged file into place.
    pub fn commit(self) -> Result<PathBuf> {
        let path = self.path.clone();
        crate::support::failpoint::reach("before-narrative-rename");
        std::fs::rename(&self.staged, &path)
            .map_err(|e| anyhow!("cannot replace {}: {e}", path.display()))?;
        crate::support::shared::adjust(&path);
        Ok(path)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Not committed: the update is dropped (committed: gone already).
        let _ = std::fs::remove_file(&self.staged);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_decision_ends_its_sentence_before_the_rejected_ones() {
        let rejected = ["< operator".to_string()];
        assert_eq!(
            decisions_section(&["use <=".into()], &rejected),
            "- **use <=**. Rejected: < operator.\n"
        );
        assert_eq!(
            decisions_section(&["use <= — off by one".into()], &rejected),
            "- **use <=** — off by one. Rejected: < operator.\n"
        );
        for why in ["B - because b", "B: because b", "B (because b)"] {
            assert_eq!(decision_line(why), "**B** — because b.", "{why}");
        }
    }

    fn entry(title: &str) -> String {
        format!("## 2026-01-01 — [k] {title}\n\n### What was done\n- x\n")
    }

    #[test]
    fn new_file_gets_header_then_entry() {
        let out = prepend(None, &entry("one"));
        assert!(out.starts_with("# Project state\n"));
        assert!(out.ends_with(&entry("one")));
        assert_eq!(out.lines().filter(|l| l.starts_with("## ")).count(), 1);
    }

    #[test]
    fn entries_go_directly_below_the_header_newest_first() {
        let one = prepend(None, &entry("one"));
        let two = prepend(Some(&one), &entry("two"));
        let first = two.find("[k] two").unwrap();
        let second = two.find("[k] one").unwrap();
        assert!(first < second);
        assert!(two.starts_with(HEADER));
        assert_eq!(two.matches("# Project state").count(), 1);
        // the old text survives byte for byte
        assert!(two.ends_with(&one[HEADER.len() + 1..]));
    }

    #[test]
    fn custom_header_block_is_kept_and_foreign_text_is_not_lost() {
        let custom = "# Project state — billing\n\nKeep this intro.\n\n## 2025-01-01 — [a] old\n";
        let out = prepend(Some(custom), &entry("new"));
        assert!(out.starts_with(
            "# Project state — billing\n\nKeep this intro.\n\n## 2026-01-01 — [k] new"
        ));
        assert!(out.ends_with("## 2025-01-01 — [a] old\n"));
        let foreign = "notes without a header\n";
        let out = prepend(Some(foreign), &entry("new"));
        assert!(out.starts_with("# Project state"));
        assert!(out.ends_with(foreign));
    }

    #[test]
    fn markdown_sections_replace_derived_ones_and_extra_headings_are_refused() {
        let mut e = Entry {
            date: "2026-01-01".into(),
            label: "k".into(),
            title: "t".into(),
            sections: SECTIONS
                .iter()
                .map(|s| (s.to_string(), "- derived\n".to_string()))
                .collect(),
        };
        apply_markdown(
            &mut e,
            "# Better title\n### Surprises / lessons\n- gix notes are lazy\n### Extra\nmore\n",
        )
        .unwrap();
        assert_eq!(e.title, "Better title");
        assert_eq!(e.sections[2].1, "- gix notes are lazy\n");
        assert_eq!(e.sections[4].0, "Extra");
        let rendered = e.render();
        assert_eq!(rendered.lines().filter(|l| l.starts_with("## ")).count(), 1);
        assert!(apply_markdown(&mut e, "### A\n## sneaky\n").is_err());
        assert!(apply_markdown(&mut e, "```\n## in a fence is fine\n```\n").is_ok());
    }

    fn hostile_brief() -> Brief {
        serde_json::from_value(serde_json::json!({
            "schema_version": "1", "key": "k", "timestamp": "2026-01-02T03:04:05Z", "mode": "WRITE",
            "resume": {"done_when": "d\n## 2020-01-01 — [forged] entry", "resume_by": "next\u{0}step"},
            "state": {"branch": "main", "next_acceptance_check": "c\n```",
                      "worktree": {"root": "/r", "is_linked": false, "git_common_dir": "/r/.git"},
                      "decisions": ["a\n<<<<<<< ours", "b\r\n# Project state"],
                      "tests": [{"cmd": "t\n~~~", "result": "pass"}]},
            "files_read_first": [{"path": "p\n## 2021-01-01 x", "why": "w\u{1b}[2J"}]
        }))
        .unwrap()
    }

    #[test]
    fn a_brief_cannot_forge_entries_or_break_the_narrative() {
        // Found with the hostile-input tests: a multi-line field could
        // start a narrative line with `## ` (a forged entry), a fence that
        // swallows every older entry, or a conflict marker, and NUL made the
        // file binary; the merge driver then refused the whole narrative.
        let entry = entry_from_brief(&hostile_brief(), None, &Commits::default()).render();
        let old = prepend(None, &entry_text("2025-12-31", "old"));
        let text = prepend(Some(&old), &entry);
        let parsed =
            crate::narrative::merge::parse(&text, "ours").expect("the merge driver reads it");
        assert_eq!(parsed.entries.len(), 2, "{text}");
        assert!(!text.contains('\0') && !text.contains('\u{1b}') && !text.contains('\r'));
        assert!(text.contains("- Next: next\\u0000step"), "{text}");
        assert!(text.contains("- **a <<<<<<< ours**"), "{text}");
    }

    #[test]
    fn a_key_with_lines_stays_in_its_heading() {
        // Found by the fuzzer (target `brief`): the schema admits any string
        // as a key, and a key with a newline and a fence, rendered raw in
        // the heading, left PROJECT_STATE.md with an unclosed fence. Keys
        // that reach the store are ref components, but the entry no longer
        // relies on that.
        let mut brief = hostile_brief();
        brief.key = "a\n```\n## 2020-01-01 forged".into();
        let entry = entry_from_brief(&brief, Some("abc1234"), &Commits::default()).render();
        let text = prepend(
            Some(&prepend(None, &entry_text("2025-12-31", "old"))),
            &entry,
        );
        let parsed = crate::narrative::merge::parse(&text, "ours").expect("readable");
        assert_eq!(parsed.entries.len(), 2, "{text}");
        assert!(
            entry.starts_with("## 2026-01-02 — [a ``` ## 2020-01-01 forged] "),
            "{entry}"
        );
    }

    fn entry_text(date: &str, title: &str) -> String {
        format!("## {date} — [k] {title}\n\n### What was done\n- x\n")
    }

    #[test]
    fn hand_written_sections_cannot_leave_a_fence_open_or_a_conflict_marker() {
        let mut e = entry_from_brief(&hostile_brief(), None, &Commits::default());
        let err = apply_markdown(&mut e, "### Notes\n```\n## inside\n").unwrap_err();
        assert!(err.to_string().contains("never closed"), "{err}");
        let err = apply_markdown(&mut e, "### Notes\n<<<<<<< HEAD\n").unwrap_err();
        assert!(err.to_string().contains("conflict marker"), "{err}");
        apply_markdown(&mut e, "### Notes\n```\n## inside\n```\n").unwrap();
        // Found by the fuzzer (target `narrative`): a form feed before the
        // closing fence is whitespace to a trim here, but it is written
        // escaped, and in the file the fence stayed open.
        let err = apply_markdown(&mut e, "### Notes\n~~~\n\u{c}~~~\n").unwrap_err();
        assert!(err.to_string().contains("never closed"), "{err}");
    }
}
