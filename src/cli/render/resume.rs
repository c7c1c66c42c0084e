//! The brief as people read it: `resume` (with its drift), `reground`,
//! the subagent brief and the session hook's context.

use crate::brief::{Brief, FilePointer};
use crate::cli::output::{Doc, Style};
use crate::drift::{Commits, Origin, Report, Warning};
use crate::support::text::{continued, flat};

/// A blank line, then a `## title` section.
fn section(out: &mut Doc, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push('\n');
    out.styled_line(Style::Heading, &format!("## {title}"));
    for item in items {
        out.push_str(&format!("- {}\n", continued(item)));
    }
}

fn pointers(files: &[FilePointer]) -> Vec<String> {
    pointers_now(files, None)
}

/// The pointers, each line range that moved or changed since shown with
/// its place now (`t.py:3-5 (now 5-7)`), as drift mapped it.
fn pointers_now(files: &[FilePointer], report: Option<&Report>) -> Vec<String> {
    let now = |path: &str| -> Option<&str> {
        let report = report?;
        let moved = report.moved.iter().find(|m| m.path == path);
        moved.map(|m| m.now.as_str()).or_else(|| {
            report.warnings.iter().find_map(|w| match w {
                Warning::Changed {
                    path: p,
                    now: Some(now),
                    ..
                } if p == path => Some(now.as_str()),
                _ => None,
            })
        })
    };
    files
        .iter()
        .map(|f| {
            let path = match now(&f.path) {
                Some(now) => format!("{} (now {now})", f.path),
                None => f.path.clone(),
            };
            if f.why.trim().is_empty() {
                flat(&path)
            } else {
                format!("{} — {}", flat(&path), f.why.trim())
            }
        })
        .collect()
}

/// The parts of the brief that name a CHANGED file (its path or its file
/// name), to re-check before acting on them: the next step, done-when, the
/// next check, the tests, the decisions.
pub fn recheck(brief: &Brief, report: &Report) -> Vec<&'static str> {
    let names: Vec<&str> = report
        .warnings
        .iter()
        .filter_map(|w| match w {
            Warning::Changed { path, .. } => Some(crate::drift::strip_lines(path)),
            _ => None,
        })
        .flat_map(|path| {
            let file = path.rsplit('/').next().unwrap_or(path);
            [path, file]
        })
        .filter(|name| name.len() >= 3)
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let names_one = |text: &str| names.iter().any(|n| text.contains(n));
    let s = &brief.state;
    let parts = [
        ("the next step", names_one(&brief.resume.resume_by)),
        ("done-when", names_one(&brief.resume.done_when)),
        ("the next check", names_one(&s.next_acceptance_check)),
        ("the tests", s.tests.iter().any(|t| names_one(&t.cmd))),
        ("the decisions", s.decisions.iter().any(|d| names_one(d))),
    ];
    parts
        .into_iter()
        .filter(|(_, named)| *named)
        .map(|(part, _)| part)
        .collect()
}

/// The `!! RE-CHECK` line, if any part of the brief names a CHANGED file:
/// which parts.
fn recheck_text(brief: &Brief, report: &Report) -> Option<String> {
    let parts = recheck(brief, report);
    let (last, rest) = parts.split_last()?;
    let list = if rest.is_empty() {
        last.to_string()
    } else {
        format!("{} and {last}", rest.join(", "))
    };
    let verb = if parts.len() == 1 { "names" } else { "name" };
    Some(format!(
        "!! RE-CHECK: {list} {verb} a CHANGED file: they may be stale; check them against the code before acting"
    ))
}

fn recheck_line(out: &mut Doc, brief: &Brief, report: &Report) {
    if let Some(line) = recheck_text(brief, report) {
        out.styled_line(Style::Drift, &line);
    }
}

/// The resume render: warnings, heading, the next step, a summary where
/// each fact appears once, then every list. `others` are the other stored
/// keys, named in one line.
pub fn resume_text(brief: &Brief, report: &Report, others: &[String]) -> Doc {
    resume_doc(brief, Some((report, others)))
}

/// How many lines the resume render of `brief` has when nothing drifted
/// (no warnings, no commit count): what lint's length rule measures.
pub fn resume_lines(brief: &Brief) -> usize {
    resume_doc(brief, None).as_str().lines().count()
}

/// What `resume` and the session hook say of a brief of mode `AUTO`.
pub const AUTO_NOTE: &str =
    "drafted from the transcript, not written by the session: verify before acting";

/// The `!! AUTO` line of a brief drafted from a transcript, if it is one:
/// when it was stored over a brief someone wrote, which one and how to see
/// what the draft changed.
pub fn auto_text(brief: &Brief, report: Option<&Report>) -> Option<String> {
    if brief.mode != crate::agent::draft::MODE {
        return None;
    }
    Some(match report.and_then(|r| r.auto_over.as_ref()) {
        Some((id, mode)) => format!(
            // `@{1}` stays bare after the quoted key, as a user types it:
            // the shell leaves it be.
            "!! AUTO: {AUTO_NOTE}; AUTO draft over {id} (mode {mode}): `git handoff diff {key}` shows what it changed, `git handoff show {key}@{{1}}` the brief it replaced",
            key = crate::support::escape::shell_quote(&brief.key),
        ),
        None => format!("!! AUTO: {AUTO_NOTE}"),
    })
}

fn auto_line(out: &mut Doc, brief: &Brief, report: Option<&Report>) {
    if let Some(line) = auto_text(brief, report) {
        out.styled_line(Style::Drift, &line);
    }
}

/// The resume render; without `drift`, the brief's own lines alone.
fn resume_doc(brief: &Brief, drift: Option<(&Report, &[String])>) -> Doc {
    let mut out = Doc::new();
    if let Some((report, _)) = drift {
        warning_lines(&mut out, report);
        if report.is_mismatch() {
            return out;
        }
        recheck_line(&mut out, brief, report);
    }
    auto_line(&mut out, brief, drift.map(|(r, _)| r));
    out.styled_line(Style::Heading, &format!("# Resume — {}", brief.key));
    out.append(resume_body(brief, drift));
    out
}

/// A brief drafted from a transcript, before it is stored: where it was
/// read (`source`, lines for people), then its fields as `resume` shows
/// them.
pub fn draft_text(brief: &Brief, source: &str) -> Doc {
    let mut out = Doc::new();
    out.styled_line(
        Style::Heading,
        &format!("# Draft — {} (mode AUTO, not stored)", brief.key),
    );
    out.push_str(source);
    out.append(resume_body(brief, None));
    out
}

/// The resume render below its heading: the next step, the summary, the
/// lists.
fn resume_body(brief: &Brief, drift: Option<(&Report, &[String])>) -> Doc {
    let mut out = Doc::new();
    out.push_str(&format!(
        "\nNext step: {}\n",
        continued(&brief.resume.resume_by)
    ));
    if let Some(prompt) = brief
        .resume
        .prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
    {
        out.push_str(&format!("Prompt: {}\n", continued(prompt)));
    }
    resume_summary(&mut out, brief, drift);
    let s = &brief.state;
    out.push('\n');
    let changed = drift.is_some_and(|(report, _)| {
        report
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::Changed { .. }))
    });
    let decisions = if changed {
        "Decisions (made before the CHANGED files above changed: re-check those that rest on them)"
    } else {
        "Decisions"
    };
    section_tight(&mut out, decisions, &s.decisions);
    section_tight(&mut out, "User preferences and feedback", &s.preferences);
    section_tight(&mut out, "Rejected paths (do not retry)", &s.rejected_paths);
    section_tight(&mut out, "Open risks", &s.open_risks);
    let tests: Vec<String> = s
        .tests
        .iter()
        .map(|t| format!("[{}] {}", flat(&t.result), t.cmd))
        .collect();
    section_tight(&mut out, "Tests", &tests);
    section_tight(&mut out, "Commands", &s.commands);
    section_tight(
        &mut out,
        "Files to read first",
        &pointers_now(&brief.files_read_first, drift.map(|(report, _)| report)),
    );
    section_tight(&mut out, "Files to skip", &pointers(&brief.files_skip));
    verbatim_section(&mut out, &s.verbatim);
    if out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The goal's two lines, as every render of a brief gives them: done-when
/// and the next acceptance check.
fn goal_lines(brief: &Brief) -> String {
    format!(
        "- Done when: {}\n- Next acceptance check: {}\n",
        continued(&brief.resume.done_when),
        continued(&brief.state.next_acceptance_check)
    )
}

/// The summary lines of the resume render: goal, check, where and when it
/// was written, commit drift, pointers.
fn resume_summary(out: &mut Doc, brief: &Brief, drift: Option<(&Report, &[String])>) {
    let s = &brief.state;
    out.push_str(&goal_lines(brief));
    let at = s
        .head_sha
        .as_deref()
        .map(|h| format!(" at {}", &h[..h.len().min(7)]))
        .unwrap_or_default();
    out.push_str(&format!(
        "- Written: {} on {}{at} ({})\n",
        flat(&brief.timestamp),
        flat(&s.branch),
        flat(&brief.mode)
    ));
    written_in_line(out, brief, drift.map(|(report, _)| report));
    if let Some(d) = &s.diff_summary {
        out.push_str(&format!("- Uncommitted when written: {}\n", continued(d)));
    }
    if let Some((report, _)) = drift {
        commits_line(out, report);
    }
    if let Some(h) = &brief.resume.history_pointer {
        out.push_str(&format!("- History: {}\n", continued(h)));
    }
    let Some((report, others)) = drift else {
        return;
    };
    for path in &report.unchecked {
        out.push_str(&format!(
            "- Not checked (outside the worktree): {}\n",
            crate::support::text::word(path)
        ));
    }
    // At most five named: a clone with hundreds of briefs gets one short
    // line, not all their keys.
    match others.len() {
        0 => {}
        1..=5 => out.push_str(&format!("- Other briefs: {}\n", others.join(", "))),
        n => out.push_str(&format!(
            "- Other briefs: {} (+{} more: `git handoff list`)\n",
            others[..5].join(", "),
            n - 5
        )),
    }
}

/// Where the brief was written, once: a worktree of this repository,
/// another clone of it, or a clone the brief reached this one from
/// through a remote.
fn written_in_line(out: &mut Doc, brief: &Brief, report: Option<&Report>) {
    let s = &brief.state;
    let linked = if s.worktree.is_linked {
        " (linked)"
    } else {
        ""
    };
    let root = &flat(&s.worktree.root);
    let line = match report.map(|r| &r.origin) {
        Some(Origin::OtherClone { .. }) => {
            format!("- Written in another clone of this repository: {root}{linked}\n")
        }
        Some(Origin::FromRemote { remote }) => format!(
            "- Written in another clone ({root}{linked}), from remote '{remote}': its head commit is not in this clone; if the branch was pushed, fetch it to see it: git fetch {} {}\n",
            crate::support::escape::shell_quote(remote),
            crate::support::escape::shell_quote(&s.branch)
        ),
        _ => format!("- Written in worktree: {root}{linked}\n"),
    };
    out.push_str(&line);
}

/// Commit drift: the count since the brief, or where its head is missing.
fn commits_line(out: &mut Doc, report: &Report) {
    match &report.commits {
        Commits::Since {
            count,
            only_narrative: true,
            ..
        } => out.push_str(&format!(
            "- Commits since brief written: {count} (nothing but the narrative log changed)\n"
        )),
        Commits::Since {
            count,
            recent,
            narrative,
            ..
        } => {
            out.push_str(&format!("- Commits since brief written: {count}"));
            if *narrative > 0 {
                out.push_str(&format!(" ({narrative} of them the narrative)"));
            }
            let named: Vec<String> = recent
                .iter()
                .map(|c| format!("{} {}", c.sha7, c.subject))
                .collect();
            match (named.is_empty(), *count > named.len()) {
                (true, _) => {}
                (false, false) => out.push_str(&format!(": {}", named.join("; "))),
                (false, true) => out.push_str(&format!(", newest: {}; …", named.join("; "))),
            }
            out.push('\n');
        }
        Commits::NotInHistory { sha7, histories } => out.push_str(&not_in_history(
            sha7,
            histories,
            &report.measured_on.current,
        )),
        Commits::Unknown => {}
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

/// One `!! ` line per drift warning, labelled by how much it matters.
fn warning_lines(out: &mut Doc, report: &Report) {
    for w in &report.warnings {
        out.styled_line(warning_style(w), &w.line());
    }
}

/// A mismatch (another repository or branch, a file gone) or softer drift.
fn warning_style(w: &Warning) -> Style {
    match w {
        Warning::RepoMismatch { .. } | Warning::BranchMismatch { .. } | Warning::Missing { .. } => {
            Style::Mismatch
        }
        _ => Style::Drift,
    }
}

/// `## Verbatim`: each entry's what, then its text word for word,
/// indented so that no line of it reads as a heading.
fn verbatim_section(out: &mut Doc, items: &[crate::brief::Verbatim]) {
    if items.is_empty() {
        return;
    }
    out.styled_line(Style::Heading, "## Verbatim");
    for v in items {
        out.push_str(&format!("- {}:\n", continued(&v.what)));
        for line in v.text.trim_end().lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
}

/// A `## title` section with no blank line before it.
fn section_tight(out: &mut Doc, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.styled_line(Style::Heading, &format!("## {title}"));
    for item in items {
        out.push_str(&format!("- {}\n", continued(item)));
    }
}

/// The compact re-injection: goal, first five decisions, files in view.
pub fn reground_text(brief: &Brief) -> Doc {
    let mut out = Doc::new();
    out.styled_line(Style::Heading, &format!("# Reground — {}", brief.key));
    out.push('\n');
    out.styled_line(Style::Heading, "## Goal");
    out.push_str(&goal_lines(brief));
    out.push('\n');
    out.styled_line(Style::Heading, "## Locked decisions");
    if brief.state.decisions.is_empty() {
        out.push_str("—\n");
    }
    for d in brief.state.decisions.iter().take(5) {
        out.push_str(&format!("- {}\n", continued(d)));
    }
    if !brief.state.preferences.is_empty() {
        out.push('\n');
        out.styled_line(Style::Heading, "## User preferences and feedback");
        for p in &brief.state.preferences {
            out.push_str(&format!("- {}\n", continued(p)));
        }
    }
    out.push('\n');
    out.styled_line(Style::Heading, "## Files to keep in view");
    if brief.files_read_first.is_empty() {
        out.push_str("—\n");
    }
    for p in pointers(&brief.files_read_first) {
        out.push_str(&format!("- {p}\n"));
    }
    out
}

/// What a subagent brief is drawn from: a stored brief, the flags given
/// to `brief`, or both merged — a partial brief as JSON, read leniently.
#[derive(Debug, Clone, Default)]
pub struct SubagentSource {
    /// The stored brief's key when one is the base (the `(+N more …)`
    /// line names it); `None` for a brief built from flags alone.
    pub key: Option<String>,
    /// `resume.resume_by`: the task when `--task` is not given.
    pub resume_by: Option<String>,
    /// `resume.done_when`: the goal the task serves.
    pub done_when: Option<String>,
    /// `state.next_acceptance_check`: the least the subagent verifies.
    pub check: Option<String>,
    /// `state.decisions`.
    pub decisions: Vec<String>,
    /// `state.rejected_paths`.
    pub rejected: Vec<String>,
    /// `state.open_risks`.
    pub risks: Vec<String>,
    /// `state.preferences`.
    pub preferences: Vec<String>,
    /// `files_read_first`, rendered.
    pub read_first: Vec<String>,
}

impl SubagentSource {
    /// The source read from a (partial) brief as JSON.
    pub fn of(value: &serde_json::Value, key: Option<String>) -> SubagentSource {
        let text = |pointer: &str| {
            value
                .pointer(pointer)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let strings = |pointer: &str| -> Vec<String> {
            value
                .pointer(pointer)
                .and_then(serde_json::Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(serde_json::Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let read_first: Vec<FilePointer> = value
            .get("files_read_first")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        SubagentSource {
            key,
            resume_by: text("/resume/resume_by"),
            done_when: text("/resume/done_when"),
            check: text("/state/next_acceptance_check"),
            decisions: strings("/state/decisions"),
            rejected: strings("/state/rejected_paths"),
            risks: strings("/state/open_risks"),
            preferences: strings("/state/preferences"),
            read_first: pointers(&read_first),
        }
    }
}

/// A subagent brief: task, scope, decisions, the user's preferences,
/// do-not-retry, risks, read first, what to return. No key, schema or
/// store path — except in the one `(+N more: …)` line that stands for what
/// did not fit, which names a stored brief's key.
///
/// It fits `cap` lines by construction: task, scope and the Return contract
/// always appear; each list keeps its items most relevant to the task and
/// scope (words and paths in common), at least its first when there is room
/// for every list's first, then more in turn while lines remain. `Err` gives
/// the lines the task, scope and Return contract need alone, when that is
/// over the cap.
pub fn subagent_text(
    source: &SubagentSource,
    task: &str,
    scope: &[String],
    cap: usize,
) -> Result<Doc, usize> {
    let mut out = Doc::new();
    out.styled_line(Style::Heading, "## Task");
    out.push_str(task.trim());
    out.push('\n');
    let scope: Vec<String> = match (scope.is_empty(), &source.done_when) {
        (false, _) => scope.to_vec(),
        (true, Some(goal)) => vec![format!(
            "Only this task; the goal it serves: {}",
            continued(goal)
        )],
        (true, None) => vec!["Only this task".to_string()],
    };
    section(&mut out, "Scope", &scope);
    let verified = match &source.check {
        Some(check) => format!(
            "What you verified: commands and results (at least `{}`)",
            flat(check)
        ),
        None => "What you verified: commands and their results".to_string(),
    };
    let mut ret = Doc::new();
    section(
        &mut ret,
        "Return",
        &[
            "What you changed: files and one line each".to_string(),
            verified,
            "What is still open or surprised you".to_string(),
        ],
    );
    let fixed = out.as_str().lines().count() + ret.as_str().lines().count();
    if fixed > cap {
        return Err(fixed);
    }
    let words = relevance_words(out.as_str());
    let lists = [
        ("Locked decisions", source.decisions.clone()),
        ("User preferences and feedback", source.preferences.clone()),
        ("Do not retry", source.rejected.clone()),
        ("Open risks", source.risks.clone()),
        ("Read first", source.read_first.clone()),
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
        out.push_str(&match &source.key {
            Some(key) => format!(
                "(+{left} more: git handoff resume {})\n",
                crate::support::escape::shell_quote(key)
            ),
            None => format!("(+{left} more left out: fewer --decision, --rejected or --read)\n"),
        });
    }
    out.append(ret);
    Ok(out)
}

/// How many items of each list fit in `budget` lines: a shown list costs a
/// blank line and its heading, one line per item shown, and any list cut
/// short shares one `(+N more …)` line. Every non-empty list first gets its
/// first item, in order, while that fits; then one more item per list in
/// turn.
fn fit_lists<const N: usize>(lists: &[(&str, Vec<String>); N], budget: usize) -> [usize; N] {
    let mut shown = [0usize; N];
    let cost = |shown: &[usize; N]| {
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

/// The slice of `items` relevant to `purpose` (a fork's): those with a
/// word or path in common with it, most relevant first, at most `max`;
/// and how many were left out.
pub fn relevant_slice(items: Vec<String>, purpose: &str, max: usize) -> (Vec<String>, usize) {
    let words = relevance_words(purpose);
    let total = items.len();
    let kept: Vec<String> = ranked(items, &words)
        .into_iter()
        .take_while(|item| relevance_words(item).intersection(&words).next().is_some())
        .take(max)
        .collect();
    let left = total - kept.len();
    (kept, left)
}

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

/// The hook's context after `/clear` or a compaction: its heading, the
/// drift warnings, then the five load-bearing fields in the marked block
/// of [`crate::cli::render::fenced`], and where the full brief is.
pub fn hook_context(
    brief: &Brief,
    source: &str,
    report: &Report,
    from: &crate::cli::render::fence::Source,
    max_lines: usize,
) -> String {
    use crate::cli::render::fence::cut_lines;
    let full = format!(
        "`git handoff resume {}`",
        crate::support::escape::shell_quote(&brief.key)
    );
    let dash = |v: Vec<String>| {
        if v.is_empty() {
            "—".to_string()
        } else {
            continued(&v.join("; "))
        }
    };
    let mut out = format!("# Resumed (auto, on /{source}) — {}\n", flat(&brief.key));
    let mut warnings: String = report
        .warnings
        .iter()
        .map(|w| format!("{}\n", w.line()))
        .collect();
    for line in [recheck_text(brief, report), auto_text(brief, Some(report))]
        .into_iter()
        .flatten()
    {
        warnings.push_str(&line);
        warnings.push('\n');
    }
    // The heading, the block's two markers and the last line are fixed;
    // the warnings take at most half of what is left, the block the rest.
    let room = max_lines.saturating_sub(4);
    out.push_str(&cut_lines(&warnings, room / 2, &full));
    let room = room.saturating_sub(out.lines().count() - 1);
    let mut body = format!(
        "- Next step (the brief's plan): {}\n",
        continued(&brief.resume.resume_by)
    );
    body.push_str(&goal_lines(brief));
    body.push_str(&format!(
        "- Open risks: {}\n",
        dash(brief.state.open_risks.clone())
    ));
    body.push_str(&format!(
        "- Read first: {}\n",
        dash(pointers(&brief.files_read_first))
    ));
    let body = cut_lines(&body, room, &full);
    out.push_str(&crate::cli::render::fence::fenced(from, &body));
    out.push_str(&format!("Full brief: {full}\n"));
    out
}

/// The resume render for a model (the MCP `resume` result's text): the
/// drift warnings and the AUTO line first, outside the block; then the
/// render of the brief, its next step presented as the brief's plan,
/// inside the marked block that says where it came from.
pub fn resume_for_model(
    brief: &Brief,
    report: &Report,
    others: &[String],
    from: &crate::cli::render::fence::Source,
) -> String {
    let mut out = Doc::new();
    warning_lines(&mut out, report);
    if report.is_mismatch() {
        return out.as_str().to_string();
    }
    recheck_line(&mut out, brief, report);
    auto_line(&mut out, brief, Some(report));
    let mut inner = Doc::new();
    inner.push_str(&format!("# Resume — {}\n", flat(&brief.key)));
    inner.append(resume_body(brief, Some((report, others))));
    let body = inner
        .as_str()
        .replacen("\nNext step: ", "\nNext step (the brief's plan): ", 1);
    let mut text = out.as_str().to_string();
    text.push_str(&crate::cli::render::fence::fenced(from, &body));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_lines_counts_the_render_without_drift() {
        let brief: Brief = serde_json::from_value(serde_json::json!({
            "schema_version": "1", "key": "k", "timestamp": "2026-01-01T00:00:00Z",
            "mode": "WRITE",
            "resume": {"done_when": "d\nover two lines", "resume_by": "r",
                       "prompt": "p", "history_pointer": "h"},
            "state": {"branch": "b", "next_acceptance_check": "c", "head_sha": "abc1234",
                      "diff_summary": "1 file changed",
                      "worktree": {"root": "/w", "is_linked": true, "git_common_dir": "/w/.git"},
                      "decisions": ["x", "y"], "open_risks": ["z"],
                      "tests": [{"cmd": "t", "result": "pass"}]},
            "files_read_first": [{"path": "a.rs", "why": "w"}],
            "files_skip": [{"path": "b.rs", "why": ""}]
        }))
        .unwrap();
        let rendered = resume_text(&brief, &Report::none(), &[]);
        assert_eq!(resume_lines(&brief), rendered.as_str().lines().count());
        assert!(resume_lines(&brief) > 15);
    }
}
