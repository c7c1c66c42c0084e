//! A patch over a partial brief, as the field flags of `write` and
//! `recover` make one: objects merge, scalars replace, lists are extended
//! (an item given twice is there twice), except that a test result
//! replaces the earlier result of the same command.

use anyhow::Result;
use serde_json::{Map, Value};

/// Apply `patch` to `value`, both objects: for each field of the patch, an
/// object is merged into the value's object of that name (created when
/// absent), a list extends the value's list (created when absent; a test
/// result, an item with a `cmd`, takes the place of the one with the same
/// `cmd`: `--test 'cargo test=pass'` after a failure records the pass, not
/// both), any other value replaces. Refused when the value holds a field of
/// another type than the patch's object or list.
pub fn apply(value: &mut Value, patch: &Value) -> Result<()> {
    let (Some(map), Some(patch)) = (value.as_object_mut(), patch.as_object()) else {
        return Ok(());
    };
    apply_map(map, patch)
}

fn apply_map(map: &mut Map<String, Value>, patch: &Map<String, Value>) -> Result<()> {
    for (field, given) in patch {
        match given {
            Value::Object(inner) => {
                let slot = map
                    .entry(field.as_str())
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(slot) = slot else {
                    crate::refuse!("'{field}' in the brief must be an object; nothing was written");
                };
                apply_map(slot, inner)?;
            }
            Value::Array(items) => {
                let slot = map
                    .entry(field.as_str())
                    .or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(list) = slot else {
                    crate::refuse!("'{field}' in the brief must be an array; nothing was written");
                };
                for item in items {
                    extend(list, item);
                }
            }
            other => {
                map.insert(field.clone(), other.clone());
            }
        }
    }
    Ok(())
}

/// Add `item` to `list`, in the place of the test result of the same
/// command when it is one.
fn extend(list: &mut Vec<Value>, item: &Value) {
    if let Some(command) = item.get("cmd").and_then(Value::as_str)
        && let Some(slot) = list
            .iter_mut()
            .find(|v| v.get("cmd").and_then(Value::as_str) == Some(command))
    {
        *slot = item.clone();
        return;
    }
    list.push(item.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_merge_scalars_replace_lists_extend() {
        let mut value = json!({"state": {"decisions": ["a"], "next_acceptance_check": "x"}});
        let patch =
            json!({"resume": {}, "state": {"decisions": ["a", "b"], "next_acceptance_check": "y"}});
        apply(&mut value, &patch).unwrap();
        assert_eq!(
            value,
            json!({"resume": {}, "state": {"decisions": ["a", "a", "b"], "next_acceptance_check": "y"}})
        );
    }

    #[test]
    fn a_test_result_replaces_the_earlier_result_of_its_command() {
        let mut value = json!({"state": {"tests": [
            {"cmd": "cargo test", "result": "fail"},
            {"cmd": "make lint", "result": "fail"}
        ]}});
        let patch = json!({"state": {"tests": [
            {"cmd": "cargo test", "result": "pass"},
            {"cmd": "cargo bench", "result": "pass"}
        ]}});
        apply(&mut value, &patch).unwrap();
        assert_eq!(
            value,
            json!({"state": {"tests": [
                {"cmd": "cargo test", "result": "pass"},
                {"cmd": "make lint", "result": "fail"},
                {"cmd": "cargo bench", "result": "pass"}
            ]}})
        );
    }

    #[test]
    fn a_field_of_another_type_is_refused() {
        let mut value = json!({"resume": "x"});
        let err = apply(&mut value, &json!({"resume": {}})).unwrap_err();
        assert!(
            err.to_string()
                .contains("'resume' in the brief must be an object")
        );
        let mut value = json!({"state": {"decisions": "x"}});
        let err = apply(&mut value, &json!({"state": {"decisions": ["y"]}})).unwrap_err();
        assert!(
            err.to_string()
                .contains("'decisions' in the brief must be an array")
        );
    }
}
