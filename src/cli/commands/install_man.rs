//! `git handoff install-man [DIR]`: write the man pages.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};

use crate::{cli::Output, cli::manual};

/// Install the man pages, so that `git help handoff` opens them
///
/// Writes git-handoff.1 and one page per subcommand into DIR (default:
/// <prefix>/share/man/man1 next to the installed binary, e.g.
/// ~/.cargo/share/man/man1, which man finds through PATH). Each file is
/// written to a temporary file and renamed into place. The pages committed
/// in the repository's man/ are regenerated with
/// `cargo run -q -- install-man man`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the pages
    pub dir: Option<PathBuf>,
}

/// Render every page and write it atomically.
pub fn run(args: Args) -> Result<Output> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => {
            let exe = std::env::current_exe().context("cannot locate the git-handoff binary")?;
            manual::dir_beside(&exe).ok_or_else(|| {
                anyhow!("cannot derive a prefix from {}; pass a DIR", exe.display())
            })?
        }
    };
    let written = manual::write_pages(&dir)?;
    Ok(Output::human(format!(
        "Wrote {} man pages to {}; `git help handoff` opens git-handoff(1) when that directory's parent is in MANPATH (or PATH has its sibling bin/).\n",
        written,
        dir.display()
    )))
}
