//! Renderers: turn computed values into text for people or JSON for tools.

use serde::Serialize;

use crate::brief::Issue;

/// The validator's report: `handoff-validate: INVALID` and one line per error.
pub fn invalid(issues: &[Issue]) -> String {
    let mut out = String::from("handoff-validate: INVALID\n");
    for issue in issues {
        out.push_str(&format!(
            "  - {}: {}\n",
            issue.path,
            issue.message.replace('\n', " ")
        ));
    }
    out
}

/// One row of `git handoff list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListRow {
    /// The key.
    pub key: String,
    /// Whether it is the current branch's key.
    pub current: bool,
    /// The version id (blob id).
    pub id: String,
    /// The branch it was written on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The head commit it was written at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// When it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Seconds since it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<i64>,
    /// Its done-when check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_when: Option<String>,
    /// Why it could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The width `list` rows are cut to: `COLUMNS` when set, else the
/// terminal's width when stdout is one, else 80.
pub fn line_width() -> usize {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        return n;
    }
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

/// `list` as aligned text: marker, key, age, branch, short head, done when;
/// each row cut to `width` characters with `…` (the done-when text is what
/// gives way).
pub fn list_text(rows: &[ListRow], line_width: usize) -> String {
    if rows.is_empty() {
        return "No briefs yet; `git handoff write` creates one.\n".to_string();
    }
    use std::fmt::Write;
    let ages: Vec<String> = rows
        .iter()
        .map(|r| {
            r.age_seconds
                .map_or_else(|| "-".into(), crate::support::clock::age)
        })
        .collect();
    let width = |f: &dyn Fn(&ListRow) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let kw = width(&|r| r.key.chars().count());
    let aw = ages.iter().map(|a| a.len()).max().unwrap_or(0);
    let bw = width(&|r| r.branch.as_deref().map_or(1, |b| b.chars().count()));
    let mut out = String::with_capacity(rows.len() * (kw + aw + bw + 60));
    for (r, age) in rows.iter().zip(&ages) {
        let start = out.len();
        let marker = if r.current { '*' } else { ' ' };
        let branch = r.branch.as_deref().unwrap_or("-");
        let head = r
            .head_sha
            .as_deref()
            .map(|s| &s[..s.len().min(7)])
            .unwrap_or("-");
        // Padding by hand: `format!` widths cost more than the rest.
        let pad = |out: &mut String, n: usize| out.extend(std::iter::repeat_n(' ', n));
        out.push(marker);
        out.push(' ');
        out.push_str(&r.key);
        pad(&mut out, kw.saturating_sub(r.key.chars().count()) + 2);
        pad(&mut out, aw.saturating_sub(age.len()));
        out.push_str(age);
        out.push_str("  ");
        out.push_str(branch);
        pad(&mut out, bw.saturating_sub(branch.chars().count()) + 2);
        out.push_str(head);
        pad(&mut out, 7usize.saturating_sub(head.chars().count()) + 2);
        match (&r.error, &r.done_when) {
            (Some(e), _) => {
                let _ = write!(out, "(unreadable: {e})");
            }
            (None, Some(d)) => out.push_str(d.lines().next().unwrap_or("")),
            (None, None) => {}
        }
        let line = out[start..].trim_end().len();
        out.truncate(start + line);
        cut_to(&mut out, start, line_width);
        out.push('\n');
    }
    out
}

/// Cut the line that begins at `start` to `width` characters, the last one
/// `…` when anything was cut.
fn cut_to(out: &mut String, start: usize, width: usize) {
    let line = &out[start..];
    if line.chars().count() <= width {
        return;
    }
    let keep = line
        .char_indices()
        .nth(width.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    out.truncate(start + keep);
    let trimmed = out[start..].trim_end().len();
    out.truncate(start + trimmed);
    out.push('…');
}

/// One line per waiting brief, at most `named`, then `+N more`: its key,
/// branch, the worktree that has the branch checked out (with the `cd`),
/// its age and the command that resumes it.
pub fn waiting_text(briefs: &[crate::cli::commands::list::Waiting], named: usize) -> String {
    let mut out = String::new();
    for w in briefs.iter().take(named) {
        let place = w
            .worktree
            .as_deref()
            .map(|root| {
                format!(
                    ", checked out in {root} (cd {})",
                    crate::drift::shell_quote(root)
                )
            })
            .unwrap_or_default();
        let age = w
            .age_seconds
            .map(crate::support::clock::age)
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "- {} (branch '{}'{place}, written {age} ago): `git handoff resume {}`\n",
            w.key, w.branch, w.key
        ));
    }
    if briefs.len() > named {
        out.push_str(&format!(
            "+{} more: `git handoff list`\n",
            briefs.len() - named
        ));
    }
    out
}

/// Any serializable value as pretty JSON with a trailing newline.
pub fn json<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("serializable");
    s.push('\n');
    s
}

use crate::brief::{Brief, FilePointer};
use crate::drift::{Commits, Origin, Report};

fn section(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("\n## {title}\n"));
    for item in items {
        out.push_str(&format!("- {}\n", item.trim()));
    }
}

fn pointers(files: &[FilePointer]) -> Vec<String> {
    files
        .iter()
        .map(|f| {
            if f.why.trim().is_empty() {
                f.path.clone()
            } else {
                format!("{} — {}", f.path, f.why.trim())
            }
        })
        .collect()
}

/// The resume render: warnings, heading, the next step, a summary where
/// each fact appears once, then every list. `others` are the other stored
/// keys, named in one line.
pub fn resume_text(brief: &Brief, report: &Report, others: &[String]) -> String {
    let mut out = String::new();
    for w in &report.warnings {
        out.push_str(&w.line());
        out.push('\n');
    }
    if report.is_mismatch() {
        return out;
    }
    out.push_str(&format!(
        "# Resume — {}\n\nNext step: {}\n",
        brief.key,
        brief.resume.resume_by.trim()
    ));
    if let Some(prompt) = brief
        .resume
        .prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
    {
        out.push_str(&format!("Prompt: {}\n", prompt.trim()));
    }
    resume_summary(&mut out, brief, report, others);
    let s = &brief.state;
    out.push('\n');
    section_tight(&mut out, "Decisions", &s.decisions);
    section_tight(&mut out, "Rejected paths (do not retry)", &s.rejected_paths);
    section_tight(&mut out, "Open risks", &s.open_risks);
    let tests: Vec<String> = s
        .tests
        .iter()
        .map(|t| format!("[{}] {}", t.result, t.cmd))
        .collect();
    section_tight(&mut out, "Tests", &tests);
    section_tight(&mut out, "Commands", &s.commands);
    section_tight(
        &mut out,
        "Files to read first",
        &pointers(&brief.files_read_first),
    );
    section_tight(&mut out, "Files to skip", &pointers(&brief.files_skip));
    if out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The summary lines of the resume render: goal, check, where and when it
/// was written, commit drift, pointers.
fn resume_summary(out: &mut String, brief: &Brief, report: &Report, others: &[String]) {
    let s = &brief.state;
    out.push_str(&format!("- Done when: {}\n", brief.resume.done_when.trim()));
    out.push_str(&format!(
        "- Next acceptance check: {}\n",
        s.next_acceptance_check.trim()
    ));
    let at = s
        .head_sha
        .as_deref()
        .map(|h| format!(" at {}", &h[..h.len().min(7)]))
        .unwrap_or_default();
    out.push_str(&format!(
        "- Written: {} on {}{at} ({})\n",
        brief.timestamp, s.branch, brief.mode
    ));
    out.push_str(&format!(
        "- Written in worktree: {}{}\n",
        s.worktree.root,
        if s.worktree.is_linked {
            " (linked)"
        } else {
            ""
        }
    ));
    match &report.origin {
        Origin::OtherClone { root } => out.push_str(&format!("- Written in another clone of this repository ({root})\n")),
        Origin::FromRemote { remote } => out.push_str(&format!(
            "- From remote '{remote}': its head commit is not in this clone; fetch the branch ('{}') to see it\n",
            s.branch
        )),
        _ => {}
    }
    if let Some(d) = &s.diff_summary {
        out.push_str(&format!("- Uncommitted when written: {d}\n"));
    }
    match &report.commits {
        Commits::Since { count } => {
            out.push_str(&format!("- Commits since brief written: {count}\n"))
        }
        Commits::NotInHistory { sha7, histories } => out.push_str(&not_in_history(
            sha7,
            histories,
            &report.measured_on.current,
        )),
        Commits::Unknown => {}
    }
    if let Some(h) = &brief.resume.history_pointer {
        out.push_str(&format!("- History: {h}\n"));
    }
    for path in &report.unchecked {
        out.push_str(&format!("- Not checked (outside the worktree): {path}\n"));
    }
    if !others.is_empty() {
        out.push_str(&format!("- Other briefs: {}\n", others.join(", ")));
    }
}

/// The line for a brief head found in none of the histories checked: the
/// current one alone (the branch was rewritten), or the brief's branch and
/// the current one (rewritten or deleted).
fn not_in_history(sha7: &str, histories: &[String], current: &str) -> String {
    match histories {
        [] => format!("- Brief HEAD {sha7} not in current history\n"),
        [only] if only == current => format!("- Brief HEAD {sha7} not in current history\n"),
        [only] => {
            format!("- Brief HEAD {sha7} not in current history: not in '{only}' (rewritten?)\n")
        }
        [branch, rest @ ..] => format!(
            "- Brief HEAD {sha7} not in current history: neither in '{branch}' nor in {} (rewritten or deleted)\n",
            rest.iter()
                .map(|b| format!("'{b}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A `## title` section with no blank line before it.
fn section_tight(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("## {title}\n"));
    for item in items {
        out.push_str(&format!("- {}\n", item.trim()));
    }
}

/// The compact re-injection: goal, first five decisions, files in view.
pub fn reground_text(brief: &Brief) -> String {
    let mut out = format!("# Reground — {}\n\n## Goal\n", brief.key);
    out.push_str(&format!("- Done when: {}\n", brief.resume.done_when.trim()));
    out.push_str(&format!(
        "- Next acceptance check: {}\n",
        brief.state.next_acceptance_check.trim()
    ));
    out.push_str("\n## Locked decisions\n");
    if brief.state.decisions.is_empty() {
        out.push_str("—\n");
    }
    for d in brief.state.decisions.iter().take(5) {
        out.push_str(&format!("- {}\n", d.trim()));
    }
    out.push_str("\n## Files to keep in view\n");
    if brief.files_read_first.is_empty() {
        out.push_str("—\n");
    }
    for p in pointers(&brief.files_read_first) {
        out.push_str(&format!("- {p}\n"));
    }
    out
}

/// A subagent brief: task, scope, decisions, do-not-retry, risks, read
/// first, what to return. No key, schema or store path — except in the one
/// `(+N more: …)` line that stands for what did not fit.
///
/// It fits `cap` lines by construction: task, scope and the Return contract
/// always appear; each list keeps its items most relevant to the task and
/// scope (words and paths in common), at least its first when there is room
/// for every list's first, then more in turn while lines remain. `Err` gives
/// the lines the task, scope and Return contract need alone, when that is
/// over the cap.
pub fn subagent_text(
    brief: &Brief,
    task: Option<&str>,
    scope: &[String],
    cap: usize,
) -> Result<String, usize> {
    let mut out = String::from("## Task\n");
    out.push_str(task.unwrap_or(&brief.resume.resume_by).trim());
    out.push('\n');
    let scope: Vec<String> = if scope.is_empty() {
        vec![format!(
            "Only this task; the goal it serves: {}",
            brief.resume.done_when.trim()
        )]
    } else {
        scope.to_vec()
    };
    section(&mut out, "Scope", &scope);
    let mut ret = String::new();
    section(
        &mut ret,
        "Return",
        &[
            "What you changed: files and one line each".to_string(),
            format!(
                "What you verified: commands and results (at least `{}`)",
                brief.state.next_acceptance_check.trim()
            ),
            "What is still open or surprised you".to_string(),
        ],
    );
    let fixed = out.lines().count() + ret.lines().count();
    if fixed > cap {
        return Err(fixed);
    }
    let words = relevance_words(&out);
    let lists = [
        ("Locked decisions", brief.state.decisions.clone()),
        ("Do not retry", brief.state.rejected_paths.clone()),
        ("Open risks", brief.state.open_risks.clone()),
        ("Read first", pointers(&brief.files_read_first)),
    ]
    .map(|(title, items)| (title, ranked(items, &words)));
    let shown = fit_lists(&lists, cap - fixed);
    let mut left = 0;
    for ((title, items), n) in lists.iter().zip(&shown) {
        if *n == 0 {
            left += items.len();
            continue;
        }
        section(&mut out, title, &items[..*n]);
        left += items.len() - n;
    }
    if left > 0 {
        out.push_str(&format!(
            "(+{left} more: git handoff resume {})\n",
            brief.key
        ));
    }
    out.push_str(&ret);
    Ok(out)
}

/// How many items of each list fit in `budget` lines: a shown list costs a
/// blank line and its heading, one line per item shown, and any list cut
/// short shares one `(+N more …)` line. Every non-empty list first gets its
/// first item, in order, while that fits; then one more item per list in
/// turn.
fn fit_lists(lists: &[(&str, Vec<String>); 4], budget: usize) -> [usize; 4] {
    let mut shown = [0usize; 4];
    let cost = |shown: &[usize; 4]| {
        let mut lines = 0;
        let mut cut = false;
        for ((_, items), n) in lists.iter().zip(shown) {
            if *n > 0 {
                lines += 2 + n;
            }
            cut |= *n < items.len();
        }
        lines + usize::from(cut)
    };
    for i in 0..lists.len() {
        if !lists[i].1.is_empty() {
            shown[i] = 1;
            if cost(&shown) > budget {
                shown[i] = 0;
            }
        }
    }
    loop {
        let mut grew = false;
        for i in 0..lists.len() {
            if shown[i] == 0 || shown[i] >= lists[i].1.len() {
                continue;
            }
            shown[i] += 1;
            if cost(&shown) > budget {
                shown[i] -= 1;
            } else {
                grew = true;
            }
        }
        if !grew {
            return shown;
        }
    }
}

/// The words (three letters or more, lowercased) and paths of a text.
fn relevance_words(text: &str) -> std::collections::HashSet<String> {
    text.split(|c: char| c.is_whitespace() || ",;()`'\"".contains(c))
        .flat_map(|token| {
            let token = token
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            let parts: Vec<String> = token
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .map(str::to_string)
                .collect();
            std::iter::once(token).chain(parts)
        })
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Words too common to make two texts related.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "not", "but", "from", "this", "that", "into", "only", "are",
    "was", "its", "all", "any", "use", "one", "when", "then", "than", "each", "what", "your",
];

/// The items, most relevant first (most words and paths in common with the
/// task and scope); ties keep the brief's order.
fn ranked(items: Vec<String>, words: &std::collections::HashSet<String>) -> Vec<String> {
    let mut scored: Vec<(usize, usize, String)> = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let score = relevance_words(&item).intersection(words).count();
            (usize::MAX - score, i, item)
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, _, item)| item).collect()
}

/// The hook's context after `/clear` or a compaction: the five
/// load-bearing fields and the drift warnings.
pub fn hook_context(brief: &Brief, source: &str, report: &Report) -> String {
    let dash = |v: Vec<String>| {
        if v.is_empty() {
            "—".to_string()
        } else {
            v.join("; ")
        }
    };
    let mut out = format!("# Resumed (auto, on /{source}) — {}\n", brief.key);
    for w in &report.warnings {
        out.push_str(&w.line());
        out.push('\n');
    }
    out.push_str(&format!("- Next step: {}\n", brief.resume.resume_by.trim()));
    out.push_str(&format!("- Done when: {}\n", brief.resume.done_when.trim()));
    out.push_str(&format!(
        "- Next acceptance check: {}\n",
        brief.state.next_acceptance_check.trim()
    ));
    out.push_str(&format!(
        "- Open risks: {}\n",
        dash(brief.state.open_risks.clone())
    ));
    out.push_str(&format!(
        "- Read first: {}\n",
        dash(pointers(&brief.files_read_first))
    ));
    out.push_str(&format!("Full brief: `git handoff resume {}`\n", brief.key));
    out
}

/// Whether to colour human text: never under `NO_COLOR`; else
/// `color.handoff`, else `color.ui` (`always`, `never`, `auto`/`true`);
/// `auto` means only when stdout is a terminal.
pub fn color_wanted(stdout_is_terminal: bool) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let setting = crate::git::repo::color_setting().unwrap_or_else(|| {
        std::env::current_dir()
            .ok()
            .and_then(|d| gix::discover(d).ok())
            .and_then(|repo| {
                let config = repo.config_snapshot();
                config
                    .string("color.handoff")
                    .or_else(|| config.string("color.ui"))
                    .map(|v| v.to_string().to_ascii_lowercase())
            })
    });
    match setting.as_deref() {
        Some("always") => true,
        Some("never") | Some("false") => false,
        _ => stdout_is_terminal,
    }
}

/// Colour a render: `!! ` warnings red (yellow for the softer ones),
/// headings bold, the current-key marker of `list` green.
pub fn paint(text: &str) -> String {
    const RED: &str = "\x1b[1;31m";
    const YELLOW: &str = "\x1b[33m";
    const BOLD: &str = "\x1b[1m";
    const GREEN: &str = "\x1b[32m";
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let color = if body.starts_with("!! REPO")
            || body.starts_with("!! BRANCH")
            || body.starts_with("!! MISSING")
        {
            Some(RED)
        } else if body.starts_with("!! ") {
            Some(YELLOW)
        } else if body.starts_with('#') {
            Some(BOLD)
        } else if body.starts_with("* ") {
            Some(GREEN)
        } else {
            None
        };
        match color {
            Some(c) => out.push_str(&format!("{c}{body}{RESET}{nl}")),
            None => out.push_str(line),
        }
    }
    out
}

/// One setup item in the report of `git handoff init`.
#[derive(Debug, Clone, Serialize)]
pub struct SetupRow {
    /// The item: a config key or a file.
    pub name: String,
    /// `ok` (already set up), `set` (set up now), `missing` (not set up;
    /// `init` would set it up), `blocked` (not set up, and `init` leaves it
    /// to you) or `failed`.
    pub status: String,
    /// What is there, what is missing, or what went wrong.
    pub detail: String,
}

/// The report of `init` (`check` false) or `init --check` as aligned text,
/// with a closing line that says what to do next.
pub fn setup_text(rows: &[SetupRow], check: bool) -> String {
    let nw = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!("{:7}  {:nw$}  {}\n", r.status, r.name, r.detail));
    }
    let not_ok = rows
        .iter()
        .filter(|r| r.status != "ok" && r.status != "set")
        .count();
    let changed = rows.iter().any(|r| r.status == "set");
    let attributes_set = rows
        .iter()
        .any(|r| r.status == "set" && r.name == ".gitattributes");
    if not_ok > 0 && check {
        out.push_str(&format!(
            "{not_ok} of {} not set up; `git handoff init` sets up what is missing.\n",
            rows.len()
        ));
    } else if not_ok > 0 {
        out.push_str(&format!(
            "{not_ok} of {} not set up; see above for what to do.\n",
            rows.len()
        ));
    } else if check || !changed {
        out.push_str("Everything is set up; nothing to change.\n");
    } else if attributes_set {
        out.push_str("Set up. Commit .gitattributes so that other clones merge the narrative as a log too; each clone runs `git handoff init` once (git never shares config).\n");
    } else {
        out.push_str("Set up.\n");
    }
    out
}

/// Cut a text to its first line and at most `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// One thread of a split proposal.
#[derive(Debug, Clone, Serialize)]
pub struct SplitThread {
    /// The thread's key.
    pub key: String,
    /// Whether a brief is stored under the key already (it will be updated).
    pub exists: bool,
    /// One line: the thread's next step (`resume.resume_by`).
    pub summary: String,
    /// What the thread owns: its own `files_read_first` paths.
    pub owns: Vec<String>,
    /// Its next acceptance check.
    pub next_check: String,
    /// Its open risks, shared ones included.
    pub risks: Vec<String>,
}

/// A split, proposed or done.
#[derive(Debug, Clone, Serialize)]
pub struct SplitProposal {
    /// Why the work is split.
    pub why: String,
    /// Decisions copied into every thread.
    pub shared_decisions: usize,
    /// Files to read first copied into every thread.
    pub shared_files: usize,
    /// The threads, in plan order.
    pub threads: Vec<SplitThread>,
}

/// The proposal of `split` without `--yes`: at most 5 lines per thread.
pub fn split_proposal(p: &SplitProposal) -> String {
    let mut out = format!("Split proposal: {}\n", one_line(&p.why, 100));
    if p.shared_decisions + p.shared_files > 0 {
        out.push_str(&format!(
            "Shared with every thread: {} decision{}, {} file{} to read first.\n",
            p.shared_decisions,
            if p.shared_decisions == 1 { "" } else { "s" },
            p.shared_files,
            if p.shared_files == 1 { "" } else { "s" },
        ));
    }
    for (n, t) in p.threads.iter().enumerate() {
        let state = if t.exists {
            "updates the stored brief"
        } else {
            "new"
        };
        out.push_str(&format!(
            "\n{}. {} ({state}) — {}\n",
            n + 1,
            t.key,
            one_line(&t.summary, 90)
        ));
        if !t.owns.is_empty() {
            out.push_str(&format!("   owns: {}\n", one_line(&t.owns.join(", "), 100)));
        }
        out.push_str(&format!(
            "   next check: {}\n",
            one_line(&t.next_check, 100)
        ));
        if !t.risks.is_empty() {
            out.push_str(&format!(
                "   risks: {}\n",
                one_line(&t.risks.join("; "), 100)
            ));
        }
    }
    out.push_str(&format!(
        "\nNothing written. Run again with --yes to write these {} briefs in one transaction.\n",
        p.threads.len()
    ));
    out
}

/// Every error of every invalid thread of a split plan: the label of the
/// thread, then one `  - <path>: <message>` line per error.
pub fn split_invalid(threads: &[(String, Vec<Issue>)]) -> String {
    let mut out = String::from("handoff-split: INVALID\n");
    for (label, issues) in threads {
        out.push_str(&format!("{label}:\n"));
        for issue in issues {
            out.push_str(&format!(
                "  - {}: {}\n",
                issue.path,
                issue.message.replace('\n', " ")
            ));
        }
    }
    out
}

/// The meter's line: `context: 41% of 200k (82,310 tokens) — over 40%: time to hand off`.
pub fn usage_text(m: &crate::agent::usage::Meter) -> String {
    use crate::agent::usage::{grouped, short_tokens};
    let verdict = if m.usage.is_none() {
        "no assistant message with usage yet".to_string()
    } else if m.over {
        format!("over {}%: time to hand off", m.threshold)
    } else {
        format!("under {}%", m.threshold)
    };
    format!(
        "context: {}% of {} ({} tokens) — {verdict}\n",
        m.percent,
        short_tokens(m.window),
        grouped(m.tokens)
    )
}
