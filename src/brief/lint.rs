//! Lint: the handoff method's anti-patterns, caught before a weak brief is
//! handed on. Rules work on the brief as JSON, so a partial brief can be
//! linted before `write` fills it in.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::brief::redact;

/// The most lines a string field may hold before it counts as pasted content.
pub const MAX_FIELD_LINES: usize = 8;
/// The most entries in one list.
pub const MAX_LIST_ENTRIES: usize = 12;
/// The most lines a resume render may have.
pub const MAX_RENDER_LINES: usize = 200;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// The rule's name, e.g. `vague-check`.
    pub rule: &'static str,
    /// The field, written like `state.decisions[2]`.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it, one line.
    pub fix: String,
}

impl Finding {
    fn new(
        rule: &'static str,
        field: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            field: field.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// `<field>: <rule>: <message>; fix: <fix>`.
    pub fn line(&self) -> String {
        crate::support::escape::clean(&format!(
            "{}: {}: {}; fix: {}",
            self.field, self.rule, self.message, self.fix
        ))
        .into_owned()
    }
}

/// Every rule, with a bad and a good example (for the documentation).
pub const RULES: &[(&str, &str, &str, &str)] = &[
    (
        "vague-check",
        "resume.done_when / state.next_acceptance_check name no command, test, file or observable result (a single word never does)",
        "\"done_when\": \"tests pass\"",
        "\"done_when\": \"cargo test auth passes (14 tests)\"",
    ),
    (
        "inlined-content",
        "a string holds a code block, more than 8 lines, or lines copied from a file to read first",
        "\"decisions\": [\"<a fenced code block, or 20 pasted lines of src/auth.rs>\"]",
        "\"files_read_first\": [{\"path\": \"src/auth.rs:40-58\", \"why\": \"verify()\"}]",
    ),
    (
        "no-rejected-paths",
        "the brief records no rejected paths (the highest-ROI entry), so the next session may redo them",
        "\"decisions\": [\"use <=\"]",
        "\"decisions\": [\"use <=\"], \"rejected_paths\": [\"< (off by one)\"]",
    ),
    (
        "decision-without-why",
        "a decision gives no why (write `decision — why`; ` - `, `: because`, `(because …)` also separate it), so the next session cannot tell when it still holds",
        "\"decisions\": [\"Operator is <=\"]",
        "\"decisions\": [\"Operator is <= — the expiry second is still valid\"]",
    ),
    (
        "over-long",
        "the resume render exceeds 200 lines, or one list has more than 12 entries",
        "\"decisions\": [ …20 entries… ]",
        "the five that constrain the next step; the rest in the narrative",
    ),
    (
        "dangling-pointer",
        "a files_read_first / files_skip path exists neither in the worktree nor at HEAD, leaves the worktree through `..` or a symlink, is an absolute path that does not exist, or its :lines range ends past the file's end",
        "{\"path\": \"src/auht.rs:1-900\"}",
        "{\"path\": \"src/auth.rs:1-90\"}",
    ),
    (
        "placeholder",
        "an optional field holds a null-like placeholder (none, n/a, TBD, -) instead of being omitted, or the next step (resume_by) is one",
        "\"open_risks\": [\"none\"]",
        "omit open_risks",
    ),
    (
        "restated-readme",
        "a string repeats a line of the repository's README (50+ characters): the next session can read the README; the brief holds what it does not say",
        "\"decisions\": [\"<a line copied from README.md>\"]",
        "\"files_read_first\": [{\"path\": \"README.md:12-20\", \"why\": \"the install steps\"}]",
    ),
    (
        "secret",
        "a string holds a secret or an e-mail address (it would be redacted on write)",
        "\"commands\": [\"curl -H 'Authorization: Bearer abc123DEF456ghi789'\"]",
        "\"commands\": [\"curl -H \\\"Authorization: Bearer $TOKEN\\\"\"]",
    ),
];

/// Whether a repository-relative path exists at HEAD.
pub type HeadHas<'a> = &'a dyn Fn(&str) -> bool;

/// Where pointers resolve.
#[derive(Default)]
pub struct Context<'a> {
    /// The worktree root, for pointer checks (none: pointers are not checked).
    pub root: Option<PathBuf>,
    /// Whether a path exists at HEAD, for pointers deleted from the worktree.
    pub head_has: Option<HeadHas<'a>>,
    /// The resume render's line count, when known.
    pub render_lines: Option<usize>,
}

/// Run every rule.
pub fn lint(brief: &Value, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    vague_checks(brief, &mut out);
    text_rules(brief, ctx, &mut out);
    rejected_paths(brief, &mut out);
    decisions_without_why(brief, &mut out);
    over_long(brief, ctx, &mut out);
    dangling_pointers(brief, ctx, &mut out);
    out
}

/// `vague-check`: a done-when or next check that names nothing to run.
fn vague_checks(brief: &Value, out: &mut Vec<Finding>) {
    for (field, value) in [
        ("resume.done_when", brief.pointer("/resume/done_when")),
        (
            "state.next_acceptance_check",
            brief.pointer("/state/next_acceptance_check"),
        ),
    ] {
        if let Some(text) = value.and_then(Value::as_str)
            && is_vague(text)
        {
            out.push(Finding::new(
                "vague-check",
                field,
                format!("'{}' names no command, test, file or observable result", one_line(text)),
                "name the exact command or test and its expected result, e.g. 'cargo test auth::expiry passes'",
            ));
        }
    }
}

/// The rules on every string: `inlined-content`, `placeholder`, `secret`.
fn text_rules(brief: &Value, ctx: &Context, out: &mut Vec<Finding>) {
    let pasted_from = read_first_contents(brief, ctx);
    let readme = readme_lines(ctx);
    walk_strings(brief, "", &mut |field, text| {
        let lines = text.lines().count();
        if field.starts_with("state.verbatim[") {
            // Kept word for word on purpose (the Output gate); bounded by
            // the schema instead.
        } else if text.contains("```") {
            out.push(Finding::new(
                "inlined-content",
                field,
                "holds a code block",
                "point at path:line-range in files_read_first instead",
            ));
        } else if lines > MAX_FIELD_LINES {
            out.push(Finding::new(
                "inlined-content",
                field,
                format!("is {lines} lines long (more than {MAX_FIELD_LINES})"),
                "keep one idea per entry; point at files for the details",
            ));
        } else if let Some(path) = copied_from(text, &pasted_from) {
            out.push(Finding::new(
                "inlined-content",
                field,
                format!("copies lines of {path}"),
                format!("point at {path}:<lines> instead of pasting it"),
            ));
        } else if let Some((name, n)) = restated(field, text, &readme) {
            out.push(Finding::new(
                "restated-readme",
                field,
                format!("restates line {n} of {name}"),
                format!("say what {name} does not; point at {name}:{n} if it matters"),
            ));
        }
        if is_placeholder(text) && field == "resume.resume_by" {
            out.push(Finding::new(
                "placeholder",
                field,
                format!("'{}' is a placeholder, not a next step", text.trim()),
                "name the first thing the next session does, e.g. 'rerun cargo test auth, then fix verify()'",
            ));
        } else if is_placeholder(text) && is_optional(field) {
            out.push(Finding::new(
                "placeholder",
                field,
                format!("'{}' is a placeholder", text.trim()),
                "omit the field (or the entry) when there is nothing to say",
            ));
        }
        let secrets = redact::scan(text, redact::Options::default());
        if !secrets.is_empty() {
            let kinds: Vec<&str> = secrets.keys().copied().collect();
            out.push(Finding::new(
                "secret",
                field,
                format!("holds {}", kinds.join(", ")),
                "reference the secret by name ($TOKEN, a vault path), never its value",
            ));
        }
    });
}

/// `no-rejected-paths`: the highest-ROI entry is missing.
fn rejected_paths(brief: &Value, out: &mut Vec<Finding>) {
    let decisions = brief
        .pointer("/state/decisions")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let rejected = brief
        .pointer("/state/rejected_paths")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if rejected == 0 {
        out.push(Finding::new(
            "no-rejected-paths",
            "state.rejected_paths",
            match decisions {
                0 => "no decisions and no rejected paths: the highest-ROI entry is missing"
                    .to_string(),
                n => format!(
                    "{n} decision{} but no rejected paths",
                    if n == 1 { "" } else { "s" }
                ),
            },
            "add what was tried or considered and why it was dropped",
        ));
    }
}

/// `decision-without-why`: a locked decision the next session cannot
/// weigh, for want of its reason.
fn decisions_without_why(brief: &Value, out: &mut Vec<Finding>) {
    let Some(decisions) = brief.pointer("/state/decisions").and_then(Value::as_array) else {
        return;
    };
    for (i, text) in decisions.iter().enumerate() {
        let Some(text) = text.as_str() else { continue };
        if is_placeholder(text) || crate::brief::split_decision(text).1.is_some() {
            continue;
        }
        out.push(Finding::new(
            "decision-without-why",
            format!("state.decisions[{i}]"),
            format!("'{}' gives no why", one_line(text)),
            "write it as 'decision — why' (or 'decision - why', 'decision: because …', 'decision (because …)')",
        ));
    }
}

/// `over-long`: lists past their limit, and a resume render past its own.
fn over_long(brief: &Value, ctx: &Context, out: &mut Vec<Finding>) {
    for (field, pointer) in [
        ("state.decisions", "/state/decisions"),
        ("state.rejected_paths", "/state/rejected_paths"),
        ("state.open_risks", "/state/open_risks"),
        ("state.preferences", "/state/preferences"),
        ("state.commands", "/state/commands"),
        ("state.tests", "/state/tests"),
        ("files_read_first", "/files_read_first"),
        ("files_skip", "/files_skip"),
    ] {
        let n = brief
            .pointer(pointer)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if n > MAX_LIST_ENTRIES {
            out.push(Finding::new(
                "over-long",
                field,
                format!("{n} entries (more than {MAX_LIST_ENTRIES})"),
                "keep the ones that constrain the next step; move the rest to the narrative",
            ));
        }
    }
    if let Some(lines) = ctx.render_lines.filter(|l| *l > MAX_RENDER_LINES) {
        out.push(Finding::new(
            "over-long",
            "(brief)",
            format!("the resume render is {lines} lines (more than {MAX_RENDER_LINES})"),
            "a brief is the minimum to resume; split the work or trim the lists",
        ));
    }
}

/// `dangling-pointer`: a file pointer that leads nowhere or outside.
fn dangling_pointers(brief: &Value, ctx: &Context, out: &mut Vec<Finding>) {
    if let Some(root) = &ctx.root {
        // An absolute path inside the worktree it was written in, or this
        // one, is the relative path it is (as resume checks it).
        let written_in = brief
            .pointer("/state/worktree/root")
            .and_then(Value::as_str)
            .map(Path::new);
        let roots: Vec<&Path> = std::iter::once(root.as_path()).chain(written_in).collect();
        for list in ["files_read_first", "files_skip"] {
            let Some(items) = brief.get(list).and_then(Value::as_array) else {
                continue;
            };
            for (i, item) in items.iter().enumerate() {
                let Some(path) = item.get("path").and_then(Value::as_str) else {
                    continue;
                };
                if let Some(problem) = dangling(&roots, ctx.head_has, path) {
                    out.push(Finding::new(
                        "dangling-pointer",
                        format!("{list}[{i}].path"),
                        problem,
                        "fix the path or the line range, or drop the entry",
                    ));
                }
            }
        }
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}

const TOOLS: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "npx",
    "pytest",
    "go",
    "make",
    "just",
    "bazel",
    "gradle",
    "mvn",
    "git",
    "curl",
    "docker",
    "kubectl",
    "python",
    "python3",
    "node",
    "rustc",
    "tsc",
    "jest",
    "vitest",
    "ctest",
    "bash",
    "sh",
    "deno",
    "bun",
    "dotnet",
    "ruby",
    "rspec",
    "phpunit",
    "mix",
    "swift",
    "xcodebuild",
];
const OBSERVE: &[&str] = &[
    "returns", "return", "prints", "print", "shows", "show", "displays", "responds", "exits",
    "exit", "renders", "logs", "contains", "equals", "succeeds", "fails", "outputs", "reports",
    "matches", "compiles", "builds", "status", "http", "page", "file", "error", "message",
];
const VAGUE: &[&str] = &[
    "continue",
    "continue the work",
    "keep going",
    "make it work",
    "it works",
    "finish",
    "finish it",
    "finish the work",
    "done",
    "tests pass",
    "all tests pass",
    "the tests pass",
    "tests are green",
    "everything works",
    "fix it",
    "fix the bug",
    "ship it",
    "complete the task",
    "complete the work",
];

const SUBCOMMANDS: &[&str] = &[
    "build",
    "test",
    "check",
    "run",
    "lint",
    "fmt",
    "clippy",
    "install",
    "serve",
    "start",
    "exec",
    "verify",
    "bench",
    "doc",
    "e2e",
    "ci",
    "typecheck",
];
const NOT_COMMANDS: &[&str] = &[
    "the",
    "a",
    "an",
    "it",
    "all",
    "everything",
    "tests",
    "test",
    "docs",
    "code",
    "this",
    "that",
];

/// `mdbook build`, `just test`: a tool name followed by a usual subcommand.
fn looks_like_command(words: &[&str]) -> bool {
    words.len() >= 2 && SUBCOMMANDS.contains(&words[1]) && !NOT_COMMANDS.contains(&words[0])
}

/// Whether a check names no command, test, file or observable result (a
/// single word never does).
pub fn is_vague(text: &str) -> bool {
    let t = text.trim().trim_end_matches(['.', '!']).to_lowercase();
    if VAGUE.contains(&t.as_str()) {
        return true;
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    if words.len() < 2 {
        return true;
    }
    let concrete = words.iter().any(|w| {
        let w = w.trim_matches(|c: char| {
            c == ',' || c == ';' || c == '(' || c == ')' || c == '\'' || c == '"'
        });
        TOOLS.contains(&w)
            || w.contains('`')
            || w.contains('/')
            || w.contains("::")
            || w.contains('=')
            || w.starts_with("--")
            || w.starts_with("./")
            || w.chars().any(|c| c.is_ascii_digit())
            || (w.contains('.') && w.len() > 3 && !w.ends_with('.'))
            || w.contains('_')
    });
    let observable = words.len() >= 4 && words.iter().any(|w| OBSERVE.contains(w));
    !(concrete || observable || looks_like_command(&words))
}

const PLACEHOLDERS: &[&str] = &[
    "none", "n/a", "na", "tbd", "todo", "-", "—", "null", "nil", "?", "unknown", "nothing", "tba",
    "...",
];

fn is_placeholder(text: &str) -> bool {
    let t = text.trim().trim_end_matches('.').to_lowercase();
    t.is_empty() || PLACEHOLDERS.contains(&t.as_str())
}

/// Required fields (where a placeholder is a schema or vagueness problem,
/// not this rule's).
fn is_optional(field: &str) -> bool {
    !matches!(
        field,
        "resume.done_when"
            | "resume.resume_by"
            | "state.next_acceptance_check"
            | "state.branch"
            | "key"
            | "timestamp"
            | "mode"
            | "schema_version"
    ) && !field.starts_with("state.worktree")
}

fn walk_strings(value: &Value, path: &str, f: &mut dyn FnMut(&str, &str)) {
    match value {
        Value::String(s) => f(if path.is_empty() { "(root)" } else { path }, s),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk_strings(v, &format!("{path}[{i}]"), f);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk_strings(v, &p, f);
            }
        }
        _ => {}
    }
}

/// The text of the files to read first (worktree copies, inside the root).
fn read_first_contents(brief: &Value, ctx: &Context) -> Vec<(String, String)> {
    let Some(root) = &ctx.root else {
        return Vec::new();
    };
    let Some(items) = brief.get("files_read_first").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|i| i.get("path").and_then(Value::as_str))
        .filter_map(|p| {
            let path = crate::brief::paths::strip_lines(p);
            let full = crate::brief::paths::resolve_inside(root, path)?;
            let meta = std::fs::metadata(&full).ok()?;
            (meta.is_file() && meta.len() < 4 * 1024 * 1024)
                .then(|| std::fs::read_to_string(&full).ok())
                .flatten()
                .map(|text| (path.to_string(), text))
        })
        .collect()
}

/// The shortest README line the `restated-readme` rule matches.
const README_LINE_MIN: usize = 50;

/// The worktree root's README: its name and its prose lines of at least
/// [`README_LINE_MIN`] characters (list and quote markers dropped; code
/// fences, tables and headings left out), with their line numbers.
fn readme_lines(ctx: &Context) -> Option<(String, Vec<(usize, String)>)> {
    let root = ctx.root.as_ref()?;
    let (name, text) = ["README.md", "README", "README.txt", "README.rst"]
        .iter()
        .find_map(|name| {
            let path = root.join(name);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            (meta.is_file() && meta.len() < 4 * 1024 * 1024)
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
                .map(|text| (name.to_string(), text))
        })?;
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || line.starts_with('#') || line.starts_with('|') {
            continue;
        }
        let prose = line.trim_start_matches(['-', '*', '>', ' ']).trim();
        if prose.chars().count() >= README_LINE_MIN {
            lines.push((i + 1, prose.to_string()));
        }
    }
    Some((name, lines))
}

/// `restated-readme`: the README line (its number) a prose field repeats.
/// Commands, tests, kept-verbatim text and paths are not prose.
fn restated<'a>(
    field: &str,
    text: &str,
    readme: &'a Option<(String, Vec<(usize, String)>)>,
) -> Option<(&'a str, usize)> {
    let (name, lines) = readme.as_ref()?;
    let not_prose = ["state.commands", "state.tests", "state.verbatim", "files_"];
    if not_prose.iter().any(|p| field.starts_with(p)) || field.ends_with(".path") {
        return None;
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    lines
        .iter()
        .find(|(_, line)| flat.contains(&line.split_whitespace().collect::<Vec<_>>().join(" ")))
        .map(|(n, _)| (name.as_str(), *n))
}

/// A field that repeats 3+ consecutive non-blank lines (40+ characters in
/// all) of a file to read first.
fn copied_from<'a>(text: &str, files: &'a [(String, String)]) -> Option<&'a str> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 3 {
        return None;
    }
    for (path, content) in files {
        let file_lines: Vec<&str> = content
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        for window in lines.windows(3) {
            if window.iter().map(|l| l.len()).sum::<usize>() >= 40
                && file_lines.windows(3).any(|w| w == window)
            {
                return Some(path);
            }
        }
    }
    None
}

fn dangling(roots: &[&Path], head_has: Option<HeadHas<'_>>, recorded: &str) -> Option<String> {
    let root = roots[0];
    let relative = crate::brief::paths::relative_to(roots, recorded);
    let recorded = relative.as_ref();
    match crate::brief::paths::absolute_exists(recorded) {
        Some(true) => return None,
        Some(false) => {
            let path = crate::brief::paths::strip_lines(recorded);
            return Some(format!("'{path}' does not exist"));
        }
        None => {}
    }
    let path = crate::brief::paths::strip_lines(recorded);
    if crate::brief::paths::path_outside(path) {
        return Some(format!("'{recorded}' is outside the worktree"));
    }
    let full = root.join(path);
    let in_tree = full.exists();
    let at_head = !in_tree && head_has.is_some_and(|has| has(path.trim_end_matches('/')));
    if !in_tree && !at_head {
        return Some(format!(
            "'{path}' exists neither in the worktree nor at HEAD"
        ));
    }
    if in_tree && crate::brief::paths::resolve_inside(root, path).is_none() {
        return Some(format!(
            "'{recorded}' leads outside the worktree through a symlink"
        ));
    }
    if path != recorded
        && in_tree
        && full.is_file()
        && let Some(end) = range_end(&recorded[path.len() + 1..])
    {
        let count = line_count(&full).unwrap_or(0);
        if end > count {
            return Some(format!(
                "'{recorded}' ends at line {end} but {path} has {count} lines"
            ));
        }
    }
    None
}

/// The number of lines of a file, read in pieces (a pointer may name a
/// file of any size).
fn line_count(path: &Path) -> std::io::Result<usize> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut newlines, mut last) = (0usize, None);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        newlines += buf[..n].iter().filter(|c| **c == b'\n').count();
        last = Some(buf[n - 1]);
    }
    // Lines = newline-terminated lines, plus an unterminated last one.
    Ok(newlines + usize::from(last.is_some_and(|c| c != b'\n')))
}

/// The last line number of `10-20`, `7`, `1-3,9-12`.
fn range_end(spec: &str) -> Option<usize> {
    spec.split([',', '-'])
        .filter_map(|n| n.trim().parse::<usize>().ok())
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(v: &Value) -> Vec<&'static str> {
        lint(v, &Context::default())
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn vague_checks_and_near_misses() {
        for bad in [
            "continue the work",
            "make it work",
            "finish",
            "tests pass",
            "All tests pass.",
            "it should be good",
        ] {
            assert!(is_vague(bad), "{bad}");
        }
        for good in [
            "cargo test auth passes",
            "cargo test auth::expiry",
            "the login page shows the error banner",
            "`make check` is green",
            "src/auth.rs compiles without warnings",
            "GET /health returns 200",
            "mdbook build",
            "just test",
        ] {
            assert!(!is_vague(good), "{good}");
        }
    }

    #[test]
    fn each_rule_fires_on_its_bad_example_only() {
        let good = json!({"resume": {"done_when": "cargo test auth passes", "resume_by": "add leeway"},
                          "state": {"next_acceptance_check": "cargo test auth::expiry", "decisions": ["use <= — one clock"], "rejected_paths": ["<"],
                                    "verbatim": [{"what": "the error", "text": "```\nE0308\n```\n".repeat(5)}]}});
        assert!(rules(&good).is_empty(), "{:?}", rules(&good));
        let mut b = good.clone();
        b["state"]["rejected_paths"] = json!([]);
        assert_eq!(rules(&b), ["no-rejected-paths"]);
        let mut b = good.clone();
        b["state"]["open_risks"] = json!(["none"]);
        assert_eq!(rules(&b), ["placeholder"]);
        let mut b = good.clone();
        b["state"]["decisions"] = json!(["keep it — ```\ncode\n```"]);
        assert_eq!(rules(&b), ["inlined-content"]);
        let mut b = good.clone();
        b["state"]["decisions"] = json!((0..13).map(|i| format!("d{i} — w")).collect::<Vec<_>>());
        assert_eq!(rules(&b), ["over-long"]);
        let mut b = good.clone();
        b["state"]["decisions"] = json!(["Operator is <="]);
        assert_eq!(rules(&b), ["decision-without-why"]);
        let mut b = good.clone();
        b["state"]["preferences"] = json!((0..13).map(|i| format!("p{i}")).collect::<Vec<_>>());
        assert_eq!(rules(&b), ["over-long"]);
        let mut b = good.clone();
        b["state"]["commands"] = json!(["curl -H 'Authorization: Bearer abc123DEF456ghi789'"]);
        assert_eq!(rules(&b), ["secret"]);
    }

    #[test]
    fn a_field_restating_the_readme_is_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# app\n\n- Tokens are verified against the clock of the issuing server.\n\n```\ncargo install --locked --path . && app demo --with-a-long-flag\n```\n",
        )
        .unwrap();
        let ctx = Context {
            root: Some(dir.path().to_path_buf()),
            ..Context::default()
        };
        let brief = |field: &str, text: &str| {
            let mut b = json!({"resume": {"done_when": "cargo test auth passes", "resume_by": "add leeway"},
                               "state": {"next_acceptance_check": "cargo test auth", "rejected_paths": ["<"]}});
            b["state"][field] = json!([text]);
            lint(&b, &ctx)
                .into_iter()
                .map(|f| (f.rule, f.message))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            brief(
                "open_risks",
                "Note: Tokens are verified against the  clock of the issuing server."
            ),
            [(
                "restated-readme",
                "restates line 3 of README.md".to_string()
            )]
        );
        assert!(brief("open_risks", "Tokens are verified against a clock").is_empty());
        assert!(
            brief(
                "commands",
                "cargo install --locked --path . && app demo --with-a-long-flag"
            )
            .is_empty()
        );
        assert!(
            brief(
                "open_risks",
                "cargo install --locked --path . && app demo --with-a-long-flag"
            )
            .is_empty()
        );
    }

    #[test]
    fn line_ranges_are_read_as_written() {
        assert_eq!(range_end("10-20"), Some(20));
        assert_eq!(range_end("7"), Some(7));
        assert_eq!(range_end("1-3,9-12"), Some(12));
    }
}
