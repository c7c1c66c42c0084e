//! Test support: the real `git` binary, run hermetically (no system or
//! user configuration, fixed identities and dates) in a unit test's
//! temporary repository.

use std::path::Path;
use std::process::{Command, Stdio};

/// Run `git args` in `dir` with `stdin` fed to it; its stdout. Panics
/// when git fails: the test's setup is wrong.
pub fn git(dir: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-30T09:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-30T09:00:00Z")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}
