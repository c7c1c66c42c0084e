//! `git handoff validate FILE|-`: check a brief against the schema.

use crate::brief::{self, BriefError};
use crate::cli::Output;
use crate::cli::commands::read_input;

/// Check a brief file (or - for stdin) against the schema
///
/// Prints `handoff-validate: OK` on stdout and exits 0, or prints
/// `handoff-validate: INVALID` and one `  - <path>: <message>` line per
/// error on stderr and exits 1. Needs no repository. With --partial, checks
/// what `write -F` needs from its caller: everything but the key,
/// timestamp, mode, schema_version and git state, which write fills in.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief file, or - to read stdin
    #[arg(value_name = "FILE|-")]
    pub file: String,
    /// Check a partial brief, as `write -F` takes it (key, timestamp, mode and git state may be absent)
    #[arg(long)]
    pub partial: bool,
}

/// The line added when a complete-brief check fails only for the fields
/// `write` fills in.
const PARTIAL_HINT: &str = "this looks like a partial brief: `git handoff validate --partial` checks it; `git handoff write -F` fills in the rest";

/// Validate and report.
pub fn run(args: Args) -> anyhow::Result<Output> {
    let data = read_input(&args.file)?;
    let value = match brief::parse_json(&data) {
        Ok(v) => v,
        Err(e @ (BriefError::TooLarge(_) | BriefError::NotUtf8(_) | BriefError::Json(_))) => {
            return Err(crate::refusal!("handoff-validate: {e}"));
        }
        Err(BriefError::Invalid(_)) => unreachable!("parse_json does not validate"),
    };
    let mut issues = if args.partial {
        brief::validate_partial(&value)
    } else {
        brief::validate(&value)
    };
    let looks_partial =
        !args.partial && !issues.is_empty() && brief::validate_partial(&value).is_empty();
    if issues.is_empty()
        && !args.partial
        && let Ok(b) = serde_json::from_value::<brief::Brief>(value)
    {
        issues.extend(b.stored_size_issue());
    }
    if issues.is_empty() {
        return Ok(Output::ok("handoff-validate: OK\n"));
    }
    eprintln!("{}", crate::cli::render::invalid(&issues).trim_end());
    if looks_partial {
        eprintln!("{PARTIAL_HINT}");
    }
    Ok(Output {
        stdout: String::new(),
        code: 1,
        text: false,
        verbatim: false,
    })
}
