//! Issue 56, items 3–6: redaction reads through encodings (escaped JSON
//! in a shell command, `\u` escapes in any history line, invisible
//! characters inside a token) and catches secrets handed over in prose,
//! at write, in the session-end hook's draft and at the push gate; and it
//! leaves ordinary text — this project's own docs, the demo's briefs —
//! as written.

use std::path::Path;

use crate::draft::{hook, hook_input};
use crate::secrets::{everything, transcript_with};
use crate::support::*;

/// The body of a GitHub token (36 characters after `ghp_`), in two
/// halves: neither may be stored or sent.
const BODY: &str = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

/// The pieces of `secret` that must never appear: its halves.
fn halves(secret: &str) -> [&str; 2] {
    let mid = secret.len() / 2;
    [&secret[..mid], &secret[mid..]]
}

/// Everything the team's remote holds, objects and refs, as text.
fn remote_text(t: &Team) -> String {
    let objects =
        t.sb.git_out(&t.bare, &["cat-file", "--batch-all-objects", "--batch"]);
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&objects.stdout),
        t.sb.git(&t.bare, &["for-each-ref"])
    )
}

/// Assert neither half of any of `secrets` is in `text`.
fn holds_none(text: &str, secrets: &[&str], where_: &str) {
    for secret in secrets {
        for half in halves(secret) {
            assert!(!text.contains(half), "{half:?} of {secret:?} in {where_}");
        }
    }
}

/// A write with `--command`/`--decision` values: `write` with the three
/// required flags, then `extra`.
fn write_with(t: &Team, key: &str, extra: &[&str], redact: bool) {
    let mut args = write_args(Some(key), ["cargo test", "carry on", "cargo test"], extra);
    args.push("--no-lint");
    if !redact {
        args.push("--no-redact");
    }
    t.run(&t.a, &args).success();
}

/// Each of `cases` written as given (`--no-redact`) as the `flag` of
/// its own brief `raw<i>`: one push refuses every one of them.
fn refused_at_push(t: &Team, cases: &[(String, String)], flag: &str) {
    for (i, (text, _)) in cases.iter().enumerate() {
        write_with(t, &format!("raw{i}"), &[flag, text], false);
    }
    let out = t.run(&t.a, &["push"]).code(1);
    for (i, (text, _)) in cases.iter().enumerate() {
        assert!(
            stdout(&out).contains(&format!("refused: raw{i} ")),
            "{text:?}: {}",
            stdout(&out)
        );
    }
}

/// Escaped JSON in shell commands, `\u`-escaped and invisible-character
/// tokens: each with the secret that must never be stored or pushed.
fn encoded() -> Vec<(String, String)> {
    vec![
        (
            r#"curl -d "{\"password\":\"Tr0ub4dor3xyzq\"}" https://api.example.com/login"#.into(),
            "Tr0ub4dor3xyzq".into(),
        ),
        (
            r#"curl -d "{\"api_key\":\"9f8e7d6c5b4aQWERTY12\"}" https://api.example.com"#.into(),
            "9f8e7d6c5b4aQWERTY12".into(),
        ),
        (
            r#"curl -d "{\"token\":\"Zx81_kqP0mnB72vTq9Lm\"}" https://api.example.com"#.into(),
            "Zx81_kqP0mnB72vTq9Lm".into(),
        ),
        (
            r#"curl -d "{\"secret\":\"Wq5_rtY8uiOp3AsDf6Gh\"}" https://api.example.com"#.into(),
            "Wq5_rtY8uiOp3AsDf6Gh".into(),
        ),
        (format!(r"deploy with \u0067hp_{BODY}"), BODY.into()),
        (
            format!("deploy with ghp_{}\u{200B}{}", &BODY[..18], &BODY[18..]),
            BODY.into(),
        ),
        (
            format!("deploy with ghp_{}\u{00AD}{}", &BODY[..18], &BODY[18..]),
            BODY.into(),
        ),
    ]
}

/// Issue 56, items 3 and 5: escaped JSON in a `--command` and tokens
/// behind `\u` escapes or invisible characters are redacted at write;
/// written with `--no-redact`, `push` refuses them and the remote holds
/// none of them.
#[test]
fn encoded_secrets_are_redacted_at_write_and_refused_at_push() {
    let t = team();
    let cases = encoded();
    let secrets: Vec<&str> = cases.iter().map(|(_, s)| s.as_str()).collect();
    let mut extra = Vec::new();
    for (text, _) in &cases {
        extra.extend(["--command", text.as_str()]);
    }
    write_with(&t, "k", &extra, true);
    let stored = everything(&t.sb, &t.a);
    holds_none(&stored, &secrets, "the repository");
    assert!(stored.contains(r#"{\\\"password\\\":\\\"[REDACTED:secret_assignment]"#));
    assert!(stored.contains("deploy with [REDACTED:github_token]"));
    t.run(&t.a, &["push"]).success();

    // Stored as given (--no-redact): the gate reads through the encodings.
    refused_at_push(&t, &cases, "--command");
    holds_none(&remote_text(&t), &secrets, "the remote");
}

/// Issue 56, item 3, end to end: the session-end hook drafts the escaped
/// JSON command the session ran into `state.commands`; neither the draft
/// nor what `git handoff push` sends holds the password.
#[test]
fn the_session_end_draft_of_an_escaped_json_command_pushes_no_secret() {
    let t = team();
    let command =
        r#"curl -X POST -d "{\"password\":\"Tr0ub4dor3xyzq\"}" https://api.example.com/login"#;
    let path = transcript_with(
        &t.sb,
        &t.a,
        command,
        "Exit code 22\nHTTP 401",
        "the login still fails",
    );
    // The session edited a file too: the hook stores a draft only then.
    let edit = serde_json::json!({"type": "assistant", "uuid": "a3", "sessionId": "s", "timestamp": "2026-11-30T10:00:08.000Z",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Edit",
            "input": {"file_path": t.a.join("README").display().to_string()}}]}});
    let mut lines = std::fs::read_to_string(&path).unwrap();
    lines.push_str(&format!("{edit}\n"));
    std::fs::write(&path, lines).unwrap();
    hook(
        &t.sb,
        "session-end",
        &hook_input("SessionEnd", &path, &t.a),
        "2026-11-30T10:01:00Z",
    );
    let draft = json(&t.sb.git(&t.a, &["cat-file", "-p", "refs/handoffs/main"]));
    let commands = draft["state"]["commands"].to_string();
    assert!(commands.contains("curl -X POST"), "{draft}");
    assert!(!commands.contains("Tr0ub4dor3xyzq"), "{commands}");
    t.run(&t.a, &["push"]).success();
    assert!(t.remote_id("main").is_some(), "the draft was pushed");
    holds_none(&remote_text(&t), &["Tr0ub4dor3xyzq"], "the remote");
}

/// Issue 56, item 4: a history line that is a JSON array holding a
/// `\u`-escaped token, appended with plain git and fetched from one
/// remote, is not pushed to a second remote.
#[test]
fn an_escaped_token_in_a_non_object_history_line_is_not_pushed_on() {
    let t = team();
    // An empty second remote, added to A before anything is shared.
    let other = t.sb.path("other.git");
    t.sb.git(
        t.sb.dir.path(),
        &["init", "-q", "--bare", other.to_str().unwrap()],
    );
    let other_url = format!("file://{}", other.display());
    t.sb.git(&t.a, &["remote", "add", "other", &other_url]);
    // B shares a brief, then appends the line with plain git and pushes
    // the notes with plain git (no gate).
    t.write(&t.b, "k", "2026-11-30T09:00:00Z", "clean");
    t.run(&t.b, &["push"]).success();
    let line = format!(r#"["deploy with \u0067hp_{BODY}"]"#);
    t.sb.git(
        &t.b,
        &["notes", "--ref=handoffs", "append", "-m", &line, "HEAD"],
    );
    t.sb.git(&t.b, &["push", "-q", "origin", "refs/notes/handoffs"]);
    // A fetches it from origin, then pushes to the other remote.
    t.run(&t.a, &["fetch"]).success();
    assert!(
        t.sb.git(&t.a, &["notes", "--ref=handoffs", "show", "HEAD"])
            .contains(r"\u0067hp_"),
        "A holds the line"
    );
    let out = t.run(&t.a, &["push", "other"]).code(1);
    let text = stdout(&out);
    assert!(
        text.contains("history line holds secrets: a history line that is not a brief"),
        "{text}"
    );
    assert!(!text.contains(BODY), "{text}");
    let sent =
        t.sb.git_out(&other, &["cat-file", "--batch-all-objects", "--batch"]);
    holds_none(
        &String::from_utf8_lossy(&sent.stdout),
        &[BODY],
        "the other remote",
    );
    // `redact --history` removes it, whatever the line's shape.
    let out = t.run(&t.a, &["redact", "--history"]).success();
    assert!(stdout(&out).contains("github_token"), "{}", stdout(&out));
    let note = t.sb.git(&t.a, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert!(
        note.contains(r#"["deploy with [REDACTED:github_token]"]"#),
        "{note}"
    );
}

/// Issue 56, item 6: secrets in prose and on command lines, each as the
/// issue gives it, are stored redacted and refused by push when written
/// with `--no-redact`.
#[test]
fn secrets_in_prose_are_redacted_at_write_and_refused_at_push() {
    let prose = [
        ("the admin pass is Xy7kQ2vP9zLm", "Xy7kQ2vP9zLm"),
        ("the deploy key is 9fK2mQ7xLp4Wz8Rt", "9fK2mQ7xLp4Wz8Rt"),
        ("redis-cli -a Rd5xQ8mZ2pLk ping", "Rd5xQ8mZ2pLk"),
        (
            "az login -u ops@example.com -p Az3kQ9vP7zLw",
            "Az3kQ9vP7zLw",
        ),
        (
            "the password for the staging db is Tr0ub4dor-Horse-77",
            "Tr0ub4dor-Horse-77",
        ),
        ("mysql -uroot -pMy7kQ2vP9zRt", "My7kQ2vP9zRt"),
    ];
    let t = team();
    let secrets: Vec<&str> = prose.iter().map(|(_, s)| *s).collect();
    let mut extra = Vec::new();
    for (text, _) in &prose {
        extra.extend(["--decision", text]);
    }
    write_with(&t, "k", &extra, true);
    let stored = everything(&t.sb, &t.a);
    holds_none(&stored, &secrets, "the repository");
    assert!(stored.contains("the password for the staging db is [REDACTED:secret_assignment]"));
    let cases: Vec<(String, String)> = prose
        .iter()
        .map(|(text, secret)| (text.to_string(), secret.to_string()))
        .collect();
    refused_at_push(&t, &cases, "--decision");
    holds_none(&remote_text(&t), &secrets, "the remote");
}

/// What must pass untouched: the near misses the issue names, stored as
/// written.
#[test]
fn commands_and_words_beside_secret_words_are_stored_as_written() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let kept = [
        "cargo test -p git-handoff",
        "git log -p HEAD~3",
        "handoff.briefMaxLines",
        "the password is kept in the vault",
        "rotate the deploy key monthly",
        "sort by key",
        "pass the test suite",
    ];
    let mut args = write_args(None, ["cargo test", "carry on", "cargo test"], &[]);
    for text in &kept {
        args.extend(["--decision", text]);
    }
    args.push("--no-lint");
    let out = sb.handoff(&repo, &args).success();
    assert!(!stderr(&out).contains("redacted"), "{}", stderr(&out));
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
    let decisions: Vec<&str> = brief["state"]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(decisions, kept);
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert!(!note.contains("[REDACTED:"), "{note}");
}

/// Issue 56, "False positives, measured": the ordinary briefs of the
/// test corpus, the project's own docs and the demo's briefs show no
/// redaction. `docs/redaction.md` is about secrets: the examples it gives
/// of what is caught are redacted, and nothing else in it.
#[test]
fn ordinary_briefs_the_docs_and_the_demo_show_no_redaction() {
    use git_handoff::redact::{Options, redact};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> = ["docs", "tests/corpus", "tests/corpus/plans"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md" || e == "json"))
        .collect();
    files.extend(["README.md", "ARCHITECTURE.md"].map(|f| root.join(f)));
    assert!(files.len() > 30, "the corpus is there: {files:?}");
    // The example values docs/redaction.md gives of what is caught.
    let examples = [
        ":PW@host",
        "hunter2",
        "abc123DEF456ghi789",
        "Xy7kQ2vP9zLm",
        "Tr0ub4dor",
        "9fK2mQ7xLp4Wz8Rt",
        "7f3a9c2e1b8d4f6a0c5e",
        "parseV2Header",
    ];
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        let about_secrets = file.ends_with("docs/redaction.md");
        for line in text.lines() {
            let (out, counts) = redact(line, Options::default());
            if out != line {
                assert!(
                    about_secrets && examples.iter().any(|e| line.contains(e)),
                    "{}: {counts:?} in {line:?}",
                    file.display()
                );
            }
        }
    }
    // The demo's briefs, written by the tour.
    let sb = Sandbox::new();
    let (dir, out) = sb.demo_tour();
    assert!(!stdout(&out).contains("[REDACTED:"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("redacted"), "{}", stderr(&out));
    let app = dir.join("app");
    let briefs = sb.git(
        &app,
        &["for-each-ref", "--format=%(objectname)", "refs/handoffs/"],
    );
    assert!(!briefs.is_empty(), "the demo wrote briefs");
    for id in briefs.lines() {
        let brief = sb.git(&app, &["cat-file", "-p", id]);
        assert!(!brief.contains("[REDACTED:"), "{brief}");
    }
}
