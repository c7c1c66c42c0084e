//! The method, round 4 (issue 51): the rules the earlier rounds left.

use crate::support::*;

fn flags() -> [&'static str; 3] {
    [
        "cargo test auth passes",
        "add leeway to verify()",
        "cargo test auth",
    ]
}

/// Item 2: after RECOVER and SPLIT the method sends the user to a fresh
/// context; both commands end with that step, and the skill teaches it.
#[test]
fn item2_recover_and_split_end_with_a_fresh_context() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, None, flags(), &["--no-lint"])
        .success();
    let out = sb.handoff(&repo, &["recover"]).success();
    assert!(
        stdout(&out).contains(
            "Next: start clean — `/clear` (or a new session), then `git handoff resume main`"
        ),
        "{}",
        stdout(&out)
    );
    let plan = serde_json::json!({
        "why": "two threads braided",
        "threads": [
            {"key": "api", "resume": {"done_when": "cargo test api passes", "resume_by": "fix the api"},
             "state": {"next_acceptance_check": "cargo test api"}},
            {"key": "ui", "resume": {"done_when": "npm test passes", "resume_by": "fix the ui"},
             "state": {"next_acceptance_check": "npm test"}}
        ]
    });
    let file = sb.path("plan.json");
    std::fs::write(&file, plan.to_string()).unwrap();
    let out = sb
        .handoff(
            &repo,
            &[
                "split",
                "--plan",
                file.to_str().unwrap(),
                "--yes",
                "--no-lint",
            ],
        )
        .success();
    assert!(
        stdout(&out).contains("Next: one fresh session per thread"),
        "{}",
        stdout(&out)
    );
    let skill = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("contrib/claude/skills/git-handoff/SKILL.md"),
    )
    .unwrap();
    assert!(skill.contains("`/clear` (or a new session), then `git handoff resume KEY`"));
    assert!(
        skill.contains("One fresh\nsession per thread")
            || skill.contains("one fresh\nsession per thread")
    );
}

/// Item 3: an AUTO brief is exported as RECOVER, the method's schema
/// knowing no AUTO, its prompt saying where it came from.
#[test]
fn item3_an_auto_brief_is_exported_as_recover() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let partial = serde_json::json!({"mode": "AUTO", "resume": {"done_when": "d passes", "resume_by": "r"},
        "state": {"next_acceptance_check": "cargo test"}});
    sb.handoff_with(
        &repo,
        &["write", "-F", "-", "--no-lint"],
        Some(&partial.to_string()),
    )
    .success();
    let dir = sb.path("out");
    sb.handoff(&repo, &["export", "--all", dir.to_str().unwrap()])
        .success();
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let exported = json(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(exported["mode"], "RECOVER");
    assert!(
        exported["resume"]["prompt"]
            .as_str()
            .unwrap()
            .starts_with("(Exported from an AUTO draft"),
        "{exported}"
    );
    let single = json(&stdout(&sb.handoff(&repo, &["export", "main"]).success()));
    assert_eq!(single, exported);
}

/// Item 7: an absolute file to read first inside the worktree is checked
/// as the relative path it is: `!! MISSING` when it goes.
#[test]
fn item7_an_absolute_path_inside_the_worktree_is_checked() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "src/auth.rs", "fn verify() {}\n", "auth");
    let abs = format!("{}=under repair", repo.join("src/auth.rs").display());
    sb.write_brief(&repo, None, flags(), &["--no-lint", "--read", &abs])
        .success();
    let out = sb.handoff(&repo, &["resume"]).success();
    assert!(
        !stdout(&out).contains("outside the worktree"),
        "{}",
        stdout(&out)
    );
    std::fs::remove_file(repo.join("src/auth.rs")).unwrap();
    let out = sb.handoff(&repo, &["resume"]).success();
    assert!(
        stdout(&out).contains(&format!(
            "!! MISSING: {}",
            repo.join("src/auth.rs").display()
        )),
        "{}",
        stdout(&out)
    );
}

/// Item 12: `summary new` without --task takes the task from the brief.
#[test]
fn item12_a_summary_takes_its_task_from_the_brief() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let out = sb
        .handoff(&repo, &["summary", "new", "--template", "task"])
        .code(1);
    assert_stderr_has(&out, "a summary needs a task");
    sb.write_brief(&repo, None, flags(), &["--no-lint"])
        .success();
    sb.handoff(&repo, &["summary", "new", "--template", "task"])
        .success();
    let files: Vec<_> = std::fs::read_dir(repo.join(".claude/memory"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files.iter().any(|f| f.contains("cargo-test-auth-passes")),
        "{files:?}"
    );
}

/// One MCP server session's requests: initialize, then `calls` (tool
/// name, arguments); the answers' text.
fn mcp_session(
    sb: &Sandbox,
    repo: &std::path::Path,
    calls: &[(&str, serde_json::Value)],
) -> String {
    use crate::mcp::{line, raw};
    use serde_json::json;
    let mut input = line(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    input.extend(line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    for (i, (name, args)) in calls.iter().enumerate() {
        input.extend(line(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": name, "arguments": args}}),
        ));
    }
    let (out, status) = raw(sb, repo, input);
    assert!(status.success(), "{status:?}");
    out
}

/// Item 1: each `git handoff mcp` process is a session. One resumes
/// `api-docs` (the worktree's key now); a second server, a new agent
/// session, writes without a key: the branch's brief, never `api-docs`.
#[test]
fn item1_a_new_mcp_session_never_writes_into_the_last_ones_thread() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, Some("api-docs"), flags(), &["--no-lint"])
        .success();
    let docs = sb.git(&repo, &["rev-parse", "refs/handoffs/api-docs"]);
    mcp_session(
        &sb,
        &repo,
        &[("resume", serde_json::json!({"key": "api-docs"}))],
    );
    // The same session's keyless write continues api-docs …
    let brief = serde_json::json!({"resume": {"done_when": "cargo test passes", "resume_by": "go on"},
        "state": {"next_acceptance_check": "cargo test"}});
    let out = mcp_session(
        &sb,
        &repo,
        &[
            ("resume", serde_json::json!({"key": "api-docs"})),
            ("write", serde_json::json!({"brief": brief})),
        ],
    );
    assert!(out.contains("Wrote brief 'api-docs'"), "{out}");
    let docs2 = sb.git(&repo, &["rev-parse", "refs/handoffs/api-docs"]);
    assert_ne!(docs, docs2);
    // … another session's goes to the branch's key, and says why.
    let out = mcp_session(
        &sb,
        &repo,
        &[("write", serde_json::json!({"brief": brief}))],
    );
    assert!(out.contains("Wrote brief 'main'"), "{out}");
    assert!(out.contains("another session chose"), "{out}");
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/handoffs/api-docs"]),
        docs2
    );
    // Claude Code names its session in the environment of everything it
    // runs: a keyless write continues the key of its own session only.
    let run = |session: &str, args: &[&str]| {
        let mut cmd = sb.command("git", &repo);
        cmd.env("CLAUDE_CODE_SESSION_ID", session)
            .arg("handoff")
            .args(args);
        cmd.output().unwrap()
    };
    assert!(run("cc-1", &["resume", "api-docs"]).status.success());
    let write = [
        "write",
        "--done-when",
        "cargo test passes",
        "--resume-by",
        "go on",
        "--next-check",
        "cargo test",
        "--no-lint",
    ];
    let same = run("cc-1", &write);
    assert!(String::from_utf8_lossy(&same.stdout).contains("Wrote brief 'api-docs'"));
    let other = run("cc-2", &write);
    assert!(String::from_utf8_lossy(&other.stdout).contains("Wrote brief 'main'"));
    assert!(String::from_utf8_lossy(&other.stderr).contains("another session chose"));
}

/// Item 4: the confirmation says which key was chosen and why, in plain
/// words (issue 57: no "tier" to look up): the key named, the branch's, or
/// the detached HEAD's.
#[test]
fn item4_the_tier_is_the_key_tier() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let out = sb
        .write_brief(&repo, Some("api-docs"), flags(), &["--no-lint"])
        .success();
    assert!(
        stdout(&out).contains(", the key you named)"),
        "{}",
        stdout(&out)
    );
    let out = sb
        .write_brief(&repo, Some("main"), flags(), &["--no-lint"])
        .success();
    assert!(
        stdout(&out).contains(", key of branch 'main')"),
        "{}",
        stdout(&out)
    );
    sb.git(&repo, &["checkout", "-q", "--detach"]);
    let out = sb
        .write_brief(&repo, Some("HANDOFF"), flags(), &["--no-lint"])
        .success();
    assert!(
        stdout(&out).contains(", key for a detached HEAD)"),
        "{}",
        stdout(&out)
    );
}

/// Item 8: a subagent brief names the narrative entry by reference, never
/// pasting it; with no entry for the key it says so and prints nothing.
#[test]
fn item8_a_subagent_brief_points_at_the_narrative_entry() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(
        &repo,
        Some("api-docs"),
        flags(),
        &["--no-lint", "--no-narrative"],
    )
    .success();
    let out = sb
        .handoff(&repo, &["brief", "api-docs", "--see-narrative"])
        .code(1);
    assert_stderr_has(&out, "the narrative has no entry for 'api-docs'");
    assert_eq!(stdout(&out), "");
    sb.write_brief(&repo, Some("api-docs"), flags(), &["--no-lint"])
        .success();
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let heading = narrative.lines().find(|l| l.starts_with("## ")).unwrap();
    let out = sb
        .handoff(&repo, &["brief", "api-docs", "--see-narrative"])
        .success();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "Background, only if a decision's why is needed: see .claude/PROJECT_STATE.md {heading}\n"
        )),
        "{text}"
    );
    let body = narrative.lines().nth(2).unwrap_or_default();
    assert!(
        body.is_empty() || !text.contains(body),
        "pasted: {body}\n{text}"
    );
}

/// Item 10: a field that restates the README is a lint finding.
#[test]
fn item10_restating_the_readme_is_linted() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let line = "The service verifies every token against the issuing server's clock.";
    sb.commit(&repo, "README.md", &format!("# svc\n\n{line}\n"), "readme");
    let out = sb
        .write_brief(&repo, None, flags(), &["--strict", "--risk", line])
        .code(1);
    assert_stderr_has(
        &out,
        "state.open_risks[0]: restated-readme: restates line 3 of README.md",
    );
    sb.write_brief(
        &repo,
        None,
        flags(),
        &[
            "--strict",
            "--risk",
            "clock skew on CI",
            "--rejected",
            "a wider window — hides real expiry",
        ],
    )
    .success();
}
