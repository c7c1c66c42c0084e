//! The command-line edge: the parser ([`Cli`], [`Command`]), dispatch to
//! the subcommands in [`commands`], the [`Output`] they return ([`output`])
//! and writing it out. The only layer that prints or knows the words a
//! user reads.

pub mod commands;
pub mod editor;
pub mod exit;
pub mod groups;
pub mod hints;
pub mod inventory;
pub mod manual;
pub mod mcp;
pub mod output;
pub mod render;
pub mod report;
pub mod staged;

use clap::{Parser, Subcommand};

pub use output::{Doc, Format, Output, Style};

/// Save and restore the working state of a coding session in git
///
/// Resume, in any worktree or after /clear: `git handoff resume` prints
/// the brief waiting here (this session's, this branch's, or the only one;
/// `resume KEY` another) with its drift warnings (`!!` lines) first. `git
/// handoff` alone prints it too when one waits for this branch or only one
/// waits, else lists every brief waiting and the command that resumes each.
///
/// A brief says what done means, the next step, the next check, locked
/// decisions, rejected paths and files to read first; the next session, a
/// subagent or a teammate acts on it at once, told what has drifted since.
///
/// Hand off: commit your work, then `git handoff write [KEY] --done-when
/// CHECK --resume-by STEP --next-check CMD` (or `-F brief.json`); commit
/// .claude/PROJECT_STATE.md, the narrative entry the write added.
///
/// Pick up a teammate's work: in a fresh clone, `git handoff fetch` (git
/// clone does not bring briefs), then `git handoff resume KEY`; `git
/// handoff push` shares yours. `git handoff init` once after, so that the
/// narrative merges as a log.
///
/// A brief is a blob under refs/handoffs/<key>, shared by every worktree,
/// every version kept in refs/notes/handoffs; githandoff(7) explains the
/// storage, keys, sharing and every setting.
#[derive(Debug, Parser)]
#[command(
    name = "git-handoff",
    bin_name = "git handoff",
    version,
    propagate_version = true
)]
pub struct Cli {
    /// The subcommand to run; without one, an overview: the brief waiting
    /// for this branch, as `resume` prints it; else the briefs waiting here
    /// and the command that resumes them.
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// Parse the command line. The session hooks' exact forms, which
    /// agent harnesses run at every session start, skip the parser. Every
    /// other command line builds only the arguments of the subcommand it
    /// names (each subcommand's arguments are deferred: building all of
    /// them cost more than a short command's own work); the whole tree is
    /// built first only where clap shows it — top-level help, a name it
    /// must suggest a subcommand for.
    pub fn parse_fast() -> Cli {
        manual::refresh_beside_binary();
        let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        if let Some(cli) = Cli::hook_shortcut(&args) {
            return cli;
        }
        Cli::open_manual_page(&args);
        Cli::parse_from_args(args).unwrap_or_else(|e| e.exit())
    }

    /// `git handoff CMD --help` on a terminal opens git-handoff-CMD(1)
    /// through `git help`, as `git commit --help` does (git turns only
    /// `git handoff --help` into `git help handoff` itself), and exits with
    /// its status. Without a terminal (an agent, a pipe), or without the
    /// page, clap prints the command's own help instead.
    fn open_manual_page(args: &[std::ffi::OsString]) {
        use std::io::IsTerminal;
        let Some(page) = manual::help_page(args) else {
            return;
        };
        if !std::io::stdout().is_terminal() || !manual::found(&page) {
            return;
        }
        if let Ok(status) = std::process::Command::new("git")
            .args(["help", &page])
            .status()
        {
            std::process::exit(status.code().unwrap_or(128));
        }
    }

    /// How help is shown: wrapped to the terminal's width on a terminal
    /// (as clap measures it), to 80 columns otherwise; each subcommand's
    /// ending where the words are defined.
    fn help_width(cmd: clap::Command) -> clap::Command {
        use std::io::IsTerminal;
        let cmd = cmd.mut_subcommands(|sub| sub.after_help(groups::GLOSSARY));
        if std::io::stdout().is_terminal() {
            cmd
        } else {
            cmd.term_width(80)
        }
    }

    /// Parse `args` (without the program name) as [`Cli::parse_fast`]
    /// does, but return clap's error (help and version included).
    pub fn parse_from_args(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut cmd = Cli::help_width(Cli::command());
        if args.len() == 1 && args[0] == "-h" && !manual::installed() {
            cmd = cmd.after_help(manual::MISSING_HINT);
        }
        if Cli::needs_whole_tree(&cmd, &args) {
            cmd.build();
            cmd = groups::apply(cmd);
        }
        let argv = std::iter::once(std::ffi::OsString::from("git-handoff")).chain(args);
        let matches = cmd.try_get_matches_from_mut(argv)?;
        let cli = Cli::from_arg_matches(&matches);
        // The parser is not needed again and the process ends soon: its
        // tree is left to the exit, not taken apart node by node.
        std::mem::forget(cmd);
        cli
    }

    /// Whether parsing `args` may show more of the parser than the
    /// subcommand they name: not when they start with a subcommand's name
    /// or ask for the version (or are empty: the overview).
    fn needs_whole_tree(cmd: &clap::Command, args: &[std::ffi::OsString]) -> bool {
        let Some(first) = args.first() else {
            return false;
        };
        if first == "-V" || first == "--version" {
            return false;
        }
        !cmd.get_subcommands().any(|sub| first == sub.get_name())
    }

    /// `hook session-start`, `hook pre-compact`, `hook session-end` and
    /// `hook user-prompt-submit`, exactly.
    fn hook_shortcut(args: &[std::ffi::OsString]) -> Option<Cli> {
        use commands::hook::{Args, Event};
        let [hook, event] = args else {
            return None;
        };
        if hook != "hook" {
            return None;
        }
        let event = match event.to_str()? {
            "session-start" => Event::SessionStart,
            "pre-compact" => Event::PreCompact,
            "session-end" => Event::SessionEnd,
            "user-prompt-submit" => Event::UserPromptSubmit,
            _ => return None,
        };
        Some(Cli {
            command: Some(Command::Hook(Args { event })),
        })
    }
}

/// The subcommands. Each one's help text is the doc comment of its `Args`.
/// Each one's arguments are added only when it is built (`defer`): a
/// command line builds the one it names ([`Cli::parse_fast`]).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    // Write a brief for KEY from flags or JSON, with the git state added
    Write(Box<commands::write::Args>),
    // Show a brief with what has drifted since it was written
    Resume(commands::resume::Args),
    // Print the goal, the first five decisions, the files to keep in view
    Reground(commands::reground::Args),
    // Print a subagent brief (## Task …) of at most 30 lines, never stored
    Brief(Box<commands::brief::Args>),
    // List the stored briefs: key, age, branch, head, done-when
    List(commands::list::Args),
    // Print a stored brief as JSON, exactly as stored
    Show(commands::show::Args),
    // List every version of a brief, newest first
    Log(commands::log::Args),
    // Show how two versions of a brief differ (unified diff of their JSON)
    Diff(commands::diff::Args),
    // Rebuild KEY's brief from the stored one and the current git state
    Recover(Box<commands::recover::Args>),
    // Draft a brief from the session's transcript and the git state
    Draft(commands::draft::Args),
    // Fork the work into N self-contained briefs from a plan
    Split(commands::split::Args),
    // Split a side task off into an independent session
    Fork(Box<commands::fork::Args>),
    // Write a fork's hand-back: result, changes, how to merge, open items
    Handback(commands::handback::Args),
    // Send briefs and their history to a remote, each key with a lease
    Push(commands::push::Args),
    // Fetch briefs and their history from a remote and reconcile them
    Fetch(commands::fetch::Args),
    // End a divergence: keep the local version or take the remote's
    Resolve(commands::resolve::Args),
    // Set this repository up for git-handoff, or check that it is
    Init(commands::init::Args),
    // Delete a brief (its history in refs/notes/handoffs stays)
    Drop(commands::drop::Args),
    // Archive briefs not written for a while; delete old archived ones
    Prune(commands::prune::Args),
    // Bring an archived brief back to refs/handoffs/<KEY>
    Restore(commands::restore::Args),
    // Check a brief for the handoff method's anti-patterns
    Lint(commands::lint::Args),
    // Check a brief file (or - for stdin) against the schema
    Validate(commands::validate::Args),
    // Remove secrets from the stored briefs (and with --history, from every version)
    Redact(commands::redact::Args),
    // Import briefs from <key>.json files (and the legacy HANDOFF.json)
    Import(commands::import::Args),
    // Write briefs as <key>.json files, exactly as stored
    Export(commands::export::Args),
    // Save, list and show pipeline templates (.claude/pipelines/<name>.md)
    Pipeline(commands::pipeline::Args),
    // Write, read and clean continue summaries in .claude/memory/
    Summary(commands::summary::Args),
    // Report how full the agent session's context window is
    Usage(commands::usage::Args),
    // Answer an agent harness's session hooks (JSON on stdin and stdout)
    Hook(commands::hook::Args),
    // Serve the commands as MCP tools over stdio (Model Context Protocol)
    Mcp(commands::mcp::Args),
    // Merge three versions of the narrative as a log (git merge driver)
    MergeNarrative(commands::merge_narrative::Args),
    // Print the JSON Schema of a brief (schema version 1)
    Schema(commands::schema::Args),
    // Print the shell completion script for bash, zsh or fish
    Completions(commands::completions::Args),
    // Install the man pages, so that `git help handoff` opens them
    InstallMan(commands::install_man::Args),
    // Tour the whole loop in a throwaway repository (never the current one)
    Demo(commands::demo::Args),
}

/// Run a parsed command line. Errors are returned for `main` to print as
/// one line (exit 1 or 128); checks that fail without an error (an invalid
/// brief) return an [`Output`] with code 1. [`write_out`] prints it.
pub fn run(cli: Cli) -> anyhow::Result<Output> {
    dispatch(cli)
}

/// Write an output to stdout (`w`): escaped, and painted when colour is
/// wanted ([`render::color_wanted`]) and the body has labelled spans.
pub fn write_out(
    output: &Output,
    w: &mut impl std::io::Write,
    stdout_is_terminal: bool,
) -> std::io::Result<()> {
    let painter =
        (output.paintable() && render::color_wanted(stdout_is_terminal)).then_some(render::Painter);
    output.write_to(w, painter.as_ref())
}

fn dispatch(cli: Cli) -> anyhow::Result<Output> {
    let Some(command) = cli.command else {
        return commands::overview::run();
    };
    match command {
        Command::Write(args) => commands::write::run(*args),
        Command::Recover(args) => commands::recover::run(*args),
        Command::Draft(args) => commands::draft::run(args),
        Command::Resume(args) => commands::resume::run(args),
        Command::Reground(args) => commands::reground::run(args),
        Command::Brief(args) => commands::brief::run(*args),
        Command::Hook(args) => commands::hook::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Lint(args) => commands::lint::run(args),
        Command::Split(args) => commands::split::run(args),
        Command::Pipeline(args) => commands::pipeline::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Validate(args) => commands::validate::run(args),
        Command::List(args) => commands::list::run(args),
        Command::Show(args) => commands::show::run(args),
        Command::Drop(args) => commands::drop::run(args),
        Command::Redact(args) => commands::redact::run(args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Completions(args) => commands::completions::run(args),
        Command::InstallMan(args) => commands::install_man::run(args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Log(args) => commands::log::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Push(args) => commands::push::run(args),
        Command::Fetch(args) => commands::fetch::run(args),
        Command::Resolve(args) => commands::resolve::run(args),
        Command::Init(args) => commands::init::run(args),
        Command::MergeNarrative(args) => commands::merge_narrative::run(args),
        Command::Fork(args) => commands::fork::run(*args),
        Command::Handback(args) => commands::handback::run(args),
        Command::Usage(args) => commands::usage::run(args),
        Command::Summary(args) => commands::summary::run(args),
        Command::Prune(args) => commands::prune::run(args),
        Command::Restore(args) => commands::restore::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_hook_shortcut_parses_as_clap_does() {
        for event in ["session-start", "pre-compact", "session-end"] {
            let args = ["hook", event].map(std::ffi::OsString::from);
            let fast = Cli::hook_shortcut(&args).expect("taken");
            let full = Cli::try_parse_from(["git-handoff", "hook", event]).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{full:?}"));
        }
        for args in [
            vec!["hook"],
            vec!["hook", "session-start", "--help"],
            vec!["hook", "other"],
            vec!["list", "session-start"],
        ] {
            let args: Vec<_> = args.into_iter().map(std::ffi::OsString::from).collect();
            assert!(Cli::hook_shortcut(&args).is_none(), "{args:?}");
        }
    }

    /// A parse by the whole tree, as clap's derive does it.
    fn parsed_whole(args: &[&str]) -> Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        let mut cmd = Cli::help_width(Cli::command());
        cmd.build();
        let cmd = groups::apply(cmd);
        let argv = std::iter::once("git-handoff").chain(args.iter().copied());
        Cli::from_arg_matches(&cmd.try_get_matches_from(argv)?)
    }

    fn parsed_fast(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::parse_from_args(args.iter().map(std::ffi::OsString::from).collect())
    }

    #[test]
    fn a_command_line_parses_the_same_with_only_its_subcommand_built() {
        let lines: &[&[&str]] = &[
            &[],
            &["resume"],
            &["resume", "KEY", "--json"],
            &[
                "write",
                "k",
                "--done-when",
                "x",
                "--resume-by",
                "y",
                "--decision",
                "d",
            ],
            &["log", "k", "-n", "3"],
            &["push", "origin", "--json"],
            &["hook", "session-start"],
            &["pipeline", "list"],
            &["summary", "latest"],
            &["merge-narrative", "a", "b", "c"],
            &["--version"],
            &["resume", "--no-such-flag"],
            &["resum"],
            &["list", "extra", "args"],
        ];
        for args in lines {
            match (parsed_fast(args), parsed_whole(args)) {
                (Ok(fast), Ok(whole)) => assert_eq!(format!("{fast:?}"), format!("{whole:?}")),
                (Err(fast), Err(whole)) => {
                    assert_eq!(fast.kind(), whole.kind(), "{args:?}");
                    assert_eq!(fast.to_string(), whole.to_string(), "{args:?}");
                }
                (fast, whole) => panic!("{args:?}: {fast:?} against {whole:?}"),
            }
        }
    }

    #[test]
    fn help_shows_every_subcommand_with_its_summary() {
        let help = parsed_fast(&["--help"]).expect_err("help").to_string();
        assert_eq!(
            help,
            parsed_whole(&["--help"]).expect_err("help").to_string()
        );
        let mut cmd = Cli::command();
        cmd.build();
        // Wrapped at 80 columns: compared word by word.
        let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let about = sub.get_about().expect("every subcommand has a summary");
            assert!(
                words.contains(&about.to_string()),
                "{}: {about}",
                sub.get_name()
            );
        }
        let sub = parsed_fast(&["resume", "--help"])
            .expect_err("help")
            .to_string();
        assert_eq!(
            sub,
            parsed_whole(&["resume", "--help"])
                .expect_err("help")
                .to_string()
        );
        assert!(sub.contains("--json"), "{sub}");
    }

    #[test]
    fn json_flags_parse_to_a_format() {
        let format = |args: &[&str]| match Cli::try_parse_from(args) {
            Ok(Cli {
                command: Some(Command::List(a)),
            }) => Ok(a.format),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e.kind()),
        };
        assert_eq!(format(&["git-handoff", "list"]), Ok(Format::Human));
        assert_eq!(format(&["git-handoff", "list", "--json"]), Ok(Format::Json));
        // A flag, as before: it takes no value.
        assert_eq!(
            format(&["git-handoff", "list", "--json=false"]),
            Err(clap::error::ErrorKind::TooManyValues)
        );
    }

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }
}
