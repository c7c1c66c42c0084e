//! Every command line the tool prints quotes every value in it for the
//! shell, keys included: briefs under hostile keys (`$(…)`, backticks,
//! `;`, `|`, quotes), and each printed `git handoff …` command — hints,
//! the hook's context, the stored resume prompt, the narrative, split,
//! fetch and push reports, the MCP text — run with `sh -c` against a
//! `git` that only records its arguments: nothing else runs, and each key
//! arrives as one argument.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::mcp::{call, connect, text};
use crate::support::briefs::one_repo;
use crate::support::{Sandbox, stderr, stdout, team};

/// Keys a teammate may push: each would run `touch pwned…` if a printed
/// command left it unquoted.
const HOSTILE: &[&str] = &[
    "$(touch${IFS}pwned1)",
    "a`touch${IFS}pwned2`",
    "b;touch${IFS}pwned3",
    "c|touch${IFS}pwned4",
    "d'\"$(touch${IFS}pwned5)\"",
];

/// Every `git handoff …` command in `text`: from `git handoff ` to the end
/// of its line or the first backtick outside single quotes.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("git handoff ") {
        let tail = &rest[at..];
        let (mut quoted, mut escaped, mut end) = (false, false, tail.len());
        for (i, c) in tail.char_indices() {
            if escaped {
                escaped = false;
                continue;
            }
            match c {
                '\n' => {
                    end = i;
                    break;
                }
                '\'' => quoted = !quoted,
                '\\' if !quoted => escaped = true,
                '`' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

/// A `git` that records each call's arguments (one file per call, NUL
/// separated) in `calls/` and does nothing else.
fn recording_git(sb: &Sandbox) -> PathBuf {
    let bin = sb.path("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(sb.path("calls")).unwrap();
    let script = format!(
        "#!/bin/sh\nf=$(mktemp '{}/call.XXXXXX')\nprintf '%s\\0' \"$@\" > \"$f\"\n",
        sb.path("calls").display()
    );
    let git = bin.join("git");
    std::fs::write(&git, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Run each command of `text` with `sh -c` in `dir`: nothing but the
/// recording `git` runs (no `pwned` file appears), and every argument that
/// holds a hostile key's text is that key (or `KEY@…`), whole. Returns
/// how many commands named a hostile key.
fn run_printed(sb: &Sandbox, dir: &Path, what: &str, text: &str) -> usize {
    let bin = recording_git(sb);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut named = 0;
    for cmd in commands(text) {
        let calls = sb.path("calls");
        std::fs::remove_dir_all(&calls).unwrap();
        std::fs::create_dir_all(&calls).unwrap();
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        let pwned: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("pwned"))
            .collect();
        assert!(pwned.is_empty(), "{what}: `{cmd}` ran a key: {text}");
        for call in std::fs::read_dir(&calls).unwrap() {
            let args = std::fs::read(call.unwrap().path()).unwrap();
            for arg in String::from_utf8(args).unwrap().split('\0') {
                if !arg.contains("touch") {
                    continue;
                }
                assert!(
                    HOSTILE
                        .iter()
                        .any(|k| arg == *k || arg.starts_with(&format!("{k}@"))),
                    "{what}: `{cmd}` passed {arg:?}, not a key"
                );
                named += 1;
            }
        }
    }
    named
}

fn write_hostile(sb: &Sandbox, dir: &Path, key: &str) -> String {
    let out = sb
        .write_brief(
            dir,
            Some(key),
            ["cargo test passes", "carry on", "cargo test"],
            &["--no-lint"],
        )
        .success();
    stdout(&out)
}

#[test]
fn printed_commands_quote_hostile_keys() {
    let (sb, repo) = one_repo();
    let mut named = 0;
    for key in HOSTILE {
        // write's stored resume prompt and its report.
        named += run_printed(&sb, &repo, "write", &write_hostile(&sb, &repo, key));
        // a hint: write over the stored brief without a field.
        let out = sb
            .handoff(&repo, &["write", key, "--done-when", "x"])
            .failure();
        named += run_printed(&sb, &repo, "write's hint", &stderr(&out));
        // a hint: a version that does not exist.
        let out = sb
            .handoff(&repo, &["show", &format!("{key}@{{9}}")])
            .failure();
        named += run_printed(&sb, &repo, "show's hint", &stderr(&out));
        let out = sb.handoff(&repo, &["recover", key]).success();
        named += run_printed(&sb, &repo, "recover", &stdout(&out));
    }
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    named += run_printed(&sb, &repo, "narrative", &narrative);
    let overview = stdout(&sb.handoff(&repo, &[]).success());
    named += run_printed(&sb, &repo, "overview", &overview);
    let hook = sb.hook_output(
        &repo,
        "session-start",
        r#"{"source":"startup","session_id":"s1"}"#,
    );
    let context: Value = serde_json::from_str(&hook).unwrap();
    let context = context["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    named += run_printed(&sb, &repo, "hook", context);
    // After /clear with this session's brief the hook injects it whole.
    sb.handoff(&repo, &["resume", HOSTILE[0]]).success();
    let hook = sb.hook_output(
        &repo,
        "session-start",
        r#"{"source":"clear","session_id":"s1"}"#,
    );
    named += run_printed(&sb, &repo, "hook after /clear", &hook);
    assert!(
        named >= 3 * HOSTILE.len(),
        "only {named} commands named a key"
    );
}

#[test]
fn split_reports_quote_hostile_keys() {
    let (sb, repo) = one_repo();
    let threads: Vec<Value> = HOSTILE[..2]
        .iter()
        .map(|key| {
            json!({"key": key, "resume": {"done_when": "cargo test passes", "resume_by": "carry on"},
                   "state": {"next_acceptance_check": "cargo test"}})
        })
        .collect();
    let plan = sb.path("plan.json");
    std::fs::write(
        &plan,
        json!({"why": "braided", "threads": threads}).to_string(),
    )
    .unwrap();
    let out = sb
        .handoff(
            &repo,
            &[
                "split",
                "--plan",
                plan.to_str().unwrap(),
                "--yes",
                "--no-lint",
            ],
        )
        .success();
    let named = run_printed(&sb, &repo, "split", &stdout(&out));
    assert!(named >= 2, "{}", stdout(&out));
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert!(run_printed(&sb, &repo, "split's narrative", &narrative) >= 2);
}

#[test]
fn fetch_and_push_reports_quote_hostile_keys() {
    let t = team();
    let key = HOSTILE[0];
    write_hostile(&t.sb, &t.a, key);
    t.run(&t.a, &["push"]).success();
    let fetched = t.run(&t.b, &["fetch"]).success();
    let named = run_printed(&t.sb, &t.b, "fetch", &stdout(&fetched));
    assert!(named >= 1, "{}", stdout(&fetched));
    // Deleted on the remote, kept here: fetch and push say how to end it.
    t.run(&t.a, &["drop", key]).success();
    t.run(&t.a, &["push", "--prune", "origin", key]).success();
    let fetched = t.run(&t.b, &["fetch"]).success();
    assert!(run_printed(&t.sb, &t.b, "fetch", &stdout(&fetched)) >= 1);
    let pushed = t.run(&t.b, &["push"]);
    let report = format!(
        "{}{}",
        stdout(&pushed),
        String::from_utf8_lossy(&pushed.get_output().stderr)
    );
    assert!(run_printed(&t.sb, &t.b, "push", &report) >= 1, "{report}");
}

#[tokio::test]
async fn mcp_text_quotes_hostile_keys() {
    let (sb, repo) = one_repo();
    let client = connect(&sb, &repo, &[]).await;
    let brief = json!({"resume": {"done_when": "cargo test passes", "resume_by": "carry on"},
                       "state": {"next_acceptance_check": "cargo test"}});
    let mut named = 0;
    for key in HOSTILE {
        let wrote = call(&client, "write", json!({"key": key, "brief": brief})).await;
        named += run_printed(&sb, &repo, "MCP write", &text(&wrote));
    }
    let resumed = call(&client, "resume", json!({"key": HOSTILE[0]})).await;
    named += run_printed(&sb, &repo, "MCP resume", &text(&resumed));
    assert!(named >= HOSTILE.len(), "only {named}");
}

#[test]
fn the_extractor_finds_each_command() {
    assert_eq!(
        commands("a `git handoff resume 'x`y'` b\nResume with: git handoff resume k\n"),
        ["git handoff resume 'x`y'", "git handoff resume k"]
    );
}
