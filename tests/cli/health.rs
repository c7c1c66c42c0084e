//! `hook user-prompt-submit`: the per-turn session-health signal. Hand-made
//! transcripts in the shape of Claude Code's JSON lines (as
//! `tests/fixtures/transcript-*.jsonl`), each raising one signal once per
//! session; a long healthy one raising none; every failure silent, exit 0.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::setups::*;
use crate::support::*;
use serde_json::{Value, json};

const SESSION: &str = "5f1c2a7e-0b3d-4c1e-9a2f-3d4e5f6a7b8c";

fn said(text: &str) -> Value {
    json!({"type": "user", "isSidechain": false, "sessionId": SESSION,
           "message": {"role": "user", "content": text}})
}

fn call(cwd: &Path, name: &str, input: Value) -> Value {
    json!({"type": "assistant", "isSidechain": false, "cwd": cwd, "sessionId": SESSION,
           "message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                       "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}],
                       "usage": {"input_tokens": 6, "cache_read_input_tokens": 20_000}}})
}

fn result(text: &str) -> Value {
    json!({"type": "user", "isSidechain": false,
           "message": {"role": "user", "content": [
               {"tool_use_id": "toolu_1", "type": "tool_result", "content": text}]}})
}

fn tokens(n: u64) -> Value {
    json!({"type": "assistant", "isSidechain": false,
           "message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                       "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 6, "cache_read_input_tokens": n - 6,
                                 "cache_creation_input_tokens": 0, "output_tokens": 9}}})
}

fn read(repo: &Path, file: &str) -> Value {
    call(repo, "Read", json!({"file_path": repo.join(file)}))
}

fn edit(repo: &Path, file: &str) -> Value {
    call(
        repo,
        "Edit",
        json!({"file_path": repo.join(file), "old_string": "a", "new_string": "b"}),
    )
}

fn bash(repo: &Path, command: &str) -> Value {
    call(repo, "Bash", json!({"command": command}))
}

/// Append `lines` to the transcript at `path`.
fn append(path: &Path, lines: &[Value]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        writeln!(f, "{line}").unwrap();
    }
}

fn input(transcript: &Path, cwd: &Path, prompt: &str) -> String {
    json!({"session_id": SESSION, "transcript_path": transcript, "cwd": cwd,
           "hook_event_name": "UserPromptSubmit", "permission_mode": "default", "prompt": prompt})
    .to_string()
}

/// Run the hook with `stdin` in `dir`; it exits 0. Its stdout.
fn hook_in(sb: &Sandbox, dir: &Path, env: &[(&str, &str)], stdin: &str) -> String {
    stdout(
        &sb.handoff_env(dir, env, &["hook", "user-prompt-submit"], Some(stdin))
            .success(),
    )
}

/// The hook for the transcript at `path`: the context it injects, if any.
fn prompt(sb: &Sandbox, repo: &Path, path: &Path, text: &str) -> Option<String> {
    let out = hook_in(sb, repo, &[], &input(path, repo, text));
    if out.is_empty() {
        return None;
    }
    let v = json(&out);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(context.lines().count(), 1, "{context}");
    Some(context)
}

fn setup(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let repo = sb.repo("app");
    let path = sb.path("session.jsonl");
    append(&path, &[said("fix the token expiry check in src/auth.rs")]);
    (repo, path)
}

/// Each signal: the lines that raise it, the words its alert holds.
fn cases(repo: &Path) -> Vec<(&'static str, Vec<Value>, &'static str)> {
    let r = |f: &str| read(repo, f);
    vec![
        (
            "pressure",
            vec![tokens(90_000)],
            "context at 53% of the usable window (90,000 of 167,000 tokens",
        ),
        (
            "strong pressure",
            vec![tokens(120_000)],
            "run `git handoff recover`",
        ),
        (
            "repeated call",
            vec![
                bash(repo, "cargo test expiry"),
                bash(repo, "git status"),
                bash(repo, "cargo test expiry"),
                bash(repo, "cargo test expiry"),
            ],
            "the same tool call ran 3 times in the last 5",
        ),
        (
            "stale read",
            vec![
                r("src/auth.rs"),
                bash(repo, "sed -i s/</<=/ src/auth.rs"),
                edit(repo, "src/auth.rs"),
            ],
            "a file was edited after it changed since it was last read",
        ),
        (
            "recovery spiral",
            vec![
                r("src/a.rs"),
                r("src/b.rs"),
                r("src/c.rs"),
                r("src/a.rs"),
                r("src/b.rs"),
                r("src/c.rs"),
            ],
            "3 files already read were read again in a row",
        ),
        (
            "instruction fade",
            vec![
                tokens(20_000),
                said("fix the token expiry check in src/auth.rs"),
            ],
            "the person repeated a message sent before",
        ),
    ]
}

#[test]
fn each_signal_raises_one_line_once_per_session() {
    let sb = Sandbox::new();
    let repo = sb.repo("app");
    for (name, lines, words) in cases(&repo) {
        let path = sb.path(&format!("{}.jsonl", name.replace(' ', "-")));
        append(&path, &[said("fix the token expiry check in src/auth.rs")]);
        append(&path, &[tokens(20_000)]);
        // A state per session: this case's own.
        let state = repo.join(".git/handoff-health");
        let _ = std::fs::remove_dir_all(&state);
        assert_eq!(prompt(&sb, &repo, &path, "go on"), None, "{name}");
        append(&path, &lines);
        let alert = prompt(&sb, &repo, &path, "go on").unwrap_or_else(|| panic!("{name}: silent"));
        assert!(alert.contains(words), "{name}: {alert}");
        assert!(alert.starts_with("git-handoff session health: "), "{alert}");
        assert!(alert.contains("`git handoff re"), "{alert}");
        // The same again: raised once per session.
        append(&path, &lines);
        assert_eq!(prompt(&sb, &repo, &path, "go on"), None, "{name}");
        // Another session raises it again.
        let other = input(&path, &repo, "go on").replace(SESSION, "other-session");
        std::fs::write(&path, "").unwrap();
        append(&path, &[said("fix the token expiry check in src/auth.rs")]);
        append(&path, &lines);
        assert!(
            hook_in(&sb, &repo, &[], &other).contains(words),
            "{name} in another session"
        );
    }
}

#[test]
fn the_most_urgent_signal_comes_first_then_the_next() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    let c = cases(&repo);
    append(&path, &c[2].1); // a repeated call
    append(&path, &[tokens(90_000)]); // and pressure
    let first = prompt(&sb, &repo, &path, "go on").unwrap();
    assert!(first.contains("the same tool call"), "{first}");
    let second = prompt(&sb, &repo, &path, "go on").unwrap();
    assert!(second.contains("context at 53%"), "{second}");
    assert_eq!(prompt(&sb, &repo, &path, "go on"), None);
}

#[test]
fn the_prompt_being_sent_counts_as_a_repeated_instruction() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[tokens(20_000)]);
    let again = "Fix the token expiry check in  src/auth.rs";
    let alert = prompt(&sb, &repo, &path, again).unwrap();
    assert!(alert.contains("repeated a message"), "{alert}");
    // Short replies are no instruction.
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[said("continue"), tokens(20_000)]);
    assert_eq!(prompt(&sb, &repo, &path, "continue"), None);
}

/// A long session that does its work well — new prompts, files read once
/// and edited, tests run after each edit, the context under half — raises
/// nothing, prompt after prompt.
#[test]
fn a_long_healthy_session_raises_nothing() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    for turn in 0..120u64 {
        let file = format!("src/mod{turn}.rs");
        append(
            &path,
            &[
                said(&format!("now do step {turn} of the plan in {file}")),
                read(&repo, &file),
                result("fn f() {}"),
                bash(&repo, "grep -rn verify src"),
                edit(&repo, &file),
                edit(&repo, &file),
                bash(&repo, "cargo test"),
                result("test result: ok"),
                edit(&repo, &file),
                bash(&repo, "cargo test"),
                read(&repo, &file),
                tokens(20_000 + turn * 500),
            ],
        );
        if turn % 10 == 0 {
            assert_eq!(prompt(&sb, &repo, &path, "go on"), None, "turn {turn}");
        }
    }
    assert!(std::fs::metadata(&path).unwrap().len() > 100_000);
    assert_eq!(prompt(&sb, &repo, &path, "go on"), None);
}

#[test]
fn every_failure_is_silent_and_exits_zero() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[tokens(150_000)]);
    let good = input(&path, &repo, "go on");
    let outside = sb.path("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let garbage = [
        "".to_string(),
        "not json".to_string(),
        "[1, 2]".to_string(),
        "{}".to_string(),
        input(&sb.path("missing.jsonl"), &repo, "go on"),
        input(&path, &sb.path("no-such-dir"), "go on"),
        input(&path, &outside, "go on"),
        input(&repo.join(".git"), &repo, "go on"),
        good.replace(SESSION, "../../escape"),
    ];
    for stdin in &garbage {
        let out = sb
            .handoff_env(&outside, &[], &["hook", "user-prompt-submit"], Some(stdin))
            .success();
        assert_eq!(
            (stdout(&out), stderr(&out)),
            (String::new(), String::new()),
            "{stdin}"
        );
    }
    // A held lock: this session's hook is running (or a stranger's file).
    let state = repo.join(".git/handoff-health");
    std::fs::create_dir_all(&state).unwrap();
    let lock = state.join(format!("{SESSION}.lock"));
    std::fs::write(&lock, "not ours\n").unwrap();
    assert_eq!(hook_in(&sb, &repo, &[], &good), "");
    // A crash and a stall: silent, within the hook's deadline.
    std::fs::remove_file(&lock).unwrap();
    for point in ["health-crash", "health-stall"] {
        let started = Instant::now();
        let out = sb
            .handoff_env(
                &repo,
                &[("GIT_HANDOFF_FAILPOINT", point)],
                &["hook", "user-prompt-submit"],
                Some(&good),
            )
            .success();
        assert_eq!(stdout(&out), "", "{point}");
        assert!(started.elapsed() < Duration::from_secs(5), "{point}");
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    // Standard input never closed: silent, within the deadline.
    let mut cmd = sb.command("git", &repo);
    cmd.args(["handoff", "hook", "user-prompt-submit"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let started = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let open_stdin = child.stdin.take();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("the hook waited for its input past its deadline");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(open_stdin);
    assert!(status.success());
    // Nothing was raised by the failures: the alert is still to come.
    assert!(prompt(&sb, &repo, &path, "go on").is_some());
}

#[test]
fn two_sessions_at_once_each_get_their_own_alert() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[tokens(90_000)]);
    let inputs: Vec<String> = (0..4)
        .map(|i| input(&path, &repo, "go on").replace(SESSION, &format!("session-{i}")))
        .collect();
    let children: Vec<_> = inputs
        .iter()
        .map(|stdin| {
            let mut cmd = sb.command("git", &repo);
            cmd.args(["handoff", "hook", "user-prompt-submit"]);
            spawn_fed(cmd, stdin.as_bytes())
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("context at 53%"));
    }
}

#[test]
fn one_setting_turns_it_off() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[tokens(150_000)]);
    let stdin = input(&path, &repo, "go on");
    for off in ["0", "false", "off"] {
        assert_eq!(
            hook_in(&sb, &repo, &[("GIT_HANDOFF_HEALTH", off)], &stdin),
            ""
        );
    }
    sb.git(&repo, &["config", "handoff.health", "false"]);
    assert_eq!(hook_in(&sb, &repo, &[], &stdin), "");
    // Off, it keeps no state either.
    assert!(!repo.join(".git/handoff-health").exists());
    sb.git(&repo, &["config", "handoff.health", "true"]);
    assert!(prompt(&sb, &repo, &path, "go on").is_some());
}

#[test]
fn the_configured_window_is_the_one_measured() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(&path, &[tokens(90_000)]);
    sb.git(&repo, &["config", "handoff.contextWindow", "1M"]);
    assert_eq!(prompt(&sb, &repo, &path, "go on"), None);
}

/// The window the harness stated at the session's start (a 1M model, as
/// `claude-opus-4-6[1m]`, which the transcript's lines do not mark) is the
/// one measured; another session's is not.
#[test]
fn the_window_stated_at_the_session_start_is_the_one_measured() {
    let other = "0a1b2c3d-0000-4000-8000-000000000001";
    for (stated_for, alert) in [(other, true), (SESSION, false)] {
        let sb = Sandbox::new();
        let (repo, path) = setup(&sb);
        append(&path, &[tokens(90_000)]);
        let start = json!({"session_id": stated_for, "cwd": repo, "source": "startup",
                           "hook_event_name": "SessionStart", "model": "claude-opus-4-6[1m]"});
        sb.handoff_with(&repo, &["hook", "session-start"], Some(&start.to_string()))
            .success();
        let said = prompt(&sb, &repo, &path, "go on");
        assert_eq!(said.is_some(), alert, "stated for {stated_for}: {said:?}");
    }
}

#[test]
fn the_state_is_small_and_holds_no_text_of_the_session() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    append(
        &path,
        &[
            said("the deploy password is hunter2-hunter2, use it"),
            read(&repo, "config/secrets.env"),
            tokens(20_000),
        ],
    );
    // The one text kept from the transcript, the model's id, is redacted.
    let mut odd = tokens(21_000);
    odd["message"]["model"] = json!("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    append(&path, &[odd]);
    assert_eq!(prompt(&sb, &repo, &path, "go on"), None);
    let state = std::fs::read_to_string(
        repo.join(".git/handoff-health")
            .join(format!("{SESSION}.json")),
    )
    .unwrap();
    assert!(state.len() < 1024, "{state}");
    assert!(state.contains("[REDACTED:"), "{state}");
    for word in ["hunter2", "secrets", "config", "deploy", "ghp_"] {
        assert!(!state.contains(word), "{state}");
    }
}

#[test]
fn the_shipped_plugin_and_settings_run_the_hook() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "contrib/claude/hooks/hooks.json",
        "contrib/claude/settings.json",
    ] {
        let v = json(&std::fs::read_to_string(root.join(file)).unwrap());
        assert_eq!(
            v["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
            "git handoff hook user-prompt-submit",
            "{file}"
        );
    }
}

#[test]
fn a_new_session_removes_the_files_of_sessions_long_gone() {
    let sb = Sandbox::new();
    let (repo, path) = setup(&sb);
    let dir = repo.join(".git/handoff-health");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["gone.json", "gone.lock", ".state-x1", "recent.json"] {
        std::fs::write(dir.join(name), "{}").unwrap();
    }
    for name in ["gone.json", "gone.lock", ".state-x1"] {
        let file = dir.join(name);
        let out = sb
            .command("touch", &repo)
            .args(["-d", "15 days ago"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    assert_eq!(prompt(&sb, &repo, &path, "go on"), None);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [format!("{SESSION}.json"), "recent.json".to_string()]);
}
