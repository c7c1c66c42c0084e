//! Crash safety of `split --yes`, `fetch` and `push`: each is killed with
//! SIGKILL at every named stage (`GIT_HANDOFF_FAILPOINT`) and at random
//! moments. Afterwards the refs of one transaction are all old or all new,
//! PROJECT_STATE.md is the old or the new file, `git fsck --strict` is
//! clean, and the next command either works or names the stale lock with
//! the command that clears it.
//!
//! `GIT_HANDOFF_CRASH_RUNS=N` raises the number of random kills per command
//! (default 10).

#[path = "cli/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::setups::*;
use support::*;

fn fsck(sb: &Sandbox, dir: &Path) {
    let out = sb.git_out(dir, &["fsck", "--strict"]);
    assert!(
        out.status.success(),
        "git fsck --strict in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of a ref, if it exists.
fn id(sb: &Sandbox, dir: &Path, name: &str) -> Option<String> {
    let out = sb.git_out(dir, &["rev-parse", "--verify", "-q", name]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A tiny xorshift generator, seeded, so that a failing run repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// How a random kill ends the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kill {
    /// SIGKILL git-handoff only; its git children (fetch, push) finish.
    Leaf,
    /// SIGKILL the whole process group, git children included, as when a
    /// terminal or an agent's sandbox is torn down.
    Group,
}

/// Start `git-handoff ARGS` in `dir` and SIGKILL it after `delay`; whether
/// it was still running then.
fn kill_after(sb: &Sandbox, dir: &Path, args: &[&str], delay: Duration, how: Kill) -> bool {
    let mut cmd = sb.command(env!("CARGO_BIN_EXE_git-handoff"), dir);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    let pgid = child.id();
    std::thread::sleep(delay);
    let running = child.try_wait().unwrap().is_none();
    match how {
        Kill::Leaf => sigkill(&pgid.to_string()),
        Kill::Group => sigkill(&format!("-{pgid}")),
    }
    child.wait().unwrap();
    wait_for_group(pgid);
    running
}

/// How long `git-handoff ARGS` takes in `dir` when not killed.
fn duration_of(sb: &Sandbox, dir: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = sb
        .command(env!("CARGO_BIN_EXE_git-handoff"), dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

/// Run `git handoff ARGS` after a crash, as a user would: when it fails,
/// its last stderr line must name a stale lock with `rm '<lock>'` (as git
/// does); the lock is removed and the command run again. Returns the
/// locks cleared.
fn run_clearing_locks(sb: &Sandbox, dir: &Path, args: &[&str]) -> usize {
    for cleared in 0..10 {
        let out = sb
            .command("git", dir)
            .arg("handoff")
            .args(args)
            .output()
            .unwrap();
        if out.status.success() {
            return cleared;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("");
        let Some(start) = last.rfind("rm '") else {
            panic!("{args:?} failed without naming a stale lock: {err}");
        };
        let lock = &last[start + 4..last[start + 4..].find('\'').unwrap() + start + 4];
        assert!(lock.ends_with(".lock"), "{last}");
        if last.contains("could not lock a ref") {
            // One the remote holds refuses the push (exit 1), as `git
            // push` is refused, and names it there.
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(last.starts_with("error: not pushed to "), "{err}");
        } else {
            // One of ours is fatal (exit 128), as in git.
            assert_eq!(out.status.code(), Some(128), "{args:?}: {err}");
            assert!(last.starts_with("fatal: "), "{err}");
        }
        std::fs::remove_file(lock).unwrap_or_else(|e| panic!("{lock}: {e}"));
        eprintln!("cleared as told: {last}");
    }
    panic!("{args:?} still fails after clearing 10 locks");
}

fn crash_runs() -> u64 {
    std::env::var("GIT_HANDOFF_CRASH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// `write KEY` with a complete set of flags, `title` as what to resume by.
fn brief_args<'a>(key: &'a str, title: &'a str) -> Vec<&'a str> {
    write_args(
        Some(key),
        ["cargo test ok passes", title, "cargo test next"],
        &["--no-lint"],
    )
}

// ---------------------------------------------------------------------------
// split --yes

fn plan(prefix: &str, title: &str) -> String {
    let thread = |key: &str| {
        format!(
            r#"{{"key": "{prefix}{key}", "resume": {{"done_when": "cargo test {key} passes", "resume_by": "{title} {key}"}},
                "state": {{"next_acceptance_check": "cargo test {key}"}}}}"#
        )
    };
    format!(
        r#"{{"why": "three threads were braided", "threads": [{}, {}, {}]}}"#,
        thread("a"),
        thread("b"),
        thread("c")
    )
}

/// The three split keys' values and the history tip.
fn split_refs(sb: &Sandbox, repo: &Path, prefix: &str) -> Vec<Option<String>> {
    ["a", "b", "c"]
        .iter()
        .map(|k| id(sb, repo, &format!("refs/handoffs/{prefix}{k}")))
        .chain([id(sb, repo, "refs/notes/handoffs")])
        .collect()
}

#[test]
fn a_split_killed_at_any_stage_writes_all_threads_or_none() {
    for (point, refs_moved) in TRANSACTION_STAGES {
        let sb = Sandbox::new();
        let repo = sb.repo_with_short_lock_waits("r");
        // "a" exists already (updated by the split), "b" and "c" are new.
        sb.handoff(&repo, &brief_args("t-a", "before")).success();
        let narrative = repo.join(".claude/PROJECT_STATE.md");
        let old_text = std::fs::read_to_string(&narrative).unwrap();
        let old = split_refs(&sb, &repo, "t-");
        let plan_file = sb.path("plan.json");
        std::fs::write(&plan_file, plan("t-", "killed")).unwrap();
        let plan_arg = plan_file.to_str().unwrap();

        kill_at(
            &sb,
            &repo,
            &["split", "--plan", plan_arg, "--yes", "--no-lint"],
            point,
        );

        let new = split_refs(&sb, &repo, "t-");
        if refs_moved {
            for (i, (o, n)) in old.iter().zip(&new).enumerate() {
                assert!(
                    n.is_some() && n != o,
                    "{point}: ref {i} moved: {old:?} {new:?}"
                );
            }
        } else {
            assert_eq!(new, old, "{point}: no ref moved");
        }
        assert_eq!(
            std::fs::read_to_string(&narrative).unwrap(),
            old_text,
            "{point}: the narrative is the old file"
        );
        fsck(&sb, &repo);
        let locks = lock_files(&repo.join(".git"));
        assert_eq!(locks, Vec::<PathBuf>::new(), "{point}: no ref lock left");

        // The killed split's lock records its owner and the versions it
        // stores: the next split takes it over, finishing the killed
        // split's narrative update when its briefs were stored (one entry
        // each) and dropping it when not.
        let lock = repo.join(".claude/PROJECT_STATE.md.lock");
        assert!(lock.exists(), "{point}: the killed split held the lock");
        let record = std::fs::read_to_string(&lock).unwrap();
        assert_eq!(record.matches("\nversion ").count(), 3, "{record}");
        sb.handoff(&repo, &["split", "--plan", plan_arg, "--yes", "--no-lint"])
            .success();
        let text = std::fs::read_to_string(&narrative).unwrap();
        assert_eq!(
            text.matches("[split: t-a, t-b, t-c]").count(),
            if refs_moved { 2 } else { 1 },
            "{point}: {text}"
        );
        assert!(text.contains("[t-a] before"), "{text}");
        sb.handoff(&repo, &["resume", "t-c"]).success();
        fsck(&sb, &repo);
    }
}

#[test]
fn splits_killed_at_random_moments_write_all_threads_or_none() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["config", "handoff.lockTimeout", "100"]);
    sb.git(&repo, &["config", "core.filesRefLockTimeout", "100"]);
    sb.handoff(&repo, &brief_args("seed", "seed")).success();
    let narrative = repo.join(".claude/PROJECT_STATE.md");
    let plan_file = sb.path("plan.json");
    std::fs::write(&plan_file, plan("probe-", "probe")).unwrap();
    let plan_arg = plan_file.to_str().unwrap().to_string();
    let span = duration_of(
        &sb,
        &repo,
        &["split", "--plan", &plan_arg, "--yes", "--no-lint"],
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut killed, mut stored, mut partial) = (0, 0, 0);
    let runs = crash_runs();
    for run in 0..runs {
        let before = std::fs::read_to_string(&narrative).unwrap();
        let prefix = format!("r{run}-");
        std::fs::write(&plan_file, plan(&prefix, "run")).unwrap();
        let delay = Duration::from_micros(rng.next() % (span.as_micros() as u64 * 5 / 4));
        if kill_after(
            &sb,
            &repo,
            &["split", "--plan", &plan_arg, "--yes", "--no-lint"],
            delay,
            Kill::Leaf,
        ) {
            killed += 1;
        }
        let refs = split_refs(&sb, &repo, &prefix);
        let present = refs[..3].iter().filter(|r| r.is_some()).count();
        if present != 0 && present != 3 {
            // Killed while the files backend renamed the locks into place,
            // one ref after the other (microseconds): the history, committed
            // first, holds every thread, and the refs not yet renamed are
            // still locked, so the next command names them.
            partial += 1;
            let note = sb.git(&repo, &["notes", "--ref=handoffs", "show", "HEAD"]);
            for k in ["a", "b", "c"] {
                assert!(
                    note.contains(&format!("\"key\":\"{prefix}{k}\"")),
                    "run {run}"
                );
            }
            assert!(
                !lock_files(&repo.join(".git/refs/handoffs")).is_empty(),
                "run {run}: {refs:?}"
            );
        }
        stored += usize::from(present == 3);
        let after = std::fs::read_to_string(&narrative).unwrap();
        assert!(after.starts_with("# Project state"), "run {run}");
        if after != before {
            assert!(present == 3, "run {run}: an entry without its briefs");
            assert!(refs[3].is_some());
            let heading = format!("[split: {prefix}a, {prefix}b, {prefix}c]");
            assert_eq!(after.matches(&heading).count(), 1, "run {run}");
            assert!(after.ends_with(&before[before.find("\n## ").unwrap() + 1..]));
        }
        fsck(&sb, &repo);
        // What a user does after a crash: clear what the error names.
        for lock in lock_files(&repo) {
            std::fs::remove_file(lock).unwrap();
        }
    }
    sb.handoff(&repo, &brief_args("final", "final")).success();
    eprintln!(
        "split: {runs} runs, {killed} killed mid-command, {stored} stored, {partial} killed mid-commit"
    );
}

// ---------------------------------------------------------------------------
// fetch and push

/// A bare remote cloned as A and B (short lock timeouts); A wrote and
/// pushed `keys`, B fetched them.
fn team_with(keys: &[&str]) -> Team {
    let t = team();
    for dir in [&t.a, &t.b] {
        t.sb.git(dir, &["config", "core.filesRefLockTimeout", "100"]);
        t.sb.git(dir, &["config", "handoff.lockTimeout", "100"]);
    }
    for key in keys {
        t.sb.handoff(&t.a, &brief_args(key, "first")).success();
    }
    t.sb.handoff(&t.a, &["push"]).success();
    t.sb.handoff(&t.b, &["fetch"]).success();
    t
}

impl Team {
    /// Per key: (brief, base) in `dir`.
    fn sides(
        &self,
        dir: &Path,
        keys: &[&str],
    ) -> BTreeMap<String, (Option<String>, Option<String>)> {
        keys.iter()
            .map(|k| {
                (
                    k.to_string(),
                    (
                        id(&self.sb, dir, &format!("refs/handoffs/{k}")),
                        id(
                            &self.sb,
                            dir,
                            &format!("refs/handoff-remotes/origin/briefs/{k}"),
                        ),
                    ),
                )
            })
            .collect()
    }

    fn remote(&self, keys: &[&str]) -> BTreeMap<String, Option<String>> {
        keys.iter()
            .map(|k| {
                (
                    k.to_string(),
                    id(&self.sb, &self.bare, &format!("refs/handoffs/{k}")),
                )
            })
            .collect()
    }

    /// The versions `log KEY` knows in `dir`.
    fn logged(&self, dir: &Path, key: &str) -> Vec<String> {
        self.sb.log_ids(dir, key)
    }

    /// A writes a new version of every key and pushes; the remote's ids.
    fn advance_remote(&self, keys: &[&str], title: &str) -> BTreeMap<String, Option<String>> {
        for key in keys {
            self.sb.handoff(&self.a, &brief_args(key, title)).success();
        }
        self.sb.handoff(&self.a, &["push"]).success();
        self.remote(keys)
    }

    /// Every brief ref of `dir` points at a version its history holds.
    fn history_covers_briefs(&self, dir: &Path, keys: &[&str]) {
        for key in keys {
            if let Some(current) = id(&self.sb, dir, &format!("refs/handoffs/{key}")) {
                assert!(
                    self.logged(dir, key).contains(&current),
                    "{key}: {current} is not in the history of {}",
                    dir.display()
                );
            }
        }
    }
}

const KEYS: [&str; 3] = ["k1", "k2", "k3"];

#[test]
fn a_fetch_killed_at_any_stage_leaves_each_key_old_or_new() {
    for (point, keys_moved, history_moved) in [
        ("fetch-staged", 0, false),
        ("fetch-history-merged", 0, true),
        ("fetch-key-reconciled", 1, true),
    ] {
        let t = team_with(&KEYS);
        let old = t.sides(&t.b, &KEYS);
        let old_notes = id(&t.sb, &t.b, "refs/notes/handoffs");
        let new = t.advance_remote(&KEYS, "second");

        kill_at(&t.sb, &t.b, &["fetch"], point);

        let sides = t.sides(&t.b, &KEYS);
        let mut moved = 0;
        for key in KEYS {
            let (local, base) = &sides[key];
            if (local, base) == (&new[key], &new[key]) {
                moved += 1;
            } else {
                assert_eq!(
                    &sides[key], &old[key],
                    "{point}: {key} is old or new, brief and base together"
                );
            }
        }
        assert_eq!(moved, keys_moved, "{point}: {sides:?}");
        assert_eq!(
            id(&t.sb, &t.b, "refs/notes/handoffs") != old_notes,
            history_moved,
            "{point}: the history"
        );
        t.history_covers_briefs(&t.b, &KEYS);
        fsck(&t.sb, &t.b);
        assert_eq!(lock_files(&t.b.join(".git")), Vec::<PathBuf>::new());
        let narrative = std::fs::read_to_string(t.b.join(".claude/PROJECT_STATE.md")).ok();

        // The next fetch finishes the job, with no cleanup.
        t.sb.handoff(&t.b, &["fetch"]).success();
        let sides = t.sides(&t.b, &KEYS);
        for key in KEYS {
            assert_eq!(
                sides[key],
                (new[key].clone(), new[key].clone()),
                "{point}: {key}"
            );
        }
        t.history_covers_briefs(&t.b, &KEYS);
        assert_eq!(
            std::fs::read_to_string(t.b.join(".claude/PROJECT_STATE.md")).ok(),
            narrative,
            "fetch never touches the narrative"
        );
        t.sb.handoff(&t.b, &brief_args("k1", "after")).success();
        t.sb.handoff(&t.b, &["push"]).success();
        fsck(&t.sb, &t.b);
        fsck(&t.sb, &t.bare);
    }
}

#[test]
fn a_push_killed_at_any_stage_is_finished_by_the_next_push() {
    // Each stage of both routes: a push that fetches first (forced here by
    // forgetting that the remote was ever fetched) and an optimistic one.
    for (point, remote_moved, fetch_first) in [
        ("fetch-history-merged", false, true),
        ("before-git-push", false, true),
        ("after-git-push", true, true),
        ("before-git-push", false, false),
        ("after-git-push", true, false),
    ] {
        let t = team_with(&KEYS);
        if fetch_first {
            std::fs::remove_file(t.a.join(".git/handoff-fetched")).unwrap();
        }
        let old_remote = t.remote(&KEYS);
        let old_remote_notes = id(&t.sb, &t.bare, "refs/notes/handoffs");
        for key in KEYS {
            t.sb.handoff(&t.a, &brief_args(key, "second")).success();
        }
        let local = t.sides(&t.a, &KEYS);
        let old_bases: BTreeMap<_, _> = local
            .iter()
            .map(|(k, (_, b))| (k.clone(), b.clone()))
            .collect();

        kill_at(&t.sb, &t.a, &["push"], point);

        let remote = t.remote(&KEYS);
        for key in KEYS {
            let expected = if remote_moved {
                &local[key].0
            } else {
                &old_remote[key]
            };
            assert_eq!(&remote[key], expected, "{point}: {key} on the remote");
            // The base is recorded only after the remote took the value.
            assert_eq!(
                t.sides(&t.a, &[key])[key].1,
                old_bases[key],
                "{point}: {key}'s base"
            );
        }
        assert_eq!(
            id(&t.sb, &t.bare, "refs/notes/handoffs") != old_remote_notes,
            remote_moved,
            "{point}: the history moves with the briefs"
        );
        fsck(&t.sb, &t.a);
        fsck(&t.sb, &t.bare);
        assert_eq!(lock_files(&t.a.join(".git")), Vec::<PathBuf>::new());
        assert_eq!(lock_files(&t.bare), Vec::<PathBuf>::new());

        // The next push finishes the job, with no cleanup.
        t.sb.handoff(&t.a, &["push"]).success();
        let sides = t.sides(&t.a, &KEYS);
        let remote = t.remote(&KEYS);
        for key in KEYS {
            assert_eq!(remote[key], local[key].0, "{point}: {key}");
            assert_eq!(sides[key], (local[key].0.clone(), local[key].0.clone()));
        }
        t.sb.handoff(&t.b, &["fetch"]).success();
        assert_eq!(
            t.sides(&t.b, &KEYS)
                .into_iter()
                .map(|(k, (l, _))| (k, l))
                .collect::<BTreeMap<_, _>>(),
            remote
        );
        t.history_covers_briefs(&t.b, &KEYS);
        fsck(&t.sb, &t.b);
    }
}

#[test]
fn fetches_and_pushes_killed_at_random_moments_lose_nothing() {
    let t = team_with(&KEYS);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let runs = crash_runs();
    let mut killed = BTreeMap::new();
    let mut cleared = 0;
    let mut mid_commit = 0;
    let fetch_span = {
        t.advance_remote(&KEYS, "probe");
        duration_of(&t.sb, &t.b, &["fetch"])
    };
    // An up-to-date push fetches but sends nothing: half of a real one.
    let push_span = duration_of(&t.sb, &t.a, &["push"]) * 2;
    for run in 0..runs {
        let how = if run % 3 == 2 {
            Kill::Group
        } else {
            Kill::Leaf
        };
        // fetch: B is behind on every key
        let old = t.sides(&t.b, &KEYS);
        let new = t.advance_remote(&KEYS, &format!("fetch run {run}"));
        let delay = Duration::from_micros(rng.next() % (fetch_span.as_micros() as u64 * 5 / 4));
        if kill_after(&t.sb, &t.b, &["fetch"], delay, how) {
            *killed.entry(("fetch", how)).or_insert(0) += 1;
        }
        let sides = t.sides(&t.b, &KEYS);
        for key in KEYS {
            let fresh = (new[key].clone(), new[key].clone());
            if sides[key] == old[key] || sides[key] == fresh {
                continue;
            }
            // Killed between the two renames of one key's transaction: the
            // brief is committed before its base, so it can only be the
            // brief that moved, which the next fetch reads as up to date.
            assert_eq!(
                sides[key],
                (new[key].clone(), old[key].1.clone()),
                "fetch run {run} ({how:?}): {key}"
            );
            mid_commit += 1;
        }
        t.history_covers_briefs(&t.b, &KEYS);
        fsck(&t.sb, &t.b);
        cleared += run_clearing_locks(&t.sb, &t.b, &["fetch"]);
        for key in KEYS {
            assert_eq!(t.sides(&t.b, &KEYS)[key].0, new[key], "fetch run {run}");
        }

        // push: A is ahead on every key
        for key in KEYS {
            t.sb.handoff(&t.a, &brief_args(key, &format!("push run {run}")))
                .success();
        }
        let local = t.sides(&t.a, &KEYS);
        let old_remote = t.remote(&KEYS);
        let delay = Duration::from_micros(rng.next() % push_span.as_micros() as u64);
        if kill_after(&t.sb, &t.a, &["push"], delay, how) {
            *killed.entry(("push", how)).or_insert(0) += 1;
        }
        let remote = t.remote(&KEYS);
        let after = t.sides(&t.a, &KEYS);
        for key in KEYS {
            assert!(
                remote[key] == old_remote[key] || remote[key] == local[key].0,
                "push run {run} ({how:?}): {key} on the remote"
            );
            // A base never claims a value the remote does not hold.
            if after[key].1 == local[key].0 {
                assert_eq!(remote[key], local[key].0, "push run {run}: {key}");
            }
            assert_eq!(after[key].0, local[key].0, "push never changes the brief");
        }
        fsck(&t.sb, &t.a);
        fsck(&t.sb, &t.bare);
        cleared += run_clearing_locks(&t.sb, &t.a, &["push"]);
        // A lock the killed receive-pack left in the remote where no push
        // ran into it (git names only the refs it takes) is cleared too.
        for lock in lock_files(&t.bare) {
            eprintln!("cleared in the remote: {}", lock.display());
            std::fs::remove_file(lock).unwrap();
            cleared += 1;
            cleared += run_clearing_locks(&t.sb, &t.a, &["push"]);
        }
        assert_eq!(
            t.remote(&KEYS),
            local
                .iter()
                .map(|(k, (l, _))| (k.clone(), l.clone()))
                .collect()
        );
    }
    t.sb.handoff(&t.b, &["fetch"]).success();
    t.history_covers_briefs(&t.b, &KEYS);
    fsck(&t.sb, &t.b);
    eprintln!(
        "fetch/push: {runs} runs each, killed mid-command {killed:?}, {mid_commit} keys killed mid-commit, {cleared} stale locks cleared"
    );
}

/// A stale lock, wherever a killed process left it, is named by the next
/// command with the `rm` that clears it, in one `error:` line; nothing is
/// cleared behind the user's back.
#[test]
fn stale_locks_are_named_with_the_command_that_clears_them() {
    let t = team_with(&KEYS);
    let cases = [
        // git fetch's own staging ref (a killed `git fetch` child)
        (
            t.b.join(".git/refs/handoff-fetch/origin/briefs/k1.lock"),
            &t.b,
            "fetch",
        ),
        // a brief ref the fetch must move (a killed git-handoff)
        (t.b.join(".git/refs/handoffs/k2.lock"), &t.b, "fetch"),
        // the history ref
        (t.b.join(".git/refs/notes/handoffs.lock"), &t.b, "fetch"),
        // packed-refs
        (t.b.join(".git/packed-refs.lock"), &t.b, "fetch"),
    ];
    for (n, (lock, dir, command)) in cases.into_iter().enumerate() {
        t.advance_remote(&KEYS, &format!("round {n}"));
        std::fs::write(&lock, "").unwrap();
        let out = t.sb.handoff(dir, &[command]).code(128);
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{}: {err}", lock.display());
        assert!(
            err.starts_with("fatal: ") && err.contains(&format!("rm '{}'", lock.display())),
            "{}: {err}",
            lock.display()
        );
        assert!(lock.exists(), "never cleared automatically");
        std::fs::remove_file(&lock).unwrap();
        t.sb.handoff(dir, &[command]).success();
    }

    // A lock in the remote (a killed receive-pack): the push names it.
    t.sb.handoff(&t.b, &brief_args("k3", "from b")).success();
    let lock = t.bare.join("refs/handoffs/k3.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let out = t.sb.handoff(&t.b, &["push"]).code(1);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let named = &err[err.find("rm '").expect("names the fix") + 4..err.trim_end().len() - 1];
    assert!(err.contains("k3"), "{err}");
    assert_eq!(
        Path::new(named).canonicalize().unwrap(),
        lock.canonicalize().unwrap(),
        "{err}"
    );
    std::fs::remove_file(&lock).unwrap();
    t.sb.handoff(&t.b, &["push"]).success();
    fsck(&t.sb, &t.b);
    fsck(&t.sb, &t.bare);
}

#[test]
fn a_push_killed_with_creates_pinned_leaves_refs_the_next_push_sweeps() {
    let t = team_with(&KEYS);
    let blob = id(&t.sb, &t.a, &format!("refs/handoffs/{}", KEYS[0])).unwrap();
    let mut stdin = String::new();
    for i in 0..600 {
        stdin.push_str(&format!("create refs/handoffs/many{i} {blob}\n"));
    }
    t.sb.git_stdin(&t.a, &["update-ref", "--stdin"], stdin);

    kill_at(&t.sb, &t.a, &["push"], "before-git-push");
    // The killed push pinned its creates; nothing reached the remote.
    let pinned = t.sb.git(&t.a, &["for-each-ref", "refs/handoff-push"]);
    assert_eq!(pinned.lines().count(), 600, "{pinned}");
    assert_eq!(id(&t.sb, &t.bare, "refs/handoffs/many0"), None);
    fsck(&t.sb, &t.a);
    assert_eq!(lock_files(&t.a.join(".git")), Vec::<PathBuf>::new());

    // The next push sweeps them (their process is gone) and sends the keys.
    t.sb.handoff(&t.a, &["push"]).success();
    assert_eq!(t.sb.git(&t.a, &["for-each-ref", "refs/handoff-push"]), "");
    assert_eq!(
        id(&t.sb, &t.bare, "refs/handoffs/many599").as_deref(),
        Some(blob.as_str())
    );
    assert!(
        !t.sb
            .git(&t.bare, &["for-each-ref"])
            .contains("handoff-push")
    );
}
