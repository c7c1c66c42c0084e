//! Sharing under concurrency and kills (issue 29): a fetch and a push in
//! one clone never interleave, a lost local race is retried (and worded
//! as local), a killed push or fetch leaves no false divergence, and what
//! a killed push pinned is swept by the next push.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::setups::*;
use crate::support::*;
use serde_json::Value;

fn write(t: &Team, dir: &Path, key: &str, done: &str) -> String {
    let args = write_args(Some(key), [done, "carry on", "cargo test"], &["--json"]);
    let out = t.sb.handoff(dir, &args).success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["id"].as_str().unwrap().to_string()
}

fn id(t: &Team, dir: &Path, name: &str) -> Option<String> {
    let out = t.sb.git_out(dir, &["rev-parse", "--verify", "-q", name]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The status `fetch --json` reports for `key`.
fn fetched_status(t: &Team, dir: &Path, key: &str) -> String {
    let out = t.sb.handoff(dir, &["fetch", "--json"]).success();
    key_status(&serde_json::from_str(&stdout(&out)).unwrap(), key)
}

/// Issue 29 item 1 and 3: in a clone that never writes `k`, a fetch and a
/// push started at once never push an older brief over a newer one, and
/// neither fails on a local lock race.
#[test]
fn a_fetch_and_a_push_at_once_never_roll_the_remote_back() {
    let t = team();
    write(&t, &t.a, "k", "v0");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    for round in 0..6 {
        let newest = write(&t, &t.a, "k", &format!("v{}", round + 1));
        t.sb.handoff(&t.a, &["push"]).success();
        let spawn = |cmd: &str| {
            let mut c = t.sb.command("git", &t.b);
            c.args(["handoff", cmd])
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            c.spawn().unwrap()
        };
        let (fetch, push) = if round % 2 == 0 {
            let f = spawn("fetch");
            (f, spawn("push"))
        } else {
            let p = spawn("push");
            (spawn("fetch"), p)
        };
        for (what, child) in [("fetch", fetch), ("push", push)] {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            id(&t, &t.bare, "refs/handoffs/k").as_deref(),
            Some(newest.as_str()),
            "round {round}: the remote keeps the newest version"
        );
    }
}

/// Issue 29 item 2: a push killed after the remote took its value, then a
/// new write: the key is ahead (not diverged), the next fetch records what
/// the remote took, and the next push sends the new version.
#[test]
fn a_push_killed_after_the_remote_took_it_leaves_the_key_ahead() {
    let t = team();
    write(&t, &t.a, "k", "v1");
    t.sb.handoff(&t.a, &["push"]).success();
    let v2 = write(&t, &t.a, "k", "v2");
    kill_at(&t.sb, &t.a, &["push"], "after-git-push");
    assert_eq!(
        id(&t, &t.bare, "refs/handoffs/k").as_deref(),
        Some(v2.as_str())
    );
    let v3 = write(&t, &t.a, "k", "v3");
    // The killed push's lock is taken over at once: its owner is gone.
    let start = std::time::Instant::now();
    assert_eq!(fetched_status(&t, &t.a, "k"), "ahead");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(
        id(&t, &t.a, "refs/handoff-remotes/origin/briefs/k").as_deref(),
        Some(v2.as_str()),
        "the base records what the remote took"
    );
    t.sb.handoff(&t.a, &["push"]).success();
    assert_eq!(
        id(&t, &t.bare, "refs/handoffs/k").as_deref(),
        Some(v3.as_str())
    );
    assert_eq!(
        id(&t, &t.a, "refs/handoffs/k").as_deref(),
        Some(v3.as_str())
    );
}

/// Issue 29 item 2, the mirror case: a fetch killed between publishing a
/// brief and its base, then the remote moved on: a fast-forward.
#[test]
fn a_fetch_killed_between_brief_and_base_then_the_remote_moves_on_fast_forwards() {
    let t = team();
    let v1 = write(&t, &t.a, "k", "v1");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    write(&t, &t.a, "k", "v2");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    // What the killed fetch left: the brief taken, the base not yet.
    t.sb.git(
        &t.b,
        &["update-ref", "refs/handoff-remotes/origin/briefs/k", &v1],
    );
    let v3 = write(&t, &t.a, "k", "v3");
    t.sb.handoff(&t.a, &["push"]).success();
    assert_eq!(fetched_status(&t, &t.b, "k"), "fast-forwarded");
    assert_eq!(
        id(&t, &t.b, "refs/handoffs/k").as_deref(),
        Some(v3.as_str())
    );
}

/// A true divergence stays one: both sides wrote after they last agreed.
#[test]
fn a_true_divergence_is_still_reported() {
    let t = team();
    write(&t, &t.a, "k", "v1");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    write(&t, &t.a, "k", "a2");
    t.sb.handoff(&t.a, &["push"]).success();
    write(&t, &t.b, "k", "b2");
    t.sb.handoff(&t.b, &["fetch"]).code(1);
    // Again, with the remote's version now in B's history.
    t.sb.handoff(&t.b, &["fetch"]).code(1);
    t.sb.handoff(&t.b, &["push"]).code(1);
}

/// Issue 29 item 4: every push sweeps what killed pushes pinned, not only
/// a push that pins.
#[test]
fn every_push_sweeps_the_pins_of_dead_pushes() {
    let t = team();
    let v1 = write(&t, &t.a, "k", "v1");
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let pin = format!("refs/handoff-push/{dead}/k");
    t.sb.git(&t.a, &["update-ref", &pin, &v1]);
    t.sb.handoff(&t.a, &["push"]).success();
    assert_eq!(id(&t, &t.a, &pin), None);
    assert_eq!(t.sb.git(&t.a, &["for-each-ref", "refs/handoff-push"]), "");
}

/// Issue 29 item 3: a local lock git fetch meets is named as local, with
/// the `rm` that clears it, never as a remote failure.
#[test]
fn a_staging_lock_is_local_not_a_remote_failure() {
    let t = team();
    write(&t, &t.a, "k", "v1");
    t.sb.handoff(&t.a, &["push"]).success();
    let lock = t.b.join(".git/refs/handoff-fetch/origin/briefs/k.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let out = t.sb.handoff(&t.b, &["fetch"]).code(128);
    let err = stderr(&out);
    assert!(err.contains(&format!("rm '{}'", lock.display())), "{err}");
    assert!(!err.contains("git remote -v"), "{err}");
    // Released meanwhile (another git process's moment): retried, no error.
    let releaser = {
        let lock = lock.clone();
        std::fs::write(&lock, "").unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(700));
            std::fs::remove_file(&lock).unwrap();
        })
    };
    t.sb.handoff(&t.b, &["fetch"]).success();
    releaser.join().unwrap();
}

/// Issue 30 item 5: a lock a migration killed mid-move left is named with
/// the command that clears it (not an `update-ref -d` that fails on it).
#[test]
fn a_lock_left_by_a_killed_migration_is_named() {
    let t = team();
    t.sb.git(&t.a, &["config", "core.filesRefLockTimeout", "100"]);
    let v1 = write(&t, &t.a, "k1", "v1");
    t.sb.handoff(&t.a, &["push"]).success();
    t.base_in_the_old_place(&t.a, "k1", &v1);
    let lock = t.a.join(".git/refs/handoff-remotes/origin/briefs/k1.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    for args in [&["fetch"][..], &["push"][..], &["log", "k1"][..]] {
        let out = t.sb.handoff(&t.a, args).code(128);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("rm '{}'", lock.display())),
            "{args:?}: {err}"
        );
        assert!(!err.contains("update-ref -d"), "{err}");
    }
    std::fs::remove_file(&lock).unwrap();
    t.sb.handoff(&t.a, &["fetch"]).success();
    assert_eq!(
        id(&t, &t.a, "refs/handoff-remotes/origin/briefs/k1").as_deref(),
        Some(v1.as_str())
    );
}

/// A first fetch of a key both sides wrote on their own: after one push
/// carried this clone's history to the remote, its version is in the
/// remote's history, yet the remote's value was not written on top of
/// it — still diverged, never replaced silently by the newer timestamp.
#[test]
fn a_key_both_wrote_before_any_fetch_stays_diverged() {
    let t = team();
    write(&t, &t.a, "k", "from a");
    t.sb.handoff(&t.a, &["push"]).success();
    write(&t, &t.b, "k", "from b");
    write(&t, &t.b, "other", "b's own");
    // B's push sends its history and `other`; `k` is held.
    t.sb.handoff(&t.b, &["push"]).code(1);
    assert_eq!(fetched_status_any(&t, &t.b, "k"), "diverged");
    t.sb.handoff(&t.b, &["push"]).code(1);
    let a_value = id(&t, &t.a, "refs/handoffs/k");
    assert_eq!(id(&t, &t.bare, "refs/handoffs/k"), a_value);
}

/// The status `fetch --json` reports for `key`, whatever the exit code.
fn fetched_status_any(t: &Team, dir: &Path, key: &str) -> String {
    let out = t.sb.handoff(dir, &["fetch", "--json"]);
    key_status(&serde_json::from_str(&stdout(&out)).unwrap(), key)
}

fn write_at(t: &Team, dir: &Path, key: &str, now: &str, done: &str) -> String {
    let args = write_args(Some(key), [done, "carry on", "cargo test"], &["--json"]);
    let mut cmd = t.sb.command("git", dir);
    cmd.env("GIT_HANDOFF_NOW", now).arg("handoff").args(args);
    let out = assert_cmd::Command::from_std(cmd).assert().success();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["id"].as_str().unwrap().to_string()
}

/// A teammate's `resolve --keep-local` is taken, not undone: the remote's
/// value is older by its timestamp and in the local history, but the local
/// version was not written on top of it — a fast-forward, not a rollback.
#[test]
fn a_teammates_keep_local_is_a_fast_forward_not_a_rollback() {
    let t = team();
    write_at(&t, &t.a, "k", "2026-11-30T08:00:00Z", "v0");
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    let a1 = write_at(&t, &t.a, "k", "2026-11-30T09:00:00Z", "a1");
    write_at(&t, &t.b, "k", "2026-11-30T10:00:00Z", "b1");
    t.sb.handoff(&t.b, &["push"]).success();
    // A's push holds the diverged key but sends its history.
    t.sb.handoff(&t.a, &["push"]).code(1);
    t.sb.handoff(&t.b, &["fetch"]).success();
    t.sb.handoff(&t.a, &["resolve", "k", "--keep-local"])
        .success();
    t.sb.handoff(&t.a, &["push"]).success();
    assert_eq!(fetched_status(&t, &t.b, "k"), "fast-forwarded");
    assert_eq!(
        id(&t, &t.b, "refs/handoffs/k").as_deref(),
        Some(a1.as_str())
    );
    t.sb.handoff(&t.b, &["push"]).success();
    assert_eq!(
        id(&t, &t.bare, "refs/handoffs/k").as_deref(),
        Some(a1.as_str())
    );
}
