//! git-handoff: save and restore the working state of a coding session as
//! typed briefs stored in git (`refs/handoffs/<key>`), with every version in
//! the notes history (`refs/notes/handoffs`) and a narrative log in the
//! working tree (`.claude/PROJECT_STATE.md`).
//!
//! The source is folders by layer, each depending only on those before it
//! (see ARCHITECTURE.md; `layers_point_one_way` below enforces it):
//! `support` ← `brief` ← `git` ← `store` ← `drift` / `narrative` / `sync` /
//! `agent` ← `write` ← `cli`. Only `cli` prints.

mod agent;
pub mod brief;
mod cli;
pub mod drift;
mod git;
pub mod narrative;
pub mod store;
mod support;
mod sync;
mod write;

pub use brief::{lint, redact};
pub use cli::hints::message as error_message;
pub use cli::{Cli, Command, Output, manual, render, run, write_out};
pub use drift::bloom;
pub use narrative::merge as narrative_merge;
pub use support::escape;
pub use support::refusal::refused;

/// The exit code of an error (1 the check's answer is no, 128 fatal).
pub fn exit_code_of(err: &anyhow::Error) -> u8 {
    cli::exit::code_of(err)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The folders of `src/` by tier, lowest first: a layer may use every
    /// layer of the tiers below its own, never a peer of its tier
    /// (`support` ← `brief` ← `git` ← `store` ←
    /// `drift`/`narrative`/`sync`/`agent` ← `write` ← `cli`).
    const TIERS: &[&[&str]] = &[
        &["support"],
        &["brief"],
        &["git"],
        &["store"],
        &["drift", "narrative", "sync", "agent"],
        &["write"],
        &["cli"],
    ];

    /// Each layer and the layers it may use, from [`TIERS`].
    fn layers() -> Vec<(&'static str, Vec<&'static str>)> {
        TIERS
            .iter()
            .enumerate()
            .flat_map(|(n, tier)| {
                let below: Vec<&str> = TIERS[..n].iter().flat_map(|t| t.iter().copied()).collect();
                tier.iter().map(move |layer| (*layer, below.clone()))
            })
            .collect()
    }

    /// The layers a piece of source names as `crate::<layer>`, also inside
    /// `use crate::{a, b::c}` groups.
    fn used_layers(text: &str) -> Vec<String> {
        let mut used = Vec::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find(';').unwrap_or(group.len());
                let mut depth = 0;
                let mut start = true;
                let mut word = String::new();
                for c in group[..end].chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        c if c.is_alphanumeric() || c == '_' => {
                            if start && depth == 0 {
                                word.push(c);
                            }
                            continue;
                        }
                        _ => {}
                    }
                    if !word.is_empty() {
                        used.push(std::mem::take(&mut word));
                    }
                    if c != ',' && !c.is_whitespace() {
                        start = false;
                    }
                }
                if !word.is_empty() {
                    used.push(word);
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                used.push(name);
            }
        }
        used
    }

    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn used_layers_reads_paths_and_groups() {
        assert_eq!(
            used_layers("use crate::store::x; use crate::{git::repo, brief::{a, b}, cli};"),
            ["store", "git", "brief", "cli"]
        );
    }

    /// No module imports a layer above its own (or a peer), and nothing
    /// outside `cli/` imports from `cli/`.
    #[test]
    fn layers_point_one_way() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let layers = layers();
        let all: Vec<&str> = layers.iter().map(|(name, _)| *name).collect();
        let mut wrong = Vec::new();
        for (layer, allowed) in &layers {
            let mut paths = Vec::new();
            files(&src.join(layer), &mut paths);
            assert!(!paths.is_empty(), "src/{layer} is empty");
            for path in paths {
                let text = std::fs::read_to_string(&path).unwrap();
                for used in used_layers(&text) {
                    if used != *layer
                        && all.contains(&used.as_str())
                        && !allowed.contains(&used.as_str())
                    {
                        wrong.push(format!("{} uses crate::{used}", path.display()));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "layer rule broken:\n{}", wrong.join("\n"));
    }

    /// The files below `cli/` allowed to print, and why: the test-only
    /// crash point says on stderr that it was reached, at that moment (the
    /// crash tests wait for the line before they kill the process).
    const PRINTS_BELOW_CLI: &[&str] = &["src/support/failpoint.rs"];

    /// Where `text` prints: a print macro (`println`, `eprintln`, `print`,
    /// `eprint`, `dbg`) or a handle on stdout or stderr, as `line: what`.
    fn prints(text: &str) -> Vec<String> {
        let macros = ["println", "eprintln", "print", "eprint", "dbg"].map(|m| format!("{m}!"));
        let handles = ["stdout", "stderr"].map(|h| format!("io::{h}("));
        let mut found = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for m in &macros {
                for (i, _) in line.match_indices(m.as_str()) {
                    let before = line[..i].chars().next_back();
                    if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                        found.push(format!("{}: {m}", n + 1));
                    }
                }
            }
            for h in &handles {
                if line.contains(h.as_str()) {
                    found.push(format!("{}: {h}", n + 1));
                }
            }
        }
        found
    }

    #[test]
    fn prints_finds_macros_and_handles_not_their_names() {
        let text = "let a = 1;\n    eprintln!(\"x\");\n// println!(\"doc\")\nlet w = std::io::stderr();\nmy_print!(x);";
        assert_eq!(prints(text), ["2: eprintln!", "4: io::stderr("]);
    }

    /// Only `cli/` prints: no layer below it uses a print macro or stdout
    /// and stderr (but [`PRINTS_BELOW_CLI`]); they return values.
    #[test]
    fn nothing_below_cli_prints() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut wrong = Vec::new();
        for (layer, _) in layers().into_iter().filter(|(l, _)| *l != "cli") {
            let mut paths = Vec::new();
            files(&root.join("src").join(layer), &mut paths);
            for path in paths {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
                if PRINTS_BELOW_CLI.contains(&rel.as_str()) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                wrong.extend(prints(&text).into_iter().map(|p| format!("{rel}:{p}")));
            }
        }
        assert!(
            wrong.is_empty(),
            "printing below cli/:\n{}",
            wrong.join("\n")
        );
    }

    /// Functions allowed over 100 lines: none.
    const LONG_FOR_NOW: &[&str] = &[];

    /// No function in `src/` is over 100 lines: a `fn` line and the
    /// closing brace at its own indentation, both counted.
    #[test]
    fn no_function_is_over_100_lines() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        files(&root.join("src"), &mut paths);
        let mut long = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                let body = line.trim_start();
                let indent = &line[..line.len() - body.len()];
                let Some(name) = ["pub fn ", "pub(crate) fn ", "fn "]
                    .iter()
                    .find_map(|p| body.strip_prefix(p))
                    .map(|rest| rest.split(['(', '<']).next().unwrap_or(""))
                else {
                    continue;
                };
                let close = format!("{indent}}}");
                let Some(end) = lines[i + 1..].iter().position(|l| *l == close) else {
                    continue;
                };
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
                let at = format!("{rel}: {name}");
                if end + 2 > 100 && !LONG_FOR_NOW.contains(&at.as_str()) {
                    long.push(format!("{at} ({} lines)", end + 2));
                }
            }
        }
        assert!(
            long.is_empty(),
            "functions over 100 lines:\n{}",
            long.join("\n")
        );
    }
}
