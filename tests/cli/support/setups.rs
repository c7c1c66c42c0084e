//! Named set-ups that several test files start from: a team that already
//! shares a key, a key both sides rewrote, a secret pushed with plain git,
//! a base left where an earlier version kept it, a repository with one
//! stored brief, the demo tour, the hostile corpus, a child fed on stdin.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::{Sandbox, T1, Team};

/// Sharing set-ups: where a test's story starts after the first push.
impl Team {
    /// A writes `key` (at [`T1`], `done` as its done-when) and pushes it;
    /// B has not fetched yet. Its id.
    pub fn publish(&self, key: &str, done: &str) -> String {
        let id = self.write(&self.a, key, T1, done);
        self.run(&self.a, &["push"]).success();
        id
    }

    /// [`Team::publish`], then B fetches: both sides agree on that
    /// version; its id.
    pub fn share(&self, key: &str, done: &str) -> String {
        let id = self.publish(key, done);
        self.run(&self.b, &["fetch"]).success();
        id
    }

    /// After [`Team::share`], both sides write a new version of `key`
    /// unaware of each other: A at 10:00, B at 10:30; their ids.
    pub fn rewrite_on_both(&self, key: &str, a_done: &str, b_done: &str) -> (String, String) {
        let a = self.write(&self.a, key, "2026-11-30T10:00:00Z", a_done);
        let b = self.write(&self.b, key, "2026-11-30T10:30:00Z", b_done);
        (a, b)
    }

    /// Push `refs` from `dir` to origin with plain git, past every check
    /// of `git handoff push` (a secret reaches the remote that way).
    pub fn push_with_plain_git(&self, dir: &Path, refs: &[&str]) {
        let mut args = vec!["push", "-q", "origin"];
        args.extend_from_slice(refs);
        self.sb.git(dir, &args);
    }

    /// Leave `dir`'s base of `key` (at `id`) where an earlier version kept
    /// it, `refs/remotes/origin/handoffs/<key>`, and not where it is kept
    /// now.
    pub fn base_in_the_old_place(&self, dir: &Path, key: &str, id: &str) {
        let old = format!("refs/remotes/origin/handoffs/{key}");
        self.sb.git(dir, &["update-ref", &old, id]);
        let new = format!("refs/handoff-remotes/origin/briefs/{key}");
        self.sb.git(dir, &["update-ref", "-d", &new]);
    }
}

/// The `status` a report (`fetch --json`, or a push's `fetch`) gives
/// `key` in its `keys` rows; empty when there is no row for it.
pub fn key_status(report: &serde_json::Value, key: &str) -> String {
    report["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == key)
        .map(|k| k["status"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// An empty bare repository at `remote.git` made with the `git init`
/// `flags` (an object or ref format): its path and file:// URL.
pub fn bare_remote(sb: &Sandbox, flags: &[&str]) -> (PathBuf, String) {
    let bare = sb.path("remote.git");
    let mut args = vec!["init", "-q", "--bare", "-b", "main"];
    args.extend_from_slice(flags);
    args.push(bare.to_str().unwrap());
    sb.git(sb.dir.path(), &args);
    let url = format!("file://{}", bare.display());
    (bare, url)
}

impl Sandbox {
    /// A brief `key` written in `repo` ("cargo test passes", "go on",
    /// "cargo test"; lint off).
    pub fn write_plain_brief(&self, repo: &Path, key: &str) {
        self.write_brief(
            repo,
            Some(key),
            ["cargo test passes", "go on", "cargo test"],
            &["--no-lint"],
        )
        .success();
    }

    /// `git handoff demo` run from a new repository, writing the tour at
    /// `demo`: the tour's folder and what the command printed.
    pub fn demo_tour(&self) -> (PathBuf, assert_cmd::assert::Assert) {
        let repo = self.repo("r");
        let dir = self.path("demo");
        let out = self
            .handoff(&repo, &["demo", dir.to_str().unwrap()])
            .success();
        (dir, out)
    }

    /// A repository whose lock waits give up after 200 ms, so that a lock
    /// a killed command left fails fast.
    pub fn repo_with_short_lock_waits(&self, name: &str) -> PathBuf {
        let repo = self.repo(name);
        self.git(&repo, &["config", "handoff.lockTimeout", "200"]);
        repo
    }
}

/// The failpoints of one write transaction, each with whether the refs
/// have moved when a command is killed there.
pub const TRANSACTION_STAGES: [(&str, bool); 3] = [
    ("narrative-staged", false),
    ("before-ref-transaction", false),
    ("before-narrative-rename", true),
];

/// The hostile corpus (`tests/corpus/*.json`), sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 15);
    files
}

/// Start `cmd` with `input` on its stdin (then closed) and its stdout
/// piped, to be read with `wait_with_output`.
pub fn spawn_fed(mut cmd: Command, input: &[u8]) -> Child {
    use std::io::Write;
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child
}
