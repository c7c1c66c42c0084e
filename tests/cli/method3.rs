//! The method, round 3 (issue 34): one test per numbered item, each
//! reproducing the reported case in a real repository.

use std::path::{Path, PathBuf};

use crate::support::briefs::*;
use crate::support::*;
use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn write(sb: &Sandbox, dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    write_env(sb, dir, &[], extra)
}

fn write_env(
    sb: &Sandbox,
    dir: &Path,
    env: &[(&str, &str)],
    extra: &[&str],
) -> assert_cmd::assert::Assert {
    sb.handoff_env(dir, env, &write_args(None, CARGO_TEST, extra), None)
}

fn rev(sb: &Sandbox, dir: &Path, key: &str) -> String {
    sb.git(dir, &["rev-parse", &format!("refs/handoffs/{key}")])
}

/// Run a hook with the harness's input; its JSON answer.
fn hook(sb: &Sandbox, dir: &Path, event: &str, input: Value) -> Value {
    let out = sb
        .handoff_with(dir, &["hook", event], Some(&input.to_string()))
        .success();
    serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null)
}

fn start(sb: &Sandbox, dir: &Path, source: &str, session: &str) -> String {
    let input = json(&session_start_input(session, source, dir));
    hook(sb, dir, "session-start", input)["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Two split threads, api-docs and api-code, and no brief for main.
fn threads(sb: &Sandbox, repo: &Path) {
    let plan = r#"{"why":"two threads","threads":[
        {"key":"api-docs","resume":{"done_when":"make docs passes","resume_by":"write the API docs"},"state":{"next_acceptance_check":"make docs"}},
        {"key":"api-code","resume":{"done_when":"cargo test api","resume_by":"write the code"},"state":{"next_acceptance_check":"cargo test api"}}]}"#;
    sb.handoff_with(repo, &["split", "--plan", "-", "--yes"], Some(plan))
        .success();
}

/// Item 1: a new session does not inherit the last session's sticky key:
/// a keyless write after `hook session-start` (source startup) goes to the
/// branch's key, and says which key another session chose.
#[test]
fn item1_a_new_session_never_writes_into_the_last_sessions_thread() {
    let (sb, repo) = one_repo();
    threads(&sb, &repo);
    sb.handoff(&repo, &["resume", "api-docs"]).success();
    let docs = rev(&sb, &repo, "api-docs");

    // A new session starts: the hook names the thread it leaves behind.
    let context = start(&sb, &repo, "startup", "s2");
    assert!(
        context.contains("The last session here worked on 'api-docs'")
            && context.contains("targets 'main'"),
        "{context}"
    );
    // Unrelated work, written keyless: never into api-docs; the warning
    // names both keys.
    let out = write(&sb, &repo, &["--decision", "new work — unrelated"]).success();
    assert_stdout_has(&out, "Wrote brief 'main'");
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: 'api-docs' is the key another session chose; this write targets 'main'"
        ),
        "{err}"
    );
    assert_eq!(rev(&sb, &repo, "api-docs"), docs);

    // Within one session the selected key holds: resumed, then written.
    sb.handoff(&repo, &["resume", "api-docs"]).success();
    let out = write(&sb, &repo, &[]).success();
    assert_stdout_has(&out, "Wrote brief 'api-docs'");
    assert!(
        !stderr(&out).contains("another session"),
        "{}",
        stderr(&out)
    );
    // A compaction continues the session; another session_id does not.
    start(&sb, &repo, "compact", "s2");
    write(&sb, &repo, &[])
        .success()
        .stdout(predicates::str::contains("Wrote brief 'api-docs'"));
    start(&sb, &repo, "resume", "s3");
    let out = write(&sb, &repo, &[]).success();
    assert_stdout_has(&out, "Wrote brief 'main'");
    assert_stderr_has(&out, "'api-docs' is the key another session chose");

    // /clear under the same session id is a new conversation too: cleared.
    sb.handoff(&repo, &["resume", "api-code"]).success();
    start(&sb, &repo, "clear", "s3");
    assert!(!repo.join(".git/handoff-key").exists());
    write(&sb, &repo, &[])
        .success()
        .stdout(predicates::str::contains("Wrote brief 'main'"));

    // GIT_HANDOFF_SESSION names the session even with no hook.
    let other = sb.repo("o");
    threads(&sb, &other);
    sb.handoff_in_session(&other, "a", &["resume", "api-docs"])
        .success();
    let out = write_env(&sb, &other, &[("GIT_HANDOFF_SESSION", "b")], &[]).success();
    assert_stdout_has(&out, "Wrote brief 'main'");
    assert_stderr_has(&out, "'api-docs' is the key another session chose");
    sb.handoff_in_session(&other, "a", &["resume", "api-docs"])
        .success();
    write_env(&sb, &other, &[("GIT_HANDOFF_SESSION", "a")], &[])
        .success()
        .stdout(predicates::str::contains("Wrote brief 'api-docs'"));

    // Claude Code's SessionStart env file learns the session's id.
    let env_file = sb.path("claude-env.sh");
    let input = json!({"session_id": "s9", "source": "startup", "cwd": repo.display().to_string()});
    sb.handoff_env(
        &repo,
        &[("CLAUDE_ENV_FILE", env_file.to_str().unwrap())],
        &["hook", "session-start"],
        Some(&input.to_string()),
    )
    .success();
    assert_eq!(
        std::fs::read_to_string(&env_file).unwrap(),
        "export GIT_HANDOFF_SESSION=s9\n"
    );
}

/// Item 2: with the sticky key `api-docs` on main (no brief for main, four
/// waiting), every keyless command and hook selects it.
#[test]
fn item2_every_command_and_hook_selects_the_sessions_key() {
    let (sb, repo) = one_repo();
    threads(&sb, &repo);
    for key in ["notes", "spike"] {
        write(&sb, &repo, &[key]).success();
    }
    start(&sb, &repo, "startup", "s1");
    sb.handoff(&repo, &["resume", "api-docs"]).success();

    // The compact hook injects api-docs, not "4 are waiting".
    let context = start(&sb, &repo, "compact", "s1");
    assert!(
        context.contains("Resumed (auto, on /compact) — api-docs"),
        "{context}"
    );
    // pre-compact names the key a keyless write targets.
    let v = hook(
        &sb,
        &repo,
        "pre-compact",
        json!({"session_id": "s1", "cwd": repo.display().to_string()}),
    );
    let message = v["systemMessage"].as_str().unwrap();
    assert!(message.contains("(key 'api-docs')"), "{message}");
    // Keyless reads.
    let out = stdout(&sb.handoff(&repo, &["reground"]).success());
    assert!(out.starts_with("# Reground — api-docs"), "{out}");
    let out = stdout(&sb.handoff(&repo, &["brief"]).success());
    assert!(out.starts_with("## Task\nwrite the API docs\n"), "{out}");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(out.contains("# Resume — api-docs"), "{out}");
    let out = stdout(&sb.handoff(&repo, &["show"]).success());
    assert!(out.contains("\"key\": \"api-docs\""), "{out}");
    let out = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(out.contains("* api-docs "), "{out}");
    // The session-start answer on resume names this session's brief.
    let context = start(&sb, &repo, "resume", "s1");
    assert!(
        context.contains("This session's handoff brief is 'api-docs'"),
        "{context}"
    );
    // The write the hook announced goes where it said.
    write(&sb, &repo, &[])
        .success()
        .stdout(predicates::str::contains("Wrote brief 'api-docs'"));
}

/// Item 4: BRIEF needs no store: in a fresh repository the subagent brief
/// is built from the task, scope and flags, redacted, never stored.
#[test]
fn item4_a_subagent_brief_without_a_stored_brief() {
    let (sb, repo) = one_repo();
    // The reported case: a fresh repository, a task and a scope.
    let out = stdout(
        &sb.handoff(&repo, &["brief", "--task", "Fix it", "--scope", "src/"])
            .success(),
    );
    assert!(
        out.starts_with("## Task\nFix it\n\n## Scope\n- src/\n"),
        "{out}"
    );
    let partial = sb.path("partial.json");
    std::fs::write(
        &partial,
        r#"{"state":{"open_risks":["CI clocks skew"],"preferences":["no new dependencies"]}}"#,
    )
    .unwrap();
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let decision = format!("use <= — one clock (token {token})");
    let out = sb
        .handoff(
            &repo,
            &[
                "brief",
                "--task",
                "Fix the expiry check in src/auth.rs",
                "--scope",
                "src/auth.rs only",
                "--decision",
                &decision,
                "--rejected",
                "chrono: too big for one check",
                "--read",
                "src/auth.rs:40-58=the check",
                "-F",
                partial.to_str().unwrap(),
            ],
        )
        .success();
    let text = stdout(&out);
    for expected in [
        "## Task\nFix the expiry check in src/auth.rs\n",
        "## Scope\n- src/auth.rs only\n",
        "## Locked decisions\n- use <= — one clock (token [REDACTED:github_token])\n",
        "## User preferences and feedback\n- no new dependencies\n",
        "## Do not retry\n- chrono: too big for one check\n",
        "## Open risks\n- CI clocks skew\n",
        "## Read first\n- src/auth.rs:40-58 — the check\n",
        "- What you verified: commands and their results\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?}:\n{text}");
    }
    assert!(!text.contains(&token));
    assert_stderr_has(&out, "redacted");
    assert_eq!(handoff_refs(&sb, &repo), "", "never stored");
    // Nothing stored and no task: nothing to delegate.
    let out = sb.handoff(&repo, &["brief", "--scope", "x"]).code(1);
    assert_stderr_has(&out, "--task");
    // Once a brief is stored, the flags add to it.
    write(&sb, &repo, &["--decision", "keep the API — callers pin it"]).success();
    let text = stdout(
        &sb.handoff(&repo, &["brief", "--decision", "one more — why"])
            .success(),
    );
    assert!(
        text.contains("- keep the API — callers pin it\n") && text.contains("- one more — why\n"),
        "{text}"
    );
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `text` with every run of whitespace one space, so that a phrase is
/// found however the lines were wrapped.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The section of a markdown document from the heading `start` to the
/// next heading of the same level.
fn section<'a>(doc: &'a str, start: &str) -> &'a str {
    let at = doc
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} section"));
    let level = start.split(' ').next().unwrap();
    let rest = &doc[at + start.len()..];
    let end = rest
        .find(&format!("\n{level} "))
        .map_or(doc.len(), |i| at + start.len() + i);
    &doc[at..end]
}

/// Item 5: the three gates as the method names them — Forget, Input,
/// Output — written once, shared by continue and fork, each with what
/// passes and what is dropped.
#[test]
fn item5_the_gates_are_forget_input_output() {
    let skill = read("contrib/claude/skills/git-handoff/SKILL.md");
    for wrong in ["Plan gate", "Verification gate", "Handoff gate"] {
        assert!(!skill.contains(wrong), "the skill still teaches {wrong}");
    }
    let gates = section(&skill, "## The three gates");
    assert!(
        gates.contains("Both modes") && gates.contains("continue") && gates.contains("fork"),
        "{gates}"
    );
    for (gate, needles) in [
        (
            "**Forget gate**",
            &["superseded", "resolved", "rejected path", "reason"][..],
        ),
        (
            "**Input gate**",
            &["goal", "constraints", "preferences", "feedback"][..],
        ),
        (
            "**Output gate**",
            &[
                "verbatim",
                "error being debugged",
                "code being modified",
                "last 3–5 turns",
                "points to",
            ][..],
        ),
    ] {
        let at = gates.find(gate).unwrap_or_else(|| panic!("{gate}"));
        let text = &gates[at..];
        let text = &text[..text[2..].find("\n- **").map_or(text.len(), |i| i + 2)];
        assert!(
            text.contains("Passes:") && text.contains("Dropped:"),
            "{gate}: {text}"
        );
        for needle in needles {
            assert!(
                flat(text).contains(needle),
                "{gate} lacks {needle:?}: {text}"
            );
        }
    }
    // Written once: the other adapter teaches the same names.
    let agents = read("contrib/codex/AGENTS.md");
    for gate in ["Forget", "Input", "Output"] {
        assert!(
            agents.contains(&format!("{gate} gate")),
            "AGENTS.md: {gate}"
        );
    }
}

/// Item 6: fork only an out-of-scope side task; past the context ceiling,
/// continue; ask the user when unclear — in the skill and in `usage`.
#[test]
fn item6_continue_past_the_ceiling_fork_only_side_tasks() {
    let skill = read("contrib/claude/skills/git-handoff/SKILL.md");
    assert!(
        !skill.contains("or the context is over ~40 %"),
        "a full context is no reason to fork"
    );
    let part = section(&skill, "## Continue or fork");
    for needle in [
        "Fork only",
        "outside this session's scope",
        "past the context ceiling",
        "continue",
        "Ask the user",
    ] {
        assert!(
            flat(part).contains(needle),
            "{needle:?} missing from:\n{part}"
        );
    }
    let sb = Sandbox::new();
    let transcript = sb.path("t.jsonl");
    std::fs::write(
        &transcript,
        r#"{"type":"assistant","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":90000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}
"#,
    )
    .unwrap();
    let out = stdout(
        &sb.handoff(&sb.path(""), &["usage", transcript.to_str().unwrap()])
            .success(),
    );
    assert!(
        out.contains("over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)"),
        "{out}"
    );
    let help = stdout(&sb.handoff(&sb.path(""), &["fork", "--help"]).success());
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("Fork only a side task outside this session's"),
        "{help}"
    );
}

/// A brief whose only lint findings could come from what is tested.
fn good() -> Value {
    json!({
        "resume": {"done_when": "cargo test auth passes", "resume_by": "fix verify() in src/auth.rs"},
        "state": {"next_acceptance_check": "cargo test auth::expiry",
                  "decisions": ["use <= — the expiry second is still valid"],
                  "rejected_paths": ["chrono: too big for one check"]}
    })
}

/// Item 7: verbatim material (the Output gate) has a field: a 14-line
/// error is kept word for word, exempt from `inlined-content`, bounded,
/// redacted, shown by resume and carried into the summary templates.
#[test]
fn item7_verbatim_material_has_a_place() {
    let (sb, repo) = one_repo();
    let error: String = (1..=14)
        .map(|i| format!("error[E0308]: mismatched types at src/auth.rs:{i}\n"))
        .collect();
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let mut brief = good();
    brief["state"]["verbatim"] = json!([
        {"what": "the failing test's error", "text": error},
        {"what": "the last turn", "text": format!("user: use the token {token}\nassistant: no")}
    ]);
    let out = sb
        .handoff_with(
            &repo,
            &["write", "-F", "-", "--strict"],
            Some(&brief.to_string()),
        )
        .success();
    assert!(
        !stderr(&out).contains("inlined-content"),
        "{}",
        stderr(&out)
    );
    let kept = sb.stored_brief(&repo, "main");
    assert_eq!(kept["state"]["verbatim"][0]["text"], error.as_str());
    let last = kept["state"]["verbatim"][1]["text"].as_str().unwrap();
    assert!(
        last.contains("[REDACTED:github_token]") && !last.contains(&token),
        "{last}"
    );
    let notes = sb.git(&repo, &["log", "--notes=handoffs", "--format=%N"]);
    assert!(!notes.contains(&token));
    // The same text anywhere else is still pasted content.
    let mut pasted = good();
    pasted["state"]["open_risks"] = json!([error]);
    let out = sb
        .handoff_with(&repo, &["lint", "-F", "-"], Some(&pasted.to_string()))
        .success();
    assert_stderr_has(&out, "inlined-content");
    // resume shows it, word for word.
    let text = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        text.contains("## Verbatim\n- the failing test's error:\n    error[E0308]: mismatched types at src/auth.rs:1\n"),
        "{text}"
    );
    // Bounded: the schema says so, and write refuses past it.
    let schema = stdout(&sb.handoff(&repo, &["schema"]).success());
    assert!(schema.contains("\"verbatim\"") && schema.contains("\"maxLength\": 4000"));
    let mut big = good();
    big["state"]["verbatim"] = json!([{"what": "log", "text": "x".repeat(4001)}]);
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(&big.to_string()))
        .code(1);
    // The flag reads a file; the summary templates carry it.
    let file = sb.path("err.txt");
    std::fs::write(&file, "thread 'expiry' panicked\n  left: 1\n right: 2\n").unwrap();
    let spec = format!("the panic={}", file.display());
    sb.handoff_with(&repo, &["recover", "--verbatim", &spec, "--no-lint"], None)
        .success();
    let kept = sb.stored_brief(&repo, "main");
    assert_eq!(kept["state"]["verbatim"][2]["what"], "the panic");
    let out = sb
        .handoff(
            &repo,
            &["summary", "new", "--template", "task", "--task", "expiry"],
        )
        .success();
    let summary = std::fs::read_to_string(repo.join(stdout(&out).trim())).unwrap();
    assert!(
        summary.contains("Verbatim — the panic:\n\n    thread 'expiry' panicked\n      left: 1\n"),
        "{summary}"
    );
    let latest = stdout(&sb.handoff(&repo, &["summary", "latest"]).success());
    assert!(
        latest.contains("Verbatim — the failing test's error:"),
        "{latest}"
    );
    // Wire-compatible: still version "1", and validate accepts it.
    assert_eq!(kept["schema_version"], "1");
    let raw = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    sb.handoff_with(&repo, &["validate", "-"], Some(&raw))
        .success()
        .stdout("handoff-validate: OK\n");
}

/// Item 8: continue-mode summaries are taught: when to write one, and how.
#[test]
fn item8_continue_summaries_are_taught() {
    let skill = read("contrib/claude/skills/git-handoff/SKILL.md");
    let part = section(&skill, "## CONTINUE: summaries");
    for needle in [
        "git handoff summary new --template",
        "git handoff summary latest",
        "git handoff summary clean",
        "Key Context for Continuation",
        "When",
    ] {
        assert!(flat(part).contains(needle), "{needle:?} missing:\n{part}");
    }
    let agents = read("contrib/codex/AGENTS.md");
    assert!(agents.contains("git handoff summary new"), "{agents}");
}

/// Item 9: a decision without a why is linted; ` - `, `: because` and
/// `(because …)` separate the why, in lint and in the narrative.
#[test]
fn item9_a_decision_without_a_why() {
    let (sb, repo) = one_repo();
    let mut brief = good();
    brief["state"]["decisions"] = json!(["Operator is <="]);
    let out = sb.lint_strict(&repo, &brief).code(1);
    assert_stderr_has(
        &out,
        "error: state.decisions[0]: decision-without-why: 'Operator is <=' gives no why",
    );
    let out = write(
        &sb,
        &repo,
        &["--decision", "Operator is <=", "--rejected", "<"],
    )
    .success();
    assert_stderr_has(&out, "decision-without-why");
    write(
        &sb,
        &repo,
        &[
            "--decision",
            "B - because b",
            "--decision",
            "C: because c",
            "--decision",
            "D (because d)",
            "--rejected",
            "E",
        ],
    )
    .success();
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    for line in [
        "- **B** — because b.\n",
        "- **C** — because c.\n",
        "- **D** — because d.\n",
    ] {
        assert!(narrative.contains(line), "{line:?} missing:\n{narrative}");
    }
}

/// Item 11: not for a trivial session, and the pipeline rules.
#[test]
fn item11_trivial_sessions_and_the_pipeline_rules() {
    let skill = read("contrib/claude/skills/git-handoff/SKILL.md");
    assert!(
        skill.contains("Do not hand off a trivial session"),
        "the skill never says when not to hand off"
    );
    let part = section(&skill, "## PIPELINE");
    for needle in [
        "planner",
        "generator",
        "evaluator",
        "sees only the contract and the artifact",
        "No generator–evaluator loop",
        "pass/fail",
        "orchestrator owns the loop",
        "Abort",
        "trivial",
        "Show the plan",
        "before dispatch",
        "git handoff write",
        "orchestrator's state",
    ] {
        assert!(flat(part).contains(needle), "{needle:?} missing:\n{part}");
    }
}

/// Item 12: the user's preferences and feedback have a field, shown,
/// linted, redacted.
#[test]
fn item12_user_preferences_have_a_field() {
    let (sb, repo) = one_repo();
    let preferences = [
        "--preference",
        "no new dependencies",
        "--preference",
        "ask ops@corp.example.com before touching CI",
    ];
    write(&sb, &repo, &[&DECIDED[..], &preferences].concat()).success();
    let kept = sb.stored_brief(&repo, "main");
    assert_eq!(
        kept["state"]["preferences"],
        json!([
            "no new dependencies",
            "ask [REDACTED:email] before touching CI"
        ])
    );
    let text = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        text.contains("## User preferences and feedback\n- no new dependencies\n"),
        "{text}"
    );
    let text = stdout(&sb.handoff(&repo, &["reground"]).success());
    assert!(
        text.contains("## User preferences and feedback\n- no new dependencies\n"),
        "{text}"
    );
    let v = json(&stdout(
        &sb.handoff(&repo, &["reground", "--json"]).success(),
    ));
    assert_eq!(v["preferences"][0], "no new dependencies");
    // Types are checked; placeholders are linted.
    let mut bad = good();
    bad["state"]["preferences"] = json!([1]);
    sb.handoff_with(&repo, &["validate", "-"], Some(&bad.to_string()))
        .code(1);
    let mut none = good();
    none["state"]["preferences"] = json!(["none"]);
    let out = sb
        .handoff_with(&repo, &["lint", "-F", "-"], Some(&none.to_string()))
        .success();
    assert_stderr_has(&out, "state.preferences[0]: placeholder");
}

/// Item 13: a fork's brief keeps the slice relevant to its purpose.
#[test]
fn item13_a_fork_keeps_the_slice_of_its_purpose() {
    let (sb, repo) = one_repo();
    let tmp = std::fs::canonicalize({
        let t = sb.path("tmp");
        std::fs::create_dir_all(&t).unwrap();
        t
    })
    .unwrap();
    sb.commit(&repo, "src/auth.rs", "fn verify() {}\n", "auth");
    sb.commit(&repo, "docs/guide.md", "# guide\n", "guide");
    write(
        &sb,
        &repo,
        &[
            "--no-narrative",
            "--decision",
            "the guide stays in markdown — one toolchain",
            "--decision",
            "verify() compares expiry with <= — the expiry second is valid",
            "--rejected",
            "x",
        ],
    )
    .success();
    std::fs::write(repo.join("src/auth.rs"), "fn verify() { todo!() }\n").unwrap();
    std::fs::write(repo.join("docs/guide.md"), "# guide\nmore\n").unwrap();
    let out = sb
        .handoff_env(
            &repo,
            &[("TMPDIR", tmp.to_str().unwrap())],
            &[
                "fork",
                "--purpose",
                "bisect the expiry bug in auth verify()",
            ],
            None,
        )
        .success();
    let text = std::fs::read_to_string(stdout(&out).trim()).unwrap();
    let decisions = section(&text, "## Decisions Made");
    assert!(
        decisions.contains("- verify() compares expiry with <= — the expiry second is valid\n")
            && !decisions.contains("the guide stays in markdown")
            && decisions
                .contains("- (+1 more, not about this purpose: `git handoff resume main`)\n"),
        "{decisions}"
    );
    let artifacts = section(&text, "## Artifacts");
    assert!(
        artifacts.contains("`src/auth.rs` (uncommitted)")
            && !artifacts.contains("docs/guide.md")
            && artifacts.contains("(+1 more uncommitted, not about this purpose: `git status`)"),
        "{artifacts}"
    );
}

/// Item 14: help, `fork list` and behaviour agree on the hand-back
/// lifecycle: consumed files are kept, listed as consumed, until `fork done`.
#[test]
fn item14_the_hand_back_lifecycle_is_told_as_it_is() {
    let (sb, repo) = one_repo();
    let tmp = sb.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let env = [("TMPDIR", tmp.to_str().unwrap())];
    let run = |args: &[&str]| sb.handoff_env(&repo, &env, args, None);
    let help = stdout(&run(&["handback", "--help"]).success());
    // Wrapped at 80 columns: read word by word.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!help.contains("reads and deletes"), "{help}");
    assert!(
        help.contains("FILE.consumed") && help.contains("git handoff fork done"),
        "{help}"
    );
    let fork = stdout(&run(&["fork", "--purpose", "side", "--hand-back"]).success());
    let fork = fork.trim();
    run(&["fork", "consume", fork]).success();
    let back = stdout(&run(&["handback", "--to", fork, "--result", "done"]).success());
    run(&["fork", "consume", back.trim()]).success();
    let listed = stdout(&run(&["fork", "list"]).success());
    assert_eq!(
        listed.matches("(consumed, awaiting `fork done`)").count(),
        2,
        "{listed}"
    );
    assert!(
        listed.contains("git handoff fork done FORKFILE"),
        "{listed}"
    );
    let help = stdout(&run(&["fork", "list", "--help"]).success());
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("consumed ones wait for `fork done`"),
        "{help}"
    );
    run(&["fork", "done", fork]).success();
    let listed = stdout(&run(&["fork", "list"]).success());
    assert!(listed.starts_with("No fork or hand-back files"), "{listed}");
}

/// A handoff written at `at` (date and time), its narrative committed.
fn narrate(sb: &Sandbox, dir: &Path, at: &str, title: &str) {
    let out = sb
        .command("git", dir)
        .args(["handoff", "write", "--done-when", "cargo test passes"])
        .args(["--resume-by", title, "--next-check", "cargo test"])
        .env("GIT_HANDOFF_NOW", at)
        .output()
        .unwrap();
    assert_ok(&out);
    sb.git(dir, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(dir, &["commit", "-q", "-m", title]);
}

/// Item 15 (the narrative-merge ordering): merging a branch whose entry
/// was written later the same day as an older entry keeps it above.
#[test]
fn item15_a_merge_orders_the_entries_by_time() {
    let sb = Sandbox::new();
    let repo: PathBuf = sb.repo("r");
    sb.init_and_commit_attribute(&repo);
    narrate(&sb, &repo, "2026-11-30T09:00:00Z", "morning on main");
    sb.git(&repo, &["switch", "-q", "-c", "feat"]);
    narrate(&sb, &repo, "2026-11-30T15:00:00Z", "afternoon on feat");
    sb.git(&repo, &["switch", "-q", "main"]);
    narrate(&sb, &repo, "2026-11-30T12:00:00Z", "noon on main");
    // Both sides changed the narrative: git runs the driver.
    sb.git(&repo, &["merge", "-q", "--no-edit", "feat"]);
    let text = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("## "))
        .map(|l| l.rsplit("] ").next().unwrap())
        .collect();
    let at = |t: &str| titles.iter().position(|x| *x == t).unwrap();
    assert_eq!(titles.len(), 3, "{text}");
    assert!(
        at("afternoon on feat") < at("morning on main")
            && at("noon on main") < at("morning on main"),
        "the morning entry is the oldest: {titles:?}"
    );
}
