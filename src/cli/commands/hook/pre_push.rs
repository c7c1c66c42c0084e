//! `git handoff hook pre-push [--then HOOK] [REMOTE URL]`: the body of the
//! pre-push hook `git handoff init --pre-push` installs. git hands the ref
//! updates of a push over on stdin; those that touch a handoff ref
//! (`refs/handoffs/*`, `refs/handoff-archive/*`, the notes history …) pass
//! the secret gate ([`crate::sync::gate::outgoing_refs`]) and a secret
//! refuses the whole push (exit 1). A push of code alone is decided from
//! stdin, without opening the repository. The hook that was installed
//! before (`--then`) runs after the gate, with the same arguments and
//! input, and its exit code is the hook's.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};

use crate::cli::Output;
use crate::cli::commands::init::{Context, Item, Status};
use crate::git::repo;
use crate::sync::gate;

/// The arguments git gives the hook, and the hook to chain.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook to run after the gate, when it exists and is executable
    #[arg(long, value_name = "HOOK")]
    pub then: Option<PathBuf>,
    /// The remote's name and URL, as git passes them
    #[arg(value_name = "REMOTE URL", num_args = 0..=2)]
    pub git_args: Vec<OsString>,
}

/// The most of git's input read: one line per ref a push updates.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

/// The gate, then the chained hook.
pub fn run(args: Args) -> Result<Output> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT)
        .read_to_end(&mut input)
        .context("cannot read the refs to push from stdin")?;
    let updates = gate::handoff_updates(&String::from_utf8_lossy(&input));
    if !updates.is_empty() {
        let repo = repo::open_cwd()?;
        let found = gate::outgoing_refs(&repo, &updates)?;
        if !found.is_empty() {
            crate::refuse!(
                "pre-push: not pushed: {} ref{} or history line{} would send secrets: {}. `git handoff redact` removes them from the briefs (`redact --history` from the history); `git push --no-verify` skips this check and every other hook",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                if found.len() == 1 { "" } else { "s" },
                gate::list(&found)
            );
        }
    }
    match args.then.filter(|hook| executable(hook)) {
        Some(hook) => chain(&hook, &args.git_args, &input),
        None => Ok(Output::empty()),
    }
}

/// Whether `path` is a file git would run as a hook.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Run the chained hook with git's arguments and input; its exit code.
fn chain(hook: &Path, git_args: &[OsString], input: &[u8]) -> Result<Output> {
    let mut child = std::process::Command::new(hook)
        .args(git_args)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run the chained hook {}", hook.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input closes the pipe early.
        let _ = stdin.write_all(input);
    }
    let status = child
        .wait()
        .with_context(|| format!("cannot wait for {}", hook.display()))?;
    let code = status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1));
    Ok(Output::empty().with_code(code))
}

/// The line that marks the hook as git-handoff's.
const MARKER: &str = "# git-handoff pre-push gate";

/// Where the hook that was installed before goes, next to the gate.
const CHAINED: &str = "pre-push.before-handoff";

/// The hook script.
fn script() -> String {
    format!(
        "#!/bin/sh\n\
         {MARKER}, installed by `git handoff init --pre-push`: a push that\n\
         # would send a secret in a brief, an archived brief or the notes history\n\
         # is refused (`git push --no-verify` skips it). The hook that was here\n\
         # before, if any, is {CHAINED}: it runs after the gate, with the\n\
         # same arguments and input.\n\
         exec git handoff hook pre-push --then \"${{0%/*}}/{CHAINED}\" -- \"$@\"\n"
    )
}

/// The line to add to a hook git-handoff does not manage.
pub const LINE: &str = "git handoff hook pre-push \"$@\" || exit 1";

/// The pre-push hook, as an `init` item: with `--pre-push` (`wanted`) it is
/// installed, chaining the hook that was there; without, `init --check`
/// reports whether it is.
pub struct PrePushHook {
    /// Whether `--pre-push` asked for it.
    pub wanted: bool,
}

/// `git …` in the current directory, its stdout trimmed when it succeeds.
fn git_line(args: &[&str]) -> Result<Option<String>> {
    let out = std::process::Command::new("git")
        .args(args)
        .output()
        .with_context(|| format!("cannot run `git {}`; is git on PATH?", args.join(" ")))?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string()))
}

/// `core.hooksPath`, when set.
fn hooks_path() -> Result<Option<String>> {
    git_line(&["config", "--type=path", "--get", "core.hooksPath"])
}

/// The repository's own hooks directory.
fn hooks_dir() -> Result<PathBuf> {
    git_line(&["rev-parse", "--path-format=absolute", "--git-path", "hooks"])?
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("`git rev-parse --git-path hooks` failed"))
}

/// Whether `hook` runs the gate: the script [`PrePushHook`] writes, or a
/// hook of the user's with [`LINE`] (or any call of the gate) in it.
fn is_gate(hook: &Path) -> bool {
    std::fs::read_to_string(hook).is_ok_and(|text| text.contains("git handoff hook pre-push"))
}

impl Item for PrePushHook {
    fn name(&self) -> String {
        "pre-push hook".to_string()
    }

    fn check(&self, ctx: &Context) -> Result<Status> {
        let optional = "not installed (optional): `git handoff init --pre-push` gates a plain `git push` of the handoff refs for secrets";
        if let Some(path) = hooks_path()? {
            // Relative to where git runs hooks: the worktree's root.
            let hook = ctx.root.join(&path).join("pre-push");
            return Ok(match (is_gate(&hook), self.wanted) {
                (true, _) => Status::Done(format!("{} runs the secret gate", hook.display())),
                (false, false) => Status::Done(optional.to_string()),
                (false, true) => Status::Blocked(format!(
                    "core.hooksPath is '{path}', hooks git-handoff does not manage: nothing installed; add this line to {path}/pre-push, before anything that reads its input: {LINE}"
                )),
            });
        }
        let hook = hooks_dir()?.join("pre-push");
        let chained = hook.with_file_name(CHAINED);
        Ok(if is_gate(&hook) {
            Status::Done(match chained.exists() {
                true => format!("the secret gate, then {CHAINED}"),
                false => "the secret gate".to_string(),
            })
        } else if !self.wanted {
            Status::Done(optional.to_string())
        } else if hook.exists() && chained.exists() {
            Status::Blocked(format!(
                "{} and {CHAINED} both exist: nothing installed; add this line to pre-push, before anything that reads its input: {LINE}",
                hook.display()
            ))
        } else if hook.exists() {
            Status::Missing(format!(
                "the existing hook would run after the gate, as {CHAINED}"
            ))
        } else {
            Status::Missing("no pre-push hook".to_string())
        })
    }

    fn apply(&self, _ctx: &Context) -> Result<()> {
        let dir = hooks_dir()?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let hook = dir.join("pre-push");
        let chained = dir.join(CHAINED);
        let moved = hook.exists();
        if moved {
            std::fs::rename(&hook, &chained)
                .with_context(|| format!("cannot move {} aside", hook.display()))?;
        }
        if let Err(e) = crate::support::atomic::write(&hook, script().as_bytes()) {
            if moved {
                // The hook that was there stays the hook.
                let _ = std::fs::rename(&chained, &hook);
            }
            return Err(e.context(format!("cannot write {}", hook.display())));
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", hook.display()))
    }
}
