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

/// The files of the project the docs' examples are about, which their
/// pointers name: the walkthrough's `auth.rs`, the flags example's and the
/// split plan's `src/auth.rs` and `DESIGN.md`.
const EXAMPLE_TREE: &[(&str, &str)] = &[
    ("auth.rs", "pub fn verify() {}\n"),
    (
        "src/auth.rs",
        "pub fn verify(exp: u64, now: u64) -> bool {\n    now <= exp\n}\n",
    ),
    ("DESIGN.md", "# Design\n\nTokens are JWT.\n"),
];

/// What a brief example of the docs is, to lint.
#[derive(Debug, PartialEq)]
enum Linted {
    /// A (partial) brief: `git handoff lint -F -`.
    Brief(String),
    /// A split plan: `git handoff split --plan -` (the proposal lints).
    Plan(String),
    /// `git handoff write` with these arguments, and stdin when the JSON
    /// is echoed into it.
    Write(Vec<String>, Option<String>),
}

/// One brief example, where it is, and the lint rules it is documented to
/// draw (an `<!-- lint: expect RULE, … -->` line right above its block):
/// none for every example that is not marked.
struct LintExample {
    line: usize,
    expect: Vec<String>,
    what: Linted,
}

/// The lines of a shell block joined into commands: a line ending in `\`
/// or inside an open single quote goes on; `$ ` prompts dropped.
fn shell_commands(lines: &[(usize, &str)]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for &(n, line) in lines {
        let line = line.strip_prefix("$ ").unwrap_or(line);
        if open {
            let last = out.last_mut().unwrap();
            last.1.push('\n');
            last.1.push_str(line);
        } else {
            out.push((n, line.to_string()));
        }
        let text = &out.last().unwrap().1;
        open = text.ends_with('\\') || text.matches('\'').count() % 2 == 1;
    }
    out
}

/// The `git handoff write` of a shell command, with the JSON an `echo '…'`
/// pipes into it.
fn write_example(command: &str) -> Option<Linted> {
    let at = command.find("git handoff write")?;
    let stdin = command[..at]
        .split_once("echo '")
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(json, _)| json.to_string());
    let args = words(&command[at + "git handoff write".len()..]);
    Some(Linted::Write(args, stdin))
}

/// A JSON block that is a brief or a plan (other JSON, such as settings,
/// is not).
fn json_example(text: &str) -> Option<Linted> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    if value.get("threads").is_some() {
        Some(Linted::Plan(text.to_string()))
    } else if ["resume", "state", "files_read_first"]
        .iter()
        .any(|k| value.get(k).is_some())
    {
        Some(Linted::Brief(text.to_string()))
    } else {
        None
    }
}

/// A fenced code block of a doc: its language, the lint rules marked for
/// it, and its lines with their numbers.
struct Block<'a> {
    lang: String,
    expect: Vec<String>,
    lines: Vec<(usize, &'a str)>,
}

/// The brief examples of one code block.
fn block_examples(block: &Block) -> Vec<LintExample> {
    let example = |line, what| LintExample {
        line,
        expect: block.expect.clone(),
        what,
    };
    let start = block.lines.first().map_or(0, |l| l.0);
    match block.lang.as_str() {
        "json" => {
            let body: Vec<&str> = block.lines.iter().map(|l| l.1).collect();
            json_example(&body.join("\n"))
                .map(|what| example(start, what))
                .into_iter()
                .collect()
        }
        "text" | "markdown" => Vec::new(),
        _ => shell_commands(&block.lines)
            .into_iter()
            .filter_map(|(line, command)| write_example(&command).map(|w| example(line, w)))
            .collect(),
    }
}

/// Every brief, plan and `git handoff write` example in the code blocks of
/// a doc (```text blocks excepted), in order.
fn lint_examples(text: &str) -> Vec<LintExample> {
    let mut out = Vec::new();
    let mut expect: Vec<String> = Vec::new();
    let mut block: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(open) = &mut block {
            if line.starts_with("```") {
                out.extend(block_examples(open));
                block = None;
            } else {
                open.lines.push((i + 1, line));
            }
        } else if let Some(lang) = line.strip_prefix("```") {
            block = Some(Block {
                lang: lang.trim().to_string(),
                expect: std::mem::take(&mut expect),
                lines: Vec::new(),
            });
        } else if let Some(rules) = line
            .strip_prefix("<!-- lint: expect ")
            .and_then(|r| r.strip_suffix(" -->"))
        {
            expect = rules.split(',').map(|r| r.trim().to_string()).collect();
        } else if !line.trim().is_empty() {
            expect.clear();
        }
    }
    out
}

/// The rules of the lint warnings in a command's output
/// (`warning: [key] path: rule: …`, `lint`'s without `[key] `), sorted.
fn lint_rules(output: &str) -> Vec<String> {
    let finding = |l: &str| -> Option<String> {
        let l = l.strip_prefix("warning: ")?;
        let l = l
            .strip_prefix('[')
            .map_or(Some(l), |r| r.split_once("] ").map(|p| p.1))?;
        let mut parts = l.split(": ");
        let (path, rule) = (parts.next()?, parts.next()?);
        let is_rule = !rule.is_empty() && rule.chars().all(|c| c.is_ascii_lowercase() || c == '-');
        (!path.contains(' ') && is_rule).then(|| rule.to_string())
    };
    let mut rules: Vec<String> = output.lines().filter_map(finding).collect();
    rules.sort();
    rules.dedup();
    rules
}

/// Run one example in `dir`: the lint rules it draws, or why it failed.
fn lint_example(sb: &Sandbox, dir: &Path, what: &Linted) -> Result<Vec<String>, String> {
    let (args, stdin): (Vec<String>, Option<&str>) = match what {
        Linted::Brief(json) => (vec!["lint".into(), "-F".into(), "-".into()], Some(json)),
        Linted::Plan(json) => (
            vec!["split".into(), "--plan".into(), "-".into()],
            Some(json),
        ),
        Linted::Write(args, stdin) => {
            let mut all = vec!["write".to_string()];
            all.extend(args.iter().cloned());
            (all, stdin.as_deref())
        }
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.handoff_with(dir, &args, stdin);
    let output = out.get_output();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() {
        Ok(lint_rules(&text))
    } else {
        Err(format!("exit {:?}:\n{text}", output.status.code()))
    }
}

/// Issue 57: the docs teach the method, so their examples follow it. Every
/// brief and plan (```json blocks), every `git handoff write` in a code
/// block (its flags, or the JSON echoed into it) draws no lint finding —
/// run in order, per file, in a repository holding the files the examples
/// name. An example marked `<!-- lint: expect RULE -->` (the README's
/// deliberate dangling pointer) runs in an empty repository, as its text
/// says, and must draw exactly the rules it names.
#[test]
fn every_brief_example_in_the_docs_passes_lint() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let examples = lint_examples(&text);
        if examples.is_empty() {
            continue;
        }
        let name = file.strip_prefix(ROOT).unwrap().display().to_string();
        let sb = Sandbox::new();
        let project = sb.repo("app");
        for (path, content) in EXAMPLE_TREE {
            sb.commit(&project, path, content, path);
        }
        let scratch = sb.repo("scratch");
        for example in &examples {
            checked += 1;
            let dir = if example.expect.is_empty() {
                &project
            } else {
                &scratch
            };
            match lint_example(&sb, dir, &example.what) {
                Ok(rules) if rules == example.expect => {}
                Ok(rules) => failures.push(format!(
                    "{name}:{}: draws lint {rules:?}, documented {:?}",
                    example.line, example.expect
                )),
                Err(why) => failures.push(format!("{name}:{}: {why}", example.line)),
            }
        }
    }
    assert!(checked >= 6, "only {checked} brief examples in the docs");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The example finder finds what it must: a brief and a plan in JSON
/// blocks (not other JSON), a write's flags over continued lines, the JSON
/// echoed into a write, a marked example's rules, and nothing in a ```text
/// block.
#[test]
fn the_lint_example_finder_finds_every_kind() {
    let doc = "```json\n{\"resume\": {}}\n```\n\
               ```json\n{\"why\": \"w\", \"threads\": []}\n```\n\
               ```json\n{\"hooks\": {}}\n```\n\
               <!-- lint: expect dangling-pointer -->\n\
               ```sh\n$ git handoff write --done-when \"a b\" \\\n  --decision \"x — y\"  # note\n\
               echo '{\"resume\":\n {}}' | git handoff write -F -\n```\n\
               ```text\ngit handoff write --done-when x\n```\n";
    let found = lint_examples(doc);
    let what: Vec<&Linted> = found.iter().map(|e| &e.what).collect();
    assert_eq!(
        what,
        [
            &Linted::Brief("{\"resume\": {}}".into()),
            &Linted::Plan("{\"why\": \"w\", \"threads\": []}".into()),
            &Linted::Write(
                ["--done-when", "a b", "--decision", "x — y"]
                    .map(String::from)
                    .to_vec(),
                None
            ),
            &Linted::Write(
                ["-F", "-"].map(String::from).to_vec(),
                Some("{\"resume\":\n {}}".into())
            ),
        ]
    );
    assert!(found[..2].iter().all(|e| e.expect.is_empty()));
    assert_eq!(found[2].expect, ["dangling-pointer"]);
    assert_eq!(found[3].expect, ["dangling-pointer"]);
}

/// Issue 57: the tour shows the method, so its brief draws no lint
/// finding (its decision gives its why).
#[test]
fn the_demo_draws_no_lint_finding() {
    let sb = Sandbox::new();
    let (_dir, out) = sb.demo_tour();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(lint_rules(&text), Vec::<String>::new(), "{text}");
}

/// The anchor GitHub gives a heading: lowercased, every character but a
/// letter, a digit, `-`, `_` and a space dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown file's headings (outside code blocks), a
/// repeated one as GitHub numbers it (`-1`, `-2`).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let Some(heading) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if in_block || !line.starts_with('#') {
            continue;
        }
        let base = anchor(heading);
        let n = out
            .iter()
            .filter(|a| {
                a.as_str() == base
                    || a.strip_prefix(&format!("{base}-"))
                        .is_some_and(|r| r.parse::<u32>().is_ok())
            })
            .count();
        out.push(if n == 0 { base } else { format!("{base}-{n}") });
    }
    out
}

/// The targets of a markdown file's inline links `[text](target)`, with
/// the line each is on (code spans and blocks left out).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for (at, _) in prose.match_indices("](") {
            let rest = &prose[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push((i + 1, rest[..end].to_string()));
            }
        }
    }
    out
}

/// The project's markdown: README, ARCHITECTURE, CHANGELOG, docs/,
/// bench/ and contrib/.
fn markdown_files() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut files = doc_files();
    for name in ["ARCHITECTURE.md", "CHANGELOG.md"] {
        files.push(root.join(name));
    }
    for dir in ["bench", "contrib"] {
        files.extend(
            walk(&root.join(dir), &["node_modules"])
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "md")),
        );
    }
    files
}

/// Issue 57: the docs were split by reader and sections moved between
/// files; every relative link, and every `#anchor` in one, still leads to
/// a file and a heading that exist.
#[test]
fn every_link_in_the_docs_leads_somewhere() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(ROOT).unwrap().display().to_string();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.contains('<') {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !linked.exists() {
                failures.push(format!("{name}:{line}: {target}: no such file"));
                continue;
            }
            if fragment.is_empty() || linked.is_dir() {
                continue;
            }
            let headings = anchors(&std::fs::read_to_string(&linked).unwrap_or_default());
            if !headings.iter().any(|a| a == fragment) {
                failures.push(format!("{name}:{line}: {target}: no heading #{fragment}"));
            }
        }
    }
    assert!(checked >= 50, "only {checked} links checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The anchor rules are GitHub's, on the headings these docs have.
#[test]
fn anchors_are_computed_as_github_does() {
    let doc = "# Guide\n## write, write --update or recover\n### `git handoff fork list`\n\
               ```\n## not a heading\n```\n## Fork mode: side tasks in their own session\n\
               ## Usage\n## Usage\n#no-space\n";
    assert_eq!(
        anchors(doc),
        [
            "guide",
            "write-write---update-or-recover",
            "git-handoff-fork-list",
            "fork-mode-side-tasks-in-their-own-session",
            "usage",
            "usage-1",
        ]
    );
    assert_eq!(
        links("see [a](b.md#c), `[x](y)` and [d](#e)\n```\n[f](g)\n```\n"),
        [(1, "b.md#c".to_string()), (1, "#e".to_string())]
    );
}

/// The commands under `cmd` (hidden ones and `help` left out) that the
/// reference must have, each with its words after `git handoff`.
fn documented_commands(cmd: &clap::Command, path: &[String]) -> Vec<(String, clap::Command)> {
    let mut out = Vec::new();
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let mut words = path.to_vec();
        words.push(sub.get_name().to_string());
        out.push((words.join(" "), sub.clone()));
        out.extend(documented_commands(sub, &words));
    }
    out
}

/// Issue 57: docs/reference.md has a section for every command and
/// subcommand, and names every flag of it there, so the reference cannot
/// fall behind the command line.
#[test]
fn the_reference_has_every_command_and_flag() {
    let mut root = <git_handoff::Cli as clap::CommandFactory>::command();
    root.build();
    let text = std::fs::read_to_string(Path::new(ROOT).join("docs/reference.md")).unwrap();
    let mut failures = Vec::new();
    let commands = documented_commands(&root, &[]);
    for (words, cmd) in &commands {
        let heading = format!("\n### `git handoff {words}`\n");
        let Some(at) = text.find(&heading) else {
            failures.push(format!("no section `git handoff {words}`"));
            continue;
        };
        let body = &text[at + heading.len()..];
        let section = &body[..body.find("\n### ").unwrap_or(body.len())];
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            if !["help", "version"].contains(&long)
                && !section.contains(&format!("`--{long}"))
                && !section.contains(&format!(" --{long}"))
            {
                failures.push(format!("`git handoff {words}`: --{long} missing"));
            }
        }
    }
    assert!(commands.len() >= 30, "only {} commands", commands.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 57: the README stays a front door (at most 300 lines, its first
/// code block the install-and-tour command and the test command) and the
/// guide a guide (at most 500 lines; the reference and development.md
/// hold the rest).
#[test]
fn the_readme_and_the_guide_keep_their_size() {
    let read = |name: &str| std::fs::read_to_string(Path::new(ROOT).join(name)).unwrap();
    let readme = read("README.md");
    let guide = read("docs/guide.md");
    assert!(
        readme.lines().count() <= 300,
        "README.md: {} lines",
        readme.lines().count()
    );
    assert!(
        guide.lines().count() <= 500,
        "docs/guide.md: {} lines",
        guide.lines().count()
    );
    let first = readme.split("```").nth(1).unwrap();
    let commands: Vec<&str> = first
        .lines()
        .skip(1)
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(
        commands,
        [
            "cargo install --locked --path . && git handoff demo",
            "cargo test --locked"
        ]
    );
}
