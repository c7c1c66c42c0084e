//! Before a command reads the briefs: take what a plain `git fetch` (or
//! `git pull`) staged from a remote, with the rules of `fetch` and no
//! network (`sync::staged`), and say on stderr what was taken. Never fails
//! the command: what cannot be taken is a warning, and stays staged (what
//! the secret gate holds is forgotten, as `fetch` forgets it).

use anyhow::Result;

use crate::cli::render;
use crate::git::repo;
use crate::sync;

/// [`repo::open_cwd_for_reading`], after taking what `git fetch` staged.
pub fn open_for_reading() -> Result<gix::Repository> {
    let mut repo = repo::open_cwd_for_reading()?;
    take(&mut repo);
    Ok(repo)
}

/// [`repo::open_cwd`], after taking what `git fetch` staged.
pub fn open() -> Result<gix::Repository> {
    let mut repo = repo::open_cwd()?;
    take(&mut repo);
    Ok(repo)
}

/// Take what `git fetch` staged from every remote since the last
/// reconciliation; a few file stats when nothing was.
pub fn take(repo: &mut gix::Repository) {
    let pending = match sync::staged::pending(repo) {
        Ok(pending) => pending,
        Err(err) => {
            eprintln!("warning: cannot read what `git fetch` staged: {err:#}");
            return;
        }
    };
    if pending.is_empty() {
        return;
    }
    if let Err(err) = repo::prepare_writes(repo) {
        eprintln!("warning: cannot take what `git fetch` brought: {err:#}");
        return;
    }
    for remote in pending {
        match sync::staged::take(repo, &remote) {
            Ok(Some(report)) => eprint!("{}", render::taken_text(&report)),
            Ok(None) => {}
            Err(err) => eprintln!(
                "warning: what `git fetch` brought from '{remote}' was not taken: {err:#}"
            ),
        }
    }
}
