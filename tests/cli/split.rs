//! `split`, end to end in real repositories.

use std::path::Path;

use crate::support::*;

const PLAN: &str = r#"{
  "why": "auth and docs were braided in one session",
  "shared": {
    "state": {"decisions": ["tokens stay JWT"], "open_risks": ["CI clock skew"]},
    "files_read_first": [{"path": "DESIGN.md", "why": "the contract"}]
  },
  "threads": [
    {"key": "api-auth",
     "resume": {"done_when": "cargo test auth passes", "resume_by": "add leeway to verify()"},
     "state": {"next_acceptance_check": "cargo test auth::expiry", "decisions": ["use <= not <"]},
     "files_read_first": [{"path": "src/auth.rs", "why": "under repair"}]},
    {"key": "api-docs",
     "resume": {"done_when": "the docs build", "resume_by": "document token expiry"},
     "state": {"next_acceptance_check": "mdbook build", "open_risks": ["stale examples"]}}
  ]
}"#;

/// Everything a split could change: every ref with its value, the notes,
/// the working tree status (ignored files included) and the file list.
fn snapshot(sb: &Sandbox, dir: &Path) -> String {
    let mut files = Vec::new();
    for entry in walk(dir, &[".git"]) {
        files.push(entry.display().to_string());
    }
    files.sort();
    format!(
        "{}\n{}\n{}",
        sb.git(dir, &["for-each-ref", "--format=%(objectname) %(refname)"]),
        sb.git(dir, &["status", "--porcelain", "--ignored"]),
        files.join("\n")
    )
}

#[test]
fn a_dry_run_proposes_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let before = snapshot(&sb, &repo);
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--no-lint"], Some(PLAN))
        .success();
    let text = stdout(&out);
    assert!(
        text.starts_with("Split proposal: auth and docs were braided in one session\n"),
        "{text}"
    );
    assert!(
        text.contains("1. api-auth (new) — add leeway to verify()"),
        "{text}"
    );
    assert!(text.contains("   owns: src/auth.rs\n"), "{text}");
    assert!(
        text.contains("   next check: cargo test auth::expiry\n"),
        "{text}"
    );
    assert!(
        text.contains("   risks: CI clock skew; stale examples\n"),
        "{text}"
    );
    assert!(
        text.contains("Nothing written. Run again with --yes"),
        "{text}"
    );
    // At most 5 lines per thread: the blocks between blank lines.
    for block in text
        .split("\n\n")
        .filter(|b| b.starts_with(char::is_numeric))
    {
        assert!(block.lines().count() <= 5, "{block}");
    }
    assert_eq!(stderr(&out), "");
    assert_eq!(snapshot(&sb, &repo), before, "a dry run changes nothing");
    assert_eq!(handoff_refs(&sb, &repo), "");
    assert!(!repo.join(".claude").exists());

    // The JSON proposal carries the composed briefs; still nothing written.
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--json"], Some(PLAN))
        .success();
    let report = json(&stdout(&out));
    assert_eq!(report["written"], false);
    assert_eq!(report["briefs"].as_array().unwrap().len(), 2);
    assert_eq!(snapshot(&sb, &repo), before);
}

#[test]
fn more_than_four_threads_draw_a_warning() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let threads: Vec<String> = (1..=5)
        .map(|n| {
            format!(
                r#"{{"key":"t{n}","resume":{{"done_when":"d{n}","resume_by":"r{n}"}},"state":{{"next_acceptance_check":"c{n}"}}}}"#
            )
        })
        .collect();
    let plan = format!(r#"{{"why":"w","threads":[{}]}}"#, threads.join(","));
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-"], Some(&plan))
        .success();
    assert!(
        stderr(&out).starts_with("warning: 5 threads; fewer, coarser threads"),
        "{}",
        stderr(&out)
    );
    assert_stderr_has(&out, "or RECOVER instead");
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn one_invalid_thread_writes_nothing_and_every_error_is_listed() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let plan = PLAN.replace(
        r#""state": {"next_acceptance_check": "mdbook build", "open_risks": ["stale examples"]}"#,
        r#""state": {"open_risks": ["stale examples"], "owner": "docs team"}, "mode": "READ""#,
    );
    let before = snapshot(&sb, &repo);
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(&plan))
        .code(1);
    let err = stderr(&out);
    assert!(
        err.starts_with("handoff-split: INVALID\nthread 2 'api-docs':\n"),
        "{err}"
    );
    assert!(
        !err.contains("api-auth"),
        "the valid thread is not listed: {err}"
    );
    for needle in [
        "  - mode: ",
        "  - state: \"next_acceptance_check\" is a required property",
        "  - state: Additional properties are not allowed ('owner' was unexpected)",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
    assert_eq!(
        err.lines().last().unwrap(),
        "error: 1 of 2 threads is invalid; nothing was written (fix the plan and run again)"
    );
    assert_eq!(stdout(&out), "");
    assert_eq!(snapshot(&sb, &repo), before);
}

#[test]
fn two_threads_make_two_refs_one_transaction_and_exactly_one_narrative_entry() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // An earlier entry, so that "one entry" is counted in a real log.
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    let narrative_before = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(PLAN))
        .success();
    let text = stdout(&out);
    assert!(
        text.starts_with("Split into 2 briefs in one transaction"),
        "{text}"
    );
    assert!(
        text.contains("git handoff resume api-auth    # add leeway to verify()\n"),
        "{text}"
    );
    assert!(
        text.contains("git handoff resume api-docs    # document token expiry\n"),
        "{text}"
    );

    let refs = handoff_refs(&sb, &repo);
    assert!(refs.contains("blob refs/handoffs/api-auth\n"), "{refs}");
    assert!(refs.contains("blob refs/handoffs/api-docs\n"), "{refs}");

    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let entries: Vec<&str> = narrative.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        entries,
        [
            "## 2026-11-30 — [split: api-auth, api-docs] auth and docs were braided in one session",
            "## 2026-11-30 — [main] r",
        ],
        "{narrative}"
    );
    assert!(narrative.ends_with(&narrative_before[narrative_before.find("## ").unwrap()..]));
    assert!(
        narrative.contains("### Shared decisions (cross-cutting)\n- **tokens stay JWT**\n"),
        "{narrative}"
    );
    // each thread's own files, as `<key>: <path>`
    assert!(
        narrative.contains("- api-auth: `src/auth.rs`\n"),
        "{narrative}"
    );
    assert!(narrative.contains("- Risk: CI clock skew\n"), "{narrative}");
    assert!(
        narrative.contains("(`git handoff resume api-auth`)"),
        "{narrative}"
    );
    assert!(
        narrative.contains("(`git handoff resume api-docs`)"),
        "{narrative}"
    );

    // Each brief is a normal brief: valid alone, no extra fields, the shared
    // part copied in.
    let head = sb.git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    for key in ["api-auth", "api-docs"] {
        let raw = sb.git(&repo, &["cat-file", "-p", &format!("refs/handoffs/{key}")]);
        sb.handoff_with(&repo, &["validate", "-"], Some(&raw))
            .success();
        let b = json(&raw);
        assert_eq!(b["key"], key);
        assert_eq!(b["mode"], "WRITE");
        assert_eq!(b["state"]["head_sha"], head.as_str());
        assert_eq!(b["state"]["branch"], "main");
        let decisions = b["state"]["decisions"].as_array().unwrap();
        assert_eq!(decisions[0], "tokens stay JWT", "{key}: {decisions:?}");
        assert_eq!(b["files_read_first"][0]["path"], "DESIGN.md");
    }
    let auth = json(&sb.git(&repo, &["cat-file", "-p", "refs/handoffs/api-auth"]));
    assert_eq!(
        auth["state"]["decisions"],
        serde_json::json!(["tokens stay JWT", "use <= not <"])
    );
    // History: both versions on HEAD's note, after the earlier write.
    let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
    assert_eq!(brief_lines(&note).len(), 3, "{note}");
    // The history moved once for both briefs.
    let log = sb.git(
        &repo,
        &["reflog", "show", "--format=%gs", "refs/notes/handoffs"],
    );
    assert_eq!(
        log.lines().next(),
        Some("handoff: split api-auth, api-docs"),
        "{log}"
    );
    assert_eq!(log.lines().count(), 2, "{log}");
    // split does not choose this worktree's key.
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "main\nmain\n"
    );
}

#[test]
fn a_split_is_all_or_none() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // A stale lock on the second ref makes its update fail.
    std::fs::create_dir_all(repo.join(".git/refs/handoffs")).unwrap();
    std::fs::write(repo.join(".git/refs/handoffs/api-docs.lock"), "").unwrap();
    sb.git(&repo, &["config", "core.filesRefLockTimeout", "0"]);
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(PLAN))
        .code(128);
    let err = stderr(&out);
    assert!(err.contains("api-docs.lock"), "{err}");
    assert_eq!(handoff_refs(&sb, &repo), "", "neither ref, nor the notes");
    assert!(
        !repo.join(".claude/PROJECT_STATE.md").exists(),
        "no narrative entry for a split that did not happen"
    );
}

#[test]
fn existing_keys_are_updated_and_a_repeated_key_is_refused() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_brief(&repo, Some("api-auth"), ["d", "r", "c"], &[])
        .success();
    let old = sb.git(&repo, &["rev-parse", "refs/handoffs/api-auth"]);
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-"], Some(PLAN))
        .success();
    assert!(stdout(&out).contains("1. api-auth (updates the stored brief)"));
    let out = sb
        .handoff_with(
            &repo,
            &["split", "--plan", "-", "--yes", "--json"],
            Some(PLAN),
        )
        .success();
    let report = json(&stdout(&out));
    assert_eq!(report["threads"][0]["previous"], old.trim());
    assert!(report["threads"][1]["previous"].is_null());
    assert_ne!(sb.git(&repo, &["rev-parse", "refs/handoffs/api-auth"]), old);

    let repeated = PLAN.replace("\"key\": \"api-docs\"", "\"key\": \"api-auth\"");
    let refs = handoff_refs(&sb, &repo);
    let out = sb
        .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(&repeated))
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("thread 2 'api-auth':\n  - key: 'api-auth' is repeated in the plan (thread 1 has it too)"),
        "{err}"
    );
    assert_eq!(handoff_refs(&sb, &repo), refs);
}

#[test]
fn bad_plans_write_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let thread = r#"{"key":"ok","resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#;
    let cases: Vec<(String, &str)> = vec![
        ("{not json".into(), "the plan: input is not valid JSON"),
        (
            "".into(),
            "the plan: input is not valid JSON: input is empty",
        ),
        ("[]".into(), "the plan must be a JSON object"),
        (
            format!(r#"{{"threads":[{thread}]}}"#),
            "the plan needs \"why\"",
        ),
        (
            format!(r#"{{"why":" ","threads":[{thread}]}}"#),
            "the plan needs \"why\"",
        ),
        (
            r#"{"why":"w","threads":[]}"#.into(),
            "the plan needs \"threads\"",
        ),
        (
            format!(r#"{{"why":"w","threads":[{thread}],"extra":1}}"#),
            "unknown field 'extra' in the plan",
        ),
        (
            format!(r#"{{"why":"w","shared":{{"key":"k"}},"threads":[{thread}]}}"#),
            "\"shared\" cannot set a key",
        ),
        (
            format!(r#"{{"why":"w","shared":[],"threads":[{thread}]}}"#),
            "\"shared\" in the plan must be an object",
        ),
        (
            format!(
                r#"{{"why":"w","threads":[{}]}}"#,
                thread.replace("\"key\":\"ok\",", "\"key\":\"ok\",\"owner\":\"me\",")
            ),
            "(root): Additional properties are not allowed ('owner' was unexpected)",
        ),
        (
            format!(r#"{{"why":"w","shared":{{"state":{{"bogus":1}}}},"threads":[{thread}]}}"#),
            "'bogus' was unexpected",
        ),
        (
            format!(
                r#"{{"why":"w","threads":[{}]}}"#,
                thread.replace("\"ok\"", "\"../escape\"")
            ),
            "thread 1 '../escape':\n  - key: invalid key",
        ),
        (
            format!(
                r#"{{"why":"w","threads":[{}]}}"#,
                thread.replace("\"ok\"", "\"a b\"")
            ),
            "invalid key 'a b'",
        ),
        (
            format!(
                r#"{{"why":"w","threads":[{}]}}"#,
                thread.replace("\"key\":\"ok\",", "")
            ),
            "thread 1 (no key):\n  - key: each thread needs its key",
        ),
        (
            format!(
                r#"{{"why":"w","threads":[{}]}}"#,
                thread.replace("\"ok\"", "7")
            ),
            "thread 1 (no key):\n  - key:",
        ),
        (
            r#"{"why":"w","threads":["just text"]}"#.into(),
            "a thread must be an object",
        ),
    ];
    for (plan, needle) in cases {
        let out = sb
            .handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(&plan))
            .code(1);
        let err = stderr(&out);
        assert!(err.contains(needle), "{plan}: expected {needle:?} in {err}");
        assert!(err.lines().last().unwrap().starts_with("error: "), "{err}");
        assert_eq!(stdout(&out), "");
    }
    sb.handoff(&repo, &["split", "--plan", "/nonexistent/plan.json"])
        .code(128)
        .stderr(predicates::str::contains(
            "cannot read '/nonexistent/plan.json'",
        ));
    sb.handoff(&repo, &["split"]).code(2);
    assert_eq!(handoff_refs(&sb, &repo), "");
    assert!(!repo.join(".claude").exists());
    assert_eq!(sb.git(&repo, &["status", "--porcelain", "--ignored"]), "");
}

#[test]
fn split_adds_no_narrative_entry_when_the_narrative_is_off() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["config", "handoff.narrative", "false"]);
    let out = stdout(
        &sb.handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(PLAN))
            .success(),
    );
    assert!(
        out.contains("; no narrative entry (handoff.narrative is false)."),
        "{out}"
    );
    assert!(!repo.join(".claude").exists());
    assert!(
        sb.git(&repo, &["for-each-ref", "refs/handoffs"])
            .contains("api-docs")
    );
}
