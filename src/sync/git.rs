//! The `git` subprocess the network half runs (so credentials, ssh config
//! and `insteadOf` work as for the user's own fetches and pushes), and the
//! parsing of what it answers: the telling line of its stderr, a stale lock
//! file it names, and `git push --porcelain` results by destination ref.

use std::collections::{BTreeMap, HashMap};
use std::process::Command;

use anyhow::{Context, Result, anyhow};
use gix::ObjectId;

use crate::store::{NOTES_REF, REF_PREFIX};

pub(super) struct GitRun {
    pub(super) ok: bool,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

pub(super) fn git(repo: &gix::Repository, args: &[String]) -> Result<GitRun> {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(repo.git_dir());
    if let Some(dir) = repo.workdir() {
        cmd.current_dir(dir);
    }
    cmd.args(args);
    let out = cmd
        .output()
        .context("cannot run git; is it installed and on PATH?")?;
    Ok(GitRun {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The namespaces of git-handoff's own bookkeeping, which only ever make
/// sense in the clone that wrote them: what a fetch staged, what each
/// remote held, what a push pinned. A plain `git push --mirror` copies them
/// to a remote, where nothing reads them.
pub(super) const BOOKKEEPING: [&str; 3] = [
    crate::store::remotes::STAGING_PREFIX,
    crate::store::remotes::REMOTES_PREFIX,
    crate::store::remotes::OUTGOING_PREFIX,
];

/// The remote's brief refs and notes refs, by name, as `git ls-remote`
/// lists them (peeled tag lines left out), and apart from them the names
/// of its refs under the [`BOOKKEEPING`] namespaces, sorted.
pub(super) fn ls_remote(
    repo: &gix::Repository,
    remote: &str,
) -> Result<(BTreeMap<String, ObjectId>, Vec<String>)> {
    let mut args: Vec<String> = [
        "ls-remote",
        "--quiet",
        remote,
        &format!("{REF_PREFIX}*"),
        &format!("{NOTES_REF}*"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(BOOKKEEPING.iter().map(|p| format!("{p}*")));
    let run = git(repo, &args)?;
    if !run.ok {
        return Err(anyhow!(
            "git ls-remote '{remote}' failed: {}",
            git_reason(&run.stderr)
        ));
    }
    let mut out = BTreeMap::new();
    let mut bookkeeping = Vec::new();
    for line in run.stdout.lines() {
        let Some((id, name)) = line.split_once('\t') else {
            continue;
        };
        if name.ends_with("^{}") {
            continue;
        }
        if BOOKKEEPING.iter().any(|p| name.starts_with(p)) {
            // Names are printed: each passes the secret gate as keys do.
            let options = crate::brief::redact::Options::from_repo(repo);
            bookkeeping.push(crate::brief::redact::redact(name, options).0);
            continue;
        }
        if !(name.starts_with(REF_PREFIX) || name.starts_with(NOTES_REF)) {
            continue;
        }
        let id = ObjectId::from_hex(id.as_bytes())
            .map_err(|_| anyhow!("git ls-remote '{remote}' listed a bad id: {id}"))?;
        out.insert(name.to_string(), id);
    }
    bookkeeping.sort();
    Ok((out, bookkeeping))
}

/// The names of `remote`'s refs under git-handoff's bookkeeping
/// namespaces ([`BOOKKEEPING`]), sorted: what a plain `git push --mirror`
/// from a clone copied there.
pub fn bookkeeping_on(repo: &gix::Repository, remote: &str) -> Result<Vec<String>> {
    Ok(ls_remote(repo, remote)?.1)
}

/// The most telling line of git's stderr (`git::cmd::reason`).
pub(super) fn git_reason(stderr: &str) -> String {
    crate::git::cmd::reason(stderr)
}

/// The lock file git could not create because it exists (a git process
/// killed earlier left it), from git's stderr.
pub(super) fn stale_git_lock(stderr: &str) -> Option<&str> {
    let start = stderr.find("Unable to create '")? + "Unable to create '".len();
    let rest = &stderr[start..];
    let end = rest.find("': File exists")?;
    Some(&rest[..end])
}

/// Why `git ACTION` failed, for one error line: a stale lock is named with
/// the command that clears it; anything else is git's own reason and `hint`.
pub(super) fn git_failure(action: &str, stderr: &str, hint: &str) -> anyhow::Error {
    match stale_git_lock(stderr) {
        Some(lock) => anyhow!(
            "git {action} failed: '{lock}' exists; another git process may be running. If none is, remove it: rm '{lock}'"
        ),
        None => anyhow!("git {action} failed: {}; {hint}", git_reason(stderr)),
    }
}

/// How often a `git fetch` that lost a race for a local ref lock (another
/// git process, `pack-refs` say, held it for a moment) runs again.
pub(super) const LOCAL_RACE_RETRIES: u32 = 6;

/// Whether git failed on a local ref of this repository (a lock it could
/// not take, a ref it could not update), not on the remote.
pub(super) fn local_ref_failure(stderr: &str) -> bool {
    stderr.contains("cannot lock ref")
        || stderr.contains("some local refs could not be updated")
        // An object directory `git gc` removed under it.
        || stderr.contains("failed to write object")
        || stale_git_lock(stderr).is_some()
}

/// Run git; while it fails on a local ref lock (a race with another git
/// process in this repository), wait a little and run it again.
pub(super) fn git_retrying_local_races(repo: &gix::Repository, args: &[String]) -> Result<GitRun> {
    let mut run = git(repo, args)?;
    for attempt in 0..LOCAL_RACE_RETRIES {
        if run.ok || !local_ref_failure(&run.stderr) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20 << attempt));
        run = git(repo, args)?;
    }
    Ok(run)
}

/// Why `git fetch` from `remote` failed: a lock file of this repository
/// that stays (named, with the `rm` that clears it), a local ref git could
/// not update (worded as local), or the remote's failure.
pub(super) fn fetch_failure(remote: &str, stderr: &str) -> anyhow::Error {
    let action = format!("fetch from '{remote}'");
    if stale_git_lock(stderr).is_some() {
        return git_failure(&action, stderr, "");
    }
    if local_ref_failure(stderr) {
        return anyhow!(
            "git {action} could not update this repository's refs (not a remote failure): {}; another git process may hold them: run again when it is done",
            git_reason(stderr)
        );
    }
    anyhow!(
        "git {action} failed: {}; check the remote with `git remote -v` and `git fetch {remote}`",
        git_reason(stderr)
    )
}

/// One line of `git push --porcelain`: the flag and the summary, by
/// destination ref.
pub(super) fn porcelain(stdout: &str) -> HashMap<String, (char, String)> {
    let mut out = HashMap::new();
    for line in stdout.lines() {
        let mut parts = line.splitn(3, '\t');
        let (Some(flag), Some(refs), Some(summary)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let mut flag_chars = flag.chars();
        let (Some(flag), None) = (flag_chars.next(), flag_chars.next()) else {
            continue;
        };
        if let Some((_, dst)) = refs.rsplit_once(':') {
            out.insert(dst.to_string(), (flag, summary.trim().to_string()));
        }
    }
    out
}

pub(super) fn accepted(flag: char) -> bool {
    matches!(flag, ' ' | '+' | '-' | '*' | '=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_git_lock_is_named_with_its_fix() {
        let stderr = "error: cannot lock ref 'refs/handoff-fetch/o/briefs/k': Unable to create '/r/.git/refs/handoff-fetch/o/briefs/k.lock': File exists.\n\nAnother git process seems to be running in this repository\n";
        assert_eq!(
            stale_git_lock(stderr),
            Some("/r/.git/refs/handoff-fetch/o/briefs/k.lock")
        );
        let err = git_failure("fetch from 'o'", stderr, "hint").to_string();
        assert!(
            err.ends_with("rm '/r/.git/refs/handoff-fetch/o/briefs/k.lock'"),
            "{err}"
        );
        let other = git_failure("fetch from 'o'", "fatal: no such remote\n", "hint").to_string();
        assert_eq!(
            other,
            "git fetch from 'o' failed: fatal: no such remote; hint"
        );
    }

    #[test]
    fn porcelain_lines_are_read_by_destination() {
        let out = "To file:///r\n*\tabc:refs/handoffs/a\t[new reference]\n!\tdef:refs/handoffs/b\t[rejected] (stale info)\n-\t:refs/handoffs/c\t[deleted]\nDone\n";
        let r = porcelain(out);
        assert_eq!(r["refs/handoffs/a"].0, '*');
        assert_eq!(
            r["refs/handoffs/b"],
            ('!', "[rejected] (stale info)".to_string())
        );
        assert_eq!(r["refs/handoffs/c"].0, '-');
    }
}
