//! Damage is named, not fatal for everything (issue 55, item 12): a
//! history whose tip cannot be read is reported with its repair (the
//! reflog's previous tip), and the commands that do not need the history
//! keep working.

use std::path::Path;

use crate::support::*;

/// Write two versions of `k` in a repository, then lose an object of the
/// history's tip as a `git gc --prune=now` racing a write can: the tip
/// commit's tree (`tree`) or the commit itself. The tip and the previous
/// one, by the reflog.
fn damaged(sb: &Sandbox, repo: &Path, tree: bool) -> (String, String) {
    for done in ["first", "second"] {
        sb.handoff(
            repo,
            &write_args(Some("k"), [done, "r", "c"], &["--no-lint"]),
        )
        .success();
    }
    let tip = sb.git(repo, &["rev-parse", "refs/notes/handoffs"]);
    let previous = sb.git(repo, &["rev-parse", "refs/notes/handoffs@{1}"]);
    let lost = match tree {
        true => sb.git(repo, &["rev-parse", "refs/notes/handoffs^{tree}"]),
        false => tip.clone(),
    };
    let lost = lost.trim();
    let file = repo.join(".git/objects").join(&lost[..2]).join(&lost[2..]);
    std::fs::remove_file(&file).unwrap();
    (tip.trim().to_string(), previous.trim().to_string())
}

fn repair_named(sb: &Sandbox, repo: &Path, tip: &str, previous: &str) {
    let repair = format!("`git update-ref refs/notes/handoffs {previous} {tip}`");
    for args in [&["log", "k"][..], &["diff", "k"]] {
        let out = sb.handoff(repo, args).code(128);
        assert_stderr_has(&out, &repair);
    }
    // A write needs the history: refused, with the repair, nothing written.
    let before = sb.git(repo, &["rev-parse", "refs/handoffs/k"]);
    let out = sb
        .handoff(
            repo,
            &write_args(Some("k"), ["third", "r", "c"], &["--no-lint"]),
        )
        .code(128);
    assert_stderr_has(&out, &repair);
    assert_eq!(sb.git(repo, &["rev-parse", "refs/handoffs/k"]), before);
    // What does not need the history keeps working.
    sb.handoff(repo, &["list"]).success();
    sb.handoff(repo, &["show", "k"]).success();
    let out = sb.handoff(repo, &["resume", "k"]).success();
    assert_stdout_has(&out, "second");
    // The repair works: the history is whole again, and a write goes on
    // on top of it.
    sb.git(repo, &["update-ref", "refs/notes/handoffs", previous, tip]);
    sb.handoff(repo, &["log", "k"]).success();
    sb.handoff(
        repo,
        &write_args(Some("k"), ["third", "r", "c"], &["--no-lint"]),
    )
    .success();
}

#[test]
fn a_history_whose_tree_is_missing_is_named_with_its_repair() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let (tip, previous) = damaged(&sb, &repo, true);
    repair_named(&sb, &repo, &tip, &previous);
}

#[test]
fn a_history_whose_commit_is_missing_is_named_with_its_repair() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let (tip, previous) = damaged(&sb, &repo, false);
    repair_named(&sb, &repo, &tip, &previous);
}

#[test]
fn a_damaged_history_stops_fetch_and_push_with_its_repair() {
    let t = team();
    t.write(&t.a, "k", "2026-11-30T09:00:00Z", "v0");
    t.run(&t.a, &["push"]).success();
    let (tip, previous) = damaged(&t.sb, &t.a, true);
    let repair = format!("`git update-ref refs/notes/handoffs {previous} {tip}`");
    for args in [&["fetch"][..], &["push"]] {
        let out = t.run(&t.a, args).code(128);
        assert_stderr_has(&out, &repair);
    }
}
