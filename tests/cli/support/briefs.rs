//! Fixtures for the tests that write a brief and read it back (resume,
//! reground, brief, draft, fork, the method's items): the briefs' usual
//! shapes, a repository holding one, a teammate's brief taken into a clone.
//! Each is named for what a test starts from, so that a test reads as its
//! set-up in one line and its assertions.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Sandbox, Team, json};

/// `write`'s three required flags (`[done_when, resume_by, next_check]`)
/// of the README's example: the auth tests' expiry off by one.
pub const AUTH: [&str; 3] = [
    "cargo test auth passes",
    "add leeway",
    "cargo test auth::expiry",
];

/// `write`'s three required flags of the method's plain brief: make
/// `cargo test` pass.
pub const CARGO_TEST: [&str; 3] = ["cargo test passes", "run cargo test", "cargo test"];

/// `write`'s three required flags of a brief that only states its goal:
/// the auth tests pass, checked by `cargo test auth`.
pub const AUTH_GOAL: [&str; 3] = ["cargo test auth passes", "r", "cargo test auth"];

/// The extra flags of a decided brief: one decision with its why, one
/// rejected path.
pub const DECIDED: [&str; 4] = [
    "--decision",
    "keep JWT — one token format",
    "--rejected",
    "sessions",
];

/// `write`'s three required flags of a teammate's brief: go on until
/// `cargo test` passes.
pub const GO_ON: [&str; 3] = ["cargo test passes", "go on", "cargo test"];

/// A sandbox holding one repository `r` with one commit on `main`: where
/// most single-clone tests start.
pub fn one_repo() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    (sb, repo)
}

/// What Claude Code gives the SessionStart hook on stdin: the session
/// `session` starting in `cwd`, `source` saying how (startup, resume,
/// clear, compact).
pub fn session_start_input(session: &str, source: &str, cwd: &Path) -> String {
    serde_json::json!({"session_id": session, "cwd": cwd.display().to_string(),
                       "hook_event_name": "SessionStart", "source": source})
    .to_string()
}

impl Sandbox {
    /// The brief `refs/handoffs/<key>` holds in `dir`'s repository, parsed.
    pub fn stored_brief(&self, dir: &Path, key: &str) -> Value {
        json(&self.git(dir, &["cat-file", "-p", &format!("refs/handoffs/{key}")]))
    }

    /// Take origin's brief `key` into the clone `dir` with plain git, as a
    /// teammate's: origin's briefs fetched to where `fetch` keeps them
    /// (`refs/handoff-remotes/origin/briefs/*`), then `key` made a local
    /// brief.
    pub fn take_origin_brief(&self, dir: &Path, key: &str) {
        let briefs = "refs/handoff-remotes/origin/briefs";
        let spec = format!("+refs/handoffs/*:{briefs}/*");
        self.git(dir, &["fetch", "-q", "origin", &spec]);
        let id = self.git(dir, &["rev-parse", &format!("{briefs}/{key}")]);
        let local = format!("refs/handoffs/{key}");
        self.git(dir, &["update-ref", &local, id.trim()]);
    }

    /// `git handoff lint -F - --strict` in `dir` on `brief`, given on stdin.
    pub fn lint_strict(&self, dir: &Path, brief: &Value) -> assert_cmd::assert::Assert {
        let args = ["lint", "-F", "-", "--strict"];
        self.handoff_with(dir, &args, Some(&brief.to_string()))
    }

    /// `git handoff ARGS` in `dir` as the session `session` names itself
    /// without a hook (`GIT_HANDOFF_SESSION`).
    pub fn handoff_in_session(
        &self,
        dir: &Path,
        session: &str,
        args: &[&str],
    ) -> assert_cmd::assert::Assert {
        self.handoff_env(dir, &[("GIT_HANDOFF_SESSION", session)], args, None)
    }

    /// `git handoff summary new --template TEMPLATE --task TASK` in `dir`:
    /// a continue summary from one of the method's templates.
    pub fn summary_new(
        &self,
        dir: &Path,
        template: &str,
        task: &str,
    ) -> assert_cmd::assert::Assert {
        self.summary_new_at(dir, super::NOW, template, task)
    }

    /// [`Sandbox::summary_new`] with the clock at `now`.
    pub fn summary_new_at(
        &self,
        dir: &Path,
        now: &str,
        template: &str,
        task: &str,
    ) -> assert_cmd::assert::Assert {
        let args = ["summary", "new", "--template", template, "--task", task];
        self.handoff_env(dir, &[("GIT_HANDOFF_NOW", now)], &args, None)
    }

    /// `git handoff hook EVENT` in `dir` with the harness's JSON `input`
    /// on stdin, as a session's harness runs it; what it printed.
    pub fn hook_output(&self, dir: &Path, event: &str, input: &str) -> String {
        let out = self.handoff_with(dir, &["hook", event], Some(input));
        super::stdout(&out.success())
    }
}

impl Team {
    /// A writes a version of `key` at `now` (as [`Team::write`]) and
    /// pushes it with `git handoff push`: a teammate's brief waiting on the
    /// remote. Its id. ([`Team::publish`] writes at T1.)
    pub fn publish_at(&self, key: &str, now: &str, done: &str) -> String {
        let id = self.write(&self.a, key, now, done);
        self.run(&self.a, &["push"]).success();
        id
    }

    /// A writes the brief `key` with `flags` as a user would (lint and
    /// redaction on) and pushes it with `git handoff push`.
    pub fn push_brief_from_a(&self, key: &str, flags: [&str; 3]) {
        self.sb
            .write_brief(&self.a, Some(key), flags, &[])
            .success();
        self.run(&self.a, &["push"]).success();
    }

    /// A writes `key` with `secret` in its done-when, stored as given, and
    /// pushes it and the history to origin with plain git, past
    /// git-handoff's push-side check: a secret that reached the remote.
    pub fn push_secret_with_git(&self, key: &str, secret: &str) {
        self.write(&self.a, key, super::T1, &format!("uses {secret}"));
        let brief = format!("refs/handoffs/{key}");
        let args = ["push", "-q", "origin", "refs/notes/handoffs", &brief];
        self.sb.git(&self.a, &args);
    }
}
