//! `git handoff lint [KEY | -F FILE]`: the method's anti-patterns.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::cli::commands::checks::{check, findings_text, strict, summary};
use crate::cli::commands::{BriefSource, Selection, read_input, refuse_ambiguous, select};
use crate::cli::{Format, Output, report};
use crate::{brief, git::repo};

/// Check a brief for the handoff method's anti-patterns
///
/// Rules: vague-check, inlined-content, no-rejected-paths,
/// decision-without-why, over-long, dangling-pointer, placeholder,
/// restated-readme, secret (docs/redaction.md, "Lint rules", has a bad and
/// a good example of each). Findings are warnings (exit 0); with --strict or
/// `git config handoff.strict true` they are errors (exit 1). `write` runs
/// the same checks (--strict, --no-lint). A brief file (-F) may be a
/// partial brief.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stored brief (KEY) or a brief file (-F).
    #[command(flatten)]
    pub source: BriefSource,
    /// Treat findings as errors (exit 1)
    #[arg(long)]
    pub strict: bool,
    /// Print the findings as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Lint and report.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading().ok();
    let value = match &args.source.file {
        Some(source) => match brief::parse_json(&read_input(source)?) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err(crate::refusal!("the brief must be a JSON object")),
            // Invalid input is a refusal (exit 1), as `validate` and `write`
            // answer it, not a fatal error.
            Err(e) => return Err(crate::refusal!("{e}")),
        },
        None => {
            let Some(repo) = repo.as_ref() else {
                bail!(
                    "not a git repository: `git handoff lint` checks a stored brief; use -F FILE outside a repository"
                )
            };
            match select(repo, args.source.key.as_deref())? {
                Selection::Found { stored, .. } => serde_json::from_slice(&stored.data)
                    .map_err(|e| anyhow::anyhow!("brief '{}' is not JSON: {e}", stored.key))?,
                Selection::Ambiguous(rows) => {
                    return Ok(refuse_ambiguous(&rows, "lint", args.format));
                }
            }
        }
    };
    let findings = check(repo.as_ref(), &value);
    let strict = strict(repo.as_ref(), args.strict);
    let code = u8::from(strict && !findings.is_empty());
    if args.format.is_json() {
        return Ok(report::pretty(&report::Linted {
            strict,
            findings: &findings,
        })
        .with_code(code));
    }
    if !findings.is_empty() {
        eprint!("{}", findings_text(&findings, strict));
    }
    Ok(Output::human(summary(&findings)).with_code(code))
}
