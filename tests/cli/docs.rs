//! Docs that cannot drift (issue 50). Every ```console example of
//! README.md and docs/*.md runs against the real binary: a file's examples
//! in order, in one bash process in an empty sandbox, each command's
//! stdout and stderr compared with the lines under it (`[..]` stands for
//! any text within a line, a `...` line for any lines). And every `git
//! handoff …` the docs show, in a code block or inline, names a command
//! and flags that exist.

use std::path::{Path, PathBuf};

use crate::support::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One `$ command` of a console block and the output under it.
struct Example {
    line: usize,
    command: String,
    expected: String,
}

/// README.md and every docs/*.md.
fn doc_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .map(|dir| dir.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "md"));
    files.sort();
    files.insert(0, Path::new(ROOT).join("README.md"));
    files
}

/// The `$ ` commands of the ```console blocks (a line ending in `\`
/// continues the command), each with the output lines under it.
fn console_examples(text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut continued = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if continued {
            let last = out.last_mut().unwrap();
            last.command.push('\n');
            last.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: command.to_string(),
                expected: String::new(),
            });
            continued = command.ends_with('\\');
        } else if let Some(last) = out.last_mut() {
            last.expected.push_str(line);
            last.expected.push('\n');
        }
    }
    out
}

const MARK: &str = "@@docs-example@@";

/// Run a file's examples in one bash, in an empty directory of a new
/// sandbox; each one's merged output.
fn run(examples: &[Example]) -> Vec<String> {
    let sb = Sandbox::new();
    let dir = sb.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    let mut script = String::from("exec 2>&1\n");
    for example in examples {
        script.push_str(&format!("echo {MARK}\n{}\n", example.command));
    }
    script.push_str(&format!("echo {MARK}\n"));
    let out = sb
        .command("bash", &dir)
        .args(["--noprofile", "--norc", "-c", &script])
        .env("TMPDIR", sb.dir.path())
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts: Vec<String> = text.split(&format!("{MARK}\n")).map(String::from).collect();
    parts.remove(0);
    parts
}

#[test]
fn every_console_example_in_the_docs_runs_as_shown() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let examples = console_examples(&text);
        if examples.is_empty() {
            continue;
        }
        let outputs = run(&examples);
        let name = file.strip_prefix(ROOT).unwrap().display().to_string();
        for (example, actual) in examples.iter().zip(&outputs) {
            ran += 1;
            let label = format!("{name}:{}: $ {}", example.line, example.command);
            if let Err(e) = snapbox::Assert::new().normalize_paths(false).try_eq(
                Some(&label),
                actual.clone().into(),
                example.expected.clone().into(),
            ) {
                failures.push(format!("{label}\n{e}"));
            }
        }
        assert_eq!(
            outputs.len(),
            examples.len() + 1,
            "{name}: the script stopped"
        );
    }
    assert!(ran >= 10, "only {ran} console examples in the docs");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Shell words of `text` up to a separator (`|`, `&&`, `;`, `#`, `)`, a
/// backtick), quotes removed.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '|' | ';' | '#' | ')' | '`' | '&' | '>' | '<') => break,
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            (None, '\\') => {
                chars.next();
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Every `git handoff …` in a code block or an inline code span, with the
/// line it is on.
fn invocations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_block = !in_block && !line.contains("text") && !line.contains("json");
            continue;
        }
        let spans: Vec<&str> = if in_block {
            vec![line]
        } else {
            line.split('`').skip(1).step_by(2).collect()
        };
        for span in spans {
            for (at, _) in span.match_indices("git handoff ") {
                let mut rest = &span[at + "git handoff ".len()..];
                // Quoted as a whole (`"command": "git handoff …"`): up to
                // the closing quote.
                if let Some(q) = span[..at]
                    .chars()
                    .last()
                    .filter(|c| matches!(c, '"' | '\''))
                {
                    rest = rest.split(q).next().unwrap_or(rest);
                }
                out.push((i + 1, rest.to_string()));
            }
        }
    }
    out
}

/// Whether `words` (after `git handoff`) name an existing command and only
/// flags it has; the reason when not.
fn check_invocation(root: &clap::Command, words: &[String]) -> Result<(), String> {
    let Some(first) = words.first() else {
        return Ok(());
    };
    if first.starts_with('-') || first.chars().any(|c| !(c.is_ascii_lowercase() || c == '-')) {
        return Ok(());
    }
    let mut cmd = root
        .find_subcommand(first)
        .ok_or_else(|| format!("no command '{first}'"))?;
    for word in &words[1..] {
        if word == "--" {
            break;
        }
        if let Some(sub) = cmd.find_subcommand(word) {
            cmd = sub;
            continue;
        }
        let known = |a: &clap::Arg| match word.strip_prefix("--") {
            Some(long) => a.get_long() == Some(long.split('=').next().unwrap()),
            None => a.get_short().is_some_and(|s| word[1..].starts_with(s)),
        };
        let builtin = ["-h", "--help", "-V", "--version", "-"];
        if word.starts_with('-')
            && !builtin.contains(&word.as_str())
            && !cmd.get_arguments().any(known)
        {
            return Err(format!("'{}' has no flag {word}", cmd.get_name()));
        }
    }
    Ok(())
}

#[test]
fn every_documented_command_and_flag_exists() {
    let mut root = <git_handoff::Cli as clap::CommandFactory>::command();
    root.build();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut files = doc_files();
    files.push(Path::new(ROOT).join("contrib/claude/skills/git-handoff/SKILL.md"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(ROOT).unwrap().display().to_string();
        for (line, rest) in invocations(&text) {
            checked += 1;
            if let Err(why) = check_invocation(&root, &words(&rest)) {
                failures.push(format!("{name}:{line}: git handoff {rest}\n  {why}"));
            }
        }
    }
    assert!(checked >= 100, "only {checked} invocations found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checker finds what it must: a command or a flag that does not
/// exist, in a block and inline.
#[test]
fn the_doc_checker_catches_a_missing_command_or_flag() {
    let mut root = <git_handoff::Cli as clap::CommandFactory>::command();
    root.build();
    let doc = "Run `git handoff resume --jsn` or\n```sh\ngit handoff frobnicate KEY\ngit handoff fork list\ngit handoff write -F - --update | cat\n```\n";
    let verdicts: Vec<bool> = invocations(doc)
        .iter()
        .map(|(_, rest)| check_invocation(&root, &words(rest)).is_ok())
        .collect();
    assert_eq!(verdicts, [false, false, true, true]);
    let examples = console_examples("```console\n$ echo a \\\n  b\na b\n$ true\n```\n");
    assert_eq!(examples.len(), 2);
    assert_eq!(examples[0].expected, "a b\n");
    assert_eq!(run(&examples), ["a b\n", "", ""]);
}
