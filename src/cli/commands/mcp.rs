//! `git handoff mcp`: serve the commands as MCP tools over stdio.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::{cli::Output, cli::mcp, git::repo};

/// Serve the commands as MCP tools over stdio (Model Context Protocol)
///
/// For agent harnesses that load MCP servers (Claude Code, Codex CLI,
/// Gemini CLI, Cursor, VS Code): tools resume, reground, brief, list, show,
/// log, write, recover, lint, validate and usage, each running the same
/// code as the command of that name (same redaction, lint, compare-and-swap
/// and narrative rules) and answering with its text and, as structured
/// content, its --json. Serves the repository of the working directory
/// (--repo DIR to pin one), re-opened at every call. push, fetch, split,
/// drop and prune touch remotes or delete, so they are offered only when
/// --allow names them. Protocol messages on stdout, logs on stderr; ends
/// when stdin closes.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Serve the repository at DIR instead of the working directory's
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// Also offer these tools (comma-separated): push, fetch, split, drop, prune
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub allow: Vec<String>,
}

/// Check the options, then serve until the client goes away.
pub fn run(args: Args) -> Result<Output> {
    // Each server process is a session (one agent session starts one):
    // the harness's id when its environment carries one, else an id of
    // this process, so that a keyless write never goes to the key another
    // session chose.
    let named = [
        crate::git::sticky::SESSION_ENV,
        crate::git::sticky::HARNESS_SESSION_ENV,
    ]
    .iter()
    .any(|var| std::env::var(var).is_ok_and(|v| crate::git::sticky::valid_session(&v).is_some()));
    if !named {
        let started = crate::support::clock::now().unwrap_or_default();
        let id = format!("mcp-{}-{started}", std::process::id());
        // SAFETY: set before the server starts any thread.
        unsafe { std::env::set_var(crate::git::sticky::SESSION_ENV, id) };
    }
    let server = mcp::Server::new(&args.allow)?;
    if let Some(dir) = &args.repo {
        std::env::set_current_dir(dir)
            .with_context(|| format!("cannot serve '{}'", dir.display()))?;
        repo::open_cwd_for_reading().with_context(|| format!("--repo '{}'", dir.display()))?;
    }
    mcp::serve(server)?;
    Ok(Output::empty())
}
