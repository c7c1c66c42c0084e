//! Continue summaries: markdown files `<worktree root>/.claude/memory/
//! <date>-<task-slug>.md` from four templates, the newest one's "Key Context
//! for Continuation", and cleaning (consolidate several summaries of one
//! task, archive old ones, delete old archived ones).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::brief::Brief;
use crate::git::repo;

/// Where summaries live, relative to the worktree root.
pub const MEMORY_DIR: &str = ".claude/memory";

/// Where archived summaries go, inside [`MEMORY_DIR`].
pub const ARCHIVE_DIR: &str = "archive";

/// The section `summary latest` prints.
pub const KEY_CONTEXT: &str = "Key Context for Continuation";

/// The heading under which `summary clean` keeps the unique content of the
/// older summaries it consolidates.
pub const CONSOLIDATED: &str = "Consolidated from older summaries";

/// Placeholder for a section with nothing to say yet.
const EMPTY: &str = "—";

/// A summary template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    /// Task Summary.
    Task,
    /// Research.
    Research,
    /// Plan.
    Plan,
    /// Implementation Progress.
    Implementation,
}

impl Template {
    /// The title of the summary.
    pub fn title(self) -> &'static str {
        match self {
            Template::Task => "Task Summary",
            Template::Research => "Research",
            Template::Plan => "Plan",
            Template::Implementation => "Implementation Progress",
        }
    }

    /// The sections, in order.
    pub fn sections(self) -> &'static [&'static str] {
        match self {
            Template::Task => &[
                "Date",
                "Task",
                "Decisions Made",
                "Artifacts Produced",
                "Current State",
                KEY_CONTEXT,
                "Agents Used",
                "Skills Applied",
            ],
            Template::Research => &[
                "Date",
                "Task",
                "System Understanding",
                "Files Involved",
                "Key Findings",
                "Constraints & Gotchas",
                "Open Questions",
            ],
            Template::Plan => &[
                "Date",
                "Task",
                "Changes",
                "Test Strategy",
                "Execution Order",
                "Decisions Made",
                "Status",
            ],
            Template::Implementation => &[
                "Date",
                "Task",
                "Completed",
                "In Progress",
                "Remaining",
                "Issues Encountered",
                "Test Results",
            ],
        }
    }
}

/// What git knows, to pre-fill a summary.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The task, as given.
    pub task: String,
    /// The branch (`HEAD` when detached).
    pub branch: String,
    /// The commit checked out, short.
    pub head: Option<String>,
    /// `git diff --stat HEAD`'s summary line, when dirty.
    pub diff_summary: Option<String>,
    /// Files changed in the working tree (tracked and untracked).
    pub changed: Vec<String>,
    /// The current brief, when there is one.
    pub brief: Option<Brief>,
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    items
        .into_iter()
        .map(|i| format!("- {}\n", i.trim()))
        .collect()
}

impl Facts {
    fn state_line(&self) -> String {
        let at = self
            .head
            .as_deref()
            .map(|h| format!(" at {h}"))
            .unwrap_or_default();
        let dirty = self
            .diff_summary
            .as_deref()
            .map(|d| format!("; uncommitted: {d}"))
            .unwrap_or_default();
        format!("Branch `{}`{at}{dirty}", self.branch)
    }

    fn brief_list(&self, f: impl Fn(&Brief) -> Vec<String>) -> Vec<String> {
        self.brief.as_ref().map(f).unwrap_or_default()
    }

    /// Key Context for Continuation: what the next session needs first,
    /// the user's preferences, then the verbatim material.
    fn key_context(&self) -> String {
        let b = self.brief.as_ref();
        let mut items = Vec::new();
        if let Some(b) = b {
            items.push(format!("Next step: {}", b.resume.resume_by));
            items.push(format!("Done when: {}", b.resume.done_when));
            items.push(format!(
                "Next acceptance check: {}",
                b.state.next_acceptance_check
            ));
            items.extend(
                b.state
                    .rejected_paths
                    .iter()
                    .map(|r| format!("Do not retry: {r}")),
            );
            items.extend(b.state.open_risks.iter().map(|r| format!("Risk: {r}")));
            items.extend(
                b.state
                    .preferences
                    .iter()
                    .map(|p| format!("User preference: {p}")),
            );
            items.push(format!(
                "Brief: `git handoff resume {}`",
                crate::support::escape::shell_quote(&b.key)
            ));
        }
        list(items) + &b.map(verbatim_blocks).unwrap_or_default()
    }

    fn section(&self, name: &str) -> String {
        let b = self.brief.as_ref();
        match name {
            "Date" => format!("{}\n", self.date),
            "Task" => format!("{}\n", self.task.trim()),
            "Decisions Made" => list(self.brief_list(|b| b.state.decisions.clone())),
            "Artifacts Produced" | "Changes" => list(self.changed.clone()),
            "Current State" | "Status" => {
                let mut items = vec![self.state_line()];
                if let Some(b) = b {
                    items.push(format!("Next step: {}", b.resume.resume_by));
                    items.extend(
                        b.state
                            .tests
                            .iter()
                            .map(|t| format!("Test `{}`: {}", t.cmd, t.result)),
                    );
                }
                list(items)
            }
            KEY_CONTEXT => self.key_context(),
            "Files Involved" => {
                let mut items: Vec<String> = self.brief_list(|b| {
                    b.files_read_first
                        .iter()
                        .map(|f| format!("{} — {}", f.path, f.why))
                        .collect()
                });
                items.extend(self.changed.iter().map(|c| format!("{c} (changed)")));
                list(items)
            }
            "Constraints & Gotchas" => list(self.brief_list(|b| {
                b.state
                    .preferences
                    .iter()
                    .map(|p| format!("User preference: {p}"))
                    .chain(
                        b.state
                            .rejected_paths
                            .iter()
                            .map(|r| format!("Rejected: {r}")),
                    )
                    .chain(b.state.open_risks.iter().map(|r| format!("Risk: {r}")))
                    .collect()
            })),
            "Issues Encountered" => {
                list(self.brief_list(|b| {
                    b.state
                        .rejected_paths
                        .iter()
                        .map(|r| format!("Rejected: {r}"))
                        .chain(b.state.open_risks.iter().map(|r| format!("Risk: {r}")))
                        .collect()
                })) + &b.map(verbatim_blocks).unwrap_or_default()
            }
            "Test Strategy" => list(self.brief_list(|b| {
                std::iter::once(format!("Next check: {}", b.state.next_acceptance_check))
                    .chain(b.state.tests.iter().map(|t| format!("`{}`", t.cmd)))
                    .collect()
            })),
            "Execution Order" => self
                .brief_list(|b| vec![b.resume.resume_by.clone()])
                .iter()
                .map(|s| format!("1. {}\n", s.trim()))
                .collect(),
            "In Progress" => {
                let mut items = self.brief_list(|b| vec![b.resume.resume_by.clone()]);
                items.extend(self.changed.iter().map(|c| format!("{c} (changed)")));
                list(items)
            }
            "Remaining" => {
                list(self.brief_list(|b| vec![format!("Done when: {}", b.resume.done_when)]))
            }
            "Test Results" => list(self.brief_list(|b| {
                b.state
                    .tests
                    .iter()
                    .map(|t| format!("[{}] {}", t.result, t.cmd))
                    .collect()
            })),
            _ => String::new(),
        }
    }
}

/// The brief's verbatim material (the Output gate: the error being
/// debugged, the code being modified, the last turns), each under a line
/// naming what it is, as an indented block: word for word, and no line of
/// it can start a `## ` section of the summary.
fn verbatim_blocks(b: &Brief) -> String {
    let mut out = String::new();
    for v in &b.state.verbatim {
        out.push_str(&format!("\nVerbatim — {}:\n\n", v.what.trim()));
        for line in v.text.trim_end().lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    out
}

/// Render a new summary: `# <Title> — <task>`, then one `## ` section per
/// template section, pre-filled from `facts` where git knows something,
/// `—` where it does not.
pub fn render(template: Template, facts: &Facts) -> String {
    let task = facts.task.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = format!("# {} — {task}\n", template.title());
    for name in template.sections() {
        let body = facts.section(name);
        out.push_str(&format!("\n## {name}\n"));
        if body.trim().is_empty() {
            out.push_str(EMPTY);
            out.push('\n');
        } else {
            out.push_str(&body);
        }
    }
    out
}

/// The file name of a summary: `<date>-<task-slug>.md`.
pub fn file_name(date: &str, slug: &str) -> String {
    format!("{date}-{slug}.md")
}

/// The date and task slug of a summary file name; `None` for other files.
pub fn parse_name(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".md")?;
    if stem.len() < 12 || !stem.is_char_boundary(10) {
        return None;
    }
    let (date, rest) = stem.split_at(10);
    let slug = rest.strip_prefix('-')?;
    (crate::support::clock::parse_date(date).is_some() && crate::support::slug::is_slug(slug))
        .then(|| (date.to_string(), slug.to_string()))
}

/// The memory directory of the worktree at `root`, refusing one that
/// resolves outside the worktree (a symlinked `.claude`, say).
pub fn memory_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(MEMORY_DIR);
    repo::refuse_outside(root, &dir, "")?;
    Ok(dir)
}

/// A summary file found on disk.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// The date in its name.
    pub date: String,
    /// The task slug in its name.
    pub slug: String,
}

/// The summaries directly in `dir` (regular files named
/// `<date>-<slug>.md`), sorted by date, then name.
pub fn scan(dir: &Path) -> Result<Vec<Found>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let Some((date, slug)) = parse_name(&name) else {
            continue;
        };
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        out.push(Found {
            path: entry.path(),
            name,
            date,
            slug,
        });
    }
    out.sort_by(|a, b| (&a.date, &a.name).cmp(&(&b.date, &b.name)));
    Ok(out)
}

/// The sections of a markdown summary: `(heading, lines)`, the text before
/// the first `## ` heading under the heading `""`.
pub fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.push((h.trim().to_string(), Vec::new()));
        } else {
            out.last_mut()
                .expect("never empty")
                .1
                .push(line.to_string());
        }
    }
    out
}

/// The body of the section `name`, trimmed; `None` if absent.
pub fn section_body(text: &str, name: &str) -> Option<String> {
    sections(text)
        .into_iter()
        .find(|(h, _)| h == name)
        .map(|(_, lines)| lines.join("\n").trim().to_string())
}

fn meaningful(line: &str) -> Option<&str> {
    let t = line.trim();
    (!t.is_empty() && t != EMPTY).then_some(t)
}

/// Consolidate `older` summaries (name, text; newest first) into `base`:
/// every line of an older summary that does not already appear in the
/// base (or in what was appended before it) is appended under
/// `## Consolidated from older summaries` → `### From <name>` →
/// `#### <section>`. Nothing is lost: each line of every older summary is
/// in the result. Returns the base unchanged when nothing is new.
pub fn consolidate(base: &str, older: &[(String, String)]) -> String {
    let mut seen: HashSet<String> = base
        .lines()
        .filter_map(meaningful)
        .map(str::to_string)
        .collect();
    let mut appended = String::new();
    for (name, text) in older {
        let mut block = String::new();
        for (heading, lines) in sections(text) {
            let mut unique = Vec::new();
            for line in &lines {
                if let Some(t) = meaningful(line)
                    && seen.insert(t.to_string())
                {
                    unique.push(line.trim_end());
                }
            }
            if !unique.is_empty() {
                let heading = if heading.is_empty() {
                    "(top)"
                } else {
                    &heading
                };
                block.push_str(&format!("\n#### {heading}\n"));
                for line in unique {
                    block.push_str(line);
                    block.push('\n');
                }
            }
        }
        if !block.is_empty() {
            appended.push_str(&format!("\n### From {name}\n{block}"));
        }
    }
    if appended.is_empty() {
        return base.to_string();
    }
    let mut out = base.trim_end().to_string();
    out.push('\n');
    if !base
        .lines()
        .any(|l| l.trim() == format!("## {CONSOLIDATED}"))
    {
        out.push_str(&format!(
            "\n## {CONSOLIDATED}\n\nWhat older summaries of this task said that is not above, kept by `git handoff summary clean` when it removed them.\n"
        ));
    }
    out.push_str(&appended);
    out
}

/// One step of `summary clean`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Step {
    /// Fold `from` (older summaries of the same task, newest first) into
    /// `base` and remove them.
    Consolidate {
        /// The newest summary of the task.
        base: PathBuf,
        /// The older ones.
        from: Vec<PathBuf>,
    },
    /// Move a summary into the archive.
    Archive {
        /// The summary.
        from: PathBuf,
        /// Its place in the archive.
        to: PathBuf,
        /// Its age in days.
        age_days: i64,
    },
    /// Delete an archived summary.
    Delete {
        /// The archived summary.
        path: PathBuf,
        /// Its age in days.
        age_days: i64,
    },
    /// Left alone, and why.
    Skip {
        /// The summary.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Plan `summary clean` in `dir` for the day `today` (days since the
/// epoch): consolidate each task's live summaries into its newest, archive
/// live summaries older than `archive_after` days, delete summaries that
/// were already archived and are older than `delete_after` days. Ages come
/// from the date in the file name, in whole days.
pub fn plan_clean(
    dir: &Path,
    today: i64,
    archive_after: i64,
    delete_after: i64,
) -> Result<Vec<Step>> {
    let age = |date: &str| {
        crate::support::clock::parse_date(date).map_or(0, |secs| today - secs.div_euclid(86_400))
    };
    let mut steps = Vec::new();
    let mut by_slug: BTreeMap<String, Vec<Found>> = BTreeMap::new();
    for found in scan(dir)? {
        by_slug.entry(found.slug.clone()).or_default().push(found);
    }
    let archive = dir.join(ARCHIVE_DIR);
    for (_, mut group) in by_slug {
        let base = group.pop().expect("groups are never empty");
        if !group.is_empty() {
            steps.push(Step::Consolidate {
                base: base.path.clone(),
                from: group.iter().rev().map(|f| f.path.clone()).collect(),
            });
        }
        let days = age(&base.date);
        if days > archive_after {
            let to = archive.join(&base.name);
            if to.symlink_metadata().is_ok() {
                steps.push(Step::Skip {
                    path: base.path,
                    reason: format!("{} exists already", to.display()),
                });
            } else {
                steps.push(Step::Archive {
                    from: base.path,
                    to,
                    age_days: days,
                });
            }
        }
    }
    for found in scan(&archive)? {
        let days = age(&found.date);
        if days > delete_after {
            steps.push(Step::Delete {
                path: found.path,
                age_days: days,
            });
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_its_sections_in_order() {
        let facts = Facts {
            date: "2026-11-30".into(),
            task: "Fix the auth expiry".into(),
            branch: "main".into(),
            ..Facts::default()
        };
        for t in [
            Template::Task,
            Template::Research,
            Template::Plan,
            Template::Implementation,
        ] {
            let text = render(t, &facts);
            let headings: Vec<String> = sections(&text)
                .into_iter()
                .skip(1)
                .map(|(h, _)| h)
                .collect();
            assert_eq!(headings, t.sections(), "{text}");
            assert!(text.starts_with(&format!("# {} — Fix the auth expiry\n", t.title())));
            assert_eq!(section_body(&text, "Date").unwrap(), "2026-11-30");
        }
    }

    #[test]
    fn names_parse() {
        assert_eq!(
            parse_name("2026-11-30-fix-auth.md"),
            Some(("2026-11-30".into(), "fix-auth".into()))
        );
        for bad in [
            "2026-11-30.md",
            "notes.md",
            "2026-13-01-x.md",
            "2026-11-30-x.txt",
            "2026-11-30-a--b.md",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn consolidation_keeps_every_line() {
        let base = "# Task Summary — x\n\n## Date\n2026-11-30\n\n## Decisions Made\n- a\n";
        let old = "# Task Summary — x\n\n## Date\n2026-11-01\n\n## Decisions Made\n- a\n- b\n\n## Agents Used\n—\n";
        let older = "# Task Summary — x\n\n## Date\n2026-10-01\n\n## Decisions Made\n- b\n- c\n";
        let out = consolidate(
            base,
            &[
                ("new-ish.md".into(), old.into()),
                ("old.md".into(), older.into()),
            ],
        );
        assert!(out.starts_with(base.trim_end()), "{out}");
        for text in [old, older] {
            // Every line of content (headings of empty sections aside).
            for line in text
                .lines()
                .filter_map(meaningful)
                .filter(|l| !l.starts_with("## "))
            {
                assert!(out.contains(line), "{line} lost:\n{out}");
            }
        }
        assert_eq!(out.matches("- b").count(), 1, "{out}");
        assert_eq!(out.matches(&format!("## {CONSOLIDATED}")).count(), 1);
        assert!(
            out.contains("### From new-ish.md\n\n#### Date\n2026-11-01\n"),
            "{out}"
        );
        assert_eq!(consolidate(base, &[("same.md".into(), base.into())]), base);
        // A second consolidation appends under the same section.
        let again = consolidate(
            &out,
            &[("later.md".into(), "## Decisions Made\n- d\n".into())],
        );
        assert_eq!(again.matches(&format!("## {CONSOLIDATED}")).count(), 1);
        assert!(
            again.ends_with("### From later.md\n\n#### Decisions Made\n- d\n"),
            "{again}"
        );
    }
}
