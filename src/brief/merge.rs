//! The three-way merge of two briefs against their merge base, field by
//! field, as `git merge` merges files line by line: a field changed on
//! one side takes that side; list fields merge item by item (additions
//! from both sides kept, in order; an item removed on one side removed);
//! a field changed on both sides differently is a conflict, never guessed.
//!
//! Pure: values in, a merged value and its conflicts out. The fields the
//! tool fills in from git (`state.branch`, `state.worktree`,
//! `state.head_sha`, `state.diff_summary`) and those of the envelope
//! (`schema_version`, `key`, `timestamp`, `mode`) are left to the caller.

use serde::Serialize;
use serde_json::{Map, Value};

/// Fields the caller decides (the envelope and the git state), as paths.
pub const GIT_STATE: &[&str] = &[
    "schema_version",
    "key",
    "timestamp",
    "mode",
    "state.branch",
    "state.worktree",
    "state.head_sha",
    "state.diff_summary",
];

/// A field changed on both sides differently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conflict {
    /// The field's path (`resume.resume_by`, `state.tests`).
    pub path: String,
    /// The merge base's value (`null`: absent).
    pub base: Value,
    /// The local value (`null`: absent).
    pub ours: Value,
    /// The other side's value (`null`: absent).
    pub theirs: Value,
}

/// The merge: the merged brief (conflicting fields hold the local value
/// until resolved) and its conflicts, in field order.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The merged value.
    pub value: Value,
    /// Fields changed on both sides differently.
    pub conflicts: Vec<Conflict>,
}

/// Merge `ours` and `theirs` against `base` (an empty object when the two
/// share no version). The caller's fields ([`GIT_STATE`]) are taken from
/// `ours` and never conflict here.
pub fn three_way(base: &Value, ours: &Value, theirs: &Value) -> Merged {
    let mut conflicts = Vec::new();
    let value = merge_at("", base, ours, theirs, &mut conflicts);
    Merged { value, conflicts }
}

fn merge_at(
    path: &str,
    base: &Value,
    ours: &Value,
    theirs: &Value,
    conflicts: &mut Vec<Conflict>,
) -> Value {
    if GIT_STATE.contains(&path) || ours == theirs {
        return ours.clone();
    }
    match (base, ours, theirs) {
        (_, Value::Object(o), Value::Object(t)) => {
            let empty = Map::new();
            let b = base.as_object().unwrap_or(&empty);
            Value::Object(merge_objects(path, b, o, t, conflicts))
        }
        (_, Value::Array(o), Value::Array(t)) => {
            let b = base.as_array().map(Vec::as_slice).unwrap_or(&[]);
            Value::Array(merge_lists(b, o, t))
        }
        _ if ours == base => theirs.clone(),
        _ if theirs == base => ours.clone(),
        // A list one side added while the other had none.
        (Value::Null, Value::Array(o), Value::Null) => Value::Array(o.clone()),
        (Value::Null, Value::Null, Value::Array(t)) => Value::Array(t.clone()),
        _ => {
            conflicts.push(Conflict {
                path: path.to_string(),
                base: base.clone(),
                ours: ours.clone(),
                theirs: theirs.clone(),
            });
            ours.clone()
        }
    }
}

fn merge_objects(
    path: &str,
    base: &Map<String, Value>,
    ours: &Map<String, Value>,
    theirs: &Map<String, Value>,
    conflicts: &mut Vec<Conflict>,
) -> Map<String, Value> {
    let mut keys: Vec<&String> = ours.keys().collect();
    keys.extend(theirs.keys().filter(|k| !ours.contains_key(*k)));
    let mut out = Map::new();
    for key in keys {
        let at = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        let get = |m: &Map<String, Value>| m.get(key).cloned().unwrap_or(Value::Null);
        let merged = merge_at(&at, &get(base), &get(ours), &get(theirs), conflicts);
        if !merged.is_null() {
            out.insert(key.clone(), merged);
        }
    }
    out
}

/// Item by item: the base's items neither side removed, in the base's
/// order, then each side's additions in its order (ours first), each once.
fn merge_lists(base: &[Value], ours: &[Value], theirs: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = base
        .iter()
        .filter(|item| ours.contains(item) && theirs.contains(item))
        .cloned()
        .collect();
    for item in ours.iter().chain(theirs) {
        if !base.contains(item) && !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

/// The editor text of a merge with conflicts: one section per conflicting
/// field, its two sides (and the base) between git's conflict markers.
pub fn conflict_text(merged: &Merged, (ours, theirs): (&str, &str)) -> String {
    let mut out = String::new();
    for c in &merged.conflicts {
        let json = |v: &Value| serde_json::to_string_pretty(v).expect("JSON serializes");
        out.push_str(&format!("{}:\n", c.path));
        out.push_str(&format!("<<<<<<< {ours}\n{}\n", json(&c.ours)));
        out.push_str(&format!("||||||| base\n{}\n", json(&c.base)));
        out.push_str(&format!(
            "=======\n{}\n>>>>>>> {theirs}\n\n",
            json(&c.theirs)
        ));
    }
    out
}

/// Apply what was saved from [`conflict_text`]: each field's section must
/// hold one JSON value and no marker. The fields are the conflicts'; an
/// error names the first section that is not settled.
pub fn apply_resolved(merged: &Merged, text: &str) -> Result<Value, String> {
    let mut value = merged.value.clone();
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let header = line
            .strip_suffix(':')
            .filter(|p| merged.conflicts.iter().any(|c| c.path == *p));
        match (header, sections.last_mut()) {
            (Some(path), _) => sections.push((path.to_string(), String::new())),
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) if line.trim().is_empty() => {}
            (None, None) => return Err(format!("text before the first field: {line}")),
        }
    }
    for c in &merged.conflicts {
        let Some((_, body)) = sections.iter().find(|(p, _)| *p == c.path) else {
            return Err(format!("{}: the field's section is missing", c.path));
        };
        let markers = ["<<<<<<<", "|||||||", "=======", ">>>>>>>"];
        if body
            .lines()
            .any(|l| markers.iter().any(|m| l.starts_with(m)))
        {
            return Err(format!("{}: conflict markers are still there", c.path));
        }
        let parsed: Value = serde_json::from_str(body)
            .map_err(|e| format!("{}: not one JSON value: {e}", c.path))?;
        set(&mut value, &c.path, parsed);
    }
    Ok(value)
}

/// Set the field at a dotted `path` (`null` removes it).
fn set(value: &mut Value, path: &str, new: Value) {
    let mut at = value;
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        let Some(map) = at.as_object_mut() else {
            return;
        };
        at = map
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(map) = at.as_object_mut() {
        let last = parts[parts.len() - 1].to_string();
        if new.is_null() {
            map.remove(&last);
        } else {
            map.insert(last, new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn brief(next: &str, decisions: &[&str], rejected: &[&str]) -> Value {
        json!({
            "schema_version": "1", "key": "k", "timestamp": "t", "mode": "WRITE",
            "resume": {"done_when": "tests pass", "resume_by": next},
            "state": {"branch": "main", "next_acceptance_check": "cargo test",
                      "decisions": decisions, "rejected_paths": rejected}
        })
    }

    #[test]
    fn each_sides_changes_are_kept_and_lists_merge_item_by_item() {
        let base = brief("step 1", &["d1"], &["r1"]);
        let ann = brief("step 2", &["d1"], &["r1", "r-ann"]);
        let mut ben = brief("step 1", &["d1", "d-ben"], &["r1"]);
        ben["state"]["open_risks"] = json!(["risk-ben"]);
        let m = three_way(&base, &ann, &ben);
        assert!(m.conflicts.is_empty(), "{:?}", m.conflicts);
        assert_eq!(m.value["resume"]["resume_by"], "step 2");
        assert_eq!(m.value["state"]["decisions"], json!(["d1", "d-ben"]));
        assert_eq!(m.value["state"]["rejected_paths"], json!(["r1", "r-ann"]));
        assert_eq!(m.value["state"]["open_risks"], json!(["risk-ben"]));
    }

    #[test]
    fn an_item_removed_on_one_side_is_removed() {
        let base = brief("s", &["d1", "d2"], &[]);
        let ours = brief("s", &["d1"], &[]);
        let theirs = brief("s", &["d1", "d2", "d3"], &[]);
        let m = three_way(&base, &ours, &theirs);
        assert_eq!(m.value["state"]["decisions"], json!(["d1", "d3"]));
    }

    #[test]
    fn a_field_changed_on_both_sides_is_a_conflict_and_round_trips_the_markers() {
        let base = brief("step 1", &[], &[]);
        let (ours, theirs) = (brief("step A", &[], &[]), brief("step B", &[], &[]));
        let m = three_way(&base, &ours, &theirs);
        assert_eq!(m.conflicts.len(), 1);
        assert_eq!(m.conflicts[0].path, "resume.resume_by");
        let text = conflict_text(&m, ("local", "origin"));
        assert!(text.contains("<<<<<<< local\n\"step A\"\n||||||| base\n\"step 1\"\n=======\n\"step B\"\n>>>>>>> origin"), "{text}");
        assert!(apply_resolved(&m, &text).unwrap_err().contains("markers"));
        let settled = "resume.resume_by:\n\"step A, then B\"\n";
        let v = apply_resolved(&m, settled).unwrap();
        assert_eq!(v["resume"]["resume_by"], "step A, then B");
    }

    #[test]
    fn the_git_state_is_left_to_the_caller() {
        let base = brief("s", &[], &[]);
        let mut ours = base.clone();
        ours["state"]["head_sha"] = json!("aaaaaaa");
        let mut theirs = base.clone();
        theirs["state"]["head_sha"] = json!("bbbbbbb");
        let m = three_way(&base, &ours, &theirs);
        assert!(m.conflicts.is_empty());
        assert_eq!(m.value["state"]["head_sha"], "aaaaaaa");
    }
}
