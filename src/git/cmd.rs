//! The `git` binary as a subprocess: for what gix cannot do here (network
//! operations, and every ref read and write in a reftable repository), run
//! against this repository's git dir with the user's own configuration,
//! credentials and `git -c` settings, which pass through the environment.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

/// What a `git` run answered.
#[derive(Debug, Clone)]
pub struct Run {
    /// Whether it exited with 0.
    pub ok: bool,
    /// Its exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// Standard output, lossily decoded.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A `git` command for `repo`: `--git-dir` names this worktree's git dir
/// (per-worktree refs such as `HEAD` are read there, shared refs through
/// its common dir), run in the worktree's root when there is one.
pub fn command(repo: &gix::Repository) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(repo.git_dir());
    if let Some(dir) = repo.workdir() {
        cmd.current_dir(dir);
    }
    cmd
}

/// Run `git ARGS` for `repo`, feeding `stdin` when given, and collect what
/// it answers. Fails only when git cannot be started.
pub fn run<S: AsRef<std::ffi::OsStr>>(
    repo: &gix::Repository,
    args: &[S],
    stdin: Option<&[u8]>,
) -> Result<Run> {
    let mut cmd = command(repo);
    cmd.args(args);
    run_command(cmd, stdin)
}

/// Run a prepared `git` command, feeding `stdin` when given.
pub fn run_command(mut cmd: Command, stdin: Option<&[u8]>) -> Result<Run> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .context("cannot run git; is it installed and on PATH?")?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A git that exits early closes the pipe: its answer says why.
        let _ = pipe.write_all(input);
    }
    let out = child
        .wait_with_output()
        .context("cannot run git; is it installed and on PATH?")?;
    Ok(Run {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Whether `repo` is a partial clone: objects may be missing here and
/// fetched from a promisor remote when git needs them.
pub fn is_partial_clone(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    config.string("extensions.partialClone").is_some()
        || repo
            .remote_names()
            .iter()
            .any(|name| config.boolean(format!("remote.{name}.promisor").as_str()) == Some(true))
}

/// Have git fetch `ids` from the promisor remote of a partial clone where
/// they are missing (git's own lazy fetch, as `git cat-file` does it).
/// Whether every one of them is here afterwards.
pub fn fetch_missing(repo: &gix::Repository, ids: &[gix::ObjectId]) -> bool {
    if ids.is_empty() {
        return true;
    }
    if !is_partial_clone(repo) {
        return false;
    }
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let Ok(run) = run(repo, &["cat-file", "--batch-check"], Some(input.as_bytes())) else {
        return false;
    };
    run.ok && !run.text().contains(" missing")
}

/// The most telling line of git's stderr: the first `fatal:` line (git
/// dies with the specific reason first, "'x' does not appear to be a git
/// repository", then the generic "Could not read from remote
/// repository"), else the last `error:` line, else the last line; without
/// its closing period, as it is followed by more of the sentence.
pub fn reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("fatal:"))
        .or_else(|| lines.iter().rev().find(|l| l.starts_with("error:")))
        .or(lines.last())
        .map(|l| l.trim_end_matches('.').to_string())
        .unwrap_or_else(|| "git exited with an error".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_gits_first_fatal_line() {
        let stderr = "fatal: '/tmp/dead' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
        assert_eq!(
            reason(stderr),
            "fatal: '/tmp/dead' does not appear to be a git repository"
        );
        assert_eq!(
            reason("warning: x\nerror: failed to push some refs to 'o'.\n"),
            "error: failed to push some refs to 'o'"
        );
        assert_eq!(reason(""), "git exited with an error");
    }
}
