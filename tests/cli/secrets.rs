//! Secrets never leave: whatever a brief is given, no ref, note, object or
//! file written by git-handoff holds a secret; `redact --history` cleans a
//! history written with `--no-redact`.

use std::path::Path;

use crate::support::*;

/// One value of each kind, as an agent might paste it.
fn secrets() -> Vec<(&'static str, String)> {
    vec![
        ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAsecretkeymaterial\n-----END RSA PRIVATE KEY-----".into()),
        ("aws_access_key_id", "AKIAR7WBZKD3UQ5NXM6L".into()),
        ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into()),
        ("github_token", format!("ghp_{}", "Zq8xW2vN5m".repeat(4))),
        ("github_token", "github_pat_11ABCDEFG0123456789_Zq8xW2vN5mKp3Lr7Ty1Uw4".into()),
        ("gitlab_token", "glpat-Abcdefghij1234567890".into()),
        ("slack_token", "xoxb-1234567890-abcdefghijkl".into()),
        ("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc".into()),
        ("google_api_key", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI".into()),
        ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".into()),
        ("bearer_token", "Authorization: Bearer tok3nV4lueQ9zX7".into()),
        ("url_credentials", "https://alice:hunter2pass@example.com/repo.git".into()),
        ("secret_assignment", "password=Tr0ub4dor&3xyz".into()),
        ("email", "jane.doe@corp.example.com".into()),
    ]
}

/// The part of a sample that must never appear.
fn needle(kind: &str, sample: &str) -> String {
    match kind {
        "private_key" => "secretkeymaterial".into(),
        "aws_secret_key" => "wJalrXUtnFEMI/K7MDENG".into(),
        "bearer_token" => "tok3nV4lueQ9zX7".into(),
        "url_credentials" => "hunter2pass".into(),
        "secret_assignment" => "Tr0ub4dor".into(),
        _ => sample.to_string(),
    }
}

/// Every object reachable from any ref or the reflogs, and every file in
/// the worktree and the git dir, as text.
pub(crate) fn everything(sb: &Sandbox, repo: &Path) -> String {
    let mut all = String::new();
    let objects = sb.git(repo, &["rev-list", "--all", "--reflog", "--objects"]);
    for line in objects.lines() {
        let id = line.split_whitespace().next().unwrap();
        let out = sb.git_out(repo, &["cat-file", "-p", id]);
        all.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    // blobs the refs point at directly (refs/handoffs/*)
    for id in sb
        .git(repo, &["for-each-ref", "--format=%(objectname)"])
        .lines()
    {
        all.push_str(&String::from_utf8_lossy(
            &sb.git_out(repo, &["cat-file", "-p", id]).stdout,
        ));
    }
    fn files(dir: &Path, out: &mut String) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if let Ok(text) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&text));
            }
        }
    }
    files(repo, &mut all);
    all
}

#[test]
fn no_secret_of_any_kind_lands_anywhere() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut args: Vec<String> = [
        "write",
        "--done-when",
        "cargo test passes",
        "--resume-by",
        "rotate keys",
        "--next-check",
        "cargo test",
    ]
    .map(String::from)
    .to_vec();
    for (_, s) in secrets() {
        args.push("--decision".into());
        args.push(format!("found {s} in the logs"));
    }
    let narrative = sb.path("entry.md");
    std::fs::write(
        &narrative,
        format!(
            "### Surprises / lessons\n- the token {} was in .env\n",
            secrets()[3].1
        ),
    )
    .unwrap();
    args.extend([
        "--narrative".into(),
        narrative.display().to_string(),
        "--no-lint".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.handoff(&repo, &args).success();
    let err = stderr(&out);
    assert!(err.contains("secrets redacted"), "{err}");
    for (kind, sample) in secrets() {
        assert!(
            !err.contains(&needle(kind, &sample)),
            "stderr echoes {kind}"
        );
    }
    // a split and a recover with secrets too
    let plan = serde_json::json!({"why": format!("split {}", secrets()[7].1),
        "shared": {"state": {"decisions": [secrets()[6].1]}},
        "threads": [{"key": "a", "resume": {"done_when": "cargo test a", "resume_by": "a"}, "state": {"next_acceptance_check": "cargo test a", "open_risks": [secrets()[1].1]}}]});
    sb.handoff_with(
        &repo,
        &["split", "--plan", "-", "--yes", "--no-lint"],
        Some(&plan.to_string()),
    )
    .success();
    sb.handoff(
        &repo,
        &["recover", "a", "--risk", &secrets()[9].1, "--no-lint"],
    )
    .success();
    let all = everything(&sb, &repo);
    assert!(
        all.contains("[REDACTED:github_token]"),
        "the check reads what was written"
    );
    for (kind, sample) in secrets() {
        assert!(
            !all.contains(&needle(kind, &sample)),
            "{kind} leaked into the repository"
        );
    }
}

#[test]
fn no_redact_warns_and_redact_history_cleans_every_version() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let out = sb
        .write_brief(
            &repo,
            None,
            ["cargo test", "r", "cargo test x"],
            &[
                "--decision",
                &format!("use {token}"),
                "--no-redact",
                "--no-lint",
            ],
        )
        .success();
    assert_stderr_has(&out, "warning: --no-redact");
    sb.write_brief(
        &repo,
        None,
        ["cargo test", "r2", "cargo test x"],
        &["--no-lint"],
    )
    .success();
    assert!(everything(&sb, &repo).contains(&token), "stored as given");

    let out = stdout(
        &sb.handoff(&repo, &["redact", "--history", "--dry-run"])
            .success(),
    );
    assert!(out.contains("would rewrite"), "{out}");
    assert!(
        everything(&sb, &repo).contains(&token),
        "a dry run changes nothing"
    );

    let out = stdout(&sb.handoff(&repo, &["redact", "--history"]).success());
    assert!(
        out.contains("REWRITES refs/notes/handoffs"),
        "said plainly: {out}"
    );
    assert!(
        !sb.git(&repo, &["log", "-p", "refs/notes/handoffs"])
            .contains(&token)
    );
    // the old chain is only in the reflog, as the output says; expire it
    sb.git(&repo, &["reflog", "expire", "--expire=now", "--all"]);
    sb.git(&repo, &["gc", "-q", "--prune=now"]);
    // the narrative (a working-tree file written by --no-redact) still has it
    std::fs::remove_dir_all(repo.join(".claude")).unwrap();
    let all = everything(&sb, &repo);
    assert!(!all.contains(&token), "gone from every object");
    assert!(all.contains("[REDACTED:github_token]"));
    // both versions are still in the history
    assert_eq!(
        brief_lines(&sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"])).len(),
        2
    );
}

#[test]
fn strict_lint_writes_nothing_and_warnings_never_block() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let vague = [
        "write",
        "--done-when",
        "finish",
        "--resume-by",
        "r",
        "--next-check",
        "tests pass",
    ];
    let out = sb.handoff(&repo, &vague).success();
    let err = stderr(&out);
    assert!(
        err.contains("warning: [main] resume.done_when: vague-check"),
        "{err}"
    );
    assert!(
        err.contains("warning: [main] state.next_acceptance_check: vague-check"),
        "{err}"
    );
    sb.handoff(&repo, &["drop", "main"]).success();
    let before = handoff_refs(&sb, &repo);
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let mut strict = vague.to_vec();
    strict.push("--strict");
    let out = sb.handoff(&repo, &strict).code(1);
    assert!(
        stderr(&out)
            .lines()
            .last()
            .unwrap()
            .contains("lint is strict; nothing was written"),
        "{}",
        stderr(&out)
    );
    assert_eq!(handoff_refs(&sb, &repo), before);
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap(),
        narrative
    );
    sb.git(&repo, &["config", "handoff.strict", "true"]);
    sb.handoff(&repo, &vague).code(1);
    let mut skip = vague.to_vec();
    skip.push("--no-lint");
    let out = sb.handoff(&repo, &skip).success();
    assert!(!stderr(&out).contains("vague-check"));
    // split and recover lint too
    let plan = r#"{"why":"w","shared":{},"threads":[{"key":"t","resume":{"done_when":"done","resume_by":"r"},"state":{"next_acceptance_check":"cargo test t"}}]}"#;
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(plan))
        .code(1);
    assert_stderr_has(&out, "[t] resume.done_when: vague-check");
    sb.handoff(&repo, &["recover", "--done-when", "finish"])
        .code(1);
}

#[test]
fn a_key_holding_a_secret_is_refused_by_split_and_import_never_echoed() {
    // Issue 15, item 3 (b): a key becomes a ref name and part of every
    // history line; it is refused by every way in, naming the rule.
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let token = token.as_str();
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let plan = format!(
        r#"{{"why":"w","threads":[{{"key":"{token}","resume":{{"done_when":"d","resume_by":"r"}},"state":{{"next_acceptance_check":"c"}}}}]}}"#
    );
    let out = sb
        .handoff_with(
            &repo,
            &["split", "--plan", "-", "--yes", "--no-lint"],
            Some(&plan),
        )
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains(
            "thread 1 '[REDACTED:github_token]':\n  - key: the key holds a secret (github_token)"
        ),
        "{err}"
    );
    assert!(!err.contains(token), "{err}");
    assert_eq!(handoff_refs(&sb, &repo), "");

    let dir = sb.path("import");
    std::fs::create_dir_all(&dir).unwrap();
    let brief = format!(
        r#"{{"schema_version":"1","key":"{token}","timestamp":"2026-11-30T00:00:00Z","mode":"WRITE","resume":{{"done_when":"d","resume_by":"r"}},"state":{{"branch":"main","next_acceptance_check":"c","worktree":{{"root":"/x","is_linked":false,"git_common_dir":"/x/.git"}}}}}}"#
    );
    std::fs::write(dir.join(format!("{token}.json")), brief).unwrap();
    let out = sb
        .handoff(&repo, &["import", dir.to_str().unwrap()])
        .code(1);
    assert_stdout_has(
        &out,
        "the key holds a secret (github_token); nothing was written",
    );
    assert_eq!(handoff_refs(&sb, &repo), "");
    assert_eq!(sb.git(&repo, &["for-each-ref", "refs/notes"]), "");
}

/// Issue 30, item 1: the shapes that passed round 2, each with the part
/// that must never be stored or sent.
fn round_three() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "cache at redis://:Rt7pQ2xLm9vK@cache.internal:6379/0",
            "Rt7pQ2xLm9vK",
        ),
        (
            "queue amqp://:Hq4wZ8nB2cXy@mq.internal/vhost",
            "Hq4wZ8nB2cXy",
        ),
        (
            "aws configure: AKIAR7WBZKD3UQ5NXM6L Bq9dV2xK7mN4pL8sT3wY6zA1cE5fH0jR2uG7iO9k",
            "Bq9dV2xK7mN4pL8sT3wY6zA1cE5fH0jR2uG7iO9k",
        ),
        ("refund to GB82 WEST 1234 5698 7654 32 today", "5698 7654"),
        ("refund to DE89370400440532013000", "DE89370400440532013000"),
        ("NI number AB 12 34 56 C on the form", "AB 12 34 56 C"),
        ("NI JG103759A", "JG103759A"),
        ("the staging password is hunter2", "hunter2"),
        ("login with password hunter2x on staging", "hunter2x"),
        (
            "docker login -u ci -p Dk8vQ2mZ registry.example.com",
            "Dk8vQ2mZ",
        ),
        ("mysql -u root -pMy5qlPw0rd shop", "My5qlPw0rd"),
        ("mysql -h db -u root -p Sq7lXw2k shop", "Sq7lXw2k"),
    ]
}

#[test]
fn round_three_shapes_are_redacted_on_write_and_refused_by_push() {
    let t = team();
    let mut args = vec![
        "write",
        "k",
        "--done-when",
        "cargo test passes",
        "--resume-by",
        "rotate",
        "--next-check",
        "cargo test",
        "--no-lint",
    ];
    for (text, _) in round_three() {
        args.extend(["--decision", text]);
    }
    t.sb.handoff(&t.a, &args).success();
    let all = everything(&t.sb, &t.a);
    for (text, secret) in round_three() {
        assert!(!all.contains(secret), "{secret} stored from {text:?}");
    }
    // Untouched around them: the URL's host, the key id's neighbours.
    assert!(all.contains("@cache.internal:6379/0"), "the host stays");

    // Written with --no-redact, none of it leaves.
    args[1] = "raw";
    args.push("--no-redact");
    t.sb.handoff(&t.a, &args).success();
    let out = t.sb.handoff(&t.a, &["push"]).code(1);
    assert!(stdout(&out).contains("refused: raw"), "{}", stdout(&out));
    let remote = String::from_utf8_lossy(
        &t.sb
            .git_out(&t.bare, &["cat-file", "--batch-all-objects", "--batch"])
            .stdout,
    )
    .into_owned();
    for (text, secret) in round_three() {
        assert!(
            !remote.contains(secret),
            "{secret} reached the remote ({text:?})"
        );
    }
}

/// What must stay as written beside the new shapes: an IBAN-shaped id
/// whose check digits are wrong, NI-shaped codes with prefixes HMRC never
/// issues, a password word in prose, `-p` of other commands.
#[test]
fn round_three_near_misses_are_kept() {
    use git_handoff::redact::{Options, redact};
    for text in [
        "ref GB00 WEST 1234 5698 7654 32",
        "codes QQ123456C, BG123456A, AB123456E",
        "the password is required",
        "reset the password field",
        "mkdir -p build && cargo test -p git-handoff",
        "mysql -u root -p",
        "redis://cache.internal:6379/0",
        "https://example.com:8443/path",
    ] {
        let (out, counts) = redact(text, Options::default());
        assert_eq!(out, text, "{counts:?}");
    }
}

/// Issue 30, items 2 and 11: what git-handoff prints from a file it
/// wrote (a hand edit may have put a secret in it since) and every line
/// about user data it prints (file names, keys, schema messages, error
/// lines) pass the redaction filter; stderr says what was redacted.
#[test]
fn printed_text_about_user_data_is_redacted() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let token = token.as_str();
    let no_secret = |out: &assert_cmd::assert::Assert, what: &str| {
        let all = format!("{}{}", stdout(out), stderr(out));
        assert!(!all.contains(token), "{what} printed the token: {all}");
        all
    };

    // summary latest, after a hand edit of the summary.
    sb.handoff(
        &repo,
        &["summary", "new", "--template", "task", "--task", "deploy"],
    )
    .success();
    let memory = repo.join(".claude/memory");
    let path = std::fs::read_dir(&memory)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "## Key Context for Continuation\n—\n",
            &format!("## Key Context for Continuation\n- deploy with {token}\n"),
        ),
    )
    .unwrap();
    let out = sb.handoff(&repo, &["summary", "latest"]).success();
    let all = no_secret(&out, "summary latest");
    assert!(all.contains("deploy with [REDACTED:github_token]"), "{all}");
    assert!(all.contains("1 secret redacted (1 github_token)"), "{all}");

    // pipeline show and list, after a hand edit of the template.
    sb.handoff(&repo, &["pipeline", "save", "ship"]).success();
    let template = repo.join(".claude/pipelines/ship.md");
    let text = std::fs::read_to_string(&template).unwrap();
    std::fs::write(
        &template,
        text.replacen(
            "## When to use\n",
            &format!("## When to use\nrun with {token}\n"),
            1,
        ),
    )
    .unwrap();
    for args in [
        &["pipeline", "show", "ship"][..],
        &["pipeline", "show", "ship", "--json"],
        &["pipeline", "list"],
    ] {
        let out = sb.handoff(&repo, args).success();
        no_secret(&out, &args.join(" "));
    }

    // import: a file named after a token, not a brief.
    let dir = sb.path("in");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{token}.json")), "{\"key\": 1}").unwrap();
    for args in [
        &["import", dir.to_str().unwrap()][..],
        &["import", dir.to_str().unwrap(), "--json"],
    ] {
        let out = sb.handoff(&repo, args).code(1);
        let all = no_secret(&out, &args.join(" "));
        assert!(all.contains("[REDACTED:github_token].json"), "{all}");
    }

    // validate: a schema message quoting the value it refused.
    let bad = serde_json::json!({"resume": {"done_when": ["use", token]}}).to_string();
    let out = sb
        .handoff_with(&repo, &["validate", "-"], Some(&bad))
        .code(1);
    no_secret(&out, "validate");

    // An error line quoting what it was given.
    let out = sb.handoff(&repo, &["show", token]).code(1);
    no_secret(&out, "show");
}

/// A Claude Code transcript in `repo` whose session ran `command` (output
/// `output`, exit 1) and whose last words are `words`.
pub(crate) fn transcript_with(
    sb: &Sandbox,
    repo: &Path,
    command: &str,
    output: &str,
    words: &str,
) -> String {
    let dir = repo.display().to_string();
    let lines = [
        serde_json::json!({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": dir, "timestamp": "2026-11-30T10:00:00.000Z",
               "message": {"role": "user", "content": "fix the deploy"}}),
        serde_json::json!({"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp": "2026-11-30T10:00:05.000Z",
               "message": {"role": "assistant", "content": [
                   {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}]}}),
        serde_json::json!({"type": "user", "uuid": "u2", "sessionId": "s", "timestamp": "2026-11-30T10:00:06.000Z",
               "message": {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1", "content": output, "is_error": true}]}}),
        serde_json::json!({"type": "assistant", "uuid": "a2", "sessionId": "s", "timestamp": "2026-11-30T10:00:07.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": words}]}}),
    ];
    let path = sb.path("cut.jsonl");
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    path.display().to_string()
}

/// Issue 48.1: text is redacted whole before any cut. A token the 300
/// characters of the last words cut one short, and a private key whose
/// BEGIN line is not among the output lines kept, no longer match their
/// rules once cut: neither part may be printed, stored or pushed.
#[test]
fn a_draft_redacts_before_it_cuts() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let words = format!("{} {token} was the deploy token", "word ".repeat(57));
    let body: String = (0..30)
        .map(|i| format!("line{i}AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/\n"))
        .collect();
    let output = format!(
        "deploy failed\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7vQ0vH3xK2mL9pN8qR5sT1uV6wX4yZ0aB3cD7eF9gH2iJ5kL8mN\n{body}-----END RSA PRIVATE KEY-----\nERROR: key rejected\n"
    );
    let path = transcript_with(&sb, &repo, "./deploy.sh", &output, &words);
    let out = sb.handoff(&repo, &["draft", "--json", &path]).success();
    let text = stdout(&out);
    assert!(!text.contains("ghp_a1B2"), "{text}");
    assert!(
        !text.contains("line29AbCd") && !text.contains("MIIEow"),
        "{text}"
    );
    sb.handoff(&repo, &["draft", "--write", &path]).success();
    assert!(!everything(&sb, &repo).contains("ghp_a1B2"));
}

/// Issue 48.2: a brief whose JSON repeats a field is refused at every
/// entry, by the field's path, and the gate reads the raw bytes: the
/// first value, which a parsed reading drops, holds a token.
#[test]
fn a_repeated_field_is_refused_everywhere_and_hides_nothing_from_the_gate() {
    let t = team();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let partial = format!(
        r#"{{"resume":{{"done_when":"d","resume_by":"{token}","resume_by":"ok"}},"state":{{"next_acceptance_check":"c"}}}}"#
    );
    let file = t.sb.path("dup.json");
    std::fs::write(&file, &partial).unwrap();
    let f = file.to_str().unwrap();
    // write and validate name the field; nothing is written.
    let out = t.run(&t.a, &["write", "k", "-F", f]).code(1);
    assert_stderr_has(&out, "repeats the field resume.resume_by");
    assert_eq!(t.id(&t.a, "refs/handoffs/k"), None);
    let out = t.run(&t.a, &["validate", f]).code(1);
    assert_stderr_has(
        &out,
        "  - resume.resume_by: this field appears twice in its object",
    );
    // A stored brief (put there by hand) with the token hidden first:
    // redact finds it, and rewrites the brief without it.
    t.write(&t.a, "k", "2026-11-30T09:00:00Z", "d");
    let stored = t.sb.git(&t.a, &["cat-file", "-p", "refs/handoffs/k"]);
    let hidden = stored.replacen(
        "\"resume_by\": \"carry on\"",
        &format!("\"resume_by\": \"{token}\", \"resume_by\": \"carry on\""),
        1,
    );
    assert_ne!(hidden, stored);
    let blob =
        t.sb.git_stdin(&t.a, &["hash-object", "-w", "--stdin"], &hidden);
    t.sb.git(&t.a, &["update-ref", "refs/handoffs/k", blob.trim()]);
    let out = t.run(&t.a, &["redact", "--dry-run"]).success();
    assert!(
        !stdout(&out).contains("no secrets found"),
        "{}",
        stdout(&out)
    );
    // push never sends it: the gate reads the raw bytes.
    t.run(&t.a, &["push"]);
    assert!(t.remote_id("k").is_none_or(|id| id != blob.trim()));
    let all =
        t.sb.git_out(&t.bare, &["cat-file", "--batch-all-objects", "--batch"]);
    assert!(!String::from_utf8_lossy(&all.stdout).contains(&token));
    // A remote brief with a repeated field is never taken.
    let theirs = hidden.replacen("\"key\": \"k\"", "\"key\": \"other\"", 1);
    assert_ne!(theirs, hidden);
    let id =
        t.sb.git_stdin(&t.bare, &["hash-object", "-w", "--stdin"], &theirs);
    t.sb.git(&t.bare, &["update-ref", "refs/handoffs/other", id.trim()]);
    let out = t.run(&t.b, &["fetch"]);
    assert_stdout_has(&out, "ignored: other (");
    assert_eq!(t.id(&t.b, "refs/handoffs/other"), None);
}

/// Issues 48.3 and 48.4: a remote key that holds a secret is stored
/// nowhere here, not even staged (fetch says so), and a name printed — a
/// remote's bookkeeping ref, a transcript's path — passes the gate.
#[test]
fn a_secret_in_a_name_is_never_stored_nor_printed() {
    let t = team();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let id =
        t.sb.git_stdin(&t.bare, &["hash-object", "-w", "--stdin"], "{}\n");
    t.sb.git(
        &t.bare,
        &["update-ref", &format!("refs/handoffs/{token}"), id.trim()],
    );
    t.sb.git(
        &t.bare,
        &[
            "update-ref",
            &format!("refs/handoff-fetch/{token}/briefs/x"),
            id.trim(),
        ],
    );
    let out = t.run(&t.a, &["fetch"]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains("the key holds a secret; nothing taken, never stored here"),
        "{text}"
    );
    assert!(!text.contains("a1B2c3D4"), "{text}");
    let json = stdout(&t.run(&t.a, &["fetch", "--json"]));
    assert!(!json.contains("a1B2c3D4"), "{json}");
    assert!(!t.refs(&t.a).contains("a1B2c3D4"), "{}", t.refs(&t.a));
    // A plain `git fetch` through init's refspecs stages what git brings;
    // the next git-handoff command takes the name out again.
    t.run(&t.a, &["init"]).success();
    t.sb.git(&t.a, &["fetch", "-q", "origin"]);
    t.run(&t.a, &["fetch"]);
    assert!(!t.refs(&t.a).contains("a1B2c3D4"), "{}", t.refs(&t.a));
    let out = t.run(&t.a, &["init", "--check"]);
    assert!(!stdout(&out).contains("a1B2c3D4"), "{}", stdout(&out));

    // A transcript in a folder named after a token: its path is printed
    // redacted.
    let dir = t.sb.path(&token);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.jsonl");
    let line = serde_json::json!({"type": "user", "uuid": "u1", "sessionId": "s", "cwd": t.a.display().to_string(), "timestamp": "2026-11-30T10:00:00.000Z",
        "message": {"role": "user", "content": "hello"}});
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let out = t.run(&t.a, &["draft", path.to_str().unwrap()]).success();
    assert!(!stdout(&out).contains("a1B2c3D4"), "{}", stdout(&out));
}

/// `brief --see-narrative` names a narrative heading, from a file anyone
/// may edit: the subagent brief is redacted with the heading in it.
#[test]
fn a_narrative_reference_in_a_subagent_brief_is_redacted() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let flags = ["cargo test passes", "go on", "cargo test"];
    sb.write_brief(&repo, Some("api"), flags, &["--no-lint"])
        .success();
    let path = repo.join(".claude/PROJECT_STATE.md");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("— [api] go on", &format!("— [api] go on with {token}"), 1);
    assert_ne!(edited, text);
    std::fs::write(&path, edited).unwrap();
    let out = sb
        .handoff(&repo, &["brief", "api", "--see-narrative"])
        .success();
    assert!(!stdout(&out).contains(&token), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("go on with [REDACTED"),
        "{}",
        stdout(&out)
    );
}

/// Issue 56.7 and 56.10: `redact --history` reaches the archived briefs,
/// and after it and the cleanup it prints no file of the git dir holds
/// the secret: neither the list cache (filled by `list`), nor the history
/// index (built by `log`), nor anything else the tool wrote. Before it,
/// every read redacts: `list`, `list --archived` and the cache itself.
#[test]
fn redact_history_reaches_the_archive_and_leaves_no_copy_in_any_cache() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let done = format!("cargo test passes with {token}");
    for key in ["live", "old"] {
        sb.write_brief(
            &repo,
            Some(key),
            [&done, "r", "cargo test x"],
            &["--no-redact", "--no-lint"],
        )
        .success();
    }
    sb.archive(&repo, "old");
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["list", "--archived"],
        &["list", "--archived", "--json"],
    ] {
        let out = stdout(&sb.handoff(&repo, args).success());
        assert!(!out.contains(&token), "{args:?}: {out}");
        assert!(out.contains("[REDACTED:github_token]"), "{args:?}: {out}");
    }
    // the history index, built by a read of one key's versions
    sb.handoff(&repo, &["log", "live"]).success();
    let git_dir = repo.join(".git");
    assert_eq!(
        files_holding(&git_dir, &token)
            .iter()
            .filter(|p| p.ends_with("handoff-list.cache"))
            .count(),
        0,
        "the list cache holds filtered text"
    );

    let out = stdout(&sb.handoff(&repo, &["redact", "--history"]).success());
    assert!(out.contains("live, old (archived)"), "{out}");
    assert!(
        !sb.git(&repo, &["cat-file", "-p", "refs/handoff-archive/old"])
            .contains(&token)
    );
    sb.git(&repo, &["reflog", "expire", "--expire=now", "--all"]);
    sb.git(&repo, &["gc", "-q", "--prune=now"]);
    assert_eq!(
        files_holding(&git_dir, &token),
        Vec::<std::path::PathBuf>::new()
    );
    let out = stdout(&sb.handoff(&repo, &["redact", "--history"]).success());
    assert!(out.contains("Briefs: no secrets found."), "{out}");
}

/// Issue 56.7: an archived brief that holds a secret (archived before a
/// rule existed, or written with `--no-redact`) comes back redacted from
/// `restore`, and the MCP `list` tool's archived view shows none of it.
#[tokio::test]
async fn restore_and_the_mcp_archived_list_redact_on_read() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    sb.write_brief(
        &repo,
        Some("old"),
        [
            &format!("cargo test passes with {token}"),
            "r",
            "cargo test x",
        ],
        &["--no-redact", "--no-lint"],
    )
    .success();
    sb.archive(&repo, "old");
    let client = crate::mcp::connect(&sb, &repo, &[]).await;
    let listed = crate::mcp::call(&client, "list", serde_json::json!({"archived": true})).await;
    let listed = serde_json::to_string(&listed).unwrap();
    assert!(!listed.contains(&token), "{listed}");
    assert!(listed.contains("[REDACTED:github_token]"), "{listed}");
    client.cancel().await.unwrap();

    let out = stdout(&sb.handoff(&repo, &["restore", "old"]).success());
    assert!(out.contains("1 secret redacted (1 github_token)"), "{out}");
    let brief = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/old"]);
    assert!(!brief.contains(&token), "{brief}");
    assert!(brief.contains("[REDACTED:github_token]"), "{brief}");
}

/// A teammate's brief that reached the remote with a secret in it (pushed
/// with plain git, past push's gate) is fetched as it was pushed; what
/// `resume`, the bare `git handoff`, `reground` and `log` print of it
/// passes the redaction rules once more: people and agents read those.
#[test]
fn a_teammates_secret_is_never_printed_by_resume_reground_or_log() {
    let t = team();
    let token = "ghp_Zq8xW2vN5mZq8xW2vN5mZq8xW2vN5mZq8xW2vN5m";
    t.push_secret_with_git("k1", token);
    t.sb.handoff(&t.b, &["fetch"]).success();
    for args in [
        &["resume", "k1"][..],
        &[],
        &["reground", "k1"],
        &["resume", "k1", "--json"],
        &["log", "k1"],
        &["log", "k1", "--graph"],
    ] {
        let out = t.sb.handoff(&t.b, args).success();
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!text.contains(token), "{args:?}: {text}");
        assert!(
            text.contains("[REDACTED:github_token]") || args.is_empty(),
            "{args:?}: {text}"
        );
    }
}
