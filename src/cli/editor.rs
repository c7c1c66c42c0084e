//! The editor flow of `write`, as `git commit` does it: a template with `#`
//! comment lines, the user's editor, comments stripped, errors shown as
//! comments on the next round.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

/// The fields `write` fills in itself; they are left out of the template.
const AUTO: &[&str] = &["schema_version", "key", "timestamp", "mode"];
const AUTO_STATE: &[&str] = &["branch", "worktree", "head_sha", "diff_summary"];

const HELP: &str = "\
# Lines starting with # are ignored. Save an empty file to abort: nothing is written.
# Required: resume.done_when (one verifiable check that says the work is done),
#           resume.resume_by (the next step, one sentence),
#           state.next_acceptance_check (the next check to run).
# Optional: state.decisions[] (locked), state.rejected_paths[] (do not retry),
#           state.open_risks[], state.commands[], state.tests[{\"cmd\", \"result\": pass|fail}],
#           state.preferences[] (the user's preferences and feedback),
#           state.verbatim[{\"what\", \"text\"}] (word for word: the error, the code, the last turns),
#           files_read_first[{\"path\", \"why\"}], files_skip[{\"path\", \"why\"}], resume.prompt.
# Filled in by git handoff: schema_version, key, timestamp, mode, and the git state
# (state.branch, state.worktree, state.head_sha, state.diff_summary).
";

/// The editor command: `GIT_EDITOR`, else `core.editor`, else `VISUAL`,
/// else `EDITOR`, else `vi` — git's order.
pub fn editor(repo: &gix::Repository) -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    env("GIT_EDITOR")
        .or_else(|| {
            repo.config_snapshot()
                .string("core.editor")
                .map(|v| v.to_string())
        })
        .or_else(|| env("VISUAL"))
        .or_else(|| env("EDITOR"))
        .unwrap_or_else(|| "vi".to_string())
}

/// The template: help comments, then the brief's editable fields as
/// pretty JSON (the current brief for the key, or an empty skeleton).
pub fn template(key: &str, current: Option<&Value>, errors: &[String]) -> String {
    let mut out = String::new();
    for e in errors {
        out.push_str(&format!("# error: {e}\n"));
    }
    if !errors.is_empty() {
        out.push_str(
            "# Fix the errors above and save again (or save an empty file to abort).\n#\n",
        );
    }
    out.push_str(&format!("# The brief for '{key}', as JSON.\n"));
    out.push_str(HELP);
    let body = match current {
        Some(v) => editable(v),
        None => json!({
            "resume": {"done_when": "", "resume_by": ""},
            "state": {"next_acceptance_check": "", "decisions": [], "rejected_paths": [], "open_risks": []},
            "files_read_first": []
        }),
    };
    out.push_str(&serde_json::to_string_pretty(&body).expect("JSON serializes"));
    out.push('\n');
    out
}

/// The next round after errors: the errors as comments, a reminder, and
/// the user's text as they saved it (without its comments).
pub fn with_errors(errors: &[String], body: &str) -> String {
    let mut out = String::new();
    for e in errors {
        out.push_str(&format!("# error: {e}\n"));
    }
    out.push_str("# Fix the errors above and save again (or save an empty file to abort).\n");
    out.push_str(HELP);
    out.push_str(body);
    out
}

/// The brief without the fields `write` fills in.
fn editable(brief: &Value) -> Value {
    let mut v = brief.clone();
    if let Some(map) = v.as_object_mut() {
        for k in AUTO {
            map.remove(*k);
        }
        if let Some(Value::Object(state)) = map.get_mut("state") {
            for k in AUTO_STATE {
                state.remove(*k);
            }
        }
    }
    v
}

/// Drop comment lines; `None` when nothing but whitespace is left (abort).
pub fn strip_comments(text: &str) -> Option<String> {
    let kept: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    (!kept.trim().is_empty()).then_some(kept)
}

/// Run the editor on `path` the way git does (`sh -c '<editor> "$@"'`), so
/// that editor commands with arguments work.
pub fn edit(editor: &str, path: &Path) -> Result<()> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(path)
        .status()
        .with_context(|| format!("cannot start the editor '{editor}'"))?;
    if !status.success() {
        crate::refuse!("the editor '{editor}' exited with {status}; nothing was written");
    }
    Ok(())
}

/// Parse what the user saved: an object, or an error message for the next
/// round.
pub fn parse(text: &str) -> std::result::Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(_) => Err("the brief must be a JSON object".into()),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// An empty object, for callers that need a starting point.
pub fn empty() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_round_trips_through_strip_and_parse() {
        let t = template("k", None, &["resume.done_when: too short".into()]);
        assert!(t.starts_with("# error: resume.done_when: too short\n"));
        let body = strip_comments(&t).unwrap();
        let v = parse(&body).unwrap();
        assert_eq!(v["resume"]["done_when"], "");
        assert_eq!(strip_comments("# only\n  # comments\n\n"), None);
    }

    #[test]
    fn the_filled_in_fields_are_not_offered_for_editing() {
        let brief = json!({"schema_version": "1", "key": "k", "timestamp": "t", "mode": "WRITE",
                           "resume": {"done_when": "d", "resume_by": "r"},
                           "state": {"branch": "b", "next_acceptance_check": "c", "head_sha": "abc1234",
                                     "worktree": {"root": "/", "is_linked": false, "git_common_dir": "/"}}});
        let t = template("k", Some(&brief), &[]);
        let v = parse(&strip_comments(&t).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"resume": {"done_when": "d", "resume_by": "r"}, "state": {"next_acceptance_check": "c"}})
        );
    }
}
