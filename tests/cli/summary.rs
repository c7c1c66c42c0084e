//! Continue summaries: templates, `latest`, and `clean` with ages from
//! `GIT_HANDOFF_NOW`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::briefs::one_repo;
use crate::support::{EXAMPLE, Sandbox, assert_stderr_has, stdout};

/// `git handoff summary clean` in `dir` with both ages set.
fn clean_by_age(
    sb: &Sandbox,
    dir: &Path,
    archive_after: &str,
    delete_after: &str,
) -> assert_cmd::assert::Assert {
    let ages = [
        "--archive-after",
        archive_after,
        "--delete-after",
        delete_after,
    ];
    sb.handoff(dir, &[&["summary", "clean"][..], &ages].concat())
}

/// Every file under `.claude/memory`, relative path → content.
fn memory(repo: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    let base = repo.join(".claude/memory");
    walk(&base, &base, &mut out);
    out
}

fn headings(text: &str) -> Vec<&str> {
    text.lines().filter_map(|l| l.strip_prefix("## ")).collect()
}

#[test]
fn summary_new_writes_each_template_prefilled() {
    let (sb, repo) = one_repo();
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    std::fs::write(repo.join("README"), "changed\n").unwrap();
    std::fs::write(repo.join("notes.txt"), "new\n").unwrap();

    let out = sb
        .summary_new(&repo, "task", "Fix the JWT expiry!")
        .success();
    assert_eq!(
        stdout(&out),
        ".claude/memory/2026-11-30-fix-the-jwt-expiry.md\n"
    );
    let text =
        std::fs::read_to_string(repo.join(".claude/memory/2026-11-30-fix-the-jwt-expiry.md"))
            .unwrap();
    assert!(
        text.starts_with("# Task Summary — Fix the JWT expiry!\n"),
        "{text}"
    );
    assert_eq!(
        headings(&text),
        [
            "Date",
            "Task",
            "Decisions Made",
            "Artifacts Produced",
            "Current State",
            "Key Context for Continuation",
            "Agents Used",
            "Skills Applied"
        ]
    );
    for expected in [
        "## Date\n2026-11-30\n",
        "## Task\nFix the JWT expiry!\n",
        "## Decisions Made\n- use <= not < — the expiry second is still valid\n",
        "- README\n",
        "- notes.txt\n",
        "- Next step: add leeway to verify()\n",
        "- Done when: cargo test auth passes\n",
        "- Do not retry: < operator (off by one)\n",
        "- Brief: `git handoff resume main`\n",
        "## Agents Used\n—\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }

    // Each template's sections, in order, as `## ` headings.
    let expected = [
        (
            "research",
            "Date; Task; System Understanding; Files Involved; Key Findings; Constraints & Gotchas; Open Questions",
        ),
        (
            "plan",
            "Date; Task; Changes; Test Strategy; Execution Order; Decisions Made; Status",
        ),
        (
            "implementation",
            "Date; Task; Completed; In Progress; Remaining; Issues Encountered; Test Results",
        ),
    ];
    for (template, sections) in expected {
        let task = format!("{template} work");
        let out = sb.summary_new(&repo, template, &task).success();
        let text = std::fs::read_to_string(repo.join(stdout(&out).trim())).unwrap();
        assert_eq!(headings(&text).join("; "), sections, "{text}");
    }
    let plan =
        std::fs::read_to_string(repo.join(".claude/memory/2026-11-30-plan-work.md")).unwrap();
    assert!(plan.starts_with("# Plan — plan work\n"), "{plan}");
    assert!(
        plan.contains("- Next check: cargo test auth::expiry\n"),
        "{plan}"
    );

    // The same task the same day: refused, the file kept.
    let before = memory(&repo);
    let out = sb.summary_new(&repo, "plan", "fix the jwt expiry").code(1);
    assert_stderr_has(&out, "exists already");
    assert_eq!(memory(&repo), before);
    // No task, no template.
    sb.summary_new(&repo, "task", " ").code(1);
    sb.handoff(&repo, &["summary", "new", "--task", "x"])
        .code(2);
    sb.summary_new(&repo, "poem", "x").code(2);
    assert_eq!(memory(&repo), before);
}

#[test]
fn summary_latest_prints_the_newest_key_context() {
    let (sb, repo) = one_repo();
    let out = sb.handoff(&repo, &["summary", "latest"]).code(1);
    assert_stderr_has(&out, "no summaries");

    sb.summary_new_at(&repo, "2026-11-01T09:00:00Z", "task", "old task")
        .success();
    sb.summary_new_at(&repo, "2026-11-20T09:00:00Z", "task", "new task")
        .success();
    // A newer research summary has no Key Context section: skipped.
    sb.summary_new_at(&repo, "2026-11-25T09:00:00Z", "research", "digging")
        .success();
    let path = repo.join(".claude/memory/2026-11-20-new-task.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "## Key Context for Continuation\n—\n",
            "## Key Context for Continuation\n- the cache key includes the tenant\n",
        ),
    )
    .unwrap();
    let out = sb.handoff(&repo, &["summary", "latest"]).success();
    assert_eq!(stdout(&out), "- the cache key includes the tenant\n");
    assert_stderr_has(&out, "2026-11-20-new-task.md");
}

#[test]
fn summary_clean_archives_deletes_and_consolidates_by_age() {
    let (sb, repo) = one_repo();
    let new = |now: &str, template: &str, task: &str| {
        sb.summary_new_at(&repo, now, template, task).success();
    };
    // Now is 2026-11-30 (the sandbox clock).
    new("2026-11-25T09:00:00Z", "task", "auth fix"); // 5 days
    new("2026-11-10T09:00:00Z", "plan", "auth fix"); // 20 days, same task
    new("2026-10-31T09:00:00Z", "task", "keep me"); // 30 days: not older than 30
    new("2026-10-30T09:00:00Z", "research", "old research"); // 31 days
    let mem = repo.join(".claude/memory");
    std::fs::create_dir_all(mem.join("archive")).unwrap();
    std::fs::write(mem.join("archive/2026-09-01-recent-archive.md"), "# kept\n").unwrap(); // 90 days
    std::fs::write(mem.join("archive/2026-08-31-expired.md"), "# gone\n").unwrap(); // 91 days
    std::fs::write(mem.join("README.md"), "not a summary\n").unwrap();
    let plan_text = std::fs::read_to_string(mem.join("2026-11-10-auth-fix.md")).unwrap();
    let before = memory(&repo);

    // --dry-run says what would happen and changes nothing.
    let out = sb
        .handoff(&repo, &["summary", "clean", "--dry-run"])
        .success();
    let said = stdout(&out);
    assert_eq!(
        said,
        "would consolidate .claude/memory/2026-11-10-auth-fix.md into .claude/memory/2026-11-25-auth-fix.md\n\
         would archive .claude/memory/2026-10-30-old-research.md (31d old) to .claude/memory/archive/2026-10-30-old-research.md\n\
         would delete .claude/memory/archive/2026-08-31-expired.md (91d old)\n"
    );
    assert_eq!(memory(&repo), before);

    let out = sb.handoff(&repo, &["summary", "clean"]).success();
    assert_eq!(stdout(&out), said.replace("would ", ""));
    let after = memory(&repo);
    let names: Vec<&str> = after.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "2026-10-31-keep-me.md",
            "2026-11-25-auth-fix.md",
            "README.md",
            "archive/2026-09-01-recent-archive.md",
            "archive/2026-10-30-old-research.md",
        ]
    );
    assert_eq!(
        after["archive/2026-10-30-old-research.md"],
        before["2026-10-30-old-research.md"]
    );
    // Consolidation: the newest is the base, the older one's unique lines
    // are kept under a marked section — nothing lost.
    let base = &after["2026-11-25-auth-fix.md"];
    assert!(
        base.starts_with(before["2026-11-25-auth-fix.md"].trim_end()),
        "{base}"
    );
    assert!(
        base.contains("## Consolidated from older summaries\n"),
        "{base}"
    );
    assert!(base.contains("### From 2026-11-10-auth-fix.md\n"), "{base}");
    for line in plan_text.lines().filter(|l| {
        let t = l.trim();
        !t.is_empty() && t != "—" && !t.starts_with("## ")
    }) {
        assert!(base.contains(line), "lost {line:?}:\n{base}");
    }

    // Nothing left to do; configurable ages.
    let out = sb.handoff(&repo, &["summary", "clean"]).success();
    assert!(
        stdout(&out).starts_with("Nothing to clean"),
        "{}",
        stdout(&out)
    );
    let out = clean_by_age(&sb, &repo, "1w", "60d").success();
    assert_eq!(
        stdout(&out),
        "archive .claude/memory/2026-10-31-keep-me.md (30d old) to .claude/memory/archive/2026-10-31-keep-me.md\n\
         delete .claude/memory/archive/2026-09-01-recent-archive.md (90d old)\n"
    );
    // Bad ages.
    sb.handoff(&repo, &["summary", "clean", "--archive-after", "soon"])
        .code(2);
    let out = clean_by_age(&sb, &repo, "60d", "30d").code(1);
    assert_stderr_has(&out, "--delete-after");
}

#[test]
fn a_memory_dir_outside_the_worktree_is_refused() {
    let (sb, repo) = one_repo();
    let outside: PathBuf = sb.path("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, repo.join(".claude")).unwrap();
        let out = sb.summary_new(&repo, "task", "x").code(1);
        assert_stderr_has(&out, "outside the worktree");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}

#[test]
fn summaries_are_redacted_names_included() {
    let (sb, repo) = one_repo();
    let key = "AKIAR7WBZKD3UQ5NXM6L";
    let out = sb
        .summary_new(&repo, "task", &format!("rotate {key}"))
        .success();
    let rel = stdout(&out).trim().to_string();
    assert!(
        !rel.contains(&key.to_lowercase()) && !rel.contains(key),
        "{rel}"
    );
    assert_stderr_has(&out, "aws_access_key_id");
    let text = std::fs::read_to_string(repo.join(&rel)).unwrap();
    assert!(!text.contains(key), "{text}");
    assert!(text.contains("[REDACTED:aws_access_key_id]"), "{text}");
}
