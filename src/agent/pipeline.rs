//! Pipeline templates: reusable multi-stage decompositions, stored as
//! markdown at `<worktree root>/.claude/pipelines/<name>.md`.
//!
//! A template has four `## ` sections — When to use, Decomposition axis
//! (concern, module or stage), Stages (one `### ` heading per stage, each
//! with `run:` parallel|sequential|background, `role:` and
//! `brief contract:` lines) and Synthesis.

use std::path::{Component, Path, PathBuf};

use anyhow::{Result, bail};

use crate::git::repo;

/// The folder of templates, relative to the worktree root.
pub const DIR: &str = ".claude/pipelines";

/// The largest template accepted, in bytes (256 KiB).
pub const MAX_TEMPLATE_BYTES: usize = 256 * 1024;

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The decomposition axes a template may name.
pub const AXES: [&str; 3] = ["concern", "module", "stage"];

/// How a stage runs.
pub const RUN_MODES: [&str; 3] = ["parallel", "sequential", "background"];

/// The `## ` sections every template has, in order.
pub const SECTIONS: [&str; 4] = ["When to use", "Decomposition axis", "Stages", "Synthesis"];

/// Check a template name: letters, digits, `-`, `_` and inner `.`, at most
/// 64 characters, no path separator, no `..`, no leading `.` or `-`, and no
/// `.md` suffix (it is added). A name can never leave the templates folder.
pub fn validate_name(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "a name cannot be empty"
    } else if name.chars().count() > MAX_NAME_CHARS {
        "a name is at most 64 characters"
    } else if name.contains('/') || name.contains('\\') {
        "a name cannot contain a path separator"
    } else if name.contains("..") {
        "a name cannot contain '..'"
    } else if name.starts_with('.') || name.starts_with('-') {
        "a name cannot start with '.' or '-'"
    } else if name.ends_with('.') {
        "a name cannot end with '.'"
    } else if name.to_ascii_lowercase().ends_with(".md") {
        "give the name without '.md'"
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        "a name may only contain letters, digits, '-', '_' and '.'"
    } else {
        return Ok(());
    };
    Err(format!(
        "invalid pipeline name '{}': {why}; use a name like 'review-fanout'",
        name.escape_debug()
    ))
}

/// The templates folder of the worktree at `root`. Refuses a folder that
/// resolves outside the worktree (a symlinked `.claude` or `pipelines`).
pub fn dir(root: &Path) -> Result<PathBuf> {
    let full = root.join(DIR);
    repo::refuse_outside(root, &full, "")?;
    Ok(full)
}

/// The file of template `name` in the worktree at `root`; the name is
/// validated first, and a symlink there is refused.
pub fn file(root: &Path, name: &str) -> Result<PathBuf> {
    validate_name(name).map_err(crate::refused)?;
    let path = dir(root)?.join(format!("{name}.md"));
    debug_assert!(
        path.components()
            .all(|c| !matches!(c, Component::ParentDir))
    );
    if path.is_symlink() {
        bail!("'{}' is a symlink; refusing to follow it", path.display());
    }
    Ok(path)
}

/// The `## ` sections of a markdown text (outside code fences): heading
/// text and body, in order.
fn sections(markdown: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && let Some(h) = line.strip_prefix("## ") {
            out.push((h.trim().to_string(), String::new()));
            continue;
        }
        if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn section<'a>(all: &'a [(String, String)], title: &str) -> Option<&'a (String, String)> {
    all.iter().find(|(h, _)| {
        h.to_ascii_lowercase()
            .starts_with(&title.to_ascii_lowercase())
    })
}

/// `key: value` lines of a stage body, keys lowercased, list markers dropped.
fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.lines().find_map(|line| {
        let line = line.trim().trim_start_matches(['-', '*']).trim();
        let (k, v) = line.split_once(':')?;
        (k.trim().trim_matches('*').eq_ignore_ascii_case(key)).then(|| v.trim())
    })
}

/// Every problem of a template, empty when it is valid.
pub fn check(markdown: &str) -> Vec<String> {
    let all = sections(markdown);
    let mut problems = Vec::new();
    for title in SECTIONS {
        match section(&all, title) {
            None => problems.push(format!("missing section '## {title}'")),
            Some((heading, body)) => {
                if title == "Decomposition axis" {
                    let words = format!("{heading} {body}").to_ascii_lowercase();
                    let named: Vec<&str> = AXES
                        .iter()
                        .copied()
                        .filter(|a| {
                            words
                                .split(|c: char| !c.is_ascii_alphabetic())
                                .any(|w| w == *a)
                        })
                        .collect();
                    if named.len() != 1 {
                        problems.push(format!(
                            "'## {title}' must name exactly one axis: concern, module or stage{}",
                            if named.is_empty() {
                                String::new()
                            } else {
                                format!(" (it names {})", named.join(", "))
                            }
                        ));
                    }
                } else if body.trim().is_empty() {
                    problems.push(format!("section '## {title}' is empty"));
                }
            }
        }
    }
    if let Some((_, body)) = section(&all, "Stages") {
        let stages = stages(body);
        if stages.is_empty() && !body.trim().is_empty() {
            problems.push(
                "'## Stages' needs one '### <stage>' heading or one '1. **<stage>** (parallel|sequential|background)' item per stage".into(),
            );
        }
        for stage in &stages {
            check_stage(stage, &mut problems);
        }
    }
    problems
}

/// One stage of the Stages section.
struct Stage {
    name: String,
    /// The run mode in the method's numbered form (`(parallel)`); `None`
    /// for a `### ` stage, whose mode is its `run:` line.
    mode: Option<String>,
    body: String,
}

/// The stages of a Stages section: `### <stage>` headings, or the method's
/// numbered items `1. **<stage>** (parallel | sequential | background)`.
fn stages(body: &str) -> Vec<Stage> {
    let numbered = regex::Regex::new(r"^\s{0,3}\d+[.)]\s+\*\*(.+?)\*\*\s*(?:\(([^)]*)\))?")
        .expect("the stage pattern compiles");
    let mut stages: Vec<Stage> = Vec::new();
    for line in body.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            stages.push(Stage {
                name: h.trim().to_string(),
                mode: None,
                body: String::new(),
            });
        } else if let Some(caps) = numbered.captures(line) {
            stages.push(Stage {
                name: caps[1].trim().to_string(),
                mode: Some(caps.get(2).map_or("", |m| m.as_str()).trim().to_string()),
                body: String::new(),
            });
        } else if let Some(stage) = stages.last_mut() {
            stage.body.push_str(line);
            stage.body.push('\n');
        }
    }
    stages
}

/// The problems of one stage: a run mode that is one of [`RUN_MODES`]; a
/// `### ` stage also needs `role:` and `brief contract:` lines (the method's
/// numbered form describes its stage in free text).
fn check_stage(stage: &Stage, problems: &mut Vec<String>) {
    let name = &stage.name;
    let run = match &stage.mode {
        Some(mode) => Some(mode.to_ascii_lowercase()),
        None => field(&stage.body, "run").map(str::to_ascii_lowercase),
    };
    match run {
        Some(run) if RUN_MODES.contains(&run.trim_matches('`')) => {}
        Some(run) => problems.push(format!(
            "stage '{name}': run: '{run}' must be parallel, sequential or background"
        )),
        None => problems.push(format!(
            "stage '{name}': missing 'run: parallel|sequential|background'"
        )),
    }
    if stage.mode.is_none() {
        for key in ["role", "brief contract"] {
            if field(&stage.body, key).is_none_or(str::is_empty) {
                problems.push(format!("stage '{name}': missing '{key}: …'"));
            }
        }
    }
}

/// The first line of a template's "When to use" section, for listings.
pub fn summary(markdown: &str) -> Option<String> {
    let all = sections(markdown);
    let (_, body) = section(&all, "When to use")?;
    body.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// A valid template to start from, for `pipeline save NAME` without input.
pub fn skeleton(name: &str) -> String {
    format!(
        "# Pipeline: {name}

## When to use
<one line: the kind of task this decomposition fits>

## Decomposition axis
concern

## Stages
### 1. Explore
- run: parallel
- role: <who runs it, e.g. a read-only explorer subagent per concern>
- brief contract: <what it is given and what it must return>

### 2. Implement
- run: sequential
- role: <who runs it>
- brief contract: <what it is given and what it must return>

## Synthesis
<how the stage results are merged, and who checks the whole>
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_leave_the_folder() {
        for bad in [
            "", "../x", "a/b", "a\\b", "..", "a..b", ".hidden", "-x", "x.", "x.md", "a b", "ü",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
        for good in ["review", "review-fanout", "v1.2", "a_b"] {
            assert!(validate_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn the_skeleton_is_valid_and_every_problem_is_listed() {
        assert_eq!(check(&skeleton("x")), Vec::<String>::new());
        assert_eq!(
            summary(&skeleton("x")).unwrap(),
            "<one line: the kind of task this decomposition fits>"
        );
        let bad = "## When to use\nalways\n## Decomposition axis\nconcern or module\n## Stages\n### A\n- run: sometimes\n";
        let problems = check(bad);
        assert!(
            problems.iter().any(|p| p.contains("exactly one axis")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("run: 'sometimes'")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("'role: …'")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("brief contract")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("Synthesis")),
            "{problems:?}"
        );
    }
}
