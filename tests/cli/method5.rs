//! The method, round 5 (issue 58): the last losses against the seed
//! documents.

use crate::support::briefs::*;
use crate::support::*;

/// Item 1: beside an 80-character key (the ladder's cap), `list` and a
/// keyless `resume`'s listing cut the key with `…` and keep every row's
/// age, branch, head and done-when, at 80 columns.
#[test]
fn item1_a_long_key_is_cut_never_the_facts() {
    let (sb, repo) = one_repo();
    let long = "k".repeat(80);
    for key in [long.as_str(), "short"] {
        sb.write_brief(&repo, Some(key), AUTH_GOAL, &[]).success();
    }
    let head = sb.git(&repo, &["rev-parse", "--short=7", "HEAD"]);
    let check = |out: &str| {
        let rows: Vec<&str> = out.lines().collect();
        assert_eq!(rows.len(), 2, "{out}");
        for row in rows {
            assert!(row.chars().count() <= 80, "{row}");
            assert!(row.contains(" main "), "{row}");
            assert!(row.contains(head.trim()), "{row}");
            assert!(row.contains("cargo test auth"), "{row}");
        }
        assert!(out.contains(&format!("{}…", "k".repeat(20))), "{out}");
    };
    let out = sb.handoff_env(&repo, &[("COLUMNS", "80")], &["list"], None);
    check(&stdout(&out.success()));
    // a new session with no key of its own: keyless resume lists them
    sb.handoff_with(
        &repo,
        &["hook", "session-start"],
        Some(r#"{"source":"startup"}"#),
    )
    .success();
    let out = sb.handoff_env(&repo, &[("COLUMNS", "80")], &["resume"], None);
    check(&stdout(&out.code(1)));
}

/// Item 2: an absolute file to read first outside the worktree is checked
/// for existence as it is (`!! MISSING` when absent), and lint's
/// dangling-pointer finding follows the same rule; an absolute path inside
/// the worktree is never called outside it.
#[test]
fn item2_absolute_paths_are_checked_as_they_are() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "fn verify() {}\n", "auth");
    let there = sb.path("config.yml");
    std::fs::write(&there, "a: 1\n").unwrap();
    let gone = sb.path("srv/app/config.yml");
    let inside = repo.join("src/auth.rs");
    let reads: Vec<String> = [&there, &gone, &inside]
        .iter()
        .map(|p| format!("{}=config", p.display()))
        .collect();
    let mut args = vec!["--no-lint"];
    for r in &reads {
        args.extend(["--read", r.as_str()]);
    }
    sb.write_brief(&repo, None, AUTH_GOAL, &args).success();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(&format!("!! MISSING: {}", gone.display())),
        "{out}"
    );
    assert!(!out.contains("outside the worktree"), "{out}");
    assert!(
        !out.contains(&format!("MISSING: {}", there.display())),
        "{out}"
    );
    let out = sb.handoff(&repo, &["lint"]).success();
    let err = stderr(&out);
    let dangling: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("dangling-pointer"))
        .collect();
    assert_eq!(dangling.len(), 1, "{err}");
    assert!(dangling[0].contains("files_read_first[1].path"), "{err}");
    assert!(
        dangling[0].contains(&format!("'{}' does not exist", gone.display())),
        "{err}"
    );
    assert!(!err.contains("outside the worktree"), "{err}");
}

/// Item 3: a next step that is a placeholder draws the placeholder
/// finding (and fails `--strict`).
#[test]
fn item3_a_placeholder_next_step_is_a_finding() {
    let (sb, repo) = one_repo();
    for step in ["TBD", "none", "n/a", "?", "todo."] {
        let brief = serde_json::json!({"resume": {"done_when": "cargo test auth passes", "resume_by": step},
            "state": {"next_acceptance_check": "cargo test auth", "rejected_paths": ["< (off by one)"]}});
        let out = sb.lint_strict(&repo, &brief).code(1);
        let err = stderr(&out);
        assert!(
            err.contains("resume.resume_by: placeholder"),
            "{step}: {err}"
        );
    }
    let brief = serde_json::json!({"resume": {"done_when": "cargo test auth passes", "resume_by": "rerun cargo test auth"},
        "state": {"next_acceptance_check": "cargo test auth", "rejected_paths": ["< (off by one)"]}});
    sb.lint_strict(&repo, &brief).success();
}

/// Item 4: `handoff.briefMaxLines` may lower the 30-line ceiling, never
/// lift it; the refusal says to re-decompose, never to raise the setting.
#[test]
fn item4_the_brief_ceiling_is_the_methods() {
    let (sb, repo) = one_repo();
    let mut args = vec!["--no-lint".to_string()];
    for i in 0..60 {
        args.extend(["--decision".into(), format!("decision {i} — because {i}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sb.write_brief(&repo, None, AUTH_GOAL, &args).success();
    sb.git(&repo, &["config", "handoff.briefMaxLines", "500"]);
    let out = sb.handoff(&repo, &["brief"]).success();
    assert!(stdout(&out).lines().count() <= 30, "{}", stdout(&out));
    assert_stderr_has(&out, "ceiling of 30");
    let long_task = (0..40)
        .map(|i| format!("step {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let out = sb.handoff(&repo, &["brief", "--task", &long_task]).code(1);
    let err = stderr(&out);
    assert!(
        err.contains("over the cap of 30") && err.contains("re-decompose"),
        "{err}"
    );
    assert!(!err.contains("raise"), "{err}");
    sb.git(&repo, &["config", "handoff.briefMaxLines", "12"]);
    let out = sb.handoff(&repo, &["brief"]).success();
    assert!(stdout(&out).lines().count() <= 12, "{}", stdout(&out));
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .unwrap();
    assert!(docs.contains("never lift it"), "docs/configuration.md");
}

/// Item 5: the shipped skill and agent instructions say that subagents
/// never talk to each other, to name the synthesis act, and that the
/// evaluator sets the pass mark with the loop stopping after two
/// iterations without a score gain.
#[test]
fn item5_the_skill_teaches_orchestration_as_the_method() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let flat = |path: &str| {
        std::fs::read_to_string(root.join(path))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for path in [
        "contrib/claude/skills/git-handoff/SKILL.md",
        "contrib/codex/AGENTS.md",
    ] {
        let text = flat(path);
        for needle in [
            "Subagents never talk to each other",
            "through you, the orchestrator",
            "Name the synthesis act",
            "(\"Combining the three reviews: …\")",
            "means the decomposition was wrong",
            "the evaluator sets the pass mark",
            "≥ 4/5 on every axis",
            "after two iterations without a score gain",
        ] {
            let hit = text.contains(needle)
                || (needle == "through you, the orchestrator"
                    && text.contains("every hand-over goes through the orchestrator"))
                || text.to_lowercase().contains(&needle.to_lowercase());
            assert!(hit, "{path}: {needle}");
        }
        assert!(
            !text.contains("an iteration that changes nothing"),
            "{path}"
        );
    }
}

/// Item 8: outside a repository `write` and `brief` fail as git does and
/// say why the store is git-native; the docs say it too.
#[test]
fn item8_outside_a_repository_the_error_says_why() {
    let sb = Sandbox::new();
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    for args in [
        write_args(None, ["cargo test passes", "r", "cargo test"], &[]),
        vec!["brief", "--task", "fix it"],
    ] {
        let out = sb.handoff(&dir, &args).code(128);
        let err = stderr(&out);
        assert!(
            err.starts_with("fatal: not a git repository (or any of the parent directories)"),
            "{err}"
        );
        assert!(err.contains("briefs live in git refs"), "{err}");
        assert!(err.contains("`git init` one"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dir.join("HANDOFF.json").exists());
    }
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/guide.md")).unwrap();
    assert!(guide.contains("deliberate deviation from the method"));
}

/// Item 9: the MCP `usage` tool takes the harness's window for the same
/// session — recorded from the session-start hook's model or the status
/// line's window size — and the model table only when the harness gave
/// none.
#[tokio::test]
async fn item9_mcp_usage_takes_the_harness_window() {
    use crate::mcp::{call, connect, text};
    let (sb, repo) = one_repo();
    let basic = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcript-basic.jsonl");
    let transcript = |session: &str| {
        let path = sb.path(&format!("{session}.jsonl"));
        std::fs::copy(&basic, &path).unwrap();
        path.display().to_string()
    };
    let (one_m, status, other) = (
        transcript("sess-1m"),
        transcript("sess-400k"),
        transcript("sess-none"),
    );
    let start = serde_json::json!({"source": "startup", "session_id": "sess-1m",
        "model": "claude-opus-4-6[1m]", "cwd": repo.display().to_string(), "transcript_path": one_m});
    sb.handoff_with(&repo, &["hook", "session-start"], Some(&start.to_string()))
        .success();
    let line = serde_json::json!({"session_id": "sess-400k", "transcript_path": status,
        "cwd": repo.display().to_string(), "context_window": {"context_window_size": 400_000}});
    sb.handoff_with(&repo, &["usage", "--hook"], Some(&line.to_string()))
        .success();
    let client = connect(&sb, &repo, &[]).await;
    for (path, expected) in [
        (&one_m, "of 1M (from the harness;"),
        (&status, "of 400k (from the harness;"),
        (&other, "of 200k (guessed from the model;"),
    ] {
        let result = call(&client, "usage", serde_json::json!({"transcript": path})).await;
        assert!(
            text(&result).contains(expected),
            "{path}: {}",
            text(&result)
        );
    }
    let result = call(&client, "usage", serde_json::json!({"transcript": one_m})).await;
    let v = result.structured_content.expect("structured");
    assert_eq!(
        (v["window"].as_u64(), v["window_source"].as_str()),
        (Some(1_000_000), Some("harness"))
    );
    client.cancel().await.unwrap();
    // the CLI too, for the same session's transcript
    let out = sb.handoff(&repo, &["usage", &status]);
    assert!(stdout(&out.success()).contains("of 400k (from the harness;"));
}

/// The `/handoff [argument]` command routes every mode: no argument →
/// WRITE, a key → WRITE to it, `read`/`resume` → READ, `recover`,
/// `reground`, `split`; after a WRITE it shows what was stored and says
/// `/clear` continues from it. (The loop itself runs in the Claude Code
/// conformance suite.)
#[test]
fn item10_the_handoff_command_routes_every_mode() {
    let sb = Sandbox::new();
    let command = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/contrib/claude/commands/handoff.md"
    ))
    .unwrap();
    assert!(command.starts_with("---\ndescription: "), "front matter");
    assert!(
        command.contains("argument-hint: \"[key | read | resume | recover | reground | split]\"")
    );
    assert!(command.contains("allowed-tools: Bash(git handoff:*)"));
    assert!(command.contains("The argument is: `$ARGUMENTS`"));
    let routes = [
        ("| (none) | WRITE |", "`git handoff write …`"),
        (
            "| `read` or `resume` [KEY] | READ |",
            "`git handoff resume [KEY]`",
        ),
        (
            "| `recover` [KEY] | RECOVER |",
            "`git handoff recover [KEY]`",
        ),
        (
            "| `reground` [KEY] | REGROUND |",
            "`git handoff reground [KEY]`",
        ),
        ("| `split` | SPLIT |", "`git handoff split --plan FILE`"),
        (
            "| any other word | WRITE to that key |",
            "`git handoff write KEY …`",
        ),
    ];
    for (row, run) in routes {
        let line = command
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no route {row}"));
        assert!(line.contains(run), "{line}");
        let sub = run.trim_matches('`').split(' ').nth(2).unwrap();
        sb.handoff(sb.dir.path(), &[sub, "--help"]).success();
    }
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("to see what was stored"), "{flat}");
    assert!(flat.contains("`/clear` now continues from it"), "{flat}");
}
