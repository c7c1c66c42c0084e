//! `draft`: a brief composed from a session transcript (fixtures made in
//! the shapes of Claude Code's and Codex CLI's JSON lines,
//! `tests/fixtures/draft-*.jsonl`), stored as mode AUTO only when asked or
//! by the session hooks' safety net; `resume` marks it; `recover
//! --from-transcript` takes it as corrections.

use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::{Value, json};

/// The fixtures' session directory, replaced by the test repository's.
const SESSION_DIR: &str = "/home/dev/app";

/// A repository like the fixtures' session's: `src/auth.rs` and
/// `tests/expiry.rs` committed, `src/auth.rs` edited and `tests/leeway.rs`
/// new, as the session left them.
fn app(sb: &Sandbox) -> PathBuf {
    let repo = sb.repo("app");
    sb.commit(
        &repo,
        "src/auth.rs",
        "pub fn verify(exp: u64, now: u64) -> bool {\n    exp > now\n}\n",
        "auth",
    );
    sb.commit(
        &repo,
        "tests/expiry.rs",
        "#[test]\nfn rejects_expired() {}\n",
        "tests",
    );
    std::fs::write(
        repo.join("src/auth.rs"),
        "pub fn verify(exp: u64, now: u64) -> bool {\n    exp + 30 >= now\n}\n",
    )
    .unwrap();
    std::fs::write(repo.join("tests/leeway.rs"), "#[test]\nfn leeway() {}\n").unwrap();
    repo
}

/// The fixture `name` with its session directory moved to `repo`, written
/// into the sandbox; its path.
fn transcript(sb: &Sandbox, name: &str, repo: &Path) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap();
    let path = sb.path(name);
    std::fs::write(
        &path,
        text.replace(SESSION_DIR, &repo.display().to_string()),
    )
    .unwrap();
    path.display().to_string()
}

/// A brief written by a session at `at`, its next step `step`.
fn brief_at(sb: &Sandbox, repo: &Path, at: &str, step: &str) {
    sb.write_brief_at(
        repo,
        at,
        None,
        ["cargo test expiry passes", step, "cargo test expiry"],
        &["--no-lint"],
    )
    .success();
}

fn partial(sb: &Sandbox, repo: &Path, path: &str) -> Value {
    json(&stdout(
        &sb.handoff(repo, &["draft", "--json", path]).success(),
    ))
}

#[test]
fn a_claude_code_session_drafts_what_it_did_and_stores_nothing() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    let d = partial(&sb, &repo, &path);
    assert_eq!(d["mode"], "AUTO");
    // The task: the last request of four words or more (not the "yes"
    // after the compaction, not the /clear command or the caveat).
    let done = d["resume"]["done_when"].as_str().unwrap();
    assert!(
        done.starts_with(
            "`cargo test expiry` passes, and the last request is met: The token expiry check"
        ),
        "{done}"
    );
    // The test piped through tail: failing by the runner's own summary,
    // kept as the check to run again.
    assert_eq!(
        d["state"]["tests"],
        json!([{"cmd": "cargo test expiry", "result": "fail"}])
    );
    assert_eq!(d["state"]["next_acceptance_check"], "cargo test expiry");
    // `git status` only looked; the subagent's `rm -rf target` is not the session's.
    assert_eq!(d["state"]["commands"], json!(["cargo build  # exit 0"]));
    assert_eq!(
        d["state"]["decisions"],
        json!(["compare with `<=` plus a 30 s leeway — one clock, no new dependency."])
    );
    assert_eq!(
        d["state"]["rejected_paths"],
        json!(["switching to chrono — too big a dependency for one comparison."])
    );
    let risks = d["state"]["open_risks"].as_array().unwrap();
    let error = risks[0].as_str().unwrap();
    assert!(
        error.starts_with("Last error, `cargo test expiry` reported failing tests:\n"),
        "{error}"
    );
    assert!(
        error.contains("assertion failed: !verify(100, 131)"),
        "{error}"
    );
    assert!(error.lines().count() <= 8, "{error}");
    assert_eq!(
        risks[1],
        "The session ended while `cargo test expiry` ran: no result was recorded"
    );
    // The agent's newest prose, on one line: often what it meant to do next.
    assert_eq!(
        risks[2],
        "The session's last words (check them against the code): The leeway makes the expired token pass: 100 + 30 >= 131 is false... checking the test's numbers."
    );
    assert_eq!(risks.len(), 3);
    // Newest first; edited files first; the refused edit of src/config.rs
    // and the Grep are no files read.
    assert_eq!(
        d["files_read_first"],
        json!([
            {"path": "tests/expiry.rs", "why": "read in the last session"},
            {"path": "tests/leeway.rs", "why": "edited in the last session"},
            {"path": "src/auth.rs", "why": "read and edited in the last session"},
        ])
    );
    assert_eq!(d["resume"]["history_pointer"], path.as_str());
    // The text: the draft as resume shows it, and nothing stored.
    let out = sb.handoff(&repo, &["draft", &path]).success();
    let text = stdout(&out);
    assert!(
        text.starts_with("# Draft — main (mode AUTO, not stored)\nFrom: "),
        "{text}"
    );
    assert!(text.contains("(Claude Code transcript, all "), "{text}");
    assert!(text.contains("Last turn: 2026-11-30T10:02:50Z"), "{text}");
    assert!(text.contains("- [fail] cargo test expiry"), "{text}");
    assert!(
        text.contains("Nothing was stored: --write stores it as brief 'main'"),
        "{text}"
    );
    assert_eq!(handoff_refs(&sb, &repo), "");
    // It is a partial brief as `write -F` takes it.
    sb.handoff_with(&repo, &["validate", "--partial", "-"], Some(&d.to_string()))
        .success();
}

#[test]
fn a_codex_rollout_drafts_its_patches_and_shell_runs() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-codex.jsonl", &repo);
    let d = partial(&sb, &repo, &path);
    assert!(
        d["resume"]["done_when"]
            .as_str()
            .unwrap()
            .contains("Make the expiry check in src/auth.rs reject expired tokens")
    );
    assert_eq!(
        d["state"]["tests"],
        json!([{"cmd": "cargo test expiry", "result": "fail"}])
    );
    assert_eq!(
        d["state"]["commands"],
        json!(["cargo fmt --check  # exit 0"])
    );
    let error = d["state"]["open_risks"][0].as_str().unwrap();
    assert!(
        error.starts_with("Last error, `cargo test expiry` exited 101:\n"),
        "{error}"
    );
    assert!(
        error.ends_with("error: test failed, to rerun pass `--test expiry`"),
        "{error}"
    );
    assert_eq!(
        d["state"]["decisions"],
        json!(["keep u64 seconds and compare with <= — the tests use plain integers."])
    );
    assert_eq!(
        d["state"]["rejected_paths"],
        json!(["parsing RFC 3339 here — the caller already does."])
    );
    // Read with sed, then patched with apply_patch.
    assert_eq!(
        d["files_read_first"],
        json!([{"path": "src/auth.rs", "why": "read and edited in the last session"}])
    );
    let text = stdout(&sb.handoff(&repo, &["draft", &path]).success());
    assert!(text.contains("(Codex CLI transcript, all "), "{text}");
}

#[test]
fn a_foreign_or_garbled_file_is_one_error_line_never_a_guess() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let foreign = sb.path("chat.jsonl");
    std::fs::write(&foreign, "{\"role\":\"user\",\"content\":\"fix it\"}\n{\"role\":\"assistant\",\"content\":\"done\"}\n").unwrap();
    let garbled = sb.path("garbled.jsonl");
    let mut text = std::fs::read_to_string(transcript(&sb, "draft-claude.jsonl", &repo)).unwrap();
    text = text.lines().take(3).collect::<Vec<_>>().join("\n");
    text.push_str("\n\u{1}\u{2}binary junk\nmore junk\n%%%%\nnot json at all\n");
    std::fs::write(&garbled, text).unwrap();
    let empty = sb.path("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let nothing = sb.path("empty-session.jsonl");
    std::fs::write(
        &nothing,
        "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"l\"}\n",
    )
    .unwrap();
    for (file, says) in [
        (&foreign, "is not a Claude Code or Codex CLI transcript"),
        (
            &garbled,
            "is garbled: 4 of its last 7 lines are not transcript lines",
        ),
        (&nothing, "records no request and no tool call yet"),
        (&empty, "holds no complete line"),
        (&sb.path("missing.jsonl"), "cannot read the transcript"),
    ] {
        for args in [vec!["draft"], vec!["draft", "--write"]] {
            let mut args = args.clone();
            args.push(file.to_str().unwrap());
            let out = sb.handoff(&repo, &args).failure();
            let err = stderr(&out);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(says), "{err}");
            assert_eq!(stdout(&out), "");
        }
    }
    sb.handoff(&repo, &["draft", repo.to_str().unwrap()])
        .code(1)
        .stderr(predicates::str::contains(
            "is a directory, not a regular file",
        ));
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn write_stores_an_auto_brief_that_resume_marks_and_never_replaces_a_newer_one() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    // An older brief (written before the transcript's last turn) is replaced.
    brief_at(&sb, &repo, "2026-11-29T09:00:00Z", "old");
    let out = sb.handoff(&repo, &["draft", "--write", &path]).success();
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "Stored the draft from {path} as the brief (mode AUTO).\nWrote brief 'main'"
        )),
        "{text}"
    );
    assert!(text.contains("no narrative entry"), "{text}");
    let brief = sb.stored_brief(&repo, "main");
    assert_eq!(brief["mode"], "AUTO");
    assert_eq!(brief["timestamp"], NOW);
    assert_eq!(brief["state"]["next_acceptance_check"], "cargo test expiry");
    // The draft adds no narrative entry: only the older write's is there.
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert_eq!(narrative.matches("\n## ").count(), 1, "{narrative}");
    // The history keeps both versions.
    assert_eq!(sb.log_ids(&repo, "main").len(), 2);
    // resume marks it, in text and in JSON; so does the session hook.
    // Stored over a brief someone wrote, it names that version and how to
    // see what it changed.
    let out = sb.handoff(&repo, &["resume"]).success();
    let first = stdout(&out).lines().next().unwrap().to_string();
    assert!(
        first.starts_with(
            "!! AUTO: drafted from the transcript, not written by the session: verify before acting; AUTO draft over "
        ) && first.ends_with("(mode WRITE): `git handoff diff main` shows what it changed, `git handoff show main@{1}` the brief it replaced"),
        "{first}"
    );
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert_eq!(
        v["auto"],
        "drafted from the transcript, not written by the session: verify before acting"
    );
    assert_eq!(v["brief"]["mode"], "AUTO");
    let hook = json!({"source": "compact", "cwd": repo.display().to_string()}).to_string();
    let context = stdout(
        &sb.handoff_with(&repo, &["hook", "session-start"], Some(&hook))
            .success(),
    );
    assert!(
        context.contains("!! AUTO: drafted from the transcript"),
        "{context}"
    );
    // A brief written now (after the transcript's last turn) is never replaced.
    sb.write_brief(
        &repo,
        None,
        ["cargo test expiry passes", "new", "cargo test expiry"],
        &["--no-lint"],
    )
    .success();
    let before = sb.stored_brief(&repo, "main");
    let out = sb.handoff(&repo, &["draft", "--write", &path]).code(1);
    let err = stderr(&out);
    assert!(err.contains("brief 'main' was written at 2026-11-30T12:00:00Z, after the transcript's last turn (2026-11-30T10:02:50Z)"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(sb.stored_brief(&repo, "main"), before);
    // A brief of other resume-time drift than AUTO is not marked.
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert!(v.get("auto").is_none());
}

#[test]
fn the_draft_is_redacted_as_every_write() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let line = json!({
        "type": "user", "uuid": "u1", "sessionId": "s", "cwd": repo.display().to_string(),
        "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {"role": "user", "content": format!("deploy with the token {token} and check it")}
    });
    let call = json!({
        "type": "assistant", "uuid": "u2", "sessionId": "s", "timestamp": "2026-11-30T10:00:01.000Z",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": format!("GH_TOKEN={token} ./deploy.sh")}}]}
    });
    let result = json!({
        "type": "user", "uuid": "u3", "sessionId": "s", "timestamp": "2026-11-30T10:00:02.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": format!("Exit code 1\nauth failed for {token}")}]}
    });
    let path = sb.path("secret.jsonl");
    std::fs::write(&path, format!("{line}\n{call}\n{result}\n")).unwrap();
    let path = path.to_str().unwrap();
    for args in [vec!["draft", path], vec!["draft", "--json", path]] {
        let out = sb.handoff(&repo, &args).success();
        assert!(!stdout(&out).contains(&token), "{}", stdout(&out));
        assert!(stdout(&out).contains("[REDACTED:"), "{}", stdout(&out));
        assert_stderr_has(&out, "redacted");
    }
    sb.handoff(&repo, &["draft", "--write", path]).success();
    let raw = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    assert!(!raw.contains(&token) && raw.contains("[REDACTED:"), "{raw}");
    let notes = sb.git(&repo, &["log", "-p", "refs/notes/handoffs"]);
    assert!(!notes.contains(&token));
}

/// Claude Code's SessionEnd hook: `git handoff hook` subcommand, event name.
const SESSION_END: [&str; 2] = ["session-end", "SessionEnd"];
/// Claude Code's PreCompact hook: `git handoff hook` subcommand, event name.
const PRE_COMPACT: [&str; 2] = ["pre-compact", "PreCompact"];

/// Claude Code's hook `[hook, event]` for the session of `transcript` in
/// `repo`, at `now`.
fn claude_hook(
    sb: &Sandbox,
    [hook_name, event]: [&str; 2],
    transcript: &str,
    repo: &Path,
    now: &str,
) -> assert_cmd::assert::Assert {
    hook(sb, hook_name, &hook_input(event, transcript, repo), now)
}

/// A hook's input, as Claude Code sends it.
pub(crate) fn hook_input(event: &str, transcript: &str, repo: &Path) -> String {
    json!({
        "session_id": "5f1c2a7e", "transcript_path": transcript, "cwd": repo.display().to_string(),
        "hook_event_name": event, "trigger": "auto", "reason": "other",
    })
    .to_string()
}

/// `git handoff hook EVENT` with `input`, run from another directory (the
/// input's `cwd` picks the repository), at `now`.
pub(crate) fn hook(
    sb: &Sandbox,
    event: &str,
    input: &str,
    now: &str,
) -> assert_cmd::assert::Assert {
    let elsewhere = sb.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    sb.handoff_env(
        &elsewhere,
        &[("GIT_HANDOFF_NOW", now)],
        &["hook", event],
        Some(input),
    )
    .success()
}

#[test]
fn the_hooks_store_a_draft_only_when_the_session_wrote_no_brief() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    // The session (10:00–10:02:50) wrote its brief at 10:01: kept, by both hooks.
    brief_at(&sb, &repo, "2026-11-30T10:01:00Z", "written");
    let written = sb.stored_brief(&repo, "main");
    let out = claude_hook(&sb, PRE_COMPACT, &path, &repo, "2026-11-30T10:03:00Z");
    let message = json(&stdout(&out));
    assert!(
        !message["systemMessage"].as_str().unwrap().contains("draft"),
        "{message}"
    );
    let out = claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:03:00Z");
    assert_eq!(stdout(&out), "");
    assert_eq!(sb.stored_brief(&repo, "main"), written);
    // A brief from before the session started does not count: the draft replaces it.
    brief_at(&sb, &repo, "2026-11-29T09:00:00Z", "yesterday");
    let narrative = std::fs::read(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let tree = sb.git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    let out = claude_hook(&sb, PRE_COMPACT, &path, &repo, "2026-11-30T10:02:55Z");
    assert_eq!(
        std::fs::read(repo.join(".claude/PROJECT_STATE.md")).unwrap(),
        narrative
    );
    let message = json(&stdout(&out))["systemMessage"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("git handoff write"), "{message}");
    assert!(
        message.contains("a draft of it from the transcript is stored as brief 'main' (mode AUTO)"),
        "{message}"
    );
    let auto = sb.stored_brief(&repo, "main");
    assert_eq!(
        (auto["mode"].as_str(), auto["timestamp"].as_str()),
        (Some("AUTO"), Some("2026-11-30T10:02:55Z"))
    );
    // No narrative entry and no other file: a hook leaves the tree as it was.
    assert_eq!(
        sb.git(&repo, &["status", "--porcelain", "--untracked-files=all"]),
        tree
    );
    // The session goes on after the compaction: at its end the newer
    // draft replaces the AUTO one (a draft is no brief the session wrote),
    // built, as that one was, over the person's version under it.
    let mut more = std::fs::read_to_string(&path).unwrap();
    more.push_str(&json!({"type": "user", "uuid": "z", "sessionId": "s", "timestamp": "2026-11-30T10:10:00.000Z", "message": {"role": "user", "content": "now also cover the leeway edge case"}}).to_string());
    more.push('\n');
    std::fs::write(&path, more).unwrap();
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:11:00Z");
    let end = sb.stored_brief(&repo, "main");
    assert_eq!(end["timestamp"], "2026-11-30T10:11:00Z");
    assert_eq!(end["mode"], "AUTO");
    assert_eq!(end["resume"]["resume_by"], "yesterday", "{end}");
    assert_eq!(
        end["resume"]["done_when"], "cargo test expiry passes",
        "{end}"
    );
    assert_eq!(
        end["state"]["open_risks"][0], auto["state"]["open_risks"][0],
        "{end}"
    );
    // handoff.autoDraft false turns the safety net off.
    sb.git(&repo, &["config", "handoff.autoDraft", "false"]);
    brief_at(&sb, &repo, "2026-11-29T09:00:00Z", "yesterday");
    let before = sb.stored_brief(&repo, "main");
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:12:00Z");
    assert_eq!(sb.stored_brief(&repo, "main"), before);
}

#[test]
fn a_session_that_only_read_and_talked_leaves_the_older_brief() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    brief_at(
        &sb,
        &repo,
        "2026-11-29T09:00:00Z",
        "yesterday's careful brief",
    );
    let before = sb.stored_brief(&repo, "main");
    let dir = repo.display().to_string();
    let lines = [
        json!({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": dir, "timestamp": "2026-11-30T10:00:00.000Z",
               "message": {"role": "user", "content": "what does verify() in src/auth.rs do?"}}),
        json!({"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp": "2026-11-30T10:00:05.000Z",
               "message": {"role": "assistant", "content": [
                   {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": format!("{dir}/src/auth.rs")}},
                   {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "git log --oneline -5"}}]}}),
        json!({"type": "user", "uuid": "u2", "sessionId": "s", "timestamp": "2026-11-30T10:00:06.000Z",
               "message": {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "content": "..."},
                   {"type": "tool_result", "tool_use_id": "t2", "content": "abc init"}]}}),
    ];
    let path = sb.path("qa.jsonl");
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let path = path.to_str().unwrap();
    claude_hook(&sb, SESSION_END, path, &repo, "2026-11-30T10:01:00Z");
    assert_eq!(sb.stored_brief(&repo, "main"), before);
    // Asked for, the draft is stored all the same.
    sb.handoff(&repo, &["draft", "--write", path]).success();
    assert_eq!(sb.stored_brief(&repo, "main")["mode"], "AUTO");
}

#[test]
fn a_hook_given_a_foreign_transcript_stores_nothing_and_stays_silent() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let chat = sb.path("chat.json");
    std::fs::write(&chat, "{\n  \"sessionId\": \"s\",\n  \"messages\": []\n}\n").unwrap();
    for (event, name) in [("pre-compact", "PreCompact"), ("session-end", "SessionEnd")] {
        let out = hook(
            &sb,
            event,
            &hook_input(name, chat.to_str().unwrap(), &repo),
            NOW,
        );
        assert_eq!(stderr(&out), "");
    }
    // No transcript_path, no cwd that exists: nothing either.
    hook(&sb, "session-end", "{}", NOW);
    hook(
        &sb,
        "session-end",
        r#"{"transcript_path":"/nonexistent.jsonl","cwd":"/nonexistent"}"#,
        NOW,
    );
    hook(&sb, "session-end", "not json", NOW);
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn the_shipped_claude_settings_run_the_session_end_hook() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-codex.jsonl", &repo);
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/claude/settings.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let command = settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(command, "git handoff hook session-end");
    let args: Vec<&str> = command.split(' ').skip(2).collect();
    sb.handoff_with(&repo, &args, Some(&hook_input("SessionEnd", &path, &repo)))
        .success()
        .stdout("");
    assert_eq!(sb.stored_brief(&repo, "main")["mode"], "AUTO");
}

#[test]
fn recover_from_transcript_grounds_the_stored_brief_in_what_the_session_did() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    sb.handoff_with(&repo, &["write", "-F", "-", "--no-lint"], Some(EXAMPLE))
        .success();
    let arg = format!("--from-transcript={path}");
    let out = sb.handoff(&repo, &["recover", &arg, "--no-lint"]).success();
    assert_stdout_has(&out, "Recovered brief 'main'");
    let b = sb.stored_brief(&repo, "main");
    assert_eq!(b["mode"], "RECOVER");
    // The stored goal stays; what the session did is added.
    assert_eq!(b["resume"]["done_when"], "cargo test auth passes");
    assert_eq!(
        b["state"]["decisions"][0],
        "use <= not < — the expiry second is still valid"
    );
    assert_eq!(
        b["state"]["decisions"][1],
        "compare with `<=` plus a 30 s leeway — one clock, no new dependency."
    );
    assert_eq!(
        b["state"]["tests"],
        json!([{"cmd": "cargo test expiry", "result": "fail"}])
    );
    assert!(
        b["state"]["open_risks"][0]
            .as_str()
            .unwrap()
            .starts_with("Last error, `cargo test expiry`")
    );
    let files: Vec<&str> = b["files_read_first"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/auth.rs", "tests/expiry.rs", "tests/leeway.rs"]);
    assert_eq!(b["files_read_first"][0]["why"], "under repair");
    // `--from-transcript KEY` is no transcript: the value needs `=`.
    sb.handoff(&repo, &["recover", "--from-transcript", "main"])
        .code(1)
        .stderr(predicates::str::contains("no TRANSCRIPT given"));
}

#[test]
fn a_large_transcript_is_read_from_its_end_only() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let dir = repo.display().to_string();
    let path = sb.path("big.jsonl");
    let mut text = json!({"type": "user", "uuid": "first", "sessionId": "s", "cwd": dir, "timestamp": "2026-11-30T08:00:00.000Z",
        "message": {"role": "user", "content": "FIRST REQUEST of this very long session"}}).to_string();
    text.push('\n');
    // 24 MiB of tool results, then the newest turn.
    let output = "x".repeat(256 * 1024);
    for i in 0..96 {
        let call = json!({"type": "assistant", "uuid": format!("a{i}"), "sessionId": "s",
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": format!("./step {i}")}}]}});
        let result = json!({"type": "user", "uuid": format!("r{i}"), "sessionId": "s",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": output}]}});
        text.push_str(&format!("{call}\n{result}\n"));
    }
    text.push_str(&json!({"type": "user", "uuid": "last", "sessionId": "s", "timestamp": "2026-11-30T11:00:00.000Z",
        "message": {"role": "user", "content": "the newest request of the session"}}).to_string());
    text.push('\n');
    std::fs::write(&path, &text).unwrap();
    assert!(text.len() > 24 * 1024 * 1024);
    let path = path.to_str().unwrap();
    let d = partial(&sb, &repo, path);
    let done = d["resume"]["done_when"].as_str().unwrap();
    assert!(done.contains("the newest request of the session"), "{done}");
    // The first request lies beyond the last 16 MiB: never read.
    assert!(!d.to_string().contains("FIRST REQUEST"));
    assert_eq!(d["state"]["commands"][0], "./step 95  # exit 0");
    let text = stdout(&sb.handoff(&repo, &["draft", path]).success());
    assert!(text.contains("its last 16,777,216 bytes read"), "{text}");
}

/// A transcript of a session in `repo` from 10:00 to 10:00:06 that ran
/// `commands` (Bash), each answered with exit 0, and nothing else.
fn session_running(sb: &Sandbox, repo: &Path, name: &str, commands: &[&str]) -> String {
    let dir = repo.display().to_string();
    let uses: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": c}}))
        .collect();
    let results: Vec<Value> = (0..commands.len())
        .map(|i| json!({"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "ok"}))
        .collect();
    let lines = [
        json!({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": dir, "timestamp": "2026-11-30T10:00:00.000Z",
               "message": {"role": "user", "content": "pick up where we left off"}}),
        json!({"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp": "2026-11-30T10:00:05.000Z",
               "message": {"role": "assistant", "content": uses}}),
        json!({"type": "user", "uuid": "u2", "sessionId": "s", "timestamp": "2026-11-30T10:00:06.000Z",
               "message": {"role": "user", "content": results}}),
    ];
    let path = sb.path(name);
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    path.display().to_string()
}

/// A careful brief, written the day before the session.
fn careful_brief(sb: &Sandbox, repo: &Path) -> Value {
    sb.write_brief_at(
        repo,
        "2026-11-29T09:00:00Z",
        None,
        [
            "cargo test expiry passes",
            "add leeway to verify()",
            "cargo test expiry",
        ],
        &[
            "--no-lint",
            "--decision",
            "use <= not <",
            "--rejected",
            "a global clock mock",
            "--read",
            "src/auth.rs=under repair",
        ],
    )
    .success();
    sb.stored_brief(repo, "main")
}

#[test]
fn a_session_that_only_resumed_leaves_the_brief_it_read() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let before = careful_brief(&sb, &repo);
    let path = session_running(
        &sb,
        &repo,
        "resumed.jsonl",
        &[
            "git handoff resume main",
            "git handoff list && git handoff show main",
            "git -C . status --short",
            "git handoff",
        ],
    );
    for event in ["pre-compact", "session-end"] {
        let name = if event == "pre-compact" {
            "PreCompact"
        } else {
            "SessionEnd"
        };
        hook(
            &sb,
            event,
            &hook_input(name, &path, &repo),
            "2026-11-30T10:01:00Z",
        );
        assert_eq!(sb.stored_brief(&repo, "main"), before, "{event}");
    }
    // A session that ran the tests did work: the draft goes over the brief.
    let path = session_running(&sb, &repo, "tested.jsonl", &["cargo test expiry"]);
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:01:00Z");
    assert_eq!(sb.stored_brief(&repo, "main")["mode"], "AUTO");
}

#[test]
fn a_draft_over_a_written_brief_keeps_it_and_says_so() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let before = careful_brief(&sb, &repo);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:03:00Z");
    let auto = sb.stored_brief(&repo, "main");
    assert_eq!(auto["mode"], "AUTO");
    assert_eq!(auto["timestamp"], "2026-11-30T10:03:00Z");
    // What a person wrote stays: the goal, the decisions, the rejected
    // paths, the files to read first.
    assert_eq!(auto["resume"]["done_when"], before["resume"]["done_when"]);
    assert_eq!(auto["resume"]["resume_by"], before["resume"]["resume_by"]);
    for field in ["decisions", "rejected_paths"] {
        let all = auto["state"][field].as_array().unwrap();
        assert_eq!(all[0], before["state"][field][0], "{field}");
        // What the transcript added is marked.
        assert!(
            all[1..]
                .iter()
                .all(|d| d.as_str().unwrap().starts_with("drafted: ")),
            "{all:?}"
        );
    }
    assert_eq!(auto["files_read_first"][0], before["files_read_first"][0]);
    // The first risk says what happened.
    let risks: Vec<&str> = auto["state"]["open_risks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(risks[0].starts_with("AUTO draft over "), "{risks:?}");
    assert!(
        risks[1..].iter().all(|r| r.starts_with("drafted: ")),
        "{risks:?}"
    );
    // resume names the brief it went over and the diff that shows the change.
    let out = sb.handoff(&repo, &["resume"]).success();
    assert!(
        stdout(&out).contains("`git handoff diff main` shows what it changed"),
        "{}",
        stdout(&out)
    );
    let v = json(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success()));
    assert_eq!(v["auto_over"].as_str().map(str::len), Some(7));
    let diff = stdout(&sb.handoff(&repo, &["diff", "main"]).success());
    assert!(diff.contains("+      \"drafted: "), "{diff}");
    // The next session's start says so before anything is loaded.
    for source in ["startup", "resume"] {
        let input =
            json!({"source": source, "cwd": repo.display().to_string(), "session_id": "next"});
        let out = sb.handoff_with(&repo, &["hook", "session-start"], Some(&input.to_string()));
        let context = stdout(&out.success());
        assert!(
            context.contains("It is an AUTO draft"),
            "{source}: {context}"
        );
    }
}

#[test]
fn a_brief_the_session_wrote_is_judged_by_the_history_not_its_fields() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    careful_brief(&sb, &repo);
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    // During the session (10:00–10:02:50): `show > b.json`, edit, `write -F
    // b.json`. The brief keeps yesterday's timestamp; the history knows
    // it was written at 10:01.
    let shown = stdout(&sb.handoff(&repo, &["show", "main"]).success());
    let edited = shown.replace("add leeway to verify()", "add leeway, then the docs");
    std::fs::write(sb.path("b.json"), edited).unwrap();
    sb.handoff_env(
        &repo,
        &[("GIT_HANDOFF_NOW", "2026-11-30T10:01:00Z")],
        &[
            "write",
            "-F",
            sb.path("b.json").to_str().unwrap(),
            "--no-lint",
        ],
        None,
    )
    .success();
    let written = sb.stored_brief(&repo, "main");
    assert_eq!(written["timestamp"], "2026-11-29T09:00:00Z");
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:03:00Z");
    assert_eq!(sb.stored_brief(&repo, "main"), written);

    // A brief the session itself wrote (its id in the history) is kept
    // whatever the clock said when it was written.
    sb.handoff_env(
        &repo,
        &[
            ("GIT_HANDOFF_NOW", "2026-11-29T10:00:00Z"),
            ("GIT_HANDOFF_SESSION", "5f1c2a7e"),
        ],
        &[
            "write",
            "-F",
            sb.path("b.json").to_str().unwrap(),
            "--no-lint",
            "--next-check",
            "cargo test all",
        ],
        None,
    )
    .success();
    let ours = sb.stored_brief(&repo, "main");
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:03:00Z");
    assert_eq!(sb.stored_brief(&repo, "main"), ours);
}

/// A draft over an earlier draft (PreCompact's, then SessionEnd's) goes
/// over the person's version the first one went over: what they wrote
/// stays in the brief, not only in its history.
#[test]
fn a_second_draft_goes_over_the_persons_version_not_the_first_draft() {
    let sb = Sandbox::new();
    let repo = app(&sb);
    let before = careful_brief(&sb, &repo);
    let person = sb.handoff(&repo, &["log", "main"]).success();
    let person = stdout(&person)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let path = transcript(&sb, "draft-claude.jsonl", &repo);
    for (event, hook_name, at) in [
        ("PreCompact", "pre-compact", "2026-11-30T10:02:00Z"),
        ("SessionEnd", "session-end", "2026-11-30T10:03:00Z"),
    ] {
        hook(&sb, hook_name, &hook_input(event, &path, &repo), at);
        let auto = sb.stored_brief(&repo, "main");
        assert_eq!(auto["mode"], "AUTO", "{event}");
        assert_eq!(auto["timestamp"], at, "{event}: stored");
        assert_eq!(
            auto["resume"]["resume_by"], before["resume"]["resume_by"],
            "{event}"
        );
        assert_eq!(
            auto["state"]["decisions"][0], before["state"]["decisions"][0],
            "{event}"
        );
        assert_eq!(
            auto["state"]["rejected_paths"][0], before["state"]["rejected_paths"][0],
            "{event}"
        );
        let first = auto["state"]["open_risks"][0].as_str().unwrap();
        assert!(
            first.starts_with(&format!("AUTO draft over {person}:")),
            "{event}: {first}"
        );
    }
}

/// Issue 58, item 7: a trivial session — it fixed a typo and committed it,
/// leaving a clean worktree, no failing test and no decision or rejected
/// approach in its transcript — gets no AUTO draft over the person's
/// brief; the same session leaving an uncommitted change does.
#[test]
fn a_trivial_session_gets_no_draft_over_a_persons_brief() {
    let sb = Sandbox::new();
    let repo = sb.repo("app");
    sb.commit(&repo, "README.md", "A tpyo here.\n", "readme");
    let before = careful_brief(&sb, &repo);
    sb.commit(&repo, "README.md", "A typo here.\n", "Fix a typo");
    let path = session_running(
        &sb,
        &repo,
        "typo.jsonl",
        &["sed -i s/tpyo/typo/ README.md && git commit -am 'Fix a typo'"],
    );
    for event in ["pre-compact", "session-end"] {
        hook(
            &sb,
            event,
            &hook_input("SessionEnd", &path, &repo),
            "2026-11-30T10:01:00Z",
        );
        assert_eq!(sb.stored_brief(&repo, "main"), before, "{event}");
    }
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("AUTO"), "{out}");
    // Left uncommitted, the same work is not trivial: the net drafts it.
    std::fs::write(repo.join("README.md"), "A typo here, and more.\n").unwrap();
    claude_hook(&sb, SESSION_END, &path, &repo, "2026-11-30T10:01:00Z");
    assert_eq!(sb.stored_brief(&repo, "main")["mode"], "AUTO");
}
