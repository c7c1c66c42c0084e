//! The narrative merge driver end to end: real merges, rebases and
//! cherry-picks of branches that each wrote handoffs, with the driver set
//! up by `git handoff init` and run by git itself.

use std::path::Path;

use crate::support::*;

const NARRATIVE: &str = ".claude/PROJECT_STATE.md";
const NOTE: &str = "> Note (git handoff merge-narrative): this entry was edited differently on both sides of a merge; both versions are kept, this is the other side's.";

/// `git handoff write` on `date` (so the entry's heading has that date),
/// then commit the narrative.
fn handoff_commit(sb: &Sandbox, dir: &Path, date: &str, title: &str) {
    let out = sb
        .command("git", dir)
        .args(["handoff", "write", "--done-when", "tests pass"])
        .args(["--resume-by", title, "--next-check", "cargo test"])
        .env("GIT_HANDOFF_NOW", format!("{date}T09:00:00Z"))
        .output()
        .unwrap();
    assert_ok(&out);
    sb.git(dir, &["add", NARRATIVE]);
    sb.git(dir, &["commit", "-q", "-m", &format!("handoff: {title}")]);
}

/// A repository with the driver set up and `.gitattributes` committed.
fn set_up(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("r");
    sb.init_and_commit_attribute(&repo);
    repo
}

/// A repository [`set_up`] with one committed entry, "base".
fn with_base(sb: &Sandbox) -> std::path::PathBuf {
    let repo = set_up(sb);
    handoff_commit(sb, &repo, "2026-11-01", "base");
    repo
}

fn narrative(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(NARRATIVE)).unwrap()
}

/// The entry titles, in file order.
fn titles(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("## "))
        .map(|l| l.rsplit("] ").next().unwrap().to_string())
        .collect()
}

/// Branches `a` and `b` from main, each with two handoffs, dates interleaved.
fn two_branches(sb: &Sandbox, repo: &Path) {
    sb.git(repo, &["switch", "-q", "-c", "a"]);
    handoff_commit(sb, repo, "2026-11-02", "a one");
    handoff_commit(sb, repo, "2026-11-04", "a two");
    sb.git(repo, &["switch", "-q", "-c", "b", "main"]);
    handoff_commit(sb, repo, "2026-11-03", "b one");
    handoff_commit(sb, repo, "2026-11-05", "b two");
}

#[test]
fn merge_keeps_every_entry_newest_first_with_the_header_once() {
    let sb = Sandbox::new();
    let repo = set_up(&sb);
    // No narrative on main: both branches add the file (git gives the driver
    // an empty base).
    two_branches(&sb, &repo);
    sb.git(&repo, &["switch", "-q", "a"]);
    sb.git(&repo, &["merge", "-q", "--no-edit", "b"]);
    let text = narrative(&repo);
    assert_eq!(
        titles(&text),
        ["b two", "a two", "b one", "a one"],
        "{text}"
    );
    assert_eq!(text.matches("# Project state").count(), 1, "{text}");
    assert!(text.starts_with("# Project state\n"), "{text}");
    assert!(!text.contains("<<<<<<<"), "{text}");
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
    // Every line either side wrote is in the result.
    for side in ["a", "b"] {
        let theirs = sb.git(&repo, &["show", &format!("{side}~0:{NARRATIVE}")]);
        for line in theirs.lines() {
            assert!(text.contains(line), "lost {line:?}");
        }
    }
}

#[test]
fn without_the_driver_config_git_merges_the_narrative_as_text_and_conflicts() {
    let sb = Sandbox::new();
    let origin = set_up(&sb);
    // A clone gets .gitattributes but not the config: git falls back to its
    // text merge, exactly as without git-handoff.
    sb.git(sb.dir.path(), &["clone", "-q", "r", "clone"]);
    let clone = sb.path("clone");
    assert!(origin.join(".gitattributes").exists());
    two_branches(&sb, &clone);
    sb.git(&clone, &["switch", "-q", "a"]);
    let out = sb.git_out(&clone, &["merge", "--no-edit", "b"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!(
            "CONFLICT (add/add): Merge conflict in {NARRATIVE}"
        )),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(narrative(&clone).contains("<<<<<<<"));
    sb.handoff(&clone, &["init", "--check"]).code(1);
}

#[test]
fn rebase_replays_each_commit_through_the_driver() {
    let sb = Sandbox::new();
    let repo = with_base(&sb);
    two_branches(&sb, &repo);
    // On b: replay b's two commits onto a.
    sb.git(&repo, &["rebase", "-q", "a"]);
    let text = narrative(&repo);
    assert_eq!(
        titles(&text),
        ["b two", "a two", "b one", "a one", "base"],
        "{text}"
    );
    // The first replayed commit holds a's entries plus b's first only.
    let first = sb.git(&repo, &["show", &format!("HEAD~1:{NARRATIVE}")]);
    assert_eq!(titles(&first), ["a two", "b one", "a one", "base"]);
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(sb.git(&repo, &["rev-list", "--count", "a..HEAD"]), "2\n");
}

#[test]
fn cherry_pick_brings_only_the_picked_commits_entry() {
    let sb = Sandbox::new();
    let repo = with_base(&sb);
    two_branches(&sb, &repo);
    sb.git(&repo, &["switch", "-q", "a"]);
    sb.git(&repo, &["cherry-pick", "b"]);
    let text = narrative(&repo);
    // "b one" came before the picked commit and is not part of it.
    assert_eq!(titles(&text), ["b two", "a two", "a one", "base"], "{text}");
    assert_eq!(sb.git(&repo, &["status", "--porcelain"]), "");
}

/// The done-when line of the entry "base" that [`with_base`] commits.
const DONE_WHEN: &str = "- Done when: tests pass";

/// On `branch` (new, from main), replace the base entry's [`DONE_WHEN`]
/// line by `to` in the narrative and commit.
fn edit_commit(sb: &Sandbox, dir: &Path, branch: &str, to: &str) {
    sb.git(dir, &["switch", "-q", "-c", branch, "main"]);
    let text = narrative(dir);
    assert!(text.contains(DONE_WHEN));
    sb.commit(dir, NARRATIVE, &text.replacen(DONE_WHEN, to, 1), "edit");
}

#[test]
fn an_entry_edited_differently_on_both_sides_is_kept_twice_and_marked() {
    let sb = Sandbox::new();
    let repo = with_base(&sb);
    edit_commit(&sb, &repo, "a", "- Done when: tests pass on a");
    edit_commit(&sb, &repo, "b", "- Done when: tests pass on b");
    handoff_commit(&sb, &repo, "2026-11-02", "b new");
    sb.git(&repo, &["switch", "-q", "a"]);
    sb.git(&repo, &["merge", "-q", "--no-edit", "b"]);
    let text = narrative(&repo);
    assert_eq!(titles(&text), ["b new", "base", "base"], "{text}");
    let a = text.find("tests pass on a").unwrap();
    let note = text.find(NOTE).unwrap();
    let b = text.find("tests pass on b").unwrap();
    assert!(a < note && note < b, "{text}");
    assert_eq!(text.matches(NOTE).count(), 1);
    // The note sits directly below the second copy's heading.
    assert!(
        text.contains(&format!("## 2026-11-01 — [main] base\n\n{NOTE}\n")),
        "{text}"
    );
}

#[test]
fn an_entry_edited_on_one_side_only_is_taken_from_that_side() {
    let sb = Sandbox::new();
    let repo = with_base(&sb);
    edit_commit(&sb, &repo, "a", "- Done when: tests pass, edited");
    handoff_commit(&sb, &repo, "2026-11-03", "a new");
    sb.git(&repo, &["switch", "-q", "-c", "b", "main"]);
    handoff_commit(&sb, &repo, "2026-11-02", "b new");
    sb.git(&repo, &["merge", "-q", "--no-edit", "a"]);
    let text = narrative(&repo);
    assert_eq!(titles(&text), ["a new", "b new", "base"], "{text}");
    assert!(text.contains("- Done when: tests pass, edited\n"), "{text}");
    assert!(!text.contains(NOTE));
}

#[test]
fn a_file_the_driver_cannot_parse_is_a_normal_conflict_and_loses_no_text() {
    let sb = Sandbox::new();
    let repo = with_base(&sb);
    sb.git(&repo, &["switch", "-q", "-c", "a"]);
    handoff_commit(&sb, &repo, "2026-11-02", "a new");
    sb.git(&repo, &["switch", "-q", "-c", "b", "main"]);
    handoff_commit(&sb, &repo, "2026-11-03", "b new");
    let hand = format!(
        "{}\n## Notes\n- written by hand, no date\n",
        narrative(&repo)
    );
    sb.commit(&repo, NARRATIVE, &hand, "notes by hand");
    sb.git(&repo, &["switch", "-q", "a"]);
    let ours = narrative(&repo);

    let out = sb.git_out(&repo, &["merge", "--no-edit", "b"]);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(&format!(
            "CONFLICT (content): Merge conflict in {NARRATIVE}"
        )),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "error: cannot merge {NARRATIVE} as a log (theirs line "
        )) && stderr.contains("'## Notes' is not an entry heading"),
        "{stderr}"
    );
    // git's usual conflict: three stages in the index, markers in the file.
    assert_eq!(
        sb.git(&repo, &["ls-files", "-u", "--", NARRATIVE])
            .lines()
            .count(),
        3
    );
    let text = narrative(&repo);
    assert!(
        text.contains("<<<<<<< ours") && text.contains(">>>>>>> theirs"),
        "{text}"
    );
    for line in ours.lines().chain(hand.lines()) {
        assert!(text.contains(line), "lost {line:?} in\n{text}");
    }
}

#[test]
fn the_driver_needs_no_repository_and_refuses_missing_files() {
    let sb = Sandbox::new();
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let entry = |d: &str| format!("## {d} — [k] t {d}\n\n### What was done\n- x\n");
    let header = "# Project state\n";
    std::fs::write(dir.join("O"), format!("{header}\n{}", entry("2026-11-01"))).unwrap();
    std::fs::write(
        dir.join("A"),
        format!("{header}\n{}\n{}", entry("2026-11-02"), entry("2026-11-01")),
    )
    .unwrap();
    std::fs::write(
        dir.join("B"),
        format!("{header}\n{}\n{}", entry("2026-11-03"), entry("2026-11-01")),
    )
    .unwrap();
    sb.handoff(&dir, &["merge-narrative", "O", "A", "B", "notes.md"])
        .success()
        .stdout("");
    let merged = std::fs::read_to_string(dir.join("A")).unwrap();
    assert_eq!(
        merged,
        format!(
            "{header}\n{}\n{}\n{}",
            entry("2026-11-03"),
            entry("2026-11-02"),
            entry("2026-11-01")
        )
    );

    let out = sb
        .handoff(&dir, &["merge-narrative", "missing", "A", "B"])
        .code(128);
    let err = stderr(&out);
    assert!(
        err.starts_with("fatal: merge-narrative: cannot read 'missing'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    assert_eq!(std::fs::read_to_string(dir.join("A")).unwrap(), merged);
}

#[test]
fn a_configured_narrative_path_with_a_space_merges_as_a_log() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let path = "docs/Project State.md";
    sb.git(&repo, &["config", "handoff.narrative", path]);
    sb.init_and_commit_attribute(&repo);
    for (branch, date) in [("a", "2026-11-01"), ("b", "2026-11-02")] {
        sb.git(&repo, &["switch", "-q", "-c", branch, "main"]);
        let out = sb
            .command("git", &repo)
            .args([
                "handoff",
                "write",
                "--done-when",
                "d",
                "--resume-by",
                branch,
            ])
            .args(["--next-check", "c"])
            .env("GIT_HANDOFF_NOW", format!("{date}T09:00:00Z"))
            .output()
            .unwrap();
        assert!(out.status.success());
        sb.git(&repo, &["add", path]);
        sb.git(&repo, &["commit", "-q", "-m", branch]);
    }
    sb.git(&repo, &["merge", "-q", "--no-edit", "a"]);
    let text = std::fs::read_to_string(repo.join(path)).unwrap();
    assert_eq!(titles(&text), ["b", "a"], "{text}");
}

/// Issue 15: a CRLF narrative keeps CRLF through the merge driver (also
/// when base = ours = theirs) and through `write`.
#[test]
fn a_crlf_narrative_keeps_its_line_endings_on_merge_and_write() {
    let sb = Sandbox::new();
    let dir = sb.path("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let crlf = |s: &str| s.replace('\n', "\r\n");
    let entry = |d: &str| format!("## {d} — [k] t {d}\n\n### What was done\n- x\n- y\n");
    let header = "# Project state\n\nA log.\n";
    let same = crlf(&format!(
        "{header}\n{}\n{}",
        entry("2026-11-02"),
        entry("2026-11-01")
    ));
    for f in ["O", "A", "B"] {
        std::fs::write(dir.join(f), &same).unwrap();
    }
    sb.handoff(&dir, &["merge-narrative", "O", "A", "B"])
        .success();
    assert_eq!(std::fs::read_to_string(dir.join("A")).unwrap(), same);
    // both sides add: the result is CRLF throughout
    std::fs::write(
        dir.join("O"),
        crlf(&format!("{header}\n{}", entry("2026-11-01"))),
    )
    .unwrap();
    std::fs::write(
        dir.join("A"),
        crlf(&format!(
            "{header}\n{}\n{}",
            entry("2026-11-02"),
            entry("2026-11-01")
        )),
    )
    .unwrap();
    std::fs::write(
        dir.join("B"),
        crlf(&format!(
            "{header}\n{}\n{}",
            entry("2026-11-03"),
            entry("2026-11-01")
        )),
    )
    .unwrap();
    sb.handoff(&dir, &["merge-narrative", "O", "A", "B"])
        .success();
    let merged = std::fs::read_to_string(dir.join("A")).unwrap();
    assert_eq!(
        merged,
        crlf(&format!(
            "{header}\n{}\n{}\n{}",
            entry("2026-11-03"),
            entry("2026-11-02"),
            entry("2026-11-01")
        ))
    );

    // write into a CRLF narrative adds a CRLF entry and keeps the rest
    let repo = sb.repo("r");
    let path = repo.join(".claude/PROJECT_STATE.md");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &same).unwrap();
    sb.write_brief(&repo, None, ["cargo test", "next", "cargo test"], &[])
        .success();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "mixed endings: {text:?}"
    );
    assert!(text.ends_with(&same[crlf(header).len()..]), "{text:?}");
    assert!(text.contains("[main] next\r\n"), "{text:?}");
}
