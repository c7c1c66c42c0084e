//! The context-utilization meter on fixture transcripts
//! (`tests/fixtures/transcript-*.jsonl`, written for these tests in the
//! harness's JSON-lines format).

use std::path::{Path, PathBuf};

use crate::support::{Sandbox, assert_stderr_has, stderr, stdout};
use serde_json::Value;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A directory that is no repository.
fn plain_dir(sb: &Sandbox) -> PathBuf {
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json_of(sb: &Sandbox, dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["usage", "--json"];
    all.extend_from_slice(args);
    let out = sb.handoff(dir, &all).success();
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn the_most_recent_assistant_usage_counts() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    // 6 input + 80,000 cache read + 2,304 cache creation = 82,310.
    sb.handoff(&dir, &["usage", &fixture("transcript-basic.jsonl")])
        .success()
        .stdout("context: 41% of 200k (guessed from the model; 82,310 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
    let v = json_of(&sb, &dir, &[&fixture("transcript-basic.jsonl")]);
    assert_eq!(v["tokens"], 82_310);
    assert_eq!(v["window"], 200_000);
    assert_eq!(v["percent"], 41);
    assert_eq!(v["threshold"], 40);
    assert_eq!(v["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(v["over"], true);
    assert!(v["tokens"].is_u64() && v["percent"].is_u64());
}

#[test]
fn a_partial_last_line_is_skipped() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    let path = fixture("transcript-partial.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.ends_with('\n') && text.lines().last().unwrap().contains("usage"));
    sb.handoff(&dir, &["usage", &path])
        .success()
        .stdout("context: 41% of 200k (guessed from the model; 82,310 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
}

#[test]
fn junk_sidechains_and_synthetic_lines_are_skipped() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    // Non-JSON lines, blank lines, a broken object, a subagent's (sidechain)
    // message and a synthetic error message come after the real one.
    sb.handoff(&dir, &["usage", &fixture("transcript-junk.jsonl")])
        .success()
        .stdout("context: 10% of 200k (guessed from the model; 20,003 tokens) — under 40%\n");
}

#[test]
fn no_usage_yet_is_zero() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    sb.handoff(&dir, &["usage", &fixture("transcript-nousage.jsonl")])
        .success()
        .stdout("context: 0% of 200k (guessed from the model; 0 tokens) — no assistant message with usage yet\n");
    let v = json_of(&sb, &dir, &[&fixture("transcript-nousage.jsonl")]);
    assert_eq!(v["tokens"], 0);
    assert!(v["model"].is_null());
}

#[test]
fn one_m_models_get_the_large_window() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    sb.handoff(&dir, &["usage", &fixture("transcript-1m.jsonl")])
        .success()
        .stdout("context: 30% of 1M (guessed from the model; 300,000 tokens) — under 40%\n");
}

#[test]
fn a_missing_transcript_is_one_clear_error() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    let out = sb.handoff(&dir, &["usage", "no-such.jsonl"]).code(128);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fatal: cannot read the transcript 'no-such.jsonl'"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
    // A directory is no transcript either.
    sb.handoff(&dir, &["usage", dir.to_str().unwrap()]).code(1);
    // Nor is a bad --window.
    sb.handoff(
        &dir,
        &[
            "usage",
            "--window",
            "lots",
            &fixture("transcript-basic.jsonl"),
        ],
    )
    .code(2);
}

#[test]
fn window_and_threshold_precedence() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let basic = fixture("transcript-basic.jsonl");
    // git config beats the model …
    sb.git(&repo, &["config", "handoff.contextWindow", "400k"]);
    sb.git(&repo, &["config", "handoff.threshold", "15"]);
    sb.handoff(&repo, &["usage", &basic])
        .success()
        .stdout("context: 20% of 400k (handoff.contextWindow; 82,310 tokens) — over 15%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
    let v = json_of(&sb, &repo, &[&basic]);
    assert_eq!(v["window_source"], "config");
    // … and --window beats git config.
    sb.handoff(&repo, &["usage", "--window", "1M", &basic])
        .success()
        .stdout("context: 8% of 1M (--window; 82,310 tokens) — under 15%\n");
    // Outside a repository git config is not read.
    let dir = plain_dir(&sb);
    sb.handoff(&dir, &["usage", &basic])
        .success()
        .stdout("context: 41% of 200k (guessed from the model; 82,310 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
    // A bad config value is one clear error.
    sb.git(&repo, &["config", "handoff.threshold", "lots"]);
    let out = sb.handoff(&repo, &["usage", &basic]).code(1);
    assert_stderr_has(&out, "handoff.threshold");
}

#[test]
fn hook_mode_reads_the_transcript_path_and_never_fails() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    let input = serde_json::json!({
        "session_id": "5f1c",
        "transcript_path": fixture("transcript-basic.jsonl"),
        "cwd": dir.display().to_string(),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on"
    })
    .to_string();
    sb.handoff_with(&dir, &["usage", "--hook"], Some(&input))
        .success()
        .stdout("context: 41% of 200k (guessed from the model; 82,310 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
    let out = sb
        .handoff_with(&dir, &["usage", "--hook", "--json"], Some(&input))
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["tokens"], 82_310);
    // Garbled input or a missing transcript: nothing on stdout, exit 0.
    for bad in [
        "not json".to_string(),
        "{}".to_string(),
        serde_json::json!({"transcript_path": "/no/such.jsonl"}).to_string(),
    ] {
        sb.handoff_with(&dir, &["usage", "--hook"], Some(&bad))
            .success()
            .stdout("");
    }
}

#[test]
fn without_a_transcript_the_newest_session_of_this_worktree_is_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let root = std::fs::canonicalize(&repo).unwrap();
    let folder: String = root
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let out = sb.handoff(&repo, &["usage"]).code(1);
    assert_stderr_has(&out, "no session transcript found");
    let projects = sb.home().join(".claude/projects").join(folder);
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::copy(fixture("transcript-1m.jsonl"), projects.join("old.jsonl")).unwrap();
    // Make sure the second copy is newer.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::copy(
        fixture("transcript-basic.jsonl"),
        projects.join("new.jsonl"),
    )
    .unwrap();
    let file = std::fs::File::options()
        .append(true)
        .open(projects.join("new.jsonl"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    sb.handoff(&repo, &["usage"])
        .success()
        .stdout("context: 41% of 200k (guessed from the model; 82,310 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
}

#[test]
fn codex_sessions_read_their_last_token_count() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    // The last token_count with counts: 119,000 input (97,000 of them
    // cached) of the 272,000 window Codex records; the model from the
    // turn_context before it; a later token_count without info is skipped.
    let path = fixture("codex-session.jsonl");
    sb.handoff(&dir, &["usage", &path])
        .success()
        .stdout("context: 43% of 272k (from the transcript; 119,000 tokens) — over 40%: time to hand off: write the brief and continue in a fresh session (fork only an out-of-scope side task)\n");
    let v = json_of(&sb, &dir, &[&path]);
    assert_eq!(v["tokens"], 119_000);
    assert_eq!(v["window"], 272_000);
    assert_eq!(v["window_source"], "transcript");
    assert_eq!(v["model"], "gpt-5.1-codex");
    assert_eq!(v["usage"]["cache_read_input_tokens"], 97_000);
    // --window still wins over the recorded window.
    sb.handoff(&dir, &["usage", "--window", "1M", &path])
        .success()
        .stdout("context: 11% of 1M (--window; 119,000 tokens) — under 40%\n");
}

#[test]
fn a_transcript_with_no_token_counts_is_said_so_not_guessed() {
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    let gemini = sb.path("gemini-chat.json");
    std::fs::write(
        &gemini,
        "{\"sessionId\":\"s1\",\"messages\":[{\"type\":\"user\",\"content\":\"hi\"}]}\n",
    )
    .unwrap();
    for path in [
        fixture("codex-session-nousage.jsonl"),
        gemini.display().to_string(),
    ] {
        let out = sb.handoff(&dir, &["usage", &path]).code(1);
        let err = stderr(&out);
        assert!(
            err.starts_with("error: no usage recorded in this transcript"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(stdout(&out), "");
    }
    // A hook never fails: nothing on stdout, the reason on stderr, exit 0.
    let hook = serde_json::json!({"transcript_path": fixture("codex-session-nousage.jsonl")});
    let out = sb
        .handoff_with(&dir, &["usage", "--hook"], Some(&hook.to_string()))
        .success();
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("no usage recorded"));
}

#[test]
fn a_fifo_is_refused_at_once_never_read() {
    // Opening a FIFO for reading blocks until a writer appears: `usage`
    // must refuse it before opening, not hang.
    let sb = Sandbox::new();
    let dir = plain_dir(&sb);
    let fifo = sb.path("transcript.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // The binary itself, not through `git`: on timeout the process that
    // holds the FIFO is the one killed.
    let mut cmd = std::process::Command::new(crate::support::bin_dir().join("git-handoff"));
    cmd.current_dir(&dir);
    crate::support::hermetic(&mut cmd, &sb.home());
    cmd.args(["usage", fifo.to_str().unwrap()]);
    let out = assert_cmd::Command::from_std(cmd)
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is a special file (a FIFO, socket or device), not a regular file"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
}

/// Issue 33: on a Codex session, `usage` finds the rollout file by itself:
/// the newest under `~/.codex/sessions/YYYY/MM/DD/` (or `$CODEX_HOME`)
/// whose first line records this directory as its working directory.
#[test]
fn without_a_transcript_the_newest_codex_rollout_of_this_directory_is_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let root = std::fs::canonicalize(&repo).unwrap();
    let fixture = std::fs::read_to_string(fixture("codex-session.jsonl")).unwrap();
    let day = sb.home().join(".codex/sessions/2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    let at = |name: &str, cwd: &str, secs: u64| {
        let path = day.join(name);
        std::fs::write(&path, fixture.replace("/home/dev/app", cwd)).unwrap();
        let file = std::fs::File::options().append(true).open(&path).unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    };
    // Another project's session is newer; this one's is the one read.
    at(
        "rollout-2026-11-30T11-00-00-a.jsonl",
        &root.display().to_string(),
        2_000_000_000,
    );
    at(
        "rollout-2026-11-30T12-00-00-b.jsonl",
        "/elsewhere",
        2_000_000_100,
    );
    let v = json_of(&sb, &repo, &[]);
    assert_eq!(v["model"], "gpt-5.1-codex", "{v}");
    assert!(
        v["transcript"].as_str().unwrap().ends_with("-a.jsonl"),
        "{v}"
    );
    // $CODEX_HOME moves the folder.
    let out = sb
        .handoff_env(
            &repo,
            &[("CODEX_HOME", sb.path("nowhere").to_str().unwrap())],
            &["usage"],
            None,
        )
        .code(1);
    assert_stderr_has(&out, "Codex CLI");
}

/// Issue 49.4: the window the harness says it has (Claude Code's
/// status-line input) beats the guess from the model; the config beats
/// both; the line says where the window came from.
#[test]
fn the_harness_window_beats_the_model_guess() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let input = serde_json::json!({
        "transcript_path": fixture("transcript-basic.jsonl"),
        "cwd": repo.display().to_string(),
        "context_window": {"context_window_size": 1_000_000},
    })
    .to_string();
    let out = sb
        .handoff_with(&repo, &["usage", "--hook"], Some(&input))
        .success();
    assert_eq!(
        stdout(&out),
        "context: 8% of 1M (from the harness; 82,310 tokens) — under 40%\n"
    );
    sb.git(&repo, &["config", "handoff.contextWindow", "400k"]);
    let out = sb
        .handoff_with(&repo, &["usage", "--hook"], Some(&input))
        .success();
    assert!(
        stdout(&out).contains("of 400k (handoff.contextWindow;"),
        "{}",
        stdout(&out)
    );
}
