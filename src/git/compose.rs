//! Composing a brief: a partial brief (JSON, with any field flags already
//! merged in) plus what git says now, then validated.
//!
//! `write`, `recover` and `split` all go through [`compose`], and
//! [`finalize`] is the single place where a composed value becomes a
//! [`Brief`]: checks that apply to every newly written brief belong there.
//! `import` stores briefs as they were recorded and only checks them with
//! [`Brief::from_slice`]; it composes nothing.

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::brief::{self, Brief, Issue};
use crate::git::repo::{self, HeadState, WorktreeInfo};
use crate::support::clock;

/// Which mode of the method a brief is composed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `write` and `split`: `timestamp` and `mode` are filled only when absent.
    Write,
    /// `recover`: `timestamp` is now and `mode` is `RECOVER`, whatever the input said.
    Recover,
}

/// The git facts a brief records, read once per command so that every brief
/// of one command (the N threads of a split) records the same state.
#[derive(Debug, Clone)]
pub struct GitFacts {
    /// HEAD: branch and commit.
    pub head: HeadState,
    /// The worktree written from.
    pub worktree: WorktreeInfo,
    /// The summary line of `git diff --stat HEAD`, `None` when clean.
    pub diff_summary: Option<String>,
    /// The clock (`GIT_HANDOFF_NOW` honoured), Unix seconds.
    pub now: i64,
}

impl GitFacts {
    /// Read HEAD, the worktree, the diff summary and the clock.
    pub fn read(repo: &gix::Repository) -> Result<GitFacts> {
        GitFacts::read_skipping(repo, &|_, _, _| false)
    }

    /// [`GitFacts::read`], the diff summary without the files `skip` says
    /// are no work (see [`repo::diff_stat_skipping`]).
    pub fn read_skipping(repo: &gix::Repository, skip: repo::Skip) -> Result<GitFacts> {
        Ok(GitFacts {
            head: repo::head_state(repo)?,
            worktree: repo::worktree_info(repo)?,
            diff_summary: repo::diff_stat_skipping(repo, skip)?.0.summary(),
            now: clock::now().map_err(crate::refused)?,
        })
    }
}

/// Parse a partial brief: JSON that must be an object.
pub fn parse_partial(data: &[u8]) -> Result<Value> {
    match brief::parse_json(data) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(_) => crate::refuse!(
            "the brief must be a JSON object ({{\"resume\": …, \"state\": …}}); nothing was written"
        ),
        Err(e) => crate::refuse!("{e}; nothing was written"),
    }
}

/// How [`merge`] treats two arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lists {
    /// The overlay's array replaces the base's (a correction).
    Replace,
    /// The overlay's items are appended to the base's, skipping items the
    /// base already has (shared items copied into a thread).
    Append,
}

/// Merge `overlay` into `base`: objects key by key, recursively; arrays as
/// `lists` says; any other value of the overlay replaces the base's.
pub fn merge(base: &mut Value, overlay: Value, lists: Lists) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v, lists),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(o)) if lists == Lists::Append => {
            for item in o {
                if !b.contains(&item) {
                    b.push(item);
                }
            }
        }
        (slot, o) => *slot = o,
    }
}

/// Apply `patch` to `target` as a JSON Merge Patch (RFC 7386): objects
/// merge key by key, `null` removes a key, anything else (a list included)
/// replaces what was there.
pub fn merge_patch(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(map) = target else {
        unreachable!("made an object above")
    };
    for (name, value) in patch {
        if value.is_null() {
            map.remove(&name);
        } else {
            merge_patch(map.entry(name).or_insert(Value::Null), value);
        }
    }
}

/// Fill what the tool owns: `schema_version` (when absent), `key`,
/// `timestamp` and `mode` (as [`Mode`] says), and the git state always —
/// `state.branch`, `state.worktree`, `state.head_sha`, `state.diff_summary`
/// as recorded now, never as given. Missing `resume` and `state` objects are
/// created so that validation names the missing fields inside them.
pub fn fill(value: &mut Value, key: &str, mode: Mode, git: &GitFacts) {
    let Some(map) = value.as_object_mut() else {
        return;
    };
    map.entry("schema_version")
        .or_insert_with(|| json!(brief::SCHEMA_VERSION));
    map.insert("key".into(), json!(key));
    match mode {
        Mode::Write => {
            let ts = map
                .entry("timestamp")
                .or_insert_with(|| json!(clock::format(git.now)));
            // Any RFC 3339 time is accepted; it is written in UTC with `Z`.
            if let Some(z) = ts.as_str().and_then(clock::normalize) {
                *ts = json!(z);
            }
            map.entry("mode").or_insert_with(|| json!("WRITE"));
        }
        Mode::Recover => {
            map.insert("timestamp".into(), json!(clock::format(git.now)));
            map.insert("mode".into(), json!("RECOVER"));
        }
    }
    map.entry("resume")
        .or_insert_with(|| Value::Object(Map::new()));
    let state = map
        .entry("state")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(state) = state {
        state.insert("branch".into(), json!(git.head.branch_label()));
        state.insert(
            "worktree".into(),
            json!({
                "root": git.worktree.root.display().to_string(),
                "is_linked": git.worktree.is_linked,
                "git_common_dir": git.worktree.common_dir.display().to_string(),
            }),
        );
        match git.head.sha() {
            Some(sha) => state.insert("head_sha".into(), json!(sha)),
            None => state.remove("head_sha"),
        };
        match &git.diff_summary {
            Some(d) => state.insert("diff_summary".into(), json!(d)),
            None => state.remove("diff_summary"),
        };
    }
}

/// Turn a composed value into a [`Brief`], or every reason it cannot be one
/// (schema violations, sorted by path). The single gate every newly
/// composed brief passes before it is stored.
pub fn finalize(value: Value) -> Result<Brief, Vec<Issue>> {
    let mut issues = brief::validate(&value);
    if issues.iter().all(|i| i.path != "timestamp") {
        issues.extend(brief::timestamp_issue(&value));
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    let brief: Brief = serde_json::from_value(value).map_err(|e| {
        vec![Issue {
            path: "(root)".into(),
            message: e.to_string(),
        }]
    })?;
    match brief.stored_size_issue() {
        Some(issue) => Err(vec![issue]),
        None => Ok(brief),
    }
}

/// [`fill`] then [`finalize`]: the brief for `key` from a partial brief and
/// the git facts.
pub fn compose(
    mut value: Value,
    key: &str,
    mode: Mode,
    git: &GitFacts,
) -> Result<Brief, Vec<Issue>> {
    fill(&mut value, key, mode, git);
    finalize(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_is_rfc_7386() {
        // The RFC's own examples (appendix A), a few of them.
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
            (
                json!([1, 2]),
                json!({"a": "b", "c": null}),
                json!({"a": "b"}),
            ),
            (
                json!({}),
                json!({"a": {"bb": {"ccc": null}}}),
                json!({"a": {"bb": {}}}),
            ),
        ];
        for (mut target, patch, want) in cases {
            merge_patch(&mut target, patch.clone());
            assert_eq!(target, want, "{patch}");
        }
    }
    use std::path::PathBuf;

    fn facts() -> GitFacts {
        GitFacts {
            head: HeadState::Branch {
                name: "feat/x".into(),
                sha: "a".repeat(40),
            },
            worktree: WorktreeInfo {
                root: PathBuf::from("/w"),
                is_linked: false,
                common_dir: PathBuf::from("/w/.git"),
            },
            diff_summary: None,
            now: 0,
        }
    }

    #[test]
    fn merge_replaces_or_appends_lists_and_merges_objects() {
        let mut base = json!({"state": {"decisions": ["a", "b"], "next_acceptance_check": "x"}});
        merge(
            &mut base,
            json!({"state": {"decisions": ["b", "c"]}}),
            Lists::Append,
        );
        assert_eq!(base["state"]["decisions"], json!(["a", "b", "c"]));
        assert_eq!(base["state"]["next_acceptance_check"], "x");
        merge(
            &mut base,
            json!({"state": {"decisions": ["z"], "next_acceptance_check": "y"}}),
            Lists::Replace,
        );
        assert_eq!(base["state"]["decisions"], json!(["z"]));
        assert_eq!(base["state"]["next_acceptance_check"], "y");
    }

    #[test]
    fn recover_mode_overrides_timestamp_and_mode_and_git_state_always_wins() {
        let value = json!({
            "timestamp": "2020-01-01T00:00:00Z", "mode": "WRITE",
            "resume": {"done_when": "d", "resume_by": "r"},
            "state": {"next_acceptance_check": "c", "branch": "lie", "diff_summary": "lie"}
        });
        let b = compose(value.clone(), "k", Mode::Recover, &facts()).unwrap();
        assert_eq!(b.mode, "RECOVER");
        assert_eq!(b.timestamp, "1970-01-01T00:00:00Z");
        assert_eq!(b.state.branch, "feat/x");
        assert_eq!(b.state.diff_summary, None);
        let b = compose(value, "k", Mode::Write, &facts()).unwrap();
        assert_eq!(
            (b.mode.as_str(), b.timestamp.as_str()),
            ("WRITE", "2020-01-01T00:00:00Z")
        );
    }

    #[test]
    fn missing_fields_are_named_inside_their_objects() {
        let issues = compose(json!({}), "k", Mode::Recover, &facts()).unwrap_err();
        let text: Vec<String> = issues
            .iter()
            .map(|i| format!("{}: {}", i.path, i.message))
            .collect();
        let text = text.join("\n");
        assert!(text.contains("done_when"), "{text}");
        assert!(text.contains("resume_by"), "{text}");
        assert!(text.contains("next_acceptance_check"), "{text}");
    }
}
