//! The tools as listed: each one's description, arguments (its input
//! schema, with the partial-brief schema embedded where a tool takes a
//! brief) and the schema of its structured result, generated from the
//! typed report it returns.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::brief::Brief;

/// A tool's definition: name, description, input schema, the schema of
/// its structured result, hints.
pub fn definition(name: &str) -> Tool {
    let spec = SPECS
        .iter()
        .find(|s| s.name == name)
        .expect("every served tool has a spec");
    let mut properties = Map::new();
    for (prop, kind, description) in spec.props {
        let mut schema = match *kind {
            "string[]" => json!({"type": "array", "items": {"type": "string"}}),
            "brief" => partial_brief(),
            "brief-ref" => json!({"type": "object"}),
            "tokens" => json!({"type": ["integer", "string"]}),
            kind => json!({ "type": kind }),
        };
        schema["description"] = json!(description);
        properties.insert(prop.to_string(), schema);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    if let Some(brief) = properties.get_mut("brief") {
        // A shape the brief uses twice is described once.
        if let Some(defs) = shared_defs(brief) {
            schema.insert("$defs".into(), defs);
        }
    }
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), json!(spec.required));
    schema.insert("additionalProperties".into(), json!(false));
    let mut hints = ToolAnnotations::default();
    hints.read_only_hint = Some(spec.read_only);
    hints.destructive_hint = Some(matches!(name, "drop" | "prune" | "push"));
    hints.open_world_hint = Some(matches!(name, "push" | "fetch"));
    let tool = Tool::new(spec.name, spec.description, Arc::new(schema)).with_annotations(hints);
    with_output_schema(tool)
}

/// The tool with the schema of its structured result, generated from the
/// report it returns (as `--json` prints it); none for the tools that touch
/// remotes or delete, whose results have more than one shape.
fn with_output_schema(tool: Tool) -> Tool {
    let mut tool = typed_output_schema(tool);
    let closed = tool.name == "show";
    if let Some(schema) = tool.output_schema.take() {
        let mut value = Value::Object((*schema).clone());
        standard_formats(&mut value);
        if !closed
            && let Some(properties) = value.get_mut("properties").and_then(Value::as_object_mut)
        {
            properties.insert(
                "text".into(),
                json!({
                    "type": "string",
                    "description": "The command's text render, as a person at the terminal reads it, its `!!` warnings first: what to act on before anything else."
                }),
            );
        }
        if let Value::Object(map) = value {
            tool.output_schema = Some(Arc::new(map));
        }
    }
    tool
}

/// The formats JSON Schema 2020-12 defines; what a schema generator adds
/// beyond them (`uint`, `uint64`, `int32` …) harnesses warn about on every
/// call ("unknown format … ignored").
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every `format` of `schema` that JSON Schema does not define removed;
/// an unsigned one (`uint`, `uint64` …) says the same as `minimum: 0`.
fn standard_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let format = map
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(format) = format
                && !STANDARD_FORMATS.contains(&format.as_str())
            {
                map.remove("format");
                if format.starts_with("uint") && !map.contains_key("minimum") {
                    map.insert("minimum".into(), json!(0));
                }
            }
            map.values_mut().for_each(standard_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats),
        _ => {}
    }
}

fn typed_output_schema(tool: Tool) -> Tool {
    use crate::cli::report::*;
    match tool.name.as_ref() {
        "resume" => tool.with_output_schema::<ResumedForModel<'static>>(),
        "reground" => tool.with_output_schema::<Reground<'static>>(),
        "brief" => tool.with_output_schema::<SubagentBrief>(),
        "list" => tool.with_output_schema::<Listed<'static>>(),
        "show" => tool.with_output_schema::<Brief>(),
        "log" => tool.with_output_schema::<Logged<'static>>(),
        "write" => tool.with_output_schema::<Written<'static>>(),
        "recover" => tool.with_output_schema::<Recovered<'static>>(),
        "lint" => tool.with_output_schema::<Linted<'static>>(),
        "validate" => tool.with_output_schema::<Validity<'static>>(),
        "usage" => tool.with_output_schema::<crate::agent::usage::Meter>(),
        _ => tool,
    }
}

/// A partial brief as a tool's argument: [`crate::brief::partial_schema`]
/// (what `write -F` takes), its `$ref`s inlined (a tool's input schema is a
/// document of its own), each field described by the typed brief's doc
/// comments.
fn partial_brief() -> Value {
    let mut schema = crate::brief::partial_schema();
    let definitions = match &mut schema {
        Value::Object(map) => {
            for meta in ["$schema", "$id", "title"] {
                map.remove(meta);
            }
            map.remove("definitions").unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    inline_refs(&mut schema, &definitions);
    let typed = serde_json::to_value(schemars::schema_for!(Brief)).expect("a schema serializes");
    describe(&mut schema, &typed, &typed);
    for pointer in FILLED {
        let (parent, field) = pointer.rsplit_once('/').expect("a pointer");
        if let Some(Value::Object(fields)) = schema.pointer_mut(&format!("{parent}/properties")) {
            fields.remove(field);
        }
    }
    schema
}

/// The item shape `files_read_first` and `files_skip` share, moved out of
/// `brief` into the input schema's `$defs` (both refer to it), when `brief`
/// has them.
fn shared_defs(brief: &mut Value) -> Option<Value> {
    let file = brief.pointer("/properties/files_read_first/items")?.clone();
    for list in ["files_read_first", "files_skip"] {
        if let Some(items) = brief.pointer_mut(&format!("/properties/{list}/items")) {
            *items = json!({"$ref": "#/$defs/file"});
        }
    }
    Some(json!({ "file": file }))
}

/// The fields of a brief `write` fills in or records from git, whatever is
/// given: left out of the schema a tool describes (the model need not
/// spend its context on them), still taken if given. Each is the pointer of
/// the object that holds it in [`crate::brief::partial_schema`], then its
/// name.
const FILLED: &[&str] = &[
    "/schema_version",
    "/key",
    "/timestamp",
    "/mode",
    "/properties/state/branch",
    "/properties/state/worktree",
    "/properties/state/head_sha",
    "/properties/state/diff_summary",
];

/// Replace every `{"$ref": "#/definitions/NAME"}` in `node` by the
/// definition itself.
fn inline_refs(node: &mut Value, definitions: &Value) {
    match node {
        Value::Object(map) => {
            let name = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"));
            if let Some(definition) = name.and_then(|n| definitions.get(n)) {
                *node = definition.clone();
                inline_refs(node, definitions);
                return;
            }
            map.values_mut().for_each(|v| inline_refs(v, definitions));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline_refs(v, definitions)),
        _ => {}
    }
}

/// Give `node` and its fields (`properties`, `items`) the descriptions
/// `typed` has for them: a schema generated from the Rust type, whose
/// `$ref`s point into `root`'s `$defs`.
fn describe(node: &mut Value, typed: &Value, root: &Value) {
    let resolved = typed
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .unwrap_or(typed);
    let description = typed
        .get("description")
        .or_else(|| resolved.get("description"));
    if let (Some(description), Value::Object(map)) = (description, &mut *node) {
        map.entry("description")
            .or_insert_with(|| description.clone());
    }
    if let Some(Value::Object(fields)) = node.get_mut("properties") {
        for (name, field) in fields.iter_mut() {
            if let Some(typed_field) = resolved.get("properties").and_then(|p| p.get(name)) {
                describe(field, typed_field, root);
            }
        }
    }
    if let (Some(items), Some(typed_items)) = (node.get_mut("items"), resolved.get("items")) {
        describe(items, typed_items, root);
    }
}

/// Whether the tool `name` takes the argument `arg`.
pub fn takes(name: &str, arg: &str) -> bool {
    SPECS
        .iter()
        .find(|s| s.name == name)
        .is_some_and(|s| s.props.iter().any(|(p, _, _)| *p == arg))
}

/// A tool as listed: name, description, whether it only reads, its
/// arguments (name, JSON type, description) and which are required.
struct Spec {
    name: &'static str,
    description: &'static str,
    read_only: bool,
    props: &'static [(&'static str, &'static str, &'static str)],
    required: &'static [&'static str],
}

const KEY: (&str, &str, &str) = (
    "key",
    "string",
    "The brief's key (default: this session's key, else the current branch's); KEY@{N} for an earlier version, KEY@REMOTE for a remote's",
);
const WRITE_KEY: (&str, &str, &str) = (
    "key",
    "string",
    "The key (default: this worktree's sticky key, else the branch's)",
);
const PARTIAL: (&str, &str, &str) = (
    "brief",
    "brief",
    "A partial brief, as `write -F` takes it: resume.done_when, resume.resume_by and state.next_acceptance_check are required; state.decisions, state.rejected_paths, files_read_first and the rest as the method says. schema_version, key, timestamp, mode and the git state (state.branch, state.worktree, state.head_sha, state.diff_summary) are filled in by `write`: leave them out",
);
const CORRECTIONS: (&str, &str, &str) = (
    "brief",
    "brief-ref",
    "Corrections and additions, a partial brief of the shape `write`'s `brief` describes: its fields replace the stored brief's (lists too); the git state is recorded from git",
);
const TO_LINT: (&str, &str, &str) = (
    "brief",
    "brief-ref",
    "A brief to check instead of a stored one, of the shape `write`'s `brief` describes; a partial brief is fine",
);
const REMOTE: (&str, &str, &str) = (
    "remote",
    "string",
    "The remote (default: handoff.remote, else the branch's upstream remote, else origin)",
);

const SPECS: &[Spec] = &[
    Spec {
        name: "resume",
        description: "Show the brief for this branch (or KEY) with what drifted since it was written: call this first in a session",
        read_only: true,
        props: &[
            KEY,
            (
                "include_brief",
                "boolean",
                "Also return the brief as JSON (the text already renders it)",
            ),
        ],
        required: &[],
    },
    Spec {
        name: "reground",
        description: "Print the goal, the first five decisions, the files to keep in view",
        read_only: true,
        props: &[KEY],
        required: &[],
    },
    Spec {
        name: "brief",
        description: "Print a subagent brief (## Task …) of at most 30 lines, never stored",
        read_only: true,
        props: &[
            KEY,
            ("task", "string", "The subagent's task"),
            ("scope", "string[]", "What the subagent may touch"),
        ],
        required: &["task"],
    },
    Spec {
        name: "list",
        description: "List the stored briefs: key, age, branch, head, done-when",
        read_only: true,
        props: &[("archived", "boolean", "List the archived briefs instead")],
        required: &[],
    },
    Spec {
        name: "show",
        description: "Print a stored brief as JSON, exactly as stored",
        read_only: true,
        props: &[
            KEY,
            (
                "version",
                "string",
                "A version id (or a unique prefix) from `log`",
            ),
        ],
        required: &["key"],
    },
    Spec {
        name: "log",
        description: "List every version of a brief, newest first",
        read_only: true,
        props: &[KEY],
        required: &[],
    },
    Spec {
        name: "write",
        description: "Hand off: store a brief (git state filled in, secrets redacted, linted, compare-and-swap) and add its narrative entry; replaces the whole brief",
        read_only: false,
        props: &[
            PARTIAL,
            WRITE_KEY,
            (
                "narrative",
                "string",
                "The narrative entry's sections as markdown (### sections)",
            ),
            (
                "no_narrative",
                "boolean",
                "Add no narrative entry (as `write --no-narrative`)",
            ),
            (
                "update",
                "boolean",
                "Start from the stored brief and apply `brief` to it as a JSON Merge Patch (as `write --update`): objects merge, a given list replaces, fields left out stay",
            ),
        ],
        required: &["brief"],
    },
    Spec {
        name: "recover",
        description: "Rebuild the brief from the stored one plus the current git state (mode RECOVER), with optional corrections; the narrative is untouched",
        read_only: false,
        props: &[WRITE_KEY, CORRECTIONS],
        required: &[],
    },
    Spec {
        name: "lint",
        description: "Check a stored brief (key) or a given one (brief) for the method's anti-patterns",
        read_only: true,
        props: &[KEY, TO_LINT, ("strict", "boolean", "Findings are errors")],
        required: &[],
    },
    Spec {
        name: "validate",
        description: "Check a brief against the schema; with partial, a partial brief as `write` takes it (key, timestamp, mode and git state may be absent)",
        read_only: true,
        props: &[
            ("brief", "object", "The brief to check"),
            (
                "partial",
                "boolean",
                "Check it as a partial brief for `write`",
            ),
        ],
        required: &["brief"],
    },
    Spec {
        name: "usage",
        description: "Report how full the agent session's context window is, from its transcript (Claude Code or Codex CLI)",
        read_only: true,
        props: &[
            (
                "transcript",
                "string",
                "The transcript (.jsonl); default: this directory's newest session, Claude Code's or Codex CLI's",
            ),
            (
                "window",
                "tokens",
                "The context window in tokens (200000, \"200k\", \"1M\"); default: git config handoff.contextWindow, else the harness's figure, else the transcript's, else by model",
            ),
        ],
        required: &[],
    },
    Spec {
        name: "push",
        description: "Send the briefs and their history to a remote, each key with a lease",
        read_only: false,
        props: &[REMOTE],
        required: &[],
    },
    Spec {
        name: "fetch",
        description: "Fetch briefs and their history from a remote and reconcile them",
        read_only: false,
        props: &[REMOTE],
        required: &[],
    },
    Spec {
        name: "split",
        description: "Fork the work into self-contained briefs from a plan file; writes only with yes",
        read_only: false,
        props: &[
            ("plan", "string", "The plan (JSON) file's path"),
            ("yes", "boolean", "Write the briefs"),
        ],
        required: &["plan"],
    },
    Spec {
        name: "drop",
        description: "Delete a brief (its history stays)",
        read_only: false,
        props: &[("key", "string", "The brief's key")],
        required: &["key"],
    },
    Spec {
        name: "prune",
        description: "Archive briefs not written for 30 days; delete archived ones not written for 90",
        read_only: false,
        props: &[(
            "dry_run",
            "boolean",
            "Say what would be done; change nothing",
        )],
        required: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::mcp::{DEFAULT_TOOLS, OPT_IN};

    #[test]
    fn every_tool_has_a_spec_and_a_closed_schema() {
        for name in DEFAULT_TOOLS.iter().chain(OPT_IN) {
            let tool = definition(name);
            assert_eq!(tool.name, *name);
            assert_eq!(tool.input_schema["additionalProperties"], false);
            for required in tool.input_schema["required"].as_array().unwrap() {
                let required = required.as_str().unwrap();
                assert!(
                    tool.input_schema["properties"].get(required).is_some(),
                    "{name}: {required}"
                );
            }
        }
        assert_eq!(SPECS.len(), DEFAULT_TOOLS.len() + OPT_IN.len());
    }

    /// Every input and output schema is JSON Schema 2020-12 with only the
    /// formats it defines: compiled with format assertion on and unknown
    /// formats refused.
    #[test]
    fn every_schema_uses_only_standard_formats() {
        let compile = |name: &str, schema: &Map<String, Value>| {
            let schema = Value::Object(schema.clone());
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .should_ignore_unknown_formats(false)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!schema.to_string().contains("\"format\":\"uint"), "{name}");
        };
        for name in DEFAULT_TOOLS.iter().chain(OPT_IN) {
            let tool = definition(name);
            compile(name, &tool.input_schema);
            if let Some(output) = &tool.output_schema {
                compile(name, output);
            }
        }
    }
}
