//! `git handoff validate FILE|-`: check a brief against the schema.

use crate::Output;
use crate::brief::{self, BriefError};
use crate::commands::read_input;

/// Check a brief file (or - for stdin) against the schema
///
/// Prints `handoff-validate: OK` on stdout and exits 0, or prints
/// `handoff-validate: INVALID` and one `  - <path>: <message>` line per
/// error on stderr and exits 1. Needs no repository.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief file, or - to read stdin
    #[arg(value_name = "FILE|-")]
    pub file: String,
}

/// Validate and report.
pub fn run(args: Args) -> anyhow::Result<Output> {
    let data = read_input(&args.file)?;
    let value = match brief::parse_json(&data) {
        Ok(v) => v,
        Err(e @ (BriefError::TooLarge(_) | BriefError::NotUtf8(_) | BriefError::Json(_))) => {
            return Err(anyhow::anyhow!("handoff-validate: {e}"));
        }
        Err(BriefError::Invalid(_)) => unreachable!("parse_json does not validate"),
    };
    let mut issues = brief::validate(&value);
    if issues.is_empty()
        && let Ok(b) = serde_json::from_value::<brief::Brief>(value)
    {
        issues.extend(b.stored_size_issue());
    }
    if issues.is_empty() {
        return Ok(Output::ok("handoff-validate: OK\n"));
    }
    eprintln!("{}", crate::render::invalid(&issues).trim_end());
    Ok(Output {
        stdout: String::new(),
        code: 1,
        text: false,
        verbatim: false,
    })
}
