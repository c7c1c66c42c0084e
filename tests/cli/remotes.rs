//! Per remote, all the way (issue 55, items 10, 11 and 14): a divergence
//! from one remote stays marked until resolved against that remote; a
//! remote's bookkeeping belongs to the repository it was made with (a new
//! remote of the same name starts afresh, a renamed one keeps it); and
//! `resolve` rides out a ref-lock race as the other commands do.

use std::path::{Path, PathBuf};

use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

/// A with two remotes, `origin` and `backup`: k diverged from backup (a
/// clone of backup wrote on v0 there; A wrote va on v0 and pushed it to
/// origin), then B wrote vo on top of va and pushed it to origin. A's
/// next take from origin fast-forwards k to vo, which is still not on
/// backup's line. With `init`, A's remotes have the refspecs of a plain
/// `git fetch`.
fn diverged_from_backup(init: bool) -> (Team, String) {
    let t = team();
    let (_, backup_url) = t.second_remote("backup");
    if init {
        t.run(&t.a, &["init"]).success();
    }
    t.write(&t.a, "k", T1, "v0");
    t.run(&t.a, &["push"]).success();
    t.run(&t.a, &["push", "backup"]).success();
    let root = t.sb.dir.path().to_path_buf();
    t.sb.git(&root, &["clone", "-q", &backup_url, "C"]);
    let c = t.sb.path("C");
    t.run(&c, &["fetch"]).success();
    t.write(&c, "k", T2, "c's, on backup");
    t.run(&c, &["push"]).success();
    t.write(&t.a, "k", T3, "a's");
    t.run(&t.a, &["push"]).success();
    let out = t.run(&t.a, &["fetch", "backup"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    assert_marked(&t, "backup");
    t.run(&t.b, &["fetch"]).success();
    let vo = t.write(&t.b, "k", T4, "b's, on a's");
    t.run(&t.b, &["push"]).success();
    (t, vo)
}

/// `list` and `resume` mark k diverged from `remote`.
fn assert_marked(t: &Team, remote: &str) {
    let out = t.run(&t.a, &["list"]).success();
    assert!(
        stdout(&out).contains(&format!("[diverged: {remote}]")),
        "{}",
        stdout(&out)
    );
    let out = t.run(&t.a, &["resume", "k"]).success();
    assert!(
        stdout(&out).contains(&format!("!! DIVERGED: 'k' has diverged from '{remote}'")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_fetch_from_another_remote_keeps_a_divergence_marked() {
    let (t, vo) = diverged_from_backup(false);
    let out = t.run(&t.a, &["fetch", "origin"]).success();
    assert_stdout_has(&out, "fast-forwarded: k");
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(vo.as_str()));
    assert_marked(&t, "backup");
    // The next fetch from backup says the same: still diverged.
    let out = t.run(&t.a, &["fetch", "backup"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    // Resolved against backup, the mark goes.
    t.run(
        &t.a,
        &["resolve", "k", "--keep-local", "--remote", "backup"],
    )
    .success();
    let out = t.run(&t.a, &["list"]).success();
    assert!(!stdout(&out).contains("[diverged"), "{}", stdout(&out));
}

#[test]
fn a_plain_git_fetch_all_keeps_a_divergence_marked() {
    let (t, vo) = diverged_from_backup(true);
    t.sb.git(&t.a, &["fetch", "-q", "--all"]);
    // The next command takes what `git fetch` staged: origin's vo.
    let out = t.run(&t.a, &["list"]).success();
    assert!(stderr(&out).contains("k (updated: "), "{}", stderr(&out));
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(vo.as_str()));
    assert_marked(&t, "backup");
}

#[test]
fn taking_one_remotes_version_in_a_resolve_keeps_the_others_divergence() {
    let (t, vo) = diverged_from_backup(false);
    // A writes once more before fetching: diverged from origin too.
    t.write(&t.a, "k", "2026-11-30T13:00:00Z", "a's again");
    let out = t.run(&t.a, &["fetch", "origin"]).code(1);
    assert_stdout_has(&out, "  diverged: k (local ");
    t.run(
        &t.a,
        &["resolve", "k", "--take-remote", "--remote", "origin"],
    )
    .success();
    assert_eq!(t.brief_id(&t.a, "k").as_deref(), Some(vo.as_str()));
    assert_marked(&t, "backup");
}

#[test]
fn a_fast_forward_onto_the_other_remotes_line_ends_its_divergence() {
    let (t, _) = diverged_from_backup(false);
    // Someone resolves against backup's version elsewhere, keeping
    // origin's (a merge version on top of both), and pushes the result to
    // origin: it descends from backup's value. (Taking backup's version
    // instead would make it that version itself, diverged from origin's.)
    let d = t.clone_as("D");
    t.sb.git(
        &d,
        &[
            "remote",
            "add",
            "backup",
            &format!("file://{}", t.sb.path("backup.git").display()),
        ],
    );
    t.run(&d, &["fetch"]).success();
    t.run(&d, &["fetch", "backup"]).code(1);
    t.run(&d, &["resolve", "k", "--keep-local", "--remote", "backup"])
        .success();
    t.run(&d, &["push"]).success();
    t.run(&t.a, &["fetch", "origin"]).success();
    let out = t.run(&t.a, &["list"]).success();
    assert!(!stdout(&out).contains("[diverged"), "{}", stdout(&out));
}

/// A new, empty bare repository beside the team's: its path and URL.
fn empty_bare(t: &Team, name: &str) -> (PathBuf, String) {
    let bare = t.sb.path(name);
    let root = t.sb.dir.path().to_path_buf();
    t.sb.git(
        &root,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    let url = format!("file://{}", bare.display());
    (bare, url)
}

#[test]
fn a_remote_added_again_at_a_new_url_gets_every_brief() {
    let t = team();
    let k1 = t.write(&t.a, "k1", T1, "one");
    let k2 = t.write(&t.a, "k2", T2, "two");
    t.run(&t.a, &["push"]).success();
    // The team moves to a new, empty repository.
    let (new, url) = empty_bare(&t, "moved.git");
    t.sb.git(&t.a, &["remote", "remove", "origin"]);
    t.sb.git(&t.a, &["remote", "add", "origin", &url]);
    let out = t.run(&t.a, &["push"]).success();
    let text = stdout(&out);
    assert!(!text.contains("deleted on 'origin'"), "{text}");
    assert!(text.contains("create: k1"), "{text}");
    assert!(text.contains("create: k2"), "{text}");
    assert_eq!(t.id(&new, "refs/handoffs/k1").as_deref(), Some(k1.as_str()));
    assert_eq!(t.id(&new, "refs/handoffs/k2").as_deref(), Some(k2.as_str()));
}

#[test]
fn a_renamed_remote_keeps_its_bookkeeping_and_its_divergences() {
    let t = team();
    t.write(&t.a, "k", T1, "v0");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    t.write(&t.b, "k", T2, "b's");
    t.run(&t.b, &["push"]).success();
    t.write(&t.a, "k", T3, "a's");
    t.run(&t.a, &["fetch"]).code(1);
    t.sb.git(&t.a, &["remote", "rename", "origin", "upstream"]);
    let out = t.run(&t.a, &["list"]).success();
    assert!(
        stdout(&out).contains("[diverged: upstream]"),
        "{}",
        stdout(&out)
    );
    let refs = t.refs(&t.a);
    assert!(
        refs.contains("refs/handoff-remotes/upstream/briefs/k"),
        "{refs}"
    );
    assert!(!refs.contains("refs/handoff-remotes/origin/"), "{refs}");
    assert!(!refs.contains("refs/handoff-fetch/origin/"), "{refs}");
    // The bases moved with it: a push under the new name still knows the
    // key diverged, and sends nothing.
    let out = t.run(&t.a, &["push", "upstream"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
}

/// Run `git handoff ARGS` in `dir` while `packed-refs.lock` is held there
/// for `hold`, as `git gc`'s `pack-refs` holds it.
fn while_packed_refs_locked(
    t: &Team,
    dir: &Path,
    args: &[&str],
    hold: std::time::Duration,
) -> assert_cmd::assert::Assert {
    let lock = dir.join(".git").join("packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let remover = std::thread::spawn(move || {
        std::thread::sleep(hold);
        std::fs::remove_file(&lock).unwrap();
    });
    let out = t.run(dir, args);
    remover.join().unwrap();
    out
}

#[test]
fn resolve_rides_out_a_packed_refs_lock_race() {
    let t = team();
    t.write(&t.a, "k", T1, "v0");
    t.run(&t.a, &["push"]).success();
    t.run(&t.b, &["fetch"]).success();
    t.write(&t.a, "k", T2, "a's");
    t.run(&t.a, &["push"]).success();
    let mine = t.write(&t.b, "k", T3, "b's");
    t.run(&t.b, &["fetch"]).code(1);
    // git waits a second for `packed-refs.lock` (core.packedRefsTimeout);
    // held longer, one attempt fails, as it did under `git gc` in a soak.
    let out = while_packed_refs_locked(
        &t,
        &t.b,
        &["resolve", "k", "--keep-local"],
        std::time::Duration::from_millis(2500),
    );
    out.success();
    assert_eq!(t.brief_id(&t.b, "k").as_deref(), Some(mine.as_str()));
    t.run(&t.b, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(mine.as_str()));
}
