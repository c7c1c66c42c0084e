//! The brief input shared by `write` and `recover`: the key, `-F FILE|-`
//! and the field flags, and the checks, flattened into each command's
//! `Args` as [`Composing`].

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::cli::commands::checks::CheckArgs;
use crate::cli::commands::read_input;
use crate::git::compose;
use crate::write::Single;

/// The input of a composing command (`write`, `recover`): the key it
/// targets, the partial brief and the checks.
#[derive(Debug, Default, clap::Args)]
pub struct Composing {
    #[command(flatten)]
    pub target: KeyArgs,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub checks: CheckArgs,
}

impl Composing {
    /// The write path's input for one brief: the partial brief, the field
    /// flags as its patch, the key asked for.
    pub fn single(&self) -> Result<Single<'static>> {
        Ok(Single {
            brief: self.fields.input()?,
            patch: Some(self.fields.patch()?),
            key: self.target.key.clone(),
            key_from_branch: self.target.key_from_branch,
            ..Single::default()
        })
    }
}

/// Which brief a composing command targets.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KeyArgs {
    /// The key (default: GIT_HANDOFF_KEY, else this worktree's sticky key, else the branch with / as -, else HANDOFF)
    pub key: Option<String>,
    /// Target the current branch's key, even when this worktree has another sticky key
    #[arg(long, conflicts_with = "key", display_order = 1)]
    pub key_from_branch: bool,
}

/// A scalar field flag's help: the field and the schema's description of
/// it (one source for the schema, `write -h` and the MCP tools).
fn scalar(path: &str) -> String {
    format!("{path}: {}", crate::brief::described(path))
}

/// A list field flag's help: what it adds (`as` the form of one entry)
/// and the schema's description of the list.
fn listed(path: &str, form: &str) -> String {
    let form = if form.is_empty() {
        String::new()
    } else {
        format!(" as {form}")
    };
    format!(
        "Add to {path}{form} (repeatable): {}",
        crate::brief::described(path)
    )
}

/// A partial brief from `-F` and the field flags; each field flag's help
/// is the schema's description of its field.
#[derive(Debug, Default, clap::Args)]
pub struct FieldArgs {
    /// Read a partial brief (JSON) from FILE, or - for stdin
    #[arg(short = 'F', long = "file", value_name = "FILE|-")]
    pub file: Option<String>,
    #[arg(long, value_name = "TEXT", help = "The check that says the work is done", long_help = scalar("resume.done_when"))]
    pub done_when: Option<String>,
    #[arg(long, value_name = "TEXT", help = "The next step, one sentence", long_help = scalar("resume.resume_by"))]
    pub resume_by: Option<String>,
    #[arg(long = "next-check", value_name = "TEXT", help = "The next check to run", long_help = scalar("state.next_acceptance_check"))]
    pub next_check: Option<String>,
    #[arg(long, value_name = "TEXT", help = "Override the generated resume prompt", long_help = scalar("resume.prompt"))]
    pub prompt: Option<String>,
    #[arg(long = "decision", value_name = "TEXT", help = "Add a locked decision, `DECISION — WHY` (repeatable)", long_help = listed("state.decisions", ""))]
    pub decisions: Vec<String>,
    #[arg(long = "rejected", value_name = "TEXT", help = "Add a path tried and rejected, and why (repeatable)", long_help = listed("state.rejected_paths", ""))]
    pub rejected: Vec<String>,
    #[arg(long = "risk", value_name = "TEXT", help = "Add an open risk (repeatable)", long_help = listed("state.open_risks", ""))]
    pub risks: Vec<String>,
    #[arg(long = "preference", value_name = "TEXT", help = "Add a preference of the user that binds the work (repeatable)", long_help = listed("state.preferences", ""))]
    pub preferences: Vec<String>,
    #[arg(long = "verbatim", value_name = "WHAT=FILE", help = "Keep the text of FILE word for word, as WHAT (repeatable)", long_help = listed("state.verbatim", "WHAT, the text of FILE"))]
    pub verbatim: Vec<String>,
    #[arg(long = "command", value_name = "CMD", help = "Add a command worth running again (repeatable)", long_help = listed("state.commands", ""))]
    pub commands: Vec<String>,
    #[arg(long = "test", value_name = "CMD=pass|fail", help = "Record a test command's last result (repeatable)", long_help = listed("state.tests", "CMD=pass or CMD=fail, in place of an earlier result of CMD"))]
    pub tests: Vec<String>,
    #[arg(long = "read", value_name = "PATH=WHY", help = "Add a file to read first, and why (repeatable)", long_help = listed("files_read_first", "PATH=WHY"))]
    pub read: Vec<String>,
    #[arg(long = "skip", value_name = "PATH=WHY", help = "Add a file the next session can skip, and why (repeatable)", long_help = listed("files_skip", "PATH=WHY"))]
    pub skip: Vec<String>,
    /// A partial brief given as a value in place of -F (the MCP server's
    /// `brief` argument); it passes the same gate as -F's bytes.
    #[arg(skip)]
    pub value: Option<Value>,
}

impl FieldArgs {
    /// Whether neither `-F` nor any field flag was given.
    pub fn is_empty(&self) -> bool {
        self.file.is_none() && self.value.is_none() && !self.has_field_flags()
    }

    fn has_field_flags(&self) -> bool {
        self.done_when.is_some()
            || self.resume_by.is_some()
            || self.next_check.is_some()
            || self.prompt.is_some()
            || !self.decisions.is_empty()
            || !self.rejected.is_empty()
            || !self.risks.is_empty()
            || !self.preferences.is_empty()
            || !self.verbatim.is_empty()
            || !self.commands.is_empty()
            || !self.tests.is_empty()
            || !self.read.is_empty()
            || !self.skip.is_empty()
    }

    /// The JSON object given with `-F` or as [`FieldArgs::value`] (an
    /// empty object without either).
    pub fn input(&self) -> Result<Map<String, Value>> {
        let value = match (&self.value, &self.file) {
            (Some(value), _) => compose::parse_partial(&serde_json::to_vec(value)?)?,
            (None, Some(source)) => compose::parse_partial(&read_input(source)?)?,
            (None, None) => Value::Object(Map::new()),
        };
        match value {
            Value::Object(map) => Ok(map),
            _ => unreachable!("parse_partial returns objects"),
        }
    }

    /// The field flags as a patch for the write path ([`crate::write::patch`]):
    /// scalars replace, lists append (a test result takes the place of
    /// its command's earlier one). `resume` and `state` are always in it
    /// (so that a brief where they are not objects is refused); a list only
    /// when its flag was given.
    pub fn patch(&self) -> Result<Value> {
        let mut resume = Map::new();
        for (field, flag) in [
            ("done_when", &self.done_when),
            ("resume_by", &self.resume_by),
            ("prompt", &self.prompt),
        ] {
            if let Some(text) = flag {
                resume.insert(field.into(), Value::String(text.clone()));
            }
        }
        let mut state = Map::new();
        if let Some(check) = &self.next_check {
            state.insert("next_acceptance_check".into(), Value::String(check.clone()));
        }
        let strings = |v: &Vec<String>| v.iter().cloned().map(Value::String).collect::<Vec<_>>();
        list(&mut state, "decisions", strings(&self.decisions));
        list(&mut state, "rejected_paths", strings(&self.rejected));
        list(&mut state, "open_risks", strings(&self.risks));
        list(&mut state, "preferences", strings(&self.preferences));
        let verbatim = self
            .verbatim
            .iter()
            .map(|spec| verbatim(spec))
            .collect::<Result<Vec<_>>>()?;
        list(&mut state, "verbatim", verbatim);
        list(&mut state, "commands", strings(&self.commands));
        let mut tests = Vec::new();
        for spec in &self.tests {
            match spec.rsplit_once('=') {
                Some((cmd, result @ ("pass" | "fail"))) if !cmd.trim().is_empty() => {
                    tests.push(json!({"cmd": cmd.trim(), "result": result}))
                }
                _ => crate::refuse!(
                    "--test '{spec}' needs the form CMD=pass or CMD=fail, like --test 'cargo test auth=pass'"
                ),
            }
        }
        list(&mut state, "tests", tests);
        let mut patch = Map::new();
        patch.insert("resume".into(), Value::Object(resume));
        patch.insert("state".into(), Value::Object(state));
        let read = self.read.iter().map(|s| pointer("read", s));
        list(&mut patch, "files_read_first", read.collect::<Result<_>>()?);
        let skip = self.skip.iter().map(|s| pointer("skip", s));
        list(&mut patch, "files_skip", skip.collect::<Result<_>>()?);
        Ok(Value::Object(patch))
    }
}

/// Add a list to a patch, unless it is empty.
fn list(map: &mut Map<String, Value>, field: &str, items: Vec<Value>) {
    if !items.is_empty() {
        map.insert(field.into(), Value::Array(items));
    }
}

/// `--verbatim WHAT=FILE`: the file's text, word for word, as WHAT (the
/// schema bounds its length).
fn verbatim(spec: &str) -> Result<Value> {
    let Some((what, file)) = spec
        .rsplit_once('=')
        .filter(|(w, f)| !w.trim().is_empty() && !f.trim().is_empty())
    else {
        crate::refuse!(
            "--verbatim '{spec}' needs the form WHAT=FILE, like --verbatim 'the failing test=err.txt'"
        );
    };
    let bytes = crate::cli::commands::read_file(std::path::Path::new(file.trim()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| crate::refusal!("--verbatim: '{}' is not UTF-8 text", file.trim()))?;
    Ok(json!({"what": what.trim(), "text": text.trim_end()}))
}

fn pointer(flag: &str, spec: &str) -> Result<Value> {
    match spec.split_once('=') {
        Some((path, why)) if !path.trim().is_empty() => {
            Ok(json!({"path": path.trim(), "why": why.trim()}))
        }
        _ => crate::refuse!(
            "--{flag} '{spec}' needs the form PATH=WHY, like --{flag} 'src/auth.rs=under repair'"
        ),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every field flag's help carries its field's schema description:
    /// a flag naming a field the schema does not describe fails here.
    #[test]
    fn each_field_flag_says_what_the_schema_says() {
        let mut cmd = crate::cli::Cli::command();
        cmd.build();
        let write = cmd.find_subcommand("write").unwrap();
        let mut checked = 0;
        for arg in write.get_arguments() {
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let field = help
                .strip_prefix("Add to ")
                .unwrap_or(&help)
                .split([':', ' '])
                .next()
                .unwrap_or_default()
                .to_string();
            if !(field.starts_with("resume.")
                || field.starts_with("state.")
                || field.starts_with("files_"))
            {
                continue;
            }
            let described = crate::brief::described(&field);
            assert!(
                !described.is_empty(),
                "{field}: no description in the schema"
            );
            assert!(help.ends_with(described), "{help}");
            checked += 1;
        }
        assert_eq!(checked, 13);
    }
}
