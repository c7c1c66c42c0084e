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

/// What `write` fills in when a brief lacks it: at the top level, and in
/// `state`.
const FILLED: &[&str] = &["key", "mode", "schema_version", "timestamp"];
const FILLED_STATE: &[&str] = &["branch", "worktree"];

/// What the schema check found: the issues, and what to say about a brief
/// that is invalid as a stored brief but (nearly) what `write -F` takes.
pub struct Checked {
    /// One per problem; none when valid.
    pub issues: Vec<brief::Issue>,
    /// Invalid as a whole brief but valid as a partial one (or missing only
    /// `state`): the line that says so, printed first.
    pub partial: Option<String>,
    /// A line after the issues, when there is one to add.
    hint: Option<String>,
}

impl Checked {
    /// `handoff-validate: OK`, or (the partial-brief line first, then)
    /// `handoff-validate: INVALID` and one line per issue (exit 1), as
    /// `validate` prints it (on stderr) and MCP answers it.
    pub fn text(&self) -> String {
        if self.issues.is_empty() {
            return "handoff-validate: OK\n".to_string();
        }
        let mut out = String::new();
        if let Some(line) = &self.partial {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&crate::cli::render::invalid(&self.issues));
        out
    }

    /// A line to print after the issues, if any.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

/// The field a "required property" issue names (`resume.done_when`), if
/// the issue is one.
fn missing_field(issue: &brief::Issue) -> Option<String> {
    let field = issue
        .message
        .strip_suffix(" is a required property")?
        .trim_matches('"');
    Some(match issue.path.as_str() {
        "(root)" => field.to_string(),
        path => format!("{path}.{field}"),
    })
}

/// The line for a brief that fails as a stored brief only for what `write`
/// fills in — or that also lacks `state` altogether, of which `write` needs
/// only `next_acceptance_check` from its caller. `None` for anything else.
fn partial_line(value: &serde_json::Value, full: &[brief::Issue]) -> Option<String> {
    let mut lacks = Vec::new();
    for issue in full {
        let field = missing_field(issue)?;
        let filled = FILLED.contains(&field.as_str())
            || field
                .strip_prefix("state.")
                .is_some_and(|f| FILLED_STATE.contains(&f))
            || field == "state";
        if !filled {
            return None;
        }
        lacks.push(field);
    }
    let state_missing = value.get("state").is_none();
    let mut with_state = value.clone();
    if state_missing {
        with_state
            .as_object_mut()?
            .insert("state".into(), serde_json::json!({}));
        lacks.retain(|f| f != "state");
        lacks.extend(FILLED_STATE.iter().map(|f| format!("state.{f}")));
    }
    let needs: Vec<String> = brief::validate_partial(&with_state)
        .iter()
        .map(missing_field)
        .collect::<Option<_>>()?;
    let lacks = lacks.join(", ");
    match needs.as_slice() {
        [] => Some(format!(
            "a partial brief: valid for `git handoff write -F`; as a stored brief it lacks: {lacks} (write fills them in)"
        )),
        [only] if state_missing && only == "state.next_acceptance_check" => Some(format!(
            "a partial brief without `state`: `git handoff write -F` still needs state.next_acceptance_check (or `--next-check`); as a stored brief it also lacks: {lacks} (write fills them in)"
        )),
        _ => None,
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
        Err(BriefError::Duplicate(path)) => {
            return Ok(Checked {
                issues: vec![brief::Issue {
                    path,
                    message: "this field appears twice in its object; a field may appear once"
                        .into(),
                }],
                partial: None,
                hint: None,
            });
        }
        Err(BriefError::Invalid(_)) => unreachable!("parse_json does not validate"),
    };
    let mut issues = if partial {
        brief::validate_partial(&value)
    } else {
        brief::validate(&value)
    };
    let partial_summary = (!partial && !issues.is_empty())
        .then(|| partial_line(&value, &issues))
        .flatten();
    let hint = (partial && value.is_object() && value.get("state").is_none()).then(|| {
        "a partial brief needs `state` with its next_acceptance_check: add `\"state\": {\"next_acceptance_check\": \"…\"}`, or pass `--next-check` to `git handoff write`".to_string()
    });
    if issues.is_empty()
        && !partial
        && let Ok(b) = serde_json::from_value::<brief::Brief>(value)
    {
        issues.extend(b.stored_size_issue());
    }
    Ok(Checked {
        issues,
        partial: partial_summary,
        hint,
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
