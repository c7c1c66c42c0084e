//! `recover` and the sticky key, end to end in real repositories.

use crate::support::*;
use serde_json::Value;

fn brief(sb: &Sandbox, dir: &std::path::Path, key: &str) -> Value {
    json(&sb.git(dir, &["cat-file", "-p", &format!("refs/handoffs/{key}")]))
}

/// `VERB --done-when d --resume-by r --next-check c --no-lint`: placeholder
/// values, which lint would warn about and these tests do not check.
fn placeholders(verb: &str) -> Vec<&str> {
    let mut args = write_args(None, ["d", "r", "c"], &["--no-lint"]);
    args[0] = verb;
    args
}

#[test]
fn recover_after_commits_refreshes_head_sha_and_keeps_decisions_without_touching_the_narrative() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    let before = brief(&sb, &repo, "main");
    let narrative = std::fs::read(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    // Commit the narrative like any other file, then move on.
    sb.git(&repo, &["add", ".claude"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative"]);
    sb.commit(&repo, "src/auth.rs", "fn verify() {}\n", "auth");
    std::fs::write(repo.join("src/auth.rs"), "fn verify() { todo!() }\n").unwrap();
    let head = sb.git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_ne!(before["state"]["head_sha"], head.as_str());

    let out = sb
        .command("git", &repo)
        .args(["handoff", "recover"])
        .env("GIT_HANDOFF_NOW", "2026-12-01T08:00:00Z")
        .output()
        .unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Recovered brief 'main'"), "{text}");
    assert!(text.contains("git handoff resume main"), "{text}");

    let after = brief(&sb, &repo, "main");
    assert_eq!(after["mode"], "RECOVER");
    assert_eq!(after["timestamp"], "2026-12-01T08:00:00Z");
    assert_eq!(after["state"]["head_sha"], head.as_str());
    assert_eq!(
        after["state"]["diff_summary"],
        "1 file changed, 1 insertion(+), 1 deletion(-)"
    );
    assert_eq!(after["state"]["decisions"], before["state"]["decisions"]);
    assert_eq!(
        after["state"]["rejected_paths"],
        before["state"]["rejected_paths"]
    );
    assert_eq!(after["files_read_first"], before["files_read_first"]);
    assert_eq!(after["resume"], before["resume"]);
    // The narrative is byte-identical and the working tree has no new change
    // besides the edit made above.
    assert_eq!(
        std::fs::read(repo.join(".claude/PROJECT_STATE.md")).unwrap(),
        narrative
    );
    assert_eq!(
        sb.git(&repo, &["status", "--porcelain"]),
        " M src/auth.rs\n"
    );
    // The recovered version is in the history, on the note of the new HEAD.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(json(brief_lines(&note)[0]), after);
}

#[test]
fn recover_takes_corrections_from_json_and_flags() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    let fix = r#"{"resume":{"resume_by":"rewrite verify() instead"},"state":{"open_risks":["none left"]}}"#;
    let out = sb
        .handoff_with(
            &repo,
            &[
                "recover",
                "main",
                "-F",
                "-",
                "--decision",
                "drop leeway",
                "--next-check",
                "cargo test verify",
                "--json",
            ],
            Some(fix),
        )
        .success();
    let report = json(&stdout(&out));
    assert_eq!(report["key"], "main");
    assert_eq!(report["mode"], "RECOVER");
    assert!(report["previous"].is_string());
    let after = brief(&sb, &repo, "main");
    assert_eq!(after["resume"]["resume_by"], "rewrite verify() instead");
    assert_eq!(after["resume"]["done_when"], "cargo test auth passes");
    assert_eq!(after["state"]["next_acceptance_check"], "cargo test verify");
    // JSON lists replace, flag lists append.
    assert_eq!(
        after["state"]["open_risks"],
        serde_json::json!(["none left"])
    );
    assert_eq!(
        after["state"]["decisions"],
        serde_json::json!([
            "use <= not < — the expiry second is still valid",
            "drop leeway"
        ])
    );
}

#[test]
fn recover_without_a_stored_brief_needs_the_required_fields() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let out = sb.handoff(&repo, &["recover", "--done-when", "d"]).code(1);
    let err = stderr(&out);
    assert!(err.contains("no stored brief for 'main'"), "{err}");
    assert!(
        err.contains("resume.resume_by, state.next_acceptance_check missing"),
        "{err}"
    );
    assert!(err.lines().last().unwrap().starts_with("error: "), "{err}");
    assert_eq!(handoff_refs(&sb, &repo), "");
    assert!(!repo.join(".git/handoff-key").exists());

    let out = sb.handoff(&repo, &placeholders("recover")).success();
    assert!(stdout(&out).contains("from the current git state"));
    assert_eq!(brief(&sb, &repo, "main")["mode"], "RECOVER");
    assert!(
        !repo.join(".claude").exists(),
        "recover never writes a narrative"
    );
}

#[test]
fn recover_bad_input_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &placeholders("write")).success();
    let refs = handoff_refs(&sb, &repo);
    let id = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["recover", "-F", "-"], "{not json", "not valid JSON"),
        (
            vec!["recover", "-F", "-"],
            r#"{"state":{"bogus":1}}"#,
            "invalid",
        ),
        (
            vec!["recover", "-F", "-"],
            r#"{"resume":{"done_when":""}}"#,
            "invalid",
        ),
        (vec!["recover", "--", "a..b"], "", "invalid key"),
        (vec!["recover", "--", "../x"], "", "invalid key"),
        (
            vec!["recover", "main", "-F", "-"],
            r#"{"key":"other"}"#,
            "differs",
        ),
        (
            vec!["recover", "x", "--key-from-branch"],
            "",
            "cannot be used",
        ),
    ];
    for (args, input, needle) in cases {
        let out = sb.handoff_with(&repo, &args, Some(input)).failure();
        let err = stderr(&out);
        assert!(
            err.contains(needle),
            "{args:?}: expected {needle:?} in {err}"
        );
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    assert_eq!(handoff_refs(&sb, &repo), refs);
    assert_eq!(sb.git(&repo, &["rev-parse", "refs/handoffs/main"]), id);
}

#[test]
fn the_sticky_key_follows_a_branch_switch_and_says_so() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let write = placeholders("write");
    sb.handoff(&repo, &write).success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "main\nmain\n"
    );
    let main_id = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);

    sb.git(&repo, &["switch", "-q", "-c", "feat/x"]);
    let out = sb.handoff(&repo, &write).success();
    let err = stderr(&out);
    assert!(
        err.contains(
            "branch switched: this write targets 'feat-x' (was 'main' on main); future handoffs will target 'feat-x'"
        ),
        "{err}"
    );
    assert!(stdout(&out).contains("Wrote brief 'feat-x'"));
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/handoffs/main"]),
        main_id,
        "the other branch's brief is left alone"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "feat-x\nfeat/x\n"
    );
    // recover stays on the new sticky key, without a warning.
    let out = sb.handoff(&repo, &["recover"]).success();
    assert!(
        !stderr(&out).contains("branch switched"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("Recovered brief 'feat-x'"));

    // --key-from-branch follows the branch too.
    let mut follow = write.clone();
    follow.push("--key-from-branch");
    let out = sb.handoff(&repo, &follow).success();
    assert_eq!(stderr(&out), "");
    assert!(stdout(&out).contains("Wrote brief 'feat-x'"));
    let out = sb.handoff(&repo, &write).success();
    assert_eq!(
        stderr(&out),
        "",
        "no warning on the sticky key's own branch"
    );
    assert!(stdout(&out).contains("Wrote brief 'feat-x'"));

    // An explicit KEY becomes sticky without a warning on the same branch.
    let mut named = write.clone();
    named.push("custom");
    sb.handoff(&repo, &named).success();
    let out = sb.handoff(&repo, &write).success();
    assert_eq!(stderr(&out), "");
    assert!(stdout(&out).contains("Wrote brief 'custom'"));

    // GIT_HANDOFF_KEY overrides the sticky key and does not replace it.
    let out = sb
        .command("git", &repo)
        .arg("handoff")
        .args(&write)
        .env("GIT_HANDOFF_KEY", "from-env")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Wrote brief 'from-env'"));
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "custom\nfeat/x\n"
    );
}

#[test]
fn each_worktree_has_its_own_sticky_key_and_split_and_import_do_not_set_it() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let wt = sb.worktree(&repo, "wt", "feat/y");
    let write = placeholders("write");
    sb.handoff(&wt, &write).success();
    let wt_git = sb.git(&wt, &["rev-parse", "--absolute-git-dir"]);
    let wt_git = std::path::PathBuf::from(wt_git.trim());
    assert_eq!(
        std::fs::read_to_string(wt_git.join("handoff-key")).unwrap(),
        "feat-y\nfeat/y\n"
    );
    assert!(
        !repo.join(".git/handoff-key").exists(),
        "the main worktree has no sticky key yet"
    );
    // split and import in the main worktree do not give it one.
    let plan = r#"{"why":"w","threads":[{"key":"t1","resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"}}]}"#;
    sb.handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(plan))
        .success();
    let files = sb.path("files");
    sb.handoff(&repo, &["export", "--all", files.to_str().unwrap()])
        .success();
    sb.handoff(&repo, &["drop", "t1"]).success();
    sb.handoff(&repo, &["import", files.to_str().unwrap()])
        .success();
    assert!(!repo.join(".git/handoff-key").exists());
    // The main worktree then writes its own key, without a warning.
    let out = sb.handoff(&repo, &write).success();
    assert!(stdout(&out).contains("Wrote brief 'main'"));
    assert_eq!(stderr(&out), "");
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "main\nmain\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt_git.join("handoff-key")).unwrap(),
        "feat-y\nfeat/y\n"
    );

    // A corrupt sticky file is reported and replaced, not fatal.
    std::fs::write(wt_git.join("handoff-key"), "a..b\n").unwrap();
    let out = sb.handoff(&wt, &write).success();
    assert_stderr_has(&out, "ignoring the sticky key");
    assert_eq!(
        std::fs::read_to_string(wt_git.join("handoff-key")).unwrap(),
        "feat-y\nfeat/y\n"
    );
}

#[test]
fn recover_show_prints_what_to_re_read_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    for n in 0..4 {
        sb.write_brief(
            &repo,
            None,
            ["cargo test passes", &format!("step {n}"), "cargo test"],
            &[],
        )
        .success();
    }
    for n in 0..22 {
        sb.commit(&repo, "log.txt", &format!("{n}\n"), &format!("commit {n}"));
    }
    let token = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    std::fs::write(repo.join("log.txt"), format!("changed {token}\n")).unwrap();
    let before = handoff_refs(&sb, &repo);
    let narrative_before = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let out = stdout(&sb.handoff(&repo, &["recover", "--show"]).success());
    // The latest 3 entries, newest first; not the oldest.
    assert!(
        out.contains("## Narrative (.claude/PROJECT_STATE.md): the latest 3 entries, newest first"),
        "{out}"
    );
    let (s3, s1) = (out.find("step 3").unwrap(), out.find("step 1").unwrap());
    assert!(s3 < s1, "{out}");
    assert!(!out.contains("step 0"), "{out}");
    // git log --oneline -20: the newest 20 commits.
    assert!(out.contains("## git log --oneline -20\n"), "{out}");
    assert!(
        out.contains(" commit 21\n") && out.contains(" commit 2\n"),
        "{out}"
    );
    assert!(!out.contains(" commit 1\n"), "{out}");
    // The diff, redacted.
    assert!(
        out.contains("## git diff HEAD (1 file changed, 1 insertion(+), 1 deletion(-))"),
        "{out}"
    );
    assert!(out.contains("+changed [REDACTED:github_token]"), "{out}");
    assert!(!out.contains(&token), "{out}");
    assert!(out.contains("`git handoff recover main`"), "{out}");
    // Nothing written.
    assert_eq!(handoff_refs(&sb, &repo), before);
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap(),
        narrative_before
    );
    let v = json(&stdout(
        &sb.handoff(&repo, &["recover", "--show", "--json"])
            .success(),
    ));
    assert_eq!(v["key"], "main");
    assert_eq!(v["entries"].as_array().unwrap().len(), 3);
    assert_eq!(v["commits"].as_array().unwrap().len(), 20);
    assert_eq!(v["redacted"]["github_token"], 1);
}
