//! The flags of the checks every written brief passes (redaction, lint),
//! shared by `write`, `recover` and `split`, and how the command line
//! reports what the write path found: on stderr, as it always has. The
//! lint words are also `lint`'s and the MCP server's.

use anyhow::Result;

use crate::brief::lint::Finding;
use crate::cli::{Format, Output, render};
use crate::write::{self, Failed, Outcome};

/// The flags that steer the checks.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CheckArgs {
    /// Store secrets as given (with a warning); `push` still refuses them
    #[arg(long)]
    pub no_redact: bool,
    /// Skip the lint checks
    #[arg(long)]
    pub no_lint: bool,
    /// Lint findings are errors: nothing is written (also git config handoff.strict)
    #[arg(long, conflicts_with = "no_lint")]
    pub strict: bool,
}

impl CheckArgs {
    /// The write path's options for these flags, with a narrative entry
    /// when `narrative`.
    pub fn options(&self, narrative: bool) -> write::Options {
        write::Options {
            redact: !self.no_redact,
            lint: !self.no_lint,
            strict: self.strict,
            narrative,
            render_lines: Some(render::resume_lines),
        }
    }
}

/// A write's result on the command line: its notes (warnings, findings,
/// the redaction note) on stderr, then the outcome; on failure, the notes
/// and the refusal's report on stderr, then the error for `main` to print.
pub fn reported(result: Result<Outcome, Failed>) -> Result<Outcome> {
    match result {
        Ok(outcome) => {
            eprint!(
                "{}",
                render::notes_text(&outcome.notes, outcome.stored.is_some())
            );
            Ok(outcome)
        }
        Err(failed) => {
            eprint!("{}", render::failed_text(&failed));
            Err(failed.error)
        }
    }
}

/// A write command's answer: its notes on stderr ([`reported`]), then its
/// `output` in `format`.
pub fn run(
    format: Format,
    computed: Result<Outcome, Failed>,
    output: fn(&Outcome, Format) -> Output,
) -> Result<Output> {
    Ok(output(&reported(computed)?, format))
}

/// Lint a brief (as JSON) in `repo`'s current worktree, with the resume
/// render's length when the brief is complete.
pub fn check(repo: Option<&gix::Repository>, value: &serde_json::Value) -> Vec<Finding> {
    write::checks::lint_value(repo, value, Some(render::resume_lines))
}

/// The findings as stderr lines, `warning:` or `error:` by strictness.
pub fn findings_text(findings: &[Finding], strict: bool) -> String {
    let level = if strict { "error" } else { "warning" };
    findings
        .iter()
        .map(|f| format!("{level}: {}\n", f.line()))
        .collect()
}

/// The one-line verdict on stdout: `lint: no findings` or `lint: N findings`.
pub fn summary(findings: &[Finding]) -> String {
    match findings.len() {
        0 => "lint: no findings\n".to_string(),
        1 => "lint: 1 finding\n".to_string(),
        n => format!("lint: {n} findings\n"),
    }
}

/// Whether lint findings are errors: `--strict`, else `handoff.strict`.
pub fn strict(repo: Option<&gix::Repository>, flag: bool) -> bool {
    write::checks::strict(repo, flag)
}
