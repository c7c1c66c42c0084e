//! Reading a handoff back: resume with drift warnings, reground, subagent
//! briefs and the session hooks, in real repositories.

use std::path::Path;

use crate::support::briefs::*;
use crate::support::*;
use serde_json::{Value, json};

/// Write this branch's brief: the README's example goal, with `extra`.
fn write(sb: &Sandbox, dir: &Path, extra: &[&str]) {
    sb.write_brief(dir, None, AUTH, extra).success();
}

fn resume(sb: &Sandbox, dir: &Path, args: &[&str], now: &str) -> assert_cmd::assert::Assert {
    let mut cmd = assert_cmd::Command::from_std(sb.command("git", dir));
    cmd.arg("handoff")
        .arg("resume")
        .args(args)
        .env("GIT_HANDOFF_NOW", now);
    cmd.assert()
}

fn warnings(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("!! "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_fresh_brief_on_its_branch_resumes_without_warnings() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "fn verify() {}\n", "auth");
    write(
        &sb,
        &repo,
        &[
            "--read",
            "src/auth.rs=under repair",
            "--decision",
            "use <=",
            "--rejected",
            "< (off by one)",
            "--test",
            "cargo test auth=fail",
        ],
    );
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(warnings(&out).is_empty(), "{out}");
    assert!(out.starts_with("# Resume — main\n"), "{out}");
    assert!(
        out.contains("\nNext step: add leeway\n"),
        "the prompt line is the next step: {out}"
    );
    assert!(
        !out.contains("run `git handoff resume"),
        "resume never tells its reader to run resume: {out}"
    );
    assert!(
        out.contains("- Done when: cargo test auth passes\n"),
        "{out}"
    );
    assert!(
        out.contains("- Next acceptance check: cargo test auth::expiry\n"),
        "{out}"
    );
    assert!(out.contains("- Commits since brief written: 0\n"), "{out}");
    assert!(
        out.contains("## Rejected paths (do not retry)\n- < (off by one)\n"),
        "{out}"
    );
    assert!(
        out.contains("## Tests\n- [fail] cargo test auth\n"),
        "{out}"
    );
    assert!(
        out.contains("## Files to read first\n- src/auth.rs — under repair\n"),
        "{out}"
    );
}

#[test]
fn warnings_come_first_in_their_fixed_order() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "a\n", "auth");
    sb.commit(&repo, "src/old.rs", "o\n", "old");
    let wt = sb.worktree(&repo, "wt", "feat/x");
    write(
        &sb,
        &wt,
        &[
            "--read",
            "src/old.rs:1-2=legacy",
            "--read",
            "src/auth.rs=kept",
        ],
    );
    // the file goes away in the worktree the brief was written in
    sb.git(&wt, &["rm", "-q", "src/old.rs"]);
    sb.git(&wt, &["commit", "-q", "-m", "drop old"]);
    // resumed from the main worktree, 31 hours later
    let out = stdout(&resume(&sb, &repo, &["feat-x"], "2026-12-01T19:00:00Z").success());
    assert_eq!(
        warnings(&out),
        [
            format!(
                "!! BRANCH MISMATCH: brief is for 'feat/x', checked out in {wt} (cd {wt}); you're on 'main' — drift below is measured on 'feat/x'",
                wt = std::fs::canonicalize(&wt).unwrap().display()
            )
            .as_str(),
            "!! STALE: brief written ~31h ago (2026-11-30T12:00:00Z)",
            "!! MISSING: src/old.rs:1-2",
            format!(
                "!! CHANGED: src/old.rs:1-2 — 1 commit since the brief touched it (deleted): {} drop old",
                sb.git(&wt, &["rev-parse", "--short=7", "HEAD"]).trim()
            )
            .as_str(),
        ],
        "{out}"
    );
    let first_non_warning = out.lines().position(|l| !l.starts_with("!! ")).unwrap();
    assert_eq!(first_non_warning, 4, "warnings precede the render: {out}");
    assert!(
        out.contains("- Written in worktree: ") && out.contains(" (linked)\n"),
        "{out}"
    );
}

#[test]
fn stale_threshold_comes_from_env_then_config_then_24h() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]);
    let stale = |extra_env: Option<&str>, now: &str| -> Vec<String> {
        let mut cmd = assert_cmd::Command::from_std(sb.command("git", &repo));
        cmd.args(["handoff", "resume"]).env("GIT_HANDOFF_NOW", now);
        if let Some(h) = extra_env {
            cmd.env("GIT_HANDOFF_STALE_HOURS", h);
        }
        warnings(&String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap())
    };
    assert!(
        stale(None, "2026-12-01T11:00:00Z").is_empty(),
        "23h is fresh by default"
    );
    assert_eq!(
        stale(None, "2026-12-01T12:00:00Z"),
        ["!! STALE: brief written ~24h ago (2026-11-30T12:00:00Z)"]
    );
    assert_eq!(
        stale(None, "2026-12-02T12:00:00Z"),
        ["!! STALE: brief written ~2d ago (2026-11-30T12:00:00Z)"]
    );
    assert_eq!(
        stale(Some("2"), "2026-11-30T14:30:00Z"),
        ["!! STALE: brief written ~2h ago (2026-11-30T12:00:00Z)"]
    );
    sb.git(&repo, &["config", "handoff.staleHours", "100"]);
    assert!(
        stale(None, "2026-12-02T12:00:00Z").is_empty(),
        "config raises the threshold"
    );
    assert_eq!(
        stale(Some("1"), "2026-11-30T13:00:00Z").len(),
        1,
        "env beats config"
    );
}

#[test]
fn an_impossible_timestamp_is_refused_not_stored() {
    // It used to be stored (and resumed without a stale line), but its date
    // in the narrative heading made the file unreadable to the merge
    // driver: a timestamp must be a real UTC time.
    let (sb, repo) = one_repo();
    let input = r#"{"timestamp":"2026-13-45T00:00:00Z","resume":{"done_when":"d","resume_by":"r"},"state":{"next_acceptance_check":"c"}}"#;
    let out = sb
        .handoff_with(&repo, &["write", "-F", "-", "--no-lint"], Some(input))
        .code(1);
    let err = stderr(&out);
    assert!(
        err.contains("  - timestamp: \"2026-13-45T00:00:00Z\" is not a real date and time"),
        "{err}"
    );
    assert!(err.lines().last().unwrap().starts_with("error: "), "{err}");
    assert_eq!(handoff_refs(&sb, &repo), "");
}

#[test]
fn commits_since_changed_files_and_a_dirty_tree() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "a\n", "auth");
    write(
        &sb,
        &repo,
        &[
            "--read",
            "src/auth.rs=under repair",
            "--read",
            "README=intro",
            "--decision",
            "keep verify() pure",
        ],
    );
    // Before anything changed, the decisions carry no caveat.
    let before = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        before.contains("\n## Decisions\n- keep verify() pure\n"),
        "{before}"
    );
    sb.commit(&repo, "src/auth.rs", "a\nb\n", "touch auth");
    sb.commit(&repo, "other.txt", "x\n", "other");
    sb.commit(&repo, "src/auth.rs", "a\nb\nc\n", "touch auth again");
    std::fs::write(repo.join("README"), "changed\n").unwrap();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    // The newest commits are named with their subjects, the tip first.
    let line = out
        .lines()
        .find(|l| l.starts_with("- Commits since brief written: 3: "))
        .unwrap_or_else(|| panic!("{out}"));
    // A file the brief rests on changed: its decisions are to be re-checked.
    assert!(
        out.contains("\n## Decisions (made before the CHANGED files above changed: re-check those that rest on them)\n- keep verify() pure\n"),
        "{out}"
    );
    let tip = sb.git(&repo, &["log", "-1", "--format=%h touch auth again"]);
    assert!(
        line.starts_with(&format!(
            "- Commits since brief written: 3: {}; ",
            tip.trim()
        )),
        "{line}"
    );
    let count = sb.git(&repo, &["rev-list", "--count", "HEAD~3..HEAD"]);
    assert_eq!(count.trim(), "3");
    let newest = sb.git(&repo, &["rev-parse", "--short=7", "HEAD"]);
    let root = std::fs::canonicalize(&repo).unwrap();
    assert_eq!(
        warnings(&out),
        [
            format!(
                "!! CHANGED: src/auth.rs — 2 commits since the brief touched it (modified), newest: {} touch auth again",
                newest.trim()
            )
            .as_str(),
            // The worktree and the files, not only their count.
            format!(
                "!! DIRTY: uncommitted changes now in {} (1 file changed, 1 insertion(+), 1 deletion(-)): README; the brief was written on a clean tree",
                root.display()
            )
            .as_str(),
        ],
        "{out}"
    );
    let v: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    let dirty = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "dirty")
        .expect("a dirty warning");
    assert_eq!(dirty["files"], serde_json::json!(["README"]));
    assert_eq!(dirty["worktree"], root.display().to_string());
    assert_eq!(dirty["more"], 0);
    // Many files: five are named, then how many more.
    sb.git(&repo, &["checkout", "-q", "--", "README"]);
    for n in 0..7 {
        sb.commit(&repo, &format!("f{n}.txt"), "x\n", "add");
    }
    sb.write_brief(&repo, None, ["d", "r", "c"], &[]).success();
    for n in 0..7 {
        std::fs::write(repo.join(format!("f{n}.txt")), "y\n").unwrap();
    }
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("(7 files changed, 7 insertions(+), 7 deletions(-)): f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more;"),
        "{out}"
    );
}

#[test]
fn a_brief_head_outside_the_current_history_is_named() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "a.txt", "a\n", "a");
    write(&sb, &repo, &[]);
    let brief_head = sb.git(&repo, &["rev-parse", "--short=7", "HEAD"]);
    // reset the branch to unrelated history
    sb.git(&repo, &["checkout", "-q", "--orphan", "tmp"]);
    sb.git(&repo, &["commit", "-q", "-m", "unrelated"]);
    sb.git(&repo, &["branch", "-q", "-f", "main", "tmp"]);
    sb.git(&repo, &["checkout", "-q", "main"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(&format!(
            "- Brief HEAD {} not in current history\n",
            brief_head.trim()
        )),
        "{out}"
    );
    assert!(!out.contains("Commits since"), "{out}");
    let v: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    assert_eq!(v["in_history"], false);
    assert_eq!(v["commits_since"], Value::Null);
}

#[test]
fn a_shallow_boundary_gives_no_commit_line_and_no_error() {
    let sb = Sandbox::new();
    let origin = sb.repo("origin");
    sb.git(&origin, &["branch", "old"]);
    sb.commit(&origin, "b.txt", "b\n", "b");
    sb.commit(&origin, "c.txt", "c\n", "c");
    let url = format!("file://{}", origin.display());
    sb.git(
        sb.dir.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            &url,
            "shallow",
        ],
    );
    let shallow = sb.path("shallow");
    assert_eq!(
        sb.git(&shallow, &["rev-parse", "--is-shallow-repository"]),
        "true\n"
    );
    // a brief written at `old`, whose path to HEAD crosses the boundary
    sb.git(&shallow, &["checkout", "-q", "origin/old"]);
    sb.write_brief(&shallow, Some("k"), ["d", "r", "c"], &[])
        .success();
    sb.git(&shallow, &["checkout", "-q", "main"]);
    let out = stdout(&sb.handoff(&shallow, &["resume", "k"]).success());
    assert!(
        !out.contains("Commits since") && !out.contains("not in current history"),
        "{out}"
    );
    // Not a silent gap: one line says what could not be measured and why.
    assert!(
        out.lines()
            .any(|l| l.starts_with("!! COMMITS not measured: ")
                && l.contains("shallow clone's boundary")
                && l.contains("git fetch --unshallow")),
        "{out}"
    );
    assert!(out.contains("# Resume — k"), "{out}");
}

#[test]
fn briefs_from_other_clones_resume_and_other_projects_are_refused() {
    let sb = Sandbox::new();
    let a = sb.repo("a");
    let url = format!("file://{}", a.display());
    sb.git(sb.dir.path(), &["clone", "-q", &url, "b"]);
    let b = sb.path("b");

    // 1. written in A at a commit B has: another clone, resumed with a note.
    write(&sb, &a, &[]);
    sb.take_origin_brief(&b, "main");
    let out = stdout(&sb.handoff(&b, &["resume"]).success());
    assert!(!out.contains("REPO MISMATCH"), "{out}");
    // Where it was written, said once.
    assert!(
        out.contains("- Written in another clone of this repository: "),
        "{out}"
    );
    assert!(!out.contains("- Written in worktree"), "{out}");

    // 2. written in A at a commit B has never seen, fetched from the remote.
    sb.commit(&a, "new.txt", "n\n", "unpushed");
    sb.write_brief(&a, Some("teammate"), ["d", "r", "c"], &[])
        .success();
    sb.take_origin_brief(&b, "teammate");
    let out = stdout(&sb.handoff(&b, &["resume", "teammate"]).success());
    assert!(!out.contains("REPO MISMATCH"), "{out}");
    assert!(
        out.contains("from remote 'origin'")
            && out
                .contains("if the branch was pushed, fetch it to see it: git fetch origin main\n"),
        "{out}"
    );

    // 3. a brief from an unrelated project: only the warning, exit 1.
    let other = sb.repo("other");
    sb.commit(&other, "x.txt", "x\n", "other project");
    sb.write_brief(&other, Some("foreign"), ["d", "r", "c"], &[])
        .success();
    let blob = sb.git(&other, &["cat-file", "-p", "refs/handoffs/foreign"]);
    let id = sb.git_stdin(&b, &["hash-object", "-w", "--stdin"], blob.as_bytes());
    sb.git(&b, &["update-ref", "refs/handoffs/foreign", &id]);
    let out = sb.handoff(&b, &["resume", "foreign"]).code(1);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("!! REPO MISMATCH: "), "{text}");
    let v: Value = serde_json::from_str(&stdout(
        &sb.handoff(&b, &["resume", "foreign", "--json"]).code(1),
    ))
    .unwrap();
    assert_eq!(v["resumed"], false);
    assert_eq!(v["warnings"][0]["kind"], "repo_mismatch");
}

#[test]
fn selection_with_zero_one_and_several_briefs() {
    let (sb, repo) = one_repo();
    let out = sb.handoff(&repo, &["resume"]).code(1);
    assert_stderr_has(&out, "no briefs in this repository yet");

    sb.write_brief(&repo, Some("alpha"), ["a", "r", "c"], &[])
        .success();
    // exactly one, not this branch's: rendered
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(out.contains("# Resume — alpha"), "{out}");

    sb.write_brief(&repo, Some("beta"), ["b", "r", "c"], &[])
        .success();
    // `write beta` made beta this session's key: a keyless resume reads it
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(out.contains("# Resume — beta"), "{out}");
    // a new session has no key of its own yet
    hook(&sb, &repo, "session-start", r#"{"source":"startup"}"#);
    let out = sb.handoff(&repo, &["resume"]).code(1);
    let listing = stdout(&out);
    assert!(
        listing.contains("alpha") && listing.contains("beta"),
        "{listing}"
    );
    assert!(!listing.contains("# Resume"), "never guesses: {listing}");
    assert_stderr_has(
        &out,
        "error: no brief under this branch's key and 2 under others; pass a KEY: `git handoff resume <key>`",
    );

    // the branch's own brief wins, and the others are named in one line
    // (after `write beta` the worktree's sticky key is beta, so follow the
    // branch explicitly)
    write(&sb, &repo, &["--key-from-branch"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(out.contains("# Resume — main"), "{out}");
    assert!(out.contains("- Other briefs: alpha, beta\n"), "{out}");
    sb.handoff(&repo, &["resume", "nope"])
        .code(1)
        .stderr("error: no brief for key 'nope'; `git handoff list` shows the keys\n");
}

#[test]
fn json_carries_the_same_facts_as_the_text() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &["--read", "gone.rs=x"]);
    sb.commit(&repo, "a.txt", "a\n", "a");
    let text = stdout(&resume(&sb, &repo, &[], "2026-12-02T00:00:00Z").success());
    let v: Value = serde_json::from_str(&stdout(
        &resume(&sb, &repo, &["--json"], "2026-12-02T00:00:00Z").success(),
    ))
    .unwrap();
    assert_eq!(v["key"], "main");
    assert_eq!(v["commits_since"], 1);
    assert_eq!(v["in_history"], true);
    assert_eq!(
        v["warnings"][0],
        serde_json::json!({"kind": "stale", "hours": 36, "timestamp": "2026-11-30T12:00:00Z"})
    );
    assert_eq!(
        v["warnings"][1],
        serde_json::json!({"kind": "missing", "path": "gone.rs"})
    );
    assert_eq!(v["brief"]["resume"]["done_when"], "cargo test auth passes");
    assert!(
        text.contains("!! STALE: brief written ~36h ago") && text.contains("!! MISSING: gone.rs")
    );
    assert!(text.contains("Commits since brief written: 1"));
    assert_eq!(
        v["warnings"].as_array().unwrap().len(),
        warnings(&text).len()
    );
}

#[test]
fn reground_is_compact() {
    let (sb, repo) = one_repo();
    let mut extra = vec![];
    for i in 1..=7 {
        extra.push("--decision".to_string());
        extra.push(format!("decision {i}"));
    }
    extra.extend([
        "--read".into(),
        "src/a.rs=core".into(),
        "--rejected".into(),
        "nope".into(),
    ]);
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    write(&sb, &repo, &extra);
    let out = stdout(&resume_cmd(&sb, &repo, "reground"));
    assert_eq!(
        out,
        "# Reground — main\n\n## Goal\n- Done when: cargo test auth passes\n- Next acceptance check: cargo test auth::expiry\n\n\
         ## Locked decisions\n- decision 1\n- decision 2\n- decision 3\n- decision 4\n- decision 5\n\n\
         ## Files to keep in view\n- src/a.rs — core\n"
    );
}

fn resume_cmd(sb: &Sandbox, dir: &Path, sub: &str) -> assert_cmd::assert::Assert {
    sb.handoff(dir, &[sub]).success()
}

#[test]
fn subagent_brief_shape_and_cap() {
    let (sb, repo) = one_repo();
    write(
        &sb,
        &repo,
        &[
            "--decision",
            "keep the API",
            "--rejected",
            "rewrite",
            "--risk",
            "clock skew",
            "--read",
            "src/a.rs=core",
        ],
    );
    let out = stdout(
        &sb.handoff(
            &repo,
            &[
                "brief",
                "--task",
                "Fix the expiry test",
                "--scope",
                "src/auth.rs only",
            ],
        )
        .success(),
    );
    let headings: Vec<&str> = out.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        [
            "## Task",
            "## Scope",
            "## Locked decisions",
            "## Do not retry",
            "## Open risks",
            "## Read first",
            "## Return"
        ]
    );
    assert!(out.starts_with("## Task\nFix the expiry test\n"), "{out}");
    assert!(
        !out.contains("main") && !out.contains("schema") && !out.contains("refs/"),
        "no key or store path: {out}"
    );
    assert!(out.lines().count() <= 30);
    assert_eq!(
        handoff_refs(&sb, &repo)
            .lines()
            .filter(|l| l.contains("refs/handoffs/"))
            .count(),
        1,
        "never persisted"
    );

    // over the cap: nothing on stdout, exit 1
    let mut many = vec![
        "write".to_string(),
        "big".into(),
        "--done-when".into(),
        "d".into(),
        "--resume-by".into(),
        "r".into(),
        "--next-check".into(),
        "c".into(),
    ];
    for i in 0..30 {
        many.push("--decision".into());
        many.push(format!("d{i}"));
    }
    sb.handoff(&repo, &many.iter().map(String::as_str).collect::<Vec<_>>())
        .success();
    // a long parent brief never makes it fail: what does not fit is one line
    let out = stdout(&sb.handoff(&repo, &["brief", "big"]).success());
    assert!(out.lines().count() <= 30, "{out}");
    assert!(out.contains("## Locked decisions\n- d0\n"), "{out}");
    assert!(out.contains("## Return\n"), "{out}");
    let more = out
        .lines()
        .find(|l| l.starts_with("(+"))
        .expect("a +N more line");
    let shown = out.lines().filter(|l| l.starts_with("- d")).count();
    assert_eq!(
        more,
        format!("(+{} more: git handoff resume big)", 30 - shown),
        "{out}"
    );
    // only a task and scope too long on their own fail, and say so
    let long_task = (0..40)
        .map(|i| format!("step {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let out = sb
        .handoff(&repo, &["brief", "big", "--task", &long_task])
        .code(1);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("task, scope and return contract alone")
            && stderr(&out).contains("re-decompose"),
        "{}",
        stderr(&out)
    );
    // Issue 58: the setting may lower the method's ceiling, never lift it.
    sb.git(&repo, &["config", "handoff.briefMaxLines", "60"]);
    let out = stdout(&sb.handoff(&repo, &["brief", "big"]).success());
    assert!(out.lines().count() <= 30, "{out}");
    sb.git(&repo, &["config", "handoff.briefMaxLines", "20"]);
    let out = stdout(&sb.handoff(&repo, &["brief", "big"]).success());
    assert!(
        out.lines().count() <= 20 && out.lines().count() > 15,
        "{out}"
    );
}

fn hook(sb: &Sandbox, dir: &Path, event: &str, input: &str) -> String {
    let out = sb
        .handoff_with(dir, &["hook", event], Some(input))
        .success();
    stdout(&out)
}

#[test]
fn session_start_hook_for_each_source() {
    let (sb, repo) = one_repo();
    // no brief: nothing
    assert_eq!(
        hook(&sb, &repo, "session-start", r#"{"source":"compact"}"#),
        ""
    );
    write(
        &sb,
        &repo,
        &["--risk", "clock skew", "--read", "missing.rs=gone"],
    );
    for source in ["clear", "compact"] {
        let out = hook(
            &sb,
            &repo,
            "session-start",
            &format!(r#"{{"source":"{source}","session_id":"s"}}"#),
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(
            ctx.starts_with(&format!("# Resumed (auto, on /{source}) — main\n")),
            "{ctx}"
        );
        for field in [
            "| - Next step (the brief's plan): add leeway",
            "- Done when: cargo test auth passes",
            "- Next acceptance check: cargo test auth::expiry",
            "- Open risks: clock skew",
            "- Read first: missing.rs — gone",
            "!! MISSING: missing.rs",
        ] {
            assert!(ctx.contains(field), "{field}: {ctx}");
        }
    }
    for source in ["startup", "resume"] {
        let out = hook(
            &sb,
            &repo,
            "session-start",
            &format!(r#"{{"source":"{source}"}}"#),
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert_eq!(ctx.lines().count(), 1, "{ctx}");
        assert!(ctx.contains("git handoff resume"), "{ctx}");
    }
    // a field with nothing prints a dash
    sb.write_brief(&repo, Some("HANDOFF"), ["d", "r", "c"], &[])
        .success();
    sb.git(&repo, &["checkout", "-q", "--detach"]);
    let v: Value =
        serde_json::from_str(&hook(&sb, &repo, "session-start", r#"{"source":"clear"}"#)).unwrap();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("- Open risks: —\n") && ctx.contains("- Read first: —\n"),
        "{ctx}"
    );
}

#[test]
fn hooks_never_block_a_session() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]);
    for garbage in ["", "not json", "[1]", "{\"source\":", "\u{0}\u{1}"] {
        assert_eq!(
            hook(&sb, &repo, "session-start", garbage),
            "",
            "{garbage:?}"
        );
    }
    let plain = sb.path("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let mut cmd =
        assert_cmd::Command::from_std(sb.command(env!("CARGO_BIN_EXE_git-handoff"), &plain));
    cmd.args(["hook", "session-start"])
        .env("GIT_CEILING_DIRECTORIES", sb.dir.path())
        .write_stdin(r#"{"source":"compact"}"#);
    cmd.assert().success().stdout("");
    // the harness's cwd field is honoured
    let input = format!(r#"{{"source":"compact","cwd":"{}"}}"#, repo.display());
    let mut cmd =
        assert_cmd::Command::from_std(sb.command(env!("CARGO_BIN_EXE_git-handoff"), &plain));
    cmd.args(["hook", "session-start"])
        .env("GIT_CEILING_DIRECTORIES", sb.dir.path())
        .write_stdin(input);
    let out = cmd.assert().success();
    assert!(stdout(&out).contains("Resumed (auto, on /compact) — main"));

    let v: Value = serde_json::from_str(&hook(&sb, &repo, "pre-compact", "{}")).unwrap();
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains("git handoff write"),
        "{v}"
    );
    let v: Value = serde_json::from_str(&hook(&sb, &repo, "pre-compact", "garbage")).unwrap();
    assert!(v["systemMessage"].is_string());
}

#[test]
fn refusals_speak_json_and_name_the_right_command_and_key() {
    let (sb, repo) = one_repo();
    for key in ["alpha", "beta"] {
        sb.write_brief(&repo, Some(key), ["cargo test a", "r", "cargo test b"], &[])
            .success();
    }
    // a new session: no key of its own, so a keyless read refuses to guess
    hook(&sb, &repo, "session-start", r#"{"source":"startup"}"#);
    let out = sb.handoff(&repo, &["resume", "--json"]).code(1);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON even when refusing");
    assert_eq!(v["resumed"], false);
    assert_eq!(v["briefs"].as_array().unwrap().len(), 2);
    let out = sb.handoff(&repo, &["reground"]).code(1);
    assert_stderr_has(&out, "`git handoff reground <key>`");
    let out = sb.handoff(&repo, &["resume", "feat/login"]).code(1);
    assert_stderr_has(&out, "the key of branch 'feat/login' is 'feat-login'");
}

#[test]
fn a_stored_brief_with_an_impossible_timestamp_resumes_without_a_stale_line() {
    // The schema admits it (wire compatibility); only write refuses to make one.
    let (sb, repo) = one_repo();
    let head = sb.git(&repo, &["rev-parse", "HEAD"]);
    let common = std::fs::canonicalize(repo.join(".git")).unwrap();
    let brief = serde_json::json!({"schema_version": "1", "key": "odd", "timestamp": "2026-13-45T00:00:00Z", "mode": "WRITE",
        "resume": {"done_when": "cargo test a", "resume_by": "r"},
        "state": {"branch": "main", "next_acceptance_check": "cargo test b", "head_sha": head.trim(),
                  "worktree": {"root": repo.display().to_string(), "is_linked": false, "git_common_dir": common.display().to_string()}}});
    let file = sb.path("odd.json");
    std::fs::write(&file, serde_json::to_string_pretty(&brief).unwrap() + "\n").unwrap();
    let id = sb.git(&repo, &["hash-object", "-w", file.to_str().unwrap()]);
    sb.git(&repo, &["update-ref", "refs/handoffs/odd", id.trim()]);
    sb.handoff(&repo, &["validate", file.to_str().unwrap()])
        .success();
    let out = stdout(&resume(&sb, &repo, &["odd"], "2030-01-01T00:00:00Z").success());
    assert!(warnings(&out).is_empty(), "{out}");
    assert!(out.contains("# Resume — odd"), "{out}");
}

/// The trial's shape: a linked worktree on `feat/x` writes a brief with
/// files to read; a teammate then commits a change to one of them on
/// `feat/x`. Returns (main worktree, linked worktree).
fn trial(sb: &Sandbox) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = sb.repo("app");
    sb.commit(&repo, "TASK.md", "spec v1\n", "spec");
    sb.commit(&repo, "src/dur.rs", "stub\n", "stub");
    let wt = sb.worktree(&repo, "app-x", "feat/x");
    let mut args = vec![
        "write",
        "--done-when",
        "cargo test durations passes",
        "--resume-by",
        "Replace the format_duration stub with the real formatter",
        "--next-check",
        "cargo test durations::format",
    ];
    for d in 0..7 {
        args.push("--decision");
        args.push(
            [
                "d0 keep seconds",
                "d1 no chrono",
                "d2 round down",
                "d3 u64 input",
                "d4 no locale",
                "d5 pad hours",
                "d6 test first",
            ][d],
        );
    }
    for r in ["r0 chrono crate", "r1 floats", "r2 regex parse"] {
        args.extend(["--rejected", r]);
    }
    for r in ["k0 overflow", "k1 negative input", "k2 spec may change"] {
        args.extend(["--risk", r]);
    }
    args.extend([
        "--test",
        "cargo test durations=fail",
        "--test",
        "cargo test spec=pass",
    ]);
    args.extend([
        "--command",
        "cargo test durations",
        "--command",
        "cargo clippy",
    ]);
    args.extend([
        "--read",
        "TASK.md=the spec",
        "--read",
        "src/dur.rs=the stub",
        "--read",
        "README=overview",
    ]);
    sb.handoff(&wt, &args).success();
    // a teammate changes the spec on the brief's branch
    sb.commit(&wt, "TASK.md", "spec v2\n", "spec: hours too");
    (repo, wt)
}

#[test]
fn from_the_main_worktree_drift_is_measured_on_the_briefs_branch() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let wt_real = std::fs::canonicalize(&wt).unwrap().display().to_string();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    let w = warnings(&out);
    assert_eq!(
        w[0],
        format!(
            "!! BRANCH MISMATCH: brief is for 'feat/x', checked out in {wt_real} (cd {wt_real}); you're on 'main' — drift below is measured on 'feat/x'"
        ),
        "{out}"
    );
    assert!(
        w.iter()
            .any(|l| l.starts_with("!! CHANGED: TASK.md — 1 commit since")
                && l.ends_with(&format!(
                    "(modified): {} spec: hours too",
                    sb.git(&wt, &["rev-parse", "--short=7", "HEAD"]).trim()
                ))),
        "the commit that changed it is named: {out}"
    );
    assert!(out.contains("- Commits since brief written: 1: "), "{out}");
    assert!(!out.contains("not in current history"), "{out}");
    // DIRTY is about the worktree the work happens in
    assert!(!out.contains("!! DIRTY"), "{out}");
    std::fs::write(wt.join("src/dur.rs"), "half done\n").unwrap();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(&format!(
            "!! DIRTY: uncommitted changes now in {wt_real} (1 file changed"
        )) && out.contains("): src/dur.rs; the brief"),
        "{out}"
    );
    let v: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    assert_eq!(v["measured_on"]["branch"], "feat/x");
    assert_eq!(
        v["measured_on"]["tip"],
        sb.git(&wt, &["rev-parse", "HEAD"]).trim()
    );
    assert_eq!(v["worktree"], wt_real.as_str());
    assert_eq!(v["commits_since"], 1);
    assert_eq!(v["in_history"], true);
    let tip = sb.git(&wt, &["log", "-1", "--format=%h%n%s"]);
    let (sha7, subject) = tip.trim().split_once('\n').unwrap();
    assert_eq!(
        v["recent_commits"],
        json!([{"sha7": sha7, "subject": subject}])
    );
    // the brief's own worktree says the same, with no mismatch
    let here = stdout(&sb.handoff(&wt, &["resume"]).success());
    assert!(
        here.contains(&format!(
            "- Commits since brief written: 1: {sha7} {subject}\n"
        )),
        "{here}"
    );
    assert!(!here.contains("BRANCH MISMATCH"), "{here}");
}

#[test]
fn from_a_clone_drift_is_measured_on_the_remote_tracking_branch() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let bare = sb.path("team.git");
    sb.git(
        &repo,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    sb.git(&repo, &["remote", "add", "origin", bare.to_str().unwrap()]);
    sb.git(&repo, &["push", "-q", "origin", "main", "feat/x"]);
    sb.handoff(&wt, &["push"]).success();
    sb.git(
        sb.dir.path(),
        &["clone", "-q", bare.to_str().unwrap(), "mate"],
    );
    let mate = sb.path("mate");
    sb.handoff(&mate, &["fetch"]).success();
    let out = stdout(&sb.handoff(&mate, &["resume", "feat-x"]).success());
    let w = warnings(&out);
    assert_eq!(
        w[0],
        "!! BRANCH MISMATCH: brief is for 'feat/x', you're on 'main' — drift below is measured on 'origin/feat/x'; `git switch feat/x` checks it out",
        "{out}"
    );
    assert!(!out.contains("checked out in"), "{out}");
    assert!(
        w.iter()
            .any(|l| l.starts_with("!! CHANGED: TASK.md — 1 commit since")),
        "{out}"
    );
    assert!(!w.iter().any(|l| l.starts_with("!! MISSING")), "{out}");
    assert!(out.contains("- Commits since brief written: 1: "), "{out}");
    assert!(!out.contains("not in current history"), "{out}");
    let v: Value = serde_json::from_str(&stdout(
        &sb.handoff(&mate, &["resume", "feat-x", "--json"]).success(),
    ))
    .unwrap();
    assert_eq!(v["measured_on"]["branch"], "origin/feat/x");
    assert_eq!(v["worktree"], Value::Null);
    // the branch deleted everywhere: measured on HEAD, and said so
    sb.git(&mate, &["branch", "-q", "-D", "-r", "origin/feat/x"]);
    let out = stdout(&sb.handoff(&mate, &["resume", "feat-x"]).success());
    assert!(
        out.contains("you're on 'main'; 'feat/x' exists nowhere here (deleted, or never fetched) — drift below is measured on 'main'"),
        "{out}"
    );
    // no worktree has the branch: measured on its tip, where a file gone
    // from the branch is MISSING though the main worktree still has it
    sb.git(&wt, &["rm", "-q", "src/dur.rs"]);
    sb.git(&wt, &["commit", "-q", "-m", "drop the stub"]);
    sb.git(
        &repo,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    assert!(repo.join("src/dur.rs").exists());
    let out = stdout(&sb.handoff(&repo, &["resume", "feat-x"]).success());
    let w = warnings(&out);
    assert_eq!(
        w[0],
        "!! BRANCH MISMATCH: brief is for 'feat/x', you're on 'main' — drift below is measured on 'feat/x'",
        "{out}"
    );
    assert!(w.contains(&"!! MISSING: src/dur.rs".to_string()), "{out}");
    assert!(out.contains("- Commits since brief written: 2: "), "{out}");
}

#[test]
fn a_rewritten_branch_is_named_when_the_head_is_in_neither_history() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let sha7 = sb.git(&wt, &["rev-parse", "--short=7", "HEAD~1"]);
    sb.git(&wt, &["checkout", "-q", "--orphan", "tmp"]);
    sb.git(&wt, &["commit", "-q", "-m", "rewritten"]);
    sb.git(&wt, &["branch", "-q", "-f", "feat/x", "tmp"]);
    sb.git(&wt, &["checkout", "-q", "feat/x"]);
    // main held the brief's head too (feat/x started there): rewrite it
    sb.git(&repo, &["checkout", "-q", "--orphan", "tmp2"]);
    sb.git(&repo, &["commit", "-q", "-m", "rewritten main"]);
    sb.git(&repo, &["branch", "-q", "-f", "main", "tmp2"]);
    sb.git(&repo, &["checkout", "-q", "main"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains(&format!(
            "- Brief HEAD {} not in current history: neither in 'feat/x' nor in 'main' (rewritten or deleted)\n",
            sha7.trim()
        )),
        "{out}"
    );
}

#[test]
fn the_resume_render_says_each_fact_once_in_at_most_40_lines() {
    let sb = Sandbox::new();
    let (repo, _wt) = trial(&sb);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.lines().count() <= 40,
        "{} lines:\n{out}",
        out.lines().count()
    );
    for fact in ["Done when", "Next acceptance check"] {
        assert_eq!(
            out.lines().filter(|l| l.contains(fact)).count(),
            1,
            "{fact} once:\n{out}"
        );
    }
    assert!(!out.contains("run `git handoff resume"), "{out}");
    for heading in [
        "## Decisions",
        "## Rejected paths (do not retry)",
        "## Open risks",
        "## Tests",
        "## Commands",
        "## Files to read first",
    ] {
        assert!(out.contains(heading), "{heading} missing:\n{out}");
    }
    // the prompt after a resume does not send the reader back to resume
    let v: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    let prompt = v["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("Continue 'feat-x': Replace the format_duration stub"),
        "{prompt}"
    );
    assert!(!prompt.contains("git handoff resume"), "{prompt}");
}

#[test]
fn brief_for_a_subtask_of_a_long_brief_fits_the_cap() {
    let sb = Sandbox::new();
    let (_repo, wt) = trial(&sb);
    let out = stdout(
        &sb.handoff(
            &wt,
            &[
                "brief",
                "--task",
                "Make the spec's hours rule pass",
                "--scope",
                "src/dur.rs",
            ],
        )
        .success(),
    );
    assert!(out.lines().count() <= 30, "{out}");
    assert!(
        out.starts_with("## Task\nMake the spec's hours rule pass\n"),
        "{out}"
    );
    // the risk about the spec ranks first among the risks
    assert!(
        out.contains("## Open risks\n- k2 spec may change\n"),
        "{out}"
    );
}

#[test]
fn the_session_start_hook_points_the_way_from_the_main_worktree() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let wt_real = std::fs::canonicalize(&wt).unwrap().display().to_string();
    let input = |source: &str| {
        format!(
            r#"{{"session_id":"s","cwd":"{}","hook_event_name":"SessionStart","source":"{source}"}}"#,
            repo.display()
        )
    };
    // The context the hook gives the model.
    let context_of = |source: &str| -> String {
        let answer = hook(&sb, &repo, "session-start", &input(source));
        let v: Value = serde_json::from_str(&answer).unwrap();
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let context = context_of("startup");
    assert!(
        context.contains("No handoff brief for this branch ('main')"),
        "{context}"
    );
    assert!(
        context.contains(&format!(
            "- feat-x (branch 'feat/x', checked out in {wt_real} (cd {wt_real}), written"
        )),
        "{context}"
    );
    assert!(context.contains("`git handoff resume feat-x`"), "{context}");
    // after a compaction with one brief: its five fields, measured on feat/x
    let context = context_of("compact");
    assert!(
        context.contains("- Next step (the brief's plan): Replace the format_duration stub"),
        "{context}"
    );
    assert!(context.contains("!! CHANGED: TASK.md"), "{context}");
    assert!(
        context.contains("drift below is measured on 'feat/x'"),
        "{context}"
    );
    // more than three briefs: the newest three, then +N more
    for (k, t) in [
        ("a", "2026-11-30T08:00:00Z"),
        ("b", "2026-11-30T09:00:00Z"),
        ("c", "2026-11-30T10:00:00Z"),
    ] {
        sb.write_brief_at(&repo, t, Some(k), ["d", "r", "c"], &[])
            .success();
    }
    // On main, where a, b and c were written under keys of their own, the
    // answer does not say there is no brief for this branch.
    let context = context_of("startup");
    assert!(
        context.starts_with("No handoff brief under this branch's key ('main'); 4 are waiting, 3 of them written on this branch ('main'):\n"),
        "{context}"
    );
    assert!(
        context.contains(
            "\n- c (branch 'main', checked out here, written 2h ago): `git handoff resume c`\n"
        ),
        "{context}"
    );
    sb.git(&repo, &["switch", "-q", "-c", "other"]);
    let context = context_of("startup");
    let named: Vec<&str> = context.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(named.len(), 3, "{context}");
    assert!(
        named[0].starts_with("- feat-x ")
            && named[1].starts_with("- c ")
            && named[2].starts_with("- b "),
        "{context}"
    );
    assert!(context.contains("+1 more: `git handoff list`"), "{context}");
}

#[test]
fn a_hook_cwd_that_is_not_a_directory_gets_no_answer() {
    let (sb, repo) = one_repo();
    write(&sb, &repo, &[]);
    let file = repo.join("README");
    for cwd in [
        file.display().to_string(),
        sb.path("gone").display().to_string(),
    ] {
        let input = format!(r#"{{"cwd":"{cwd}","source":"compact"}}"#);
        // run from inside a repository that has a brief: never falls back to it
        assert_eq!(hook(&sb, &repo, "session-start", &input), "", "{cwd}");
    }
    let input = r#"{"cwd":42,"source":"compact"}"#;
    assert_eq!(hook(&sb, &repo, "session-start", input), "");
}

/// With more briefs than the overview names, the current branch's brief
/// comes first even when it is the oldest (a keyless `resume` takes it),
/// and the next command names it. Found by a fresh-context trial in a
/// teammate's clone: 199 newer briefs hid the one for the branch checked
/// out.
#[test]
fn git_handoff_alone_lists_this_branchs_brief_first_and_names_it() {
    let sb = Sandbox::new();
    let repo = sb.repo("app");
    let jwt = sb.worktree(&repo, "app-jwt", "feat/jwt");
    let tasks = sb.worktree(&repo, "app-tasks", "tasks");
    let flags = ["done", "next", "check"];
    sb.write_brief_at(&jwt, "2026-11-30T07:00:00Z", Some("feat-jwt"), flags, &[])
        .success();
    for i in 0..6 {
        let at = format!("2026-11-30T1{i}:00:00Z");
        sb.write_brief_at(&tasks, &at, Some(&format!("task-{i}")), flags, &[])
            .success();
    }
    let named = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("- "))
            .map(|l| l.split(' ').nth(1).unwrap_or_default().to_string())
            .collect()
    };
    let on_main = stdout(&sb.handoff(&repo, &[]).success());
    assert!(on_main.contains("Briefs here, newest first:"), "{on_main}");
    assert_eq!(
        named(&on_main),
        ["task-5", "task-4", "task-3", "task-2", "task-1"],
        "{on_main}"
    );
    assert!(on_main.contains("+2 more: `git handoff list`"), "{on_main}");
    assert!(
        on_main.ends_with("\nResume one with: git handoff resume KEY\n\nOptional, once per clone (resuming works without it): `git handoff init` makes the narrative merge as a log and a plain `git fetch` bring the briefs.\n"),
        "{on_main}"
    );

    // Issue 57: on the branch, the overview shows its brief as a keyless
    // resume does, and names the others, five at most.
    let on_branch = stdout(&sb.handoff(&jwt, &[]).success());
    assert!(
        on_branch.contains(
            "The brief waiting here, as `git handoff resume` prints it:\n\n# Resume — feat-jwt\n"
        ),
        "{on_branch}"
    );
    assert!(
        on_branch.contains(
            "- Other briefs: task-0, task-1, task-2, task-3, task-4 (+1 more: `git handoff list`)\n"
        ),
        "{on_branch}"
    );
    // What it shows is what a keyless resume takes.
    let keyless = stdout(&sb.handoff(&jwt, &["resume", "--json"]).success());
    let v: Value = serde_json::from_str(&keyless).unwrap();
    assert_eq!(v["key"], "feat-jwt", "{keyless}");
}

/// Issue 57: in the worktree of the branch a brief waits for, `git
/// handoff` alone is enough to go on: it prints that brief exactly as a
/// keyless `resume` does (drift warnings included), between the overview's
/// first line and its `init` offer.
/// Found by fresh-context trials: every agent ran `--help`, `git handoff`,
/// then `git handoff resume` before working.
#[test]
fn git_handoff_alone_prints_the_brief_waiting_for_this_branch_as_resume_does() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let overview = stdout(&sb.handoff(&wt, &[]).success());
    let resumed = stdout(&sb.handoff(&wt, &["resume"]).success());
    assert!(resumed.contains("!! CHANGED: TASK.md"), "{resumed}");
    assert_eq!(
        overview,
        format!(
            "git handoff: save and restore the working state of a coding session (`git handoff help` lists every command)\n\nThe brief waiting here, as `git handoff resume` prints it:\n\n{resumed}\nOptional, once per clone (resuming works without it): `git handoff init` makes the narrative merge as a log and a plain `git fetch` bring the briefs.\n"
        )
    );
    // Elsewhere (main has no brief) it still lists them.
    let listed = stdout(&sb.handoff(&repo, &[]).success());
    assert!(
        listed.contains("Briefs here, newest first:\n- feat-x"),
        "{listed}"
    );
    assert!(!listed.contains("# Resume"), "{listed}");
}

#[test]
fn git_handoff_alone_says_what_is_waiting_and_how_to_resume_it() {
    let sb = Sandbox::new();
    let (repo, wt) = trial(&sb);
    let wt_real = std::fs::canonicalize(&wt).unwrap().display().to_string();
    let out = stdout(&sb.handoff(&repo, &[]).success());
    assert!(
        out.contains(&format!(
            "- feat-x (branch 'feat/x', checked out in {wt_real} (cd {wt_real}), written 0m ago): `git handoff resume feat-x`\n"
        )),
        "{out}"
    );
    assert!(
        out.ends_with("\nResume with: git handoff resume\n\nOptional, once per clone (resuming works without it): `git handoff init` makes the narrative merge as a log and a plain `git fetch` bring the briefs.\n"),
        "{out}"
    );
    // Once set up, the overview stops asking for `init`.
    sb.handoff(&repo, &["init"]).success();
    let out = stdout(&sb.handoff(&repo, &[]).success());
    assert!(
        out.ends_with("\nResume with: git handoff resume\n"),
        "{out}"
    );
    // Inside the brief's own worktree it shows the brief itself (issue 57).
    let inside = stdout(&sb.handoff(&wt, &[]).success());
    assert!(inside.contains("# Resume — feat-x\n"), "{inside}");
    assert!(!inside.contains("(cd "), "{inside}");
    let empty = sb.repo("empty");
    let out = stdout(&sb.handoff(&empty, &[]).success());
    assert!(
        out.contains("No briefs here yet. Hand off with: git handoff write"),
        "{out}"
    );
    let out = sb.handoff(sb.dir.path(), &[]).failure();
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn commits_that_only_add_the_narrative_entry_are_named_as_such() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "a\n", "auth");
    write(&sb, &repo, &[]);
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("- Commits since brief written: 1 (nothing but the narrative log changed)\n"),
        "{out}"
    );
    let json: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    assert_eq!(json["commits_since"], 1);
    assert_eq!(json["commits_only_narrative"], true);

    // Another file under the same folder is work, not the narrative.
    sb.commit(&repo, ".claude/settings.json", "{}\n", "settings");
    // Counted apart, so the reader knows one of the two is no work.
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("- Commits since brief written: 2 (1 of them the narrative): "),
        "{out}"
    );
    let json: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "--json"]).success())).unwrap();
    assert_eq!(json["commits_since"], 2);
    assert!(json.get("commits_only_narrative").is_none(), "{json}");
    assert_eq!(json["commits_narrative"], 1);
}

/// A team may commit the narrative's merge line (which `git handoff init`
/// puts in `.git/info/attributes`) to `.gitattributes`; a commit of the
/// narrative that carries that line along is still the narrative's alone
/// (a fresh-context trial met it: `init`, `write`, then `git add -A` and a
/// commit). Any other change to `.gitattributes` is work.
#[test]
fn a_narrative_commit_with_inits_attribute_line_is_still_only_the_narrative() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, ".gitattributes", "*.png binary\n", "attributes");
    sb.handoff(&repo, &["init"]).success();
    let line = std::fs::read_to_string(repo.join(".git/info/attributes")).unwrap();
    let attributes = format!("*.png binary\n{line}");
    std::fs::write(repo.join(".gitattributes"), &attributes).unwrap();
    assert!(
        attributes.contains("merge=handoff-narrative"),
        "{attributes}"
    );
    write(&sb, &repo, &[]);
    sb.git(&repo, &["add", "-A"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative and init"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("- Commits since brief written: 1 (nothing but the narrative log changed)\n"),
        "{out}"
    );

    // Another attribute is work.
    std::fs::write(
        repo.join(".gitattributes"),
        format!("{attributes}*.rs diff=rust\n"),
    )
    .unwrap();
    sb.git(&repo, &["commit", "-q", "-am", "rust diff"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("- Commits since brief written: 2 (1 of them the narrative): "),
        "{out}"
    );
}

#[test]
fn a_configured_narrative_path_and_a_switched_off_one_are_followed() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/auth.rs", "a\n", "auth");
    sb.git(&repo, &["config", "handoff.narrative", "docs/log/state.md"]);
    write(&sb, &repo, &[]);
    sb.git(&repo, &["add", "docs/log/state.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "narrative"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("- Commits since brief written: 1 (nothing but the narrative log changed)\n"),
        "{out}"
    );
    // With the narrative off, the same file is just a file.
    sb.git(&repo, &["config", "handoff.narrative", "false"]);
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(out.contains("- Commits since brief written: 1: "), "{out}");
}

/// The entry a `write --update` added to a tracked narrative, not
/// committed yet, is the write's own doing: alone it is no DIRTY (a
/// fresh-context trial read the warning as a real problem); with other
/// changes it is named among them.
#[test]
fn the_narratives_own_uncommitted_entry_is_no_drift() {
    let (sb, repo) = one_repo();
    sb.commit(&repo, "src/lib.rs", "fn a() {}\n", "a");
    sb.write_brief(
        &repo,
        None,
        ["cargo test passes", "add b()", "cargo test"],
        &["--no-lint"],
    )
    .success();
    sb.git(&repo, &["add", ".claude/PROJECT_STATE.md"]);
    sb.git(&repo, &["commit", "-q", "-m", "handoff: main"]);
    sb.handoff(
        &repo,
        &["write", "--update", "--no-lint", "--resume-by", "add c()"],
    )
    .success();
    let status = sb.git(&repo, &["status", "--porcelain"]);
    assert_eq!(status, " M .claude/PROJECT_STATE.md\n");
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(!out.contains("DIRTY"), "{out}");
    std::fs::write(repo.join("src/lib.rs"), "fn a() {}\nfn b() {}\n").unwrap();
    let out = stdout(&sb.handoff(&repo, &["resume"]).success());
    assert!(
        out.contains("!! DIRTY: uncommitted changes now in ")
            && out.contains(
                ": .claude/PROJECT_STATE.md, src/lib.rs; the brief was written on a clean tree"
            ),
        "{out}"
    );
}
