//! `git handoff completions <shell>`: print a completion script.

use anyhow::Result;
use clap::CommandFactory;

use crate::{cli::Cli, cli::Output, cli::manual};

/// Print the shell completion script for bash, zsh or fish
///
/// bash completes brief keys dynamically (`git handoff resume <TAB>`) and
/// plugs into git's own completion (`git handoff <TAB>`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell
    pub shell: Shell,
}

/// The supported shells.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    /// bash (with git's completion)
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
}

/// Generate the script.
pub fn run(args: Args) -> Result<Output> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    Ok(Output::human(manual::completions(shell, Cli::command())))
}
