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

/// What the schema check found: the issues, and whether the brief, though
/// invalid, is a valid partial brief (what `write` takes).
pub struct Checked {
    /// One per problem; none when valid.
    pub issues: Vec<brief::Issue>,
    /// Invalid as a whole brief but valid as a partial one.
    pub looks_partial: bool,
}

impl Checked {
    /// `handoff-validate: OK`, or `handoff-validate: INVALID` and one line
    /// per issue (exit 1), as `validate` prints it (on stderr) and MCP
    /// answers it.
    pub fn text(&self) -> String {
        if self.issues.is_empty() {
            "handoff-validate: OK\n".to_string()
        } else {
            crate::cli::render::invalid(&self.issues)
        }
    }

    /// The hint for a partial brief, when it looks like one.
    pub fn hint(&self) -> Option<&'static str> {
        self.looks_partial.then_some(PARTIAL_HINT)
    }
}

/// Check `data` against the schema (with `partial`, as a partial brief),
/// and a whole brief's stored size.
pub fn check(data: &[u8], partial: bool) -> anyhow::Result<Checked> {
    let value = match brief::parse_json(data) {
        Ok(v) => v,
        Err(e @ (BriefError::TooLarge(_) | BriefError::NotUtf8(_) | BriefError::Json(_))) => {
            return Err(crate::refusal!("handoff-validate: {e}"));
        }
        Err(BriefError::Invalid(_)) => unreachable!("parse_json does not validate"),
    };
    let mut issues = if partial {
        brief::validate_partial(&value)
    } else {
        brief::validate(&value)
    };
    let looks_partial =
        !partial && !issues.is_empty() && brief::validate_partial(&value).is_empty();
    if issues.is_empty()
        && !partial
        && let Ok(b) = serde_json::from_value::<brief::Brief>(value)
    {
        issues.extend(b.stored_size_issue());
    }
    Ok(Checked {
        issues,
        looks_partial,
    })
}

/// Validate and report: OK on stdout, or the issues on stderr (exit 1).
pub fn run(args: Args) -> anyhow::Result<Output> {
    let checked = check(&read_input(&args.file)?, args.partial)?;
    if checked.issues.is_empty() {
        return Ok(Output::human(checked.text()));
    }
    eprintln!("{}", checked.text().trim_end());
    if let Some(hint) = checked.hint() {
        eprintln!("{hint}");
    }
    Ok(Output::empty().with_code(1))
}
