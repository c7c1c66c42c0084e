//! The method, faithfully (issue 16): one test per numbered item, each
//! reproducing the reported case in a real repository.

use std::path::Path;

use crate::support::briefs::*;
use crate::support::*;

fn write(sb: &Sandbox, dir: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    sb.write_brief(dir, None, CARGO_TEST, extra)
}

/// Item 1: on feat/a, a keyless write after writing on feat/b targets
/// feat-a and leaves feat-b's brief alone.
#[test]
fn item1_a_keyless_write_after_a_branch_switch_never_overwrites_another_brief() {
    let (sb, repo) = one_repo();
    sb.git(&repo, &["switch", "-q", "-c", "feat/b"]);
    write(&sb, &repo, &["--decision", "b's own decision"]).success();
    let b_before = sb.git(&repo, &["rev-parse", "refs/handoffs/feat-b"]);
    sb.git(&repo, &["switch", "-q", "-c", "feat/a"]);
    let out = write(&sb, &repo, &[]).success();
    assert!(
        stderr(&out)
            .contains("branch switched: this write targets 'feat-a' (was 'feat-b' on feat/b)"),
        "{}",
        stderr(&out)
    );
    assert_stdout_has(&out, "Wrote brief 'feat-a'");
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/handoffs/feat-b"]),
        b_before
    );
    assert_eq!(
        sb.stored_brief(&repo, "feat-a")["state"]["branch"],
        "feat/a"
    );
    // Back on feat/b the sticky key follows again.
    sb.git(&repo, &["switch", "-q", "feat/b"]);
    let out = write(&sb, &repo, &[]).success();
    assert!(stdout(&out).contains("Wrote brief 'feat-b'"));
}

/// Item 2: resuming a split thread makes it the sticky key, so a keyless
/// write continues that thread instead of the branch's brief.
#[test]
fn item2_resuming_a_key_makes_it_the_sessions_key() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]).success();
    let main_before = sb.git(&repo, &["rev-parse", "refs/handoffs/main"]);
    let plan = r#"{"why":"two threads","threads":[
        {"key":"api-docs","resume":{"done_when":"docs build","resume_by":"write the docs"},"state":{"next_acceptance_check":"make docs"}},
        {"key":"api-code","resume":{"done_when":"cargo test api","resume_by":"write the code"},"state":{"next_acceptance_check":"cargo test api"}}]}"#;
    sb.handoff_with(&repo, &["split", "--plan", "-", "--yes"], Some(plan))
        .success();
    sb.handoff(&repo, &["resume", "api-docs"]).success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "api-docs\nmain\n"
    );
    let out = write(&sb, &repo, &[]).success();
    assert_stdout_has(&out, "Wrote brief 'api-docs'");
    assert!(
        !stderr(&out).contains("branch switched"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/handoffs/main"]),
        main_before
    );
    // recover KEY and write KEY make their key sticky too.
    sb.handoff(&repo, &["recover", "api-code"]).success();
    let out = write(&sb, &repo, &[]).success();
    assert!(stdout(&out).contains("Wrote brief 'api-code'"));
    // GIT_HANDOFF_KEY picks a brief for one run and does not stick.
    sb.handoff_env(&repo, &[("GIT_HANDOFF_KEY", "main")], &["resume"], None)
        .success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "api-code\nmain\n"
    );
}

/// Item 3: the values the issue lists are redacted by `write -F`, named by
/// `lint`, and `pipeline save` no longer writes a token or an e-mail.
#[test]
fn item3_common_secrets_and_pii_never_land() {
    let (sb, repo) = one_repo();
    let openai = "sk-proj-Ab3dEf6hIj9kLm2nOp5qT3BlbkFJZx8wV7uT6sR5qP4oN3mL";
    let anthropic = format!("sk-ant-api03-{}AA", "aB3dE6fH9iK2lM5nP8qR".repeat(5));
    let npm = "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    let values: Vec<(&str, String)> = vec![
        ("hunter22", "password=hunter22".into()),
        ("pg_Secr3t!", "DB_PASSWORD=pg_Secr3t!".into()),
        (openai, format!("OPENAI_API_KEY={openai}")),
        (&anthropic, anthropic.clone()),
        (npm, npm.into()),
        ("867-5309", "call +1 (555) 867-5309".into()),
        ("123-45-6789", "ssn 123-45-6789".into()),
        ("4111 1111 1111 1111", "card 4111 1111 1111 1111".into()),
        ("10.20.30.40", "db at 10.20.30.40".into()),
        (
            "2001:db8:85a3::8a2e:370:7334",
            "v6 2001:db8:85a3::8a2e:370:7334".into(),
        ),
    ];
    let risks: Vec<&str> = values.iter().map(|(_, t)| t.as_str()).collect();
    let input = serde_json::json!({
        "resume": {"done_when": "cargo test passes", "resume_by": "run cargo test"},
        "state": {"next_acceptance_check": "cargo test", "open_risks": risks,
                  "decisions": ["keep the 1.2.3 API — callers pin it"],
                  "rejected_paths": ["uuid 123e4567-e89b-12d3-a456-426614174000 keys"]},
    });
    let file = sb.path("in.json");
    std::fs::write(&file, input.to_string()).unwrap();
    // lint names every kind before anything is written
    let out = sb.handoff(&repo, &["lint", "-F", file.to_str().unwrap()]);
    let lint = stdout(&out) + &stderr(&out);
    let kinds = [
        "secret_assignment",
        "openai_api_key",
        "anthropic_api_key",
        "npm_access_token",
        "phone",
        "ssn",
        "payment_card",
        "ip_address",
    ];
    for kind in kinds {
        assert!(lint.contains(kind), "lint misses {kind}: {lint}");
    }
    let out = sb
        .handoff(&repo, &["write", "-F", file.to_str().unwrap(), "--no-lint"])
        .success();
    assert_stderr_has(&out, "secrets redacted");
    let stored = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    let notes = sb.git(&repo, &["log", "--notes=handoffs", "--format=%N"]);
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    for (secret, _) in &values {
        assert!(!stored.contains(secret), "{secret} in the brief");
        assert!(!notes.contains(secret), "{secret} in the history");
        assert!(!narrative.contains(secret), "{secret} in the narrative");
    }
    // near-misses survive
    assert!(stored.contains("1.2.3 API"), "{stored}");
    assert!(stored.contains("123e4567-e89b-12d3-a456-426614174000"));

    // pipeline save redacts the committed template
    let ghp = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let template = format!(
        "## When to use\nreviews (ask jane.doe@corp.example.com)\n\n## Decomposition axis\nmodule\n\n## Stages\n### Review\n- run: parallel\n- role: reviewer with {ghp}\n- brief contract: diff in, findings out\n\n## Synthesis\nmerge\n"
    );
    let out = sb
        .handoff_with(
            &repo,
            &["pipeline", "save", "rev", "-F", "-"],
            Some(&template),
        )
        .success();
    assert_stderr_has(&out, "redacted");
    let saved = std::fs::read_to_string(repo.join(".claude/pipelines/rev.md")).unwrap();
    assert!(
        !saved.contains(&ghp) && !saved.contains("jane.doe"),
        "{saved}"
    );
    assert!(saved.contains("[REDACTED:github_token]") && saved.contains("[REDACTED:email]"));

    // a kind switched off in git config is kept
    sb.git(&repo, &["config", "handoff.redact.ip-address", "false"]);
    write(&sb, &repo, &["--risk", "db at 10.20.30.40", "--no-lint"]).success();
    let stored = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    assert!(stored.contains("10.20.30.40"), "{stored}");
}

/// Item 6: a pipeline template in the method's own stage format is saved.
#[test]
fn item6_pipeline_templates_in_the_methods_format_are_accepted() {
    let (sb, repo) = one_repo();
    let template = "# Pipeline: feature\n\n## When to use\nA feature across modules.\n\n## Decomposition axis\nstage\n\n## Stages\n1. **explore** (parallel) — one read-only explorer per module; returns file:line findings\n2. **implement** (sequential) — the lead applies the plan\n3. **verify** (background) — runs the full suite\n\n## Synthesis\nThe lead merges findings; synthesis is not concatenation.\n";
    sb.handoff_with(
        &repo,
        &["pipeline", "save", "feature", "-F", "-"],
        Some(template),
    )
    .success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".claude/pipelines/feature.md")).unwrap(),
        template
    );
    // a bad mode in that format is named
    let bad = template.replace("(background)", "(whenever)");
    let out = sb
        .handoff_with(&repo, &["pipeline", "save", "bad", "-F", "-"], Some(&bad))
        .code(1);
    assert!(
        stderr(&out)
            .contains("stage 'verify': run: 'whenever' must be parallel, sequential or background"),
        "{}",
        stderr(&out)
    );
    assert!(!repo.join(".claude/pipelines/bad.md").exists());
}

/// The newest entry of a narrative file (from its first `## ` line to the next).
fn newest_entry(repo: &Path) -> String {
    let text = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    let start = text.find("\n## ").unwrap() + 1;
    let end = text[start + 3..]
        .find("\n## ")
        .map_or(text.len(), |i| start + 3 + i);
    text[start..end].to_string()
}

/// Item 4: the entry pairs each decision with its why and the rejected
/// alternatives, "What was done" lists the commits since the key's previous
/// entry, and "Surprises / lessons" appears only when given.
#[test]
fn item4_the_narrative_entry_keeps_the_why() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]).success();
    for n in 1..=7 {
        sb.commit(&repo, "f.txt", &format!("{n}\n"), &format!("step {n}"));
    }
    write(
        &sb,
        &repo,
        &[
            "--decision",
            "read notes with gix — no subprocess per write",
            "--rejected",
            "shelling out to git notes: 40 ms a call",
        ],
    )
    .success();
    let entry = newest_entry(&repo);
    assert!(
        entry.contains(
            "- **read notes with gix** — no subprocess per write. Rejected: shelling out to git notes: 40 ms a call.\n"
        ),
        "{entry}"
    );
    // What was done: at most 5 bullets, the last counting the rest; what
    // comes next is a pointer, not work done (issue 50).
    for n in 4..=7 {
        assert!(entry.contains(&format!("- step {n}\n")), "{entry}");
    }
    assert!(!entry.contains("- step 3\n"), "at most 5 bullets: {entry}");
    assert!(
        entry.contains("- … and 3 more (`git log` and `git handoff resume main` have them)\n"),
        "{entry}"
    );
    let done =
        &entry[entry.find("### What was done").unwrap()..entry.find("### Decisions").unwrap()];
    assert_eq!(
        done.lines().filter(|l| l.starts_with("- ")).count(),
        5,
        "{done}"
    );
    assert!(
        !done.contains("Next:") && !done.contains("Done when:"),
        "{done}"
    );
    assert!(!entry.contains("Handoff written"), "{entry}");
    assert!(!entry.contains("### Surprises"), "{entry}");

    // The next entry of the key names only the commits since this one;
    // a given "Surprises / lessons" section is kept, before Pointers.
    sb.commit(&repo, "g.txt", "g\n", "step 8 (asked ops@corp.example.com)");
    let md = sb.path("entry.md");
    std::fs::write(
        &md,
        "### Surprises / lessons\n- gix walks hide commits cheaply\n",
    )
    .unwrap();
    write(&sb, &repo, &["--narrative", md.to_str().unwrap()]).success();
    let entry = newest_entry(&repo);
    assert!(
        // commit subjects pass the redaction filter like everything written
        entry.contains("- step 8 (asked [REDACTED:email])\n") && !entry.contains("- step 7\n"),
        "{entry}"
    );
    let surprises = entry
        .find("### Surprises / lessons\n- gix walks")
        .expect("kept");
    assert!(surprises < entry.find("### Pointers").unwrap(), "{entry}");
}

/// Item 7: a brief whose timestamp carries an offset (`+00:00`) is
/// imported and validated; `write` stores it normalised to `Z`.
#[test]
fn item7_any_rfc3339_timestamp_is_accepted() {
    let (sb, repo) = one_repo();
    let dir = sb.path("briefs");
    std::fs::create_dir_all(&dir).unwrap();
    let brief = |key: &str, ts: &str| {
        serde_json::json!({
            "schema_version": "1", "key": key, "timestamp": ts, "mode": "WRITE",
            "resume": {"done_when": "cargo test passes", "resume_by": "run cargo test"},
            "state": {"branch": "main", "next_acceptance_check": "cargo test",
                      "worktree": {"root": repo.display().to_string(), "is_linked": false,
                                   "git_common_dir": std::fs::canonicalize(repo.join(".git")).unwrap().display().to_string()}}
        })
    };
    let offset = brief("offset", "2026-11-30T13:00:00+01:00");
    std::fs::write(dir.join("offset.json"), offset.to_string()).unwrap();
    sb.handoff_with(&repo, &["validate", "-"], Some(&offset.to_string()))
        .success()
        .stdout("handoff-validate: OK\n");
    let out = stdout(
        &sb.handoff(&repo, &["import", dir.to_str().unwrap()])
            .success(),
    );
    assert!(out.contains("1 imported, 0 skipped-invalid"), "{out}");
    let stored = sb.stored_brief(&repo, "offset");
    assert_eq!(
        stored["timestamp"], "2026-11-30T13:00:00+01:00",
        "imported as recorded"
    );

    let mut input = brief("main", "2026-11-30T13:00:00.5+01:00");
    input["state"].as_object_mut().unwrap().remove("worktree");
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(&input.to_string()))
        .success();
    assert_eq!(
        sb.stored_brief(&repo, "main")["timestamp"],
        "2026-11-30T12:00:00Z"
    );
}

/// Item 9 (smaller): `reground --file` re-grounds from a brief file, and
/// the rejected-paths lint fires on a brief with neither decisions nor
/// rejected paths. (`split`'s entry and warning: tests/split.rs.)
#[test]
fn item9_reground_file_and_the_rejected_paths_lint() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &DECIDED).success();
    let raw = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    let file = sb.path("HANDOFF.json");
    std::fs::write(&file, &raw).unwrap();
    let outside = sb.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let from_file = stdout(
        &sb.handoff(&outside, &["reground", "-F", file.to_str().unwrap()])
            .success(),
    );
    let stored = stdout(&sb.handoff(&repo, &["reground"]).success());
    assert_eq!(from_file, stored);
    assert!(from_file.contains("keep JWT"), "{from_file}");
    let out = sb
        .handoff_with(&outside, &["reground", "-F", "-"], Some("{}"))
        .code(1);
    assert_stderr_has(&out, "is not a valid brief");
    sb.handoff(&repo, &["reground", "main", "-F", "x"]).code(2);

    let bare = r#"{"resume":{"done_when":"cargo test passes","resume_by":"run cargo test"},"state":{"next_acceptance_check":"cargo test"}}"#;
    let out = sb
        .handoff_with(&repo, &["lint", "-F", "-", "--strict"], Some(bare))
        .code(1);
    let text = stdout(&out) + &stderr(&out);
    assert!(text.contains("no-rejected-paths"), "{text}");
    assert!(
        text.contains("no decisions and no rejected paths"),
        "{text}"
    );
}

/// Resuming, from the main worktree, a brief whose branch is checked out
/// in a linked one does not hand that brief to a keyless `write` on main:
/// the write follows main's branch, says so, and the feature's brief stays.
#[test]
fn a_keyless_write_after_resuming_another_branchs_brief_never_overwrites_it() {
    let (sb, repo) = one_repo();
    let feat = sb.worktree(&repo, "r-feat", "feat/x");
    write(&sb, &feat, &["--decision", "the feature's own decision"]).success();
    let before = sb.git(&repo, &["rev-parse", "refs/handoffs/feat-x"]);
    sb.handoff(&repo, &["resume"]).success();
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/handoff-key")).unwrap(),
        "feat-x\nfeat/x\n"
    );
    let out = write(&sb, &repo, &[]).success();
    assert!(
        stderr(&out)
            .contains("branch switched: this write targets 'main' (was 'feat-x' on feat/x)"),
        "{}",
        stderr(&out)
    );
    assert_stdout_has(&out, "Wrote brief 'main'");
    assert_eq!(
        sb.git(&repo, &["rev-parse", "refs/handoffs/feat-x"]),
        before
    );
    assert_eq!(sb.stored_brief(&repo, "main")["state"]["branch"], "main");
    // In the feature's own worktree, resume and write continue its thread.
    sb.handoff(&feat, &["resume"]).success();
    let out = write(&sb, &feat, &[]).success();
    assert_stdout_has(&out, "Wrote brief 'feat-x'");
}

/// "What was done" is work: the commit of the last entry alone (the
/// narrative, committed as the README says) is not listed; a commit of
/// the narrative and work is.
#[test]
fn what_was_done_leaves_out_the_narratives_own_commit() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]).success();
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "handoff: main"]);
    sb.commit(&repo, "src/lib.rs", "fn a() {}\n", "add a()");
    write(&sb, &repo, &[]).success();
    let entry = newest_entry(&repo);
    let done =
        &entry[entry.find("### What was done").unwrap()..entry.find("### Decisions").unwrap()];
    assert!(done.contains("- add a()\n"), "{done}");
    assert!(!done.contains("handoff: main"), "{done}");
}
