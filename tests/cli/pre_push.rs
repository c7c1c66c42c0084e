//! `git handoff init --pre-push`: the pre-push hook that gates a plain
//! `git push` (issue 56.11): a handoff ref or history line with a secret is
//! refused, a push of code passes, an existing hook still runs, and where
//! `core.hooksPath` points elsewhere nothing is installed.

use std::path::Path;

use crate::support::*;

fn token() -> String {
    format!("ghp_{}", "Zq8xW2vN5m".repeat(4))
}

/// Store `text` as the blob of `name` with plain git, past write-time
/// redaction.
fn plain_ref(sb: &Sandbox, dir: &Path, name: &str, text: &str) {
    let blob = sb.git_stdin(dir, &["hash-object", "-w", "--stdin"], text);
    sb.git(dir, &["update-ref", name, blob.trim()]);
}

fn refused(out: &std::process::Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{what}: pushed: {err}");
    assert!(err.contains("error: pre-push: not pushed"), "{what}: {err}");
    assert!(
        !err.contains(&token()),
        "{what}: the secret is shown: {err}"
    );
    err
}

#[test]
fn a_plain_push_of_a_secret_is_refused_and_a_push_of_code_passes() {
    let t = team();
    let (sb, a) = (&t.sb, &t.a);
    let out = sb.handoff(a, &["init", "--pre-push"]).success();
    assert_stdout_has(&out, "set      pre-push hook");
    sb.commit(a, "src.txt", "code\n", "code");
    sb.git(a, &["push", "-q", "origin", "main"]);

    let brief = format!(
        "{{\"resume\": {{\"done_when\": \"run with {}\"}}}}",
        token()
    );
    plain_ref(sb, a, "refs/handoffs/leak", &brief);
    let err = refused(&sb.git_out(a, &["push", "--mirror", &t.url]), "--mirror");
    assert!(err.contains("refs/handoffs/leak version"), "{err}");
    assert!(err.contains("github_token"), "{err}");
    assert!(err.contains("--no-verify"), "{err}");
    assert_eq!(t.remote_id("leak"), None);
    sb.git(a, &["update-ref", "-d", "refs/handoffs/leak"]);

    plain_ref(sb, a, "refs/handoff-archive/old", &brief);
    let spec = "refs/handoff-archive/*:refs/handoff-archive/*";
    refused(&sb.git_out(a, &["push", "origin", spec]), "the archive");
    sb.git(a, &["update-ref", "-d", "refs/handoff-archive/old"]);

    let line = format!("[\"deploy with {}\"]", token());
    sb.git(a, &["notes", "--ref=handoffs", "add", "-m", &line, "HEAD"]);
    let err = refused(
        &sb.git_out(a, &["push", "origin", "refs/notes/handoffs"]),
        "the history",
    );
    assert!(err.contains("a history line that is not a brief"), "{err}");
    assert_eq!(t.id(&t.bare, "refs/notes/handoffs"), None);
    sb.git(a, &["update-ref", "-d", "refs/notes/handoffs"]);

    // What passes the gate goes: a clean brief by plain git, and git
    // handoff's own push (which the hook checks again).
    plain_ref(sb, a, "refs/handoffs/clean", "{\"resume\": {}}");
    sb.git(a, &["push", "-q", "origin", "refs/handoffs/clean"]);
    t.write(a, "feat", "2026-11-30T12:00:00Z", "cargo test passes");
    t.run(a, &["push"]).success();
    assert!(t.remote_id("feat").is_some());
    sb.commit(a, "src.txt", "more code\n", "more");
    sb.git(a, &["push", "-q", "--mirror", &t.url]);
}

#[test]
fn an_existing_hook_is_kept_and_runs_after_the_gate() {
    let t = team();
    let (sb, a) = (&t.sb, &t.a);
    let seen = sb.path("seen");
    let hook = a.join(".git/hooks/pre-push");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho \"$@\" > '{0}'\ncat >> '{0}'\nexit \"${{HOOK_EXIT:-0}}\"\n",
            seen.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.handoff(a, &["init", "--pre-push"]).success();
    let out = sb.handoff(a, &["init", "--pre-push"]).success();
    assert_stdout_has(&out, "the secret gate, then pre-push.before-handoff");
    assert!(a.join(".git/hooks/pre-push.before-handoff").is_file());

    sb.commit(a, "src.txt", "code\n", "code");
    sb.git(a, &["push", "-q", "origin", "main"]);
    let seen_text = std::fs::read_to_string(&seen).unwrap();
    let head = sb.git(a, &["rev-parse", "HEAD"]);
    assert!(
        seen_text.starts_with(&format!("origin {}\n", t.url)),
        "{seen_text}"
    );
    assert!(
        seen_text.contains(&format!("refs/heads/main {} refs/heads/main", head.trim())),
        "{seen_text}"
    );
    // its answer is still the hook's answer
    sb.commit(a, "src.txt", "more\n", "more");
    let mut push = sb.command("git", a);
    push.env("HOOK_EXIT", "3")
        .args(["push", "-q", "origin", "main"]);
    assert!(!push.output().unwrap().status.success());
    // the gate comes first: a refused push never reaches it
    std::fs::remove_file(&seen).unwrap();
    plain_ref(sb, a, "refs/handoffs/leak", &format!("\"{}\"", token()));
    refused(
        &sb.git_out(a, &["push", "origin", "refs/handoffs/leak"]),
        "chained",
    );
    assert!(!seen.exists());
}

#[test]
fn with_core_hooks_path_nothing_is_installed_and_the_line_is_printed() {
    let t = team();
    let (sb, a) = (&t.sb, &t.a);
    sb.git(a, &["config", "core.hooksPath", ".githooks"]);
    let out = sb.handoff(a, &["init", "--pre-push"]).code(1);
    let text = stdout(&out);
    let line = "git handoff hook pre-push \"$@\" || exit 1";
    assert!(text.contains("blocked  pre-push hook"), "{text}");
    assert!(text.contains(line), "{text}");
    assert!(!a.join(".git/hooks/pre-push").exists());
    assert!(!a.join(".githooks").exists());
    sb.handoff(a, &["init", "--check", "--pre-push"]).code(1);

    // the printed line, added to the user's own hook, gates the push
    std::fs::create_dir(a.join(".githooks")).unwrap();
    let hook = a.join(".githooks/pre-push");
    std::fs::write(&hook, format!("#!/bin/sh\n{line}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = sb.handoff(a, &["init", "--check", "--pre-push"]);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("ok ") && l.contains("pre-push runs the secret gate")),
        "{text}"
    );
    plain_ref(sb, a, "refs/handoffs/leak", &format!("\"{}\"", token()));
    refused(&sb.git_out(a, &["push", "--mirror", &t.url]), "hooksPath");
}

#[test]
fn init_check_reports_the_hook() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["init"]).success();
    let out = sb.handoff(&repo, &["init", "--check"]).success();
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l.starts_with("ok ")
            && l.contains("pre-push hook")
            && l.contains("not installed (optional)")),
        "{text}"
    );
    sb.handoff(&repo, &["init", "--check", "--pre-push"])
        .code(1);
    sb.handoff(&repo, &["init", "--pre-push"]).success();
    let out = sb.handoff(&repo, &["init", "--check", "--json"]).success();
    let v = json(&stdout(&out));
    let row = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pre-push hook")
        .cloned()
        .unwrap();
    assert_eq!(row["status"], "ok", "{v}");
    assert_eq!(row["detail"], "the secret gate", "{v}");
}
