//! The foundation end to end: write, list, show, drop, validate, in real
//! repositories with linked worktrees, unborn branches and detached HEADs.

use crate::support::*;
use predicates::prelude::*;
use serde_json::Value;

#[test]
fn write_stores_a_blob_ref_a_history_note_and_a_narrative_entry() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["switch", "-q", "-c", "feat/jwt"]);
    let out = sb
        .handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    let text = stdout(&out);
    assert!(text.contains("Wrote brief 'feat-jwt'"), "{text}");
    assert!(text.contains("git handoff resume feat-jwt"), "{text}");
    assert!(text.contains("cargo test auth::expiry"), "{text}");

    // The ref points directly at a blob that plain git reads.
    assert_eq!(
        sb.git(&repo, &["cat-file", "-t", "refs/handoffs/feat-jwt"]),
        "blob\n"
    );
    let raw = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/feat-jwt"]);
    assert!(
        raw.ends_with("}\n") && raw.starts_with("{\n  \"schema_version\": \"1\""),
        "{raw}"
    );
    let brief = json(&raw);
    let head = sb.git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(brief["key"], "feat-jwt");
    assert_eq!(brief["mode"], "WRITE");
    assert_eq!(brief["timestamp"], NOW);
    assert_eq!(brief["state"]["branch"], "feat/jwt");
    assert_eq!(brief["state"]["head_sha"], head.as_str());
    assert_eq!(brief["state"]["worktree"]["is_linked"], false);
    let common = std::fs::canonicalize(repo.join(".git")).unwrap();
    assert_eq!(
        brief["state"]["worktree"]["git_common_dir"],
        common.display().to_string()
    );
    assert!(
        brief["state"].get("diff_summary").is_none(),
        "clean tree has no diff_summary"
    );
    assert_eq!(
        brief["state"]["decisions"][0],
        "use <= not < — the expiry second is still valid"
    );

    // `show` prints exactly the stored bytes.
    sb.handoff(&repo, &["show", "feat-jwt"])
        .success()
        .stdout(raw.clone());
    sb.handoff(&repo, &["show"]).success().stdout(raw.clone());

    // History: one compact line on the note of HEAD, visible to git log.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(brief_lines(&note).len(), 1);
    assert_eq!(json(brief_lines(&note)[0]), brief);
    // Beside it, the version's lineage: a first version, on top of nothing.
    let lineage = json(lineage_lines(&note)[0]);
    assert_eq!(lineage["parents"], serde_json::json!([]));
    assert_eq!(lineage["key"], "feat-jwt");
    let log = sb.git(&repo, &["log", "--notes=handoffs", "-1"]);
    assert!(log.contains("Notes (handoffs):"), "{log}");

    // Narrative: header first, then the entry.
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert!(narrative.starts_with("# Project state"), "{narrative}");
    assert!(
        narrative.contains("## 2026-11-30 — [feat-jwt] add leeway to verify()\n"),
        "{narrative}"
    );
    for section in [
        "### What was done",
        "### Decisions (with rationale)",
        "### Pointers",
    ] {
        assert!(
            narrative.contains(section),
            "missing {section}: {narrative}"
        );
    }
    // The method leaves "Surprises / lessons" out when there are none, and
    // pairs the decision with its rejected alternatives.
    assert!(!narrative.contains("### Surprises"), "{narrative}");
    assert!(
        narrative.contains("- **use <= not <** — the expiry second is still valid. Rejected: < operator (off by one)."),
        "{narrative}"
    );
}

#[test]
fn a_brief_written_in_a_linked_worktree_is_a_blob_seen_from_the_main_worktree() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let wt = sb.worktree(&repo, "wt", "feat/x");
    sb.write_brief(&wt, None, ["x passes", "do x", "cargo test x"], &[])
        .success();
    assert_eq!(
        sb.git(
            &repo,
            &[
                "for-each-ref",
                "--format=%(objecttype) %(refname)",
                "refs/handoffs"
            ]
        ),
        "blob refs/handoffs/feat-x\n"
    );
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/feat-x"]));
    assert_eq!(brief["state"]["worktree"]["is_linked"], true);
    assert_eq!(
        brief["state"]["worktree"]["root"],
        std::fs::canonicalize(&wt).unwrap().display().to_string()
    );
    assert_eq!(
        brief["state"]["worktree"]["git_common_dir"],
        std::fs::canonicalize(repo.join(".git"))
            .unwrap()
            .display()
            .to_string(),
        "the linked worktree records the shared common dir"
    );
    // The narrative is the linked worktree's own file.
    assert!(wt.join(".claude/PROJECT_STATE.md").exists());
    assert!(!repo.join(".claude/PROJECT_STATE.md").exists());
    // list from main marks nothing current (main has no brief) but shows it.
    let listed = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(
        listed.contains("  feat-x") && listed.contains("feat/x") && listed.contains("x passes"),
        "{listed}"
    );
    let listed = stdout(&sb.handoff(&wt, &["list"]).success());
    assert!(listed.starts_with("* feat-x"), "{listed}");
}

#[test]
fn diff_summary_matches_git_diff_stat() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "src/a.rs", "one\ntwo\nthree\n", "a");
    sb.commit(&repo, "gone.txt", "bye\n", "gone");
    std::fs::write(repo.join("src/a.rs"), "one\n2\nthree\nfour\n").unwrap();
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    std::fs::write(repo.join("staged.txt"), "new\nfile\n").unwrap();
    sb.git(&repo, &["add", "staged.txt"]);
    std::fs::write(repo.join("untracked.txt"), "ignored by diff --stat\n").unwrap();
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
    let stat = sb.git(&repo, &["diff", "--stat", "HEAD"]);
    let last = stat.lines().last().unwrap().trim();
    assert_eq!(brief["state"]["diff_summary"], last);
    assert_eq!(last, "3 files changed, 4 insertions(+), 2 deletions(-)");
}

#[test]
fn diff_summary_matches_git_whether_or_not_the_index_matches_head() {
    // With nothing staged the index's cache-tree names HEAD's tree and only
    // the working tree is compared; staging or a soft reset takes the full
    // comparison. Each state must read as `git diff --stat HEAD` does.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "src/a.rs", "one\ntwo\nthree\n", "a");
    sb.commit(&repo, "src/same.rs", "abc\n", "same size");
    sb.commit(&repo, "gone.txt", "bye\n", "gone");
    sb.commit(&repo, "blob.bin", "\0\x01\x02\n", "binary");
    let summary = |sb: &Sandbox| {
        sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
        let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
        let stat = sb.git(&repo, &["diff", "--stat", "HEAD"]);
        let last = stat.lines().last().map(|l| l.trim().to_string());
        (
            brief["state"]["diff_summary"].as_str().map(str::to_string),
            last,
        )
    };
    let (ours, git) = summary(&sb);
    assert_eq!(ours, None);
    assert_eq!(git, None);

    std::fs::write(repo.join("src/a.rs"), "one\n2\nthree\nfour\n").unwrap();
    std::fs::write(repo.join("src/same.rs"), "ABC\n").unwrap();
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    std::fs::write(repo.join("blob.bin"), "\0\x03\n").unwrap();
    let (ours, git) = summary(&sb);
    assert_eq!(ours, git, "working tree changes only");
    assert_eq!(
        git.as_deref(),
        Some("4 files changed, 3 insertions(+), 3 deletions(-)")
    );

    sb.git(&repo, &["add", "src/a.rs"]);
    let (ours, git) = summary(&sb);
    assert_eq!(ours, git, "one change staged");

    sb.git(&repo, &["commit", "-q", "-m", "a again"]);
    sb.git(&repo, &["reset", "-q", "--soft", "HEAD~1"]);
    let (ours, git) = summary(&sb);
    assert_eq!(ours, git, "index ahead of HEAD after a soft reset");
    assert_eq!(
        git.as_deref(),
        Some("4 files changed, 3 insertions(+), 3 deletions(-)")
    );
}

#[test]
fn unborn_branch_stores_the_brief_without_head_or_history() {
    let sb = Sandbox::new();
    let repo = sb.unborn("r");
    let out = sb
        .write_brief(&repo, None, ["first commit", "commit", "git log"], &[])
        .success();
    assert_stderr_has(&out, "history note is skipped");
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
    assert!(brief["state"].get("head_sha").is_none());
    assert_eq!(brief["state"]["branch"], "main");
    assert_eq!(handoff_refs(&sb, &repo), "blob refs/handoffs/main\n");
}

#[test]
fn detached_head_uses_the_handoff_key() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["checkout", "-q", "--detach"]);
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/HANDOFF"]));
    assert_eq!(brief["key"], "HANDOFF");
    assert_eq!(brief["state"]["branch"], "HEAD");
}

#[test]
fn long_branch_names_are_cut_to_80_characters() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let branch = format!("team/{}", "x".repeat(100));
    sb.git(&repo, &["switch", "-q", "-c", &branch]);
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    let key = format!("team-{}", "x".repeat(75));
    assert_eq!(
        sb.git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/handoffs"]
        ),
        format!("refs/handoffs/{key}\n")
    );
}

#[test]
fn flags_fill_fields_and_merge_with_json_input() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let args = [
        "write",
        "topic",
        "-F",
        "-",
        "--decision",
        "second",
        "--test",
        "cargo test a=b=pass",
        "--test",
        "cargo test c=fail",
        "--read",
        "src/x.rs:1-20=the parser",
        "--skip",
        "target=build output",
        "--risk",
        "flaky",
        "--command",
        "make",
        "--prompt",
        "Custom prompt.",
    ];
    let input = r#"{"resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c","decisions":["first"]},
                   "timestamp":"2026-11-01T08:00:00Z"}"#;
    let out = sb.handoff_with(&repo, &args, Some(input)).success();
    assert!(stdout(&out).contains("Custom prompt."));
    let b = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/topic"]));
    assert_eq!(
        b["state"]["decisions"],
        serde_json::json!(["first", "second"])
    );
    assert_eq!(
        b["state"]["tests"][0],
        serde_json::json!({"cmd": "cargo test a=b", "result": "pass"})
    );
    assert_eq!(b["state"]["tests"][1]["result"], "fail");
    assert_eq!(
        b["files_read_first"][0],
        serde_json::json!({"path": "src/x.rs:1-20", "why": "the parser"})
    );
    assert_eq!(b["files_skip"][0]["path"], "target");
    assert_eq!(b["state"]["open_risks"][0], "flaky");
    assert_eq!(b["state"]["commands"][0], "make");
    assert_eq!(
        b["timestamp"], "2026-11-01T08:00:00Z",
        "a given timestamp is kept"
    );
}

#[test]
fn narrative_file_supplies_the_entry_sections() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let md = sb.path("entry.md");
    std::fs::write(
        &md,
        "# Fixed the expiry check\n### Surprises / lessons\n- clocks skew by 2s in CI\n",
    )
    .unwrap();
    sb.write_brief(
        &repo,
        None,
        ["d", "r", "c"],
        &["--narrative", md.to_str().unwrap()],
    )
    .success();
    let text = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert!(
        text.contains("## 2026-11-30 — [main] Fixed the expiry check\n"),
        "{text}"
    );
    assert!(
        text.contains("### Surprises / lessons\n- clocks skew by 2s in CI\n"),
        "{text}"
    );
    // A second write goes above the first, below the header.
    sb.write_brief(&repo, None, ["d2", "second step", "c"], &[])
        .success();
    let text = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let second = text.find("[main] second step").unwrap();
    let first = text.find("[main] Fixed the expiry check").unwrap();
    assert!(second < first, "{text}");
    assert_eq!(text.matches("# Project state").count(), 1);
    // Both versions are in the history note of HEAD.
    assert_eq!(
        brief_lines(&sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"])).len(),
        2
    );
}

/// Every way a write can be refused: exit 1, one line, nothing written.
#[test]
fn bad_input_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let valid_flags = ["--done-when", "d", "--resume-by", "r", "--next-check", "c"];
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (vec!["write", "-F", "-"], "{not json", "not valid JSON"),
        (vec!["write", "-F", "-"], "", "empty"),
        (vec!["write", "-F", "-"], "[1,2]", "must be a JSON object"),
        (
            vec!["write", "-F", "-"],
            r#"{"resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c","bogus":1}}"#,
            "invalid",
        ),
        (
            vec!["write", "-F", "-"],
            r#"{"resume":{"done_when":"","resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#,
            "invalid",
        ),
        (
            vec!["write", "-F", "-"],
            r#"{"resume":{"resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#,
            "invalid",
        ),
        (
            vec!["write", "-F", "-"],
            r#"{"resume":"x","state":{}}"#,
            "must be an object",
        ),
        (
            vec!["write", "-F", "-", "k"],
            r#"{"key":"other","resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#,
            "differs",
        ),
        (
            vec!["write", "-F", "-"],
            r#"{"key":"a/b","resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#,
            "invalid key",
        ),
        (
            vec!["write", "-F", "/nonexistent/brief.json"],
            "",
            "cannot read",
        ),
        (vec!["write"], "", "nothing to write"),
        (vec!["write", "--test", "cargo test"], "", "CMD=pass"),
        (vec!["write", "--read", "no-why"], "", "PATH=WHY"),
    ];
    for (args, input, needle) in cases {
        // a file that cannot be read is an I/O error: fatal, as in git
        let code = if needle == "cannot read" { 128 } else { 1 };
        let out = sb.handoff_with(&repo, &args, Some(input)).code(code);
        let err = stderr(&out);
        assert!(
            err.contains(needle),
            "{args:?} {input:?}: expected {needle:?} in {err}"
        );
        let prefix = if code == 128 { "fatal: " } else { "error: " };
        assert!(err.lines().last().unwrap().starts_with(prefix), "{err}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    for key in [
        "..", "a..b", "-x", ".x", "x.lock", "a@{b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b",
        "a\\b", "a b", "a\tb",
    ] {
        let mut args = vec!["write"];
        args.extend(valid_flags);
        args.extend(["--", key]);
        let out = sb.handoff(&repo, &args).code(1);
        assert!(
            stderr(&out).contains("invalid key"),
            "{key:?}: {}",
            stderr(&out)
        );
        assert_eq!(stderr(&out).lines().count(), 1, "{key:?}: {}", stderr(&out));
    }
    let long = "k".repeat(300);
    let mut args = vec!["write", long.as_str()];
    args.extend(valid_flags);
    sb.handoff(&repo, &args)
        .code(1)
        .stderr(predicate::str::contains("at most 80"));

    assert_eq!(handoff_refs(&sb, &repo), "", "no ref may be written");
    assert!(
        !repo.join(".claude").exists(),
        "no narrative may be written"
    );
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn an_invalid_brief_lists_every_schema_error_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let input = r#"{"resume":{"done_when":"d","resume_by":"r","extra":1},"state":{"next_acceptance_check":"c","tests":[{"cmd":"t","result":"maybe"}]},"mode":"READ"}"#;
    let out = sb
        .handoff_with(&repo, &["write", "-F", "-"], Some(input))
        .code(1);
    let err = stderr(&out);
    assert!(err.starts_with("handoff-validate: INVALID\n"), "{err}");
    assert!(err.contains("  - mode: "), "{err}");
    assert!(err.contains("  - resume: "), "{err}");
    assert!(err.contains("  - state.tests[0].result: "), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(handoff_refs(&sb, &repo), "");
    assert!(!repo.join(".claude").exists());
}

#[test]
fn bad_clock_override_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", &repo));
    cmd.arg("handoff")
        .args(write_args(None, ["d", "r", "c"], &[]))
        .env("GIT_HANDOFF_NOW", "yesterday");
    cmd.assert()
        .code(1)
        .stderr(predicate::str::contains("GIT_HANDOFF_NOW"));
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn outside_a_repository_and_in_a_bare_one_the_error_says_what_to_do() {
    let sb = Sandbox::new();
    let plain = sb.path("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", &plain));
    cmd.args(["handoff", "list"])
        .env("GIT_CEILING_DIRECTORIES", sb.dir.path());
    let out = cmd.assert().code(128);
    assert_stderr_has(&out, "not a git repository");
    assert_eq!(stderr(&out).lines().count(), 1);

    let bare = sb.path("bare.git");
    sb.git(
        sb.dir.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    let mut cmd =
        assert_cmd::Command::from_std(sb.command(env!("CARGO_BIN_EXE_git-handoff"), &bare));
    cmd.args(write_args(None, ["d", "r", "c"], &[]));
    let out = cmd.assert().code(128);
    assert_stderr_has(&out, "bare repository");
    assert_eq!(sb.git(&bare, &["for-each-ref"]), "");
}

#[test]
fn list_show_and_drop() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["list"])
        .success()
        .stdout(predicate::str::contains("No briefs yet"));
    sb.handoff(&repo, &["list", "--json"])
        .success()
        .stdout("[]\n");
    sb.write_brief(&repo, None, ["main done", "r", "c"], &[])
        .success();
    sb.write_brief(&repo, Some("other"), ["other done", "r", "c"], &[])
        .success();
    // `*` marks the brief a keyless resume reads: this session's key …
    let text = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(
        text.starts_with("  main ") && text.contains("\n* other "),
        "{text}"
    );
    // … and, in a new session, the branch's
    let start = sb.handoff_with(
        &repo,
        &["hook", "session-start"],
        Some(r#"{"source":"startup"}"#),
    );
    start.success();

    let text = stdout(&sb.handoff(&repo, &["list"]).success());
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("* main ") && lines[0].ends_with("main done"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("  other ") && lines[1].contains(" 0m "),
        "{text}"
    );

    let rows = json(&stdout(&sb.handoff(&repo, &["list", "--json"]).success()));
    assert_eq!(rows[0]["key"], "main");
    assert_eq!(rows[0]["current"], true);
    assert_eq!(rows[1]["current"], false);
    assert_eq!(rows[1]["done_when"], "other done");
    assert_eq!(rows[1]["age_seconds"], 0);
    let id = sb.git(&repo, &["rev-parse", "refs/handoffs/other"]);
    assert_eq!(rows[1]["id"], id.trim());

    sb.handoff(&repo, &["show", "missing"])
        .code(1)
        .stderr("error: no brief for key 'missing'; `git handoff list` shows the keys\n");
    sb.handoff(&repo, &["drop", "missing"])
        .code(1)
        .stderr(predicate::str::contains("no brief for key 'missing'"));

    let notes_before = sb.git(&repo, &["rev-parse", "refs/notes/handoffs"]);
    let out = sb.handoff(&repo, &["drop", "other"]).success();
    assert_stdout_has(&out, "Dropped brief 'other'");
    assert_eq!(
        sb.git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/handoffs"]
        ),
        "refs/handoffs/main\n"
    );
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/notes/handoffs"]),
        notes_before,
        "history stays"
    );
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert!(
        note.contains("\"other done\""),
        "the dropped version is still in history: {note}"
    );
}

#[test]
fn list_survives_a_foreign_ref_under_refs_handoffs() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let head = sb.git(&repo, &["rev-parse", "HEAD"]);
    sb.git(&repo, &["update-ref", "refs/handoffs/odd", head.trim()]);
    let text = stdout(&sb.handoff(&repo, &["list"]).success());
    assert!(
        text.contains("odd") && text.contains("unreadable"),
        "{text}"
    );
    sb.handoff(&repo, &["show", "odd"])
        .code(128)
        .stderr(predicate::str::contains("not a blob"));
    sb.handoff(&repo, &["drop", "odd"]).success();
}

#[test]
fn validate_reports_ok_or_every_error() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    let good = r#"{"schema_version":"1","key":"k","timestamp":"2026-01-01T00:00:00Z","mode":"WRITE",
      "resume":{"done_when":"d","resume_by":"r"},
      "state":{"branch":"main","next_acceptance_check":"c","worktree":{"root":"/r","is_linked":false,"git_common_dir":"/r/.git"}}}"#;
    std::fs::write(dir.join("good.json"), good).unwrap();
    // validate needs no repository
    sb.handoff(dir, &["validate", "good.json"])
        .success()
        .stdout("handoff-validate: OK\n");
    sb.handoff_with(dir, &["validate", "-"], Some(good))
        .success()
        .stdout("handoff-validate: OK\n");

    let bad = good
        .replace("\"WRITE\"", "\"READ\"")
        .replace("\"2026-01-01T00:00:00Z\"", "\"yesterday\"")
        .replace("\"is_linked\":false", "\"is_linked\":\"no\"");
    let out = sb.handoff_with(dir, &["validate", "-"], Some(&bad)).code(1);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let lines: Vec<_> = err.lines().collect();
    assert_eq!(lines[0], "handoff-validate: INVALID");
    assert_eq!(lines.len(), 4, "{err}");
    assert!(lines[1].starts_with("  - mode: "), "{err}");
    assert!(
        lines[2].starts_with("  - state.worktree.is_linked: "),
        "{err}"
    );
    assert!(lines[3].starts_with("  - timestamp: "), "{err}");

    let out = sb
        .handoff_with(dir, &["validate", "-"], Some(r#"{"extra":true}"#))
        .code(1);
    assert_stderr_has(&out, "  - (root): ");

    for input in ["{", "not json", "", "\u{0}"] {
        let out = sb
            .handoff_with(dir, &["validate", "-"], Some(input))
            .code(1);
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{input:?}: {}",
            stderr(&out)
        );
    }
    sb.handoff(dir, &["validate", "missing.json"])
        .code(128)
        .stderr(predicate::str::contains("cannot read 'missing.json'"));
    sb.handoff(dir, &["validate"]).code(2);
}

#[test]
fn deep_huge_and_binary_input_is_refused_cleanly() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let huge = format!(
        "{{\"resume\":{{\"done_when\":\"{}\"}}}}",
        "x".repeat(2 * 1024 * 1024)
    );
    for (input, needle) in [
        (deep.as_str(), "not valid JSON"),
        (huge.as_str(), "at most 1 MiB"),
    ] {
        let out = sb
            .handoff_with(&repo, &["write", "-F", "-"], Some(input))
            .code(1);
        assert_stderr_has(&out, needle);
        let out = sb
            .handoff_with(&repo, &["validate", "-"], Some(input))
            .code(1);
        assert_stderr_has(&out, needle);
    }
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", &repo));
    cmd.args(["handoff", "validate", "-"])
        .write_stdin(vec![0xff, 0xfe, b'{']);
    cmd.assert()
        .code(1)
        .stderr(predicate::str::contains("not UTF-8"));
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff(&repo, &["frobnicate"]).code(2);
    sb.handoff(&repo, &["write", "--no-such-flag"]).code(2);
}

#[test]
fn schema_prints_the_shipped_schema() {
    let sb = Sandbox::new();
    let shipped = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/brief.schema.json"
    ))
    .unwrap();
    sb.handoff(sb.dir.path(), &["schema"])
        .success()
        .stdout(shipped);
}

#[test]
fn an_incomplete_rewrite_of_a_stored_brief_points_at_update() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, None, ["cargo test a", "r", "cargo test b"], &[])
        .success();
    let out = sb
        .handoff(&repo, &["write", "--decision", "one more"])
        .code(1);
    let err = stderr(&out);
    assert!(
        err.lines()
            .last()
            .unwrap()
            .contains("git handoff write main --update"),
        "{err}"
    );
    // write --update with the same flag keeps the stored fields
    sb.handoff(
        &repo,
        &["write", "--update", "--decision", "one more", "--no-lint"],
    )
    .success();
    let b: Value =
        serde_json::from_str(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"])).unwrap();
    assert_eq!(b["resume"]["done_when"], "cargo test a");
    assert_eq!(b["state"]["decisions"][0], "one more");
}

#[test]
fn list_reads_each_version_once_and_never_trusts_a_damaged_cache() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let write = |key: &str, done: &str| {
        sb.write_brief(&repo, Some(key), [done, "r", "c"], &[])
            .success();
    };
    write("a", "a done");
    write("b", "b done");
    let listed = |sb: &Sandbox| json(&stdout(&sb.handoff(&repo, &["list", "--json"]).success()));
    let first = listed(&sb);
    let cache_path = repo.join(".git/handoff-list.cache");
    let cache = std::fs::read_to_string(&cache_path).unwrap();
    let a_id = sb.git(&repo, &["rev-parse", "refs/handoffs/a"]);
    assert!(cache.contains(a_id.trim()), "{cache}");
    assert_eq!(listed(&sb), first, "from the cache, the same rows");

    // A new version of a is read; the dropped b leaves the cache.
    write("a", "a done again");
    sb.handoff(&repo, &["drop", "b"]).success();
    let rows = listed(&sb);
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["done_when"], "a done again");
    let cache = std::fs::read_to_string(&cache_path).unwrap();
    assert!(!cache.contains(a_id.trim()), "{cache}");

    // An invalid blob is reported every time and never cached.
    let path = repo.join(".git/bad.json");
    std::fs::write(&path, r#"{"schema_version": "1"}"#).unwrap();
    let bad = sb.git(&repo, &["hash-object", "-w", path.to_str().unwrap()]);
    sb.git(&repo, &["update-ref", "refs/handoffs/bad", bad.trim()]);
    for _ in 0..2 {
        let rows = listed(&sb);
        assert!(
            rows[1]["error"].as_str().unwrap().contains("unreadable"),
            "{rows}"
        );
    }
    let cache = std::fs::read_to_string(&cache_path).unwrap();
    assert!(!cache.contains(bad.trim()), "{cache}");

    // A damaged cache is discarded, not believed.
    std::fs::write(
        &cache_path,
        "git-handoff list cache 1, schema 1\nnot an entry\n",
    )
    .unwrap();
    let rows = listed(&sb);
    assert_eq!(rows[0]["done_when"], "a done again");
}

#[test]
fn a_tracked_directory_replaced_by_a_symlink_reads_as_git_reads_it() {
    // Its files keep their inodes and stat data behind the symlink, but git
    // does not look through symlinks: they are deleted.
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "dir/a.txt", "a\nb\n", "dir");
    let moved = sb.path("moved");
    std::fs::rename(repo.join("dir"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, repo.join("dir")).unwrap();
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
    let stat = sb.git(&repo, &["diff", "--stat", "HEAD"]);
    let last = stat.lines().last().unwrap().trim();
    assert_eq!(last, "1 file changed, 2 deletions(-)");
    assert_eq!(brief["state"]["diff_summary"], last);
}

#[test]
fn validate_partial_checks_what_write_needs_and_plain_validate_says_so() {
    let sb = Sandbox::new();
    let dir = sb.dir.path();
    // the README's partial example
    sb.handoff_with(dir, &["validate", "--partial", "-"], Some(EXAMPLE))
        .success()
        .stdout("handoff-validate: OK\n");
    // plain validate refuses it, and points at --partial and write -F
    let out = sb
        .handoff_with(dir, &["validate", "-"], Some(EXAMPLE))
        .code(1);
    let err = stderr(&out);
    // One line first says what it is, then every error, as always.
    assert_eq!(
        err.lines().next().unwrap(),
        "a partial brief: valid for `git handoff write -F`; as a stored brief it lacks: key, mode, schema_version, timestamp, state.branch, state.worktree (write fills them in)",
        "{err}"
    );
    assert!(err.contains("\nhandoff-validate: INVALID\n"), "{err}");
    assert!(err.contains("\"key\" is a required property"), "{err}");
    // A brief with no `state` at all gets the same line, naming the one
    // field of it that write needs from its caller.
    let stateless = r#"{"resume":{"done_when":"cargo test passes","resume_by":"go"}}"#;
    let out = sb
        .handoff_with(dir, &["validate", "-"], Some(stateless))
        .code(1);
    let err = stderr(&out);
    assert!(
        err.lines().next().unwrap().starts_with(
            "a partial brief without `state`: `git handoff write -F` still needs state.next_acceptance_check"
        ),
        "{err}"
    );
    let out = sb
        .handoff_with(dir, &["validate", "--partial", "-"], Some(stateless))
        .code(1);
    assert!(
        stderr(&out)
            .lines()
            .last()
            .unwrap()
            .starts_with("a partial brief needs `state` with its next_acceptance_check"),
        "{}",
        stderr(&out)
    );
    // a partial brief still needs what only its caller knows
    let no_done_when = EXAMPLE.replace(r#""done_when":"cargo test auth passes","#, "");
    let out = sb
        .handoff_with(dir, &["validate", "--partial", "-"], Some(&no_done_when))
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("  - resume: \"done_when\" is a required property"),
        "{err}"
    );
    // and then plain validate gives no partial hint
    let out = sb
        .handoff_with(dir, &["validate", "-"], Some(&no_done_when))
        .code(1);
    assert!(!stderr(&out).contains("a partial brief"));
    // unknown fields are errors in a partial brief too
    let extra = EXAMPLE.replacen('{', r#"{"extra":1,"#, 1);
    sb.handoff_with(dir, &["validate", "--partial", "-"], Some(&extra))
        .code(1);
}

#[test]
fn write_names_the_narrative_and_can_skip_it() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let out = stdout(
        &sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
            .success(),
    );
    // The confirmation: the key and why it was chosen, in plain words (no
    // "tier", no "stored: full"), the lines prepended.
    let file = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let first = file.lines().count();
    assert!(
        out.starts_with("Wrote brief 'main' (refs/handoffs/main, version ")
            && out.contains(
                ", key of branch 'main'); narrative entry added to .claude/PROJECT_STATE.md"
            )
            && !out.contains("tier")
            && !out.contains("stored:"),
        "{out}"
    );
    assert!(
        out.contains(&format!("({first} lines prepended).\n.claude/PROJECT_STATE.md is not tracked yet: commit it with your work (`git add .claude/PROJECT_STATE.md`).\n")),
        "{out}"
    );
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    let out = stdout(
        &sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
            .success(),
    );
    let second = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        out.contains(&format!(
            "; narrative entry added to .claude/PROJECT_STATE.md ({} lines prepended).\n\n",
            second - first
        )),
        "{out}"
    );
    assert!(!out.contains("not tracked"), "{out}");
    let v = json(&stdout(
        &sb.handoff_with(&repo, &["write", "-F", "-", "--json"], Some(EXAMPLE))
            .success(),
    ));
    // The key tier as the method counts it (1 named, 2 branch, 3
    // detached), the storage beside it.
    assert_eq!(v["tier"], 2);
    assert_eq!(v["stored"], "full");
    let third = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(v["narrative_lines"], third - second);

    // A narrative that git ignores stays local by design: nobody is asked
    // to commit it.
    let ignoring = sb.repo("ign");
    std::fs::write(ignoring.join(".gitignore"), ".claude/\n").unwrap();
    sb.git(&ignoring, &["add", ".gitignore"]);
    sb.git(&ignoring, &["commit", "-q", "-m", "ignore .claude"]);
    let out = stdout(
        &sb.handoff_with(&ignoring, &["write", "-F", "-"], Some(EXAMPLE))
            .success(),
    );
    assert!(!out.contains("not tracked"), "{out}");
    assert!(
        out.contains("; narrative entry added to .claude/PROJECT_STATE.md ("),
        "{out}"
    );

    // --no-narrative: the brief and its history, no file, no directory
    let other = sb.repo("o");
    let out = stdout(
        &sb.handoff_with(
            &other,
            &["write", "--no-narrative", "-F", "-"],
            Some(EXAMPLE),
        )
        .success(),
    );
    assert!(
        out.contains(", key of branch 'main'); no narrative entry.\n"),
        "{out}"
    );
    assert!(!other.join(".claude").exists());
    assert!(
        sb.git(&other, &["notes", "--ref=handoffs", "show", "HEAD"])
            .contains("\"key\":\"main\"")
    );
    // handoff.narrative false: the same by default
    sb.git(&other, &["config", "handoff.narrative", "false"]);
    sb.handoff_with(&other, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    assert!(!other.join(".claude").exists());
    assert!(!other.join("false").exists());
    sb.handoff_with(
        &other,
        &["write", "--no-narrative", "--narrative", "x.md", "-F", "-"],
        Some(EXAMPLE),
    )
    .code(2);
}

#[test]
fn list_rows_fit_the_line() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let long = "cargo test passes and ".repeat(12);
    sb.write_brief(&repo, None, [&long, "r", "c"], &[])
        .success();
    let out = stdout(&sb.handoff(&repo, &["list"]).success());
    let row = out.lines().next().unwrap();
    assert!((78..=80).contains(&row.chars().count()), "{row}");
    assert!(row.ends_with('…'), "{row}");
    let out = stdout(
        &sb.handoff_env(&repo, &[("COLUMNS", "50")], &["list"], None)
            .success(),
    );
    let row = out.lines().next().unwrap();
    assert!(
        (48..=50).contains(&row.chars().count()) && row.ends_with('…'),
        "{out}"
    );
    // --json and show keep the whole text
    let v: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["list", "--json"]).success())).unwrap();
    assert_eq!(v[0]["done_when"], long.as_str());
}

/// Issue 32: `--json` of `write`, `recover` and `split` carries what the
/// checks found (`findings`, `redacted`, `warnings`), while stderr says it
/// as it always has.
#[test]
fn json_reports_carry_findings_redactions_and_warnings() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let brief = r#"{"resume":{"done_when":"tests pass","resume_by":"mail bob@example.com"},"state":{"next_acceptance_check":"cargo test x","rejected_paths":["r"]}}"#;
    let out = sb
        .handoff_with(&repo, &["write", "k", "--json", "-F", "-"], Some(brief))
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["findings"][0]["key"], "k");
    assert_eq!(v["findings"][0]["rule"], "vague-check");
    assert_eq!(v["findings"][0]["field"], "resume.done_when");
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["redacted"], serde_json::json!({"email": 1}));
    assert_eq!(v["warnings"][0]["kind"], "narrative-untracked");
    assert_eq!(
        stderr(&out),
        "warning: [k] resume.done_when: vague-check: 'tests pass' names no command, test, file or observable result; fix: name the exact command or test and its expected result, e.g. 'cargo test auth::expiry passes'\nnote: 1 secret redacted (1 email) before writing\n"
    );
    // No findings, nothing redacted: the fields are there, empty.
    let out = sb
        .handoff(
            &repo,
            &["recover", "k", "--json", "--no-lint", "--no-redact"],
        )
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["findings"], serde_json::json!([]));
    assert_eq!(v["redacted"], serde_json::json!({}));
    assert_eq!(v["warnings"][0]["kind"], "no-redact");
    assert_eq!(
        stderr(&out),
        "warning: --no-redact: secrets are stored as given; `git handoff push` will refuse to send them\n"
    );
    let plan = r#"{"why":"w","threads":[{"key":"a","resume":{"done_when":"done","resume_by":"r"},"state":{"next_acceptance_check":"cargo test a","rejected_paths":["x"]}}]}"#;
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--json"], Some(plan))
        .success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["written"], false);
    assert_eq!(v["findings"][0]["key"], "a");
}

#[test]
fn write_update_applies_a_merge_patch_to_the_stored_brief() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief_at(
        &repo,
        "2026-11-29T10:00:00Z",
        None,
        ["cargo test passes", "fix a", "cargo test a"],
        &[
            "--decision",
            "keep x - because y",
            "--risk",
            "r1",
            "--read",
            "src/a.rs=why",
        ],
    )
    .success();
    let before = json(&stdout(&sb.handoff(&repo, &["show"]).success()));
    // RFC 7386: objects merge, a list replaces, null removes.
    let patch = r#"{"resume":{"resume_by":"fix b"},
                    "state":{"open_risks":null,"decisions":["use z - because w"]},
                    "files_read_first":[{"path":"src/b.rs","why":"next"}]}"#;
    let out = sb
        .handoff_with(
            &repo,
            &["write", "--update", "-F", "-", "--rejected", "x (slow)"],
            Some(patch),
        )
        .success();
    assert!(
        stdout(&out).starts_with("Wrote brief 'main'"),
        "{}",
        stdout(&out)
    );
    let after = json(&stdout(&sb.handoff(&repo, &["show"]).success()));
    assert_eq!(after["resume"]["done_when"], "cargo test passes", "kept");
    assert_eq!(after["resume"]["resume_by"], "fix b", "replaced");
    assert_eq!(after["state"]["next_acceptance_check"], "cargo test a");
    assert!(after["state"].get("open_risks").is_none(), "null removes");
    assert_eq!(
        after["state"]["decisions"],
        serde_json::json!(["use z - because w"])
    );
    assert_eq!(
        after["state"]["rejected_paths"],
        serde_json::json!(["x (slow)"]),
        "flags apply"
    );
    assert_eq!(after["files_read_first"][0]["path"], "src/b.rs");
    assert_eq!(after["files_read_first"].as_array().unwrap().len(), 1);
    // A new version written now, as a write: mode WRITE, the clock's time,
    // a narrative entry, and the history holds both.
    assert_eq!(after["mode"], "WRITE");
    assert_eq!(after["timestamp"], NOW);
    assert_ne!(before["timestamp"], after["timestamp"]);
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert!(narrative.contains("fix b"), "{narrative}");
    let log = stdout(&sb.handoff(&repo, &["log"]).success());
    assert_eq!(log.lines().count(), 2, "{log}");
    // Nothing stored: --update is a plain write.
    let out = sb
        .handoff_with(
            &repo,
            &["write", "other", "--update", "-F", "-"],
            Some(r#"{"resume":{"done_when":"cargo test o passes","resume_by":"go"},"state":{"next_acceptance_check":"cargo test o"}}"#),
        )
        .success();
    assert!(stdout(&out).starts_with("Wrote brief 'other'"));
}

/// `write --update --test CMD=pass` after a failure of the same command
/// records the pass in its place, not a second result beside the failure
/// (lists otherwise append); another command's result is appended.
#[test]
fn write_update_replaces_the_result_of_a_test_command() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let flags = ["cargo test passes", "fix a", "cargo test a"];
    sb.write_brief_at(
        &repo,
        "2026-11-29T10:00:00Z",
        None,
        flags,
        &["--test", "cargo test a=fail"],
    )
    .success();
    sb.handoff(
        &repo,
        &[
            "write",
            "--update",
            "--test",
            "cargo test a=pass",
            "--test",
            "make lint=pass",
        ],
    )
    .success();
    let after = json(&stdout(&sb.handoff(&repo, &["show"]).success()));
    assert_eq!(
        after["state"]["tests"],
        serde_json::json!([
            {"cmd": "cargo test a", "result": "pass"},
            {"cmd": "make lint", "result": "pass"}
        ]),
        "{after}"
    );
}

/// A file whose mode alone changed (`chmod +x`) is a change as `git diff
/// --stat` counts it — unstaged or staged — and DIRTY names it; with
/// `core.fileMode` false git ignores the bit, and so does git-handoff.
#[test]
fn a_mode_change_alone_counts_as_git_counts_it() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.commit(&repo, "run.sh", "echo hi\n", "script");
    sb.commit(&repo, "other.txt", "x\n", "other");
    sb.write_brief(&repo, None, ["d", "r", "c"], &["--no-narrative"])
        .success();
    std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let git_summary = |sb: &Sandbox| {
        let stat = sb.git(&repo, &["diff", "--stat", "HEAD"]);
        stat.lines().last().map(|l| l.trim().to_string())
    };
    let ours = |sb: &Sandbox| {
        sb.write_brief(&repo, None, ["d", "r", "c"], &["--no-narrative"])
            .success();
        let brief = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]));
        brief["state"]["diff_summary"].as_str().map(str::to_string)
    };
    let expected = Some("1 file changed, 0 insertions(+), 0 deletions(-)".to_string());
    assert_eq!(git_summary(&sb), expected);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("!! DIRTY") && out.contains("run.sh") && out.contains("1 file changed"),
        "{out}"
    );
    assert_eq!(ours(&sb), expected, "unstaged");
    sb.git(&repo, &["add", "run.sh"]);
    assert_eq!(git_summary(&sb), expected);
    assert_eq!(ours(&sb), expected, "staged");
    sb.git(&repo, &["reset", "-q"]);
    sb.git(&repo, &["config", "core.fileMode", "false"]);
    assert_eq!(git_summary(&sb), None);
    assert_eq!(ours(&sb), None, "core.fileMode false");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("!! DIRTY"), "{out}");
}

/// Without any identity, history notes are made by git-handoff; a
/// configured identity wins, name and email each (the author is the
/// committer unless one is configured in full).
#[test]
fn history_notes_take_the_configured_identity_or_git_handoffs() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let write = |brief: &str| {
        let mut cmd = assert_cmd::Command::from_std(sb.command("git", &repo));
        for var in [
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
        ] {
            cmd.env_remove(var);
        }
        cmd.args(["handoff", "write", "-F", "-"])
            .write_stdin(brief.as_bytes().to_vec())
            .assert()
            .success();
        sb.git(
            &repo,
            &[
                "log",
                "-1",
                "--format=%an <%ae>|%cn <%ce>",
                "refs/notes/handoffs",
            ],
        )
    };
    assert_eq!(
        write(EXAMPLE),
        "git-handoff <git-handoff@localhost>|git-handoff <git-handoff@localhost>\n"
    );
    sb.git(&repo, &["config", "user.name", "Bo Builder"]);
    sb.git(&repo, &["config", "committer.email", "bo@example.invalid"]);
    let second = EXAMPLE.replace("add leeway", "add the leeway");
    assert_eq!(
        write(&second),
        "Bo Builder <bo@example.invalid>|Bo Builder <bo@example.invalid>\n"
    );
}

/// A lock file that outlives the ref lock timeout fails the write once,
/// naming the file to remove: retrying would wait the timeout again for
/// each attempt (five times as long as configured, before).
#[test]
fn a_stale_ref_lock_fails_the_write_after_one_wait() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["config", "core.filesRefLockTimeout", "1000"]);
    std::fs::create_dir_all(repo.join(".git/refs/handoffs")).unwrap();
    let lock = repo.join(".git/refs/handoffs/oops.lock");
    std::fs::write(&lock, "").unwrap();
    let started = std::time::Instant::now();
    let out = sb
        .write_brief(
            &repo,
            Some("oops"),
            ["cargo test x passes", "add y", "cargo test z"],
            &["--no-narrative"],
        )
        .code(128);
    let waited = started.elapsed();
    let err = stderr(&out);
    assert!(err.contains("rm '") && err.contains("oops.lock"), "{err}");
    // One wait of 1 s, not five (a bound on what is waited for, not a
    // speed: five waits take over 5 s; one leaves 2 s to spare).
    assert!(waited < std::time::Duration::from_secs(3), "{waited:?}");
    assert_eq!(handoff_refs(&sb, &repo), "");
    std::fs::remove_file(&lock).unwrap();
    sb.write_brief(
        &repo,
        Some("oops"),
        ["cargo test x passes", "add y", "cargo test z"],
        &["--no-narrative"],
    )
    .success();
}

/// A whole-brief write over a stored version (a teammate's, say) names
/// the list entries it leaves behind and how to keep them; `--update`
/// keeps them and says nothing (a fresh-context trial lost a teammate's
/// decision this way, told nothing).
#[test]
fn a_whole_write_names_what_it_leaves_behind() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let ada = ["cargo test auth passes", "fix verify()", "cargo test auth"];
    sb.write_brief(
        &repo,
        None,
        ada,
        &[
            "--no-lint",
            "--decision",
            "use <= — the second is valid",
            "--rejected",
            "a leeway",
            "--rejected",
            "a clock mock",
        ],
    )
    .success();
    let version = sb.handoff(&repo, &["log", "main"]).success();
    let version = stdout(&version)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let out = sb
        .write_brief(&repo, None, ada, &["--no-lint", "--rejected", "a leeway"])
        .success();
    assert_stderr_has(
        &out,
        &format!(
            "note: this write replaced 'main' whole; of version {version}, 1 decision and 1 rejected path are not in it (`git handoff write --update` keeps what you do not give; `git handoff show main --version {version}` has them)"
        ),
    );
    let out = sb
        .handoff(
            &repo,
            &["write", "--update", "--no-lint", "--resume-by", "go on"],
        )
        .success();
    assert!(!stderr(&out).contains("replaced"), "{}", stderr(&out));
}

/// Issue 57: an incomplete write names the missing flags (not schema
/// paths) and, when the key is stored, points at `write --update`, which
/// starts from the stored brief (not at recover or --edit).
#[test]
fn an_incomplete_write_names_the_missing_flags_and_points_at_update() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let partial = [
        "write",
        "k",
        "--done-when",
        "cargo test passes",
        "--no-lint",
    ];
    let out = sb.handoff(&repo, &partial).code(1);
    let err = stderr(&out);
    assert!(err.contains("  - missing --resume-by\n"), "{err}");
    assert!(err.contains("  - missing --next-check\n"), "{err}");
    assert!(!err.contains("required property"), "{err}");
    assert!(
        err.contains("nothing was written: missing --resume-by, --next-check; give them as flags or in -F FILE"),
        "{err}"
    );
    sb.write_plain_brief(&repo, "k");
    let more = [
        "write",
        "k",
        "--done-when",
        "cargo test passes",
        "--next-check",
        "cargo test",
        "--no-lint",
    ];
    let err = stderr(&sb.handoff(&repo, &more).code(1));
    assert!(err.contains("  - missing --resume-by\n"), "{err}");
    assert!(
        err.contains("missing --resume-by. `write` replaces the whole brief: to change only some fields of the stored one, run `git handoff write k --update` with the same flags"),
        "{err}"
    );
    assert!(!err.contains("recover") && !err.contains("--edit"), "{err}");
    // The way it names works.
    let mut update = more.to_vec();
    update.push("--update");
    sb.handoff(&repo, &update).success();
}

/// The headings of the narrative's entries, newest first.
fn narrative_headings(repo: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("## "))
        .map(|l| l.split_once("] ").unwrap().1.to_string())
        .collect()
}

/// Issue 57: the entry a write prepends to a tracked narrative is the
/// tool's, not uncommitted work: the next write's brief does not count it
/// ("Uncommitted when written"), while a hand edit of the file and any
/// other change still count.
#[test]
fn a_writes_own_narrative_entry_is_no_uncommitted_work() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let flags = ["cargo test passes", "go on", "cargo test"];
    sb.write_brief(&repo, Some("k"), flags, &["--no-lint"])
        .success();
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative"]);
    sb.write_brief(&repo, Some("k"), flags, &["--no-lint"])
        .success();
    sb.write_brief(&repo, Some("k"), flags, &["--no-lint"])
        .success();
    let brief = json(&stdout(&sb.handoff(&repo, &["show", "k"]).success()));
    assert_eq!(brief["state"].get("diff_summary"), None, "{brief}");
    let out = stdout(&sb.handoff(&repo, &["resume", "k"]).success());
    assert!(!out.contains("Uncommitted when written"), "{out}");
    // Other work counts, the narrative's entries still do not.
    std::fs::write(repo.join("work.txt"), "w\n").unwrap();
    sb.git(&repo, &["add", "work.txt"]);
    sb.write_brief(&repo, Some("k"), flags, &["--no-lint"])
        .success();
    let brief = json(&stdout(&sb.handoff(&repo, &["show", "k"]).success()));
    assert_eq!(
        brief["state"]["diff_summary"],
        "1 file changed, 1 insertion(+)"
    );
    // A hand edit of an entry already committed is work.
    let path = repo.join(".claude/PROJECT_STATE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("### What was done", "### Done, edited")).unwrap();
    sb.write_brief(&repo, Some("k"), flags, &["--no-lint"])
        .success();
    let brief = json(&stdout(&sb.handoff(&repo, &["show", "k"]).success()));
    assert!(
        brief["state"]["diff_summary"]
            .as_str()
            .unwrap()
            .starts_with("2 files changed"),
        "{brief}"
    );
}

/// Issue 57: `write --update` amends the session's earlier entry while it
/// is uncommitted and that session wrote it; otherwise (committed, or
/// another session's) it adds a short correcting entry, so committed
/// entries are never rewritten.
#[test]
fn write_update_amends_only_the_session_s_uncommitted_entry() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let run = |session: &str, args: &[&str]| {
        let mut all = vec!["write", "k", "--no-lint"];
        all.extend_from_slice(args);
        stdout(
            &sb.handoff_env(&repo, &[("GIT_HANDOFF_SESSION", session)], &all, None)
                .success(),
        )
    };
    let whole = |next: &'static str| -> [&'static str; 6] {
        [
            "--done-when",
            "cargo test passes",
            "--resume-by",
            next,
            "--next-check",
            "cargo test",
        ]
    };
    run("s1", &whole("step one"));
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative"]);
    run("s1", &whole("step two"));
    // Same session, entry not committed: amended in place.
    let out = run("s1", &["--update", "--resume-by", "step three"]);
    assert!(
        out.contains("narrative entry in .claude/PROJECT_STATE.md, not committed yet, amended"),
        "{out}"
    );
    assert_eq!(narrative_headings(&repo), ["step three", "step one"]);
    // Another session's uncommitted entry: a correcting entry instead.
    run("s2", &["--update", "--resume-by", "step four"]);
    assert_eq!(
        narrative_headings(&repo),
        ["correction: step four", "step three", "step one"]
    );
    sb.git(&repo, &["commit", "-q", "-am", "narrative again"]);
    let committed = sb.git(&repo, &["show", "HEAD:.claude/PROJECT_STATE.md"]);
    // Committed: never rewritten, even by the session that wrote it.
    run("s2", &["--update", "--decision", "keep x — it is faster"]);
    let text = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let body = committed.split_once("\n## ").unwrap().1;
    assert!(text.contains(body), "{text}");
    assert_eq!(narrative_headings(&repo)[0], "correction: step four");
    assert!(
        text.contains("- Decision added: keep x — it is faster\n"),
        "{text}"
    );
}
