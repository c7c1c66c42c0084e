//! Issue 33: the MCP server self-describing and conformant — the partial
//! brief's schema in the tools that take a brief, an output schema for
//! every tool that returns structured content (and every result valid
//! against it), and JSON-RPC 2.0 as the spec says it at the edges the SDK
//! leaves: Invalid Request ids, batches on 2025-03-26, a bogus cursor,
//! requests before initialize.

use std::path::Path;

use crate::mcp::{call, connect, example, is_error, line, raw, text};
use crate::support::{EXAMPLE, Sandbox};
use serde_json::{Value, json};

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{e}: {schema}"))
}

/// Every error of `instance` against `schema`, one a line.
fn errors(schema: &Value, instance: &Value) -> String {
    validator(schema)
        .iter_errors(instance)
        .map(|e| format!("{} at {}\n", e, e.instance_path()))
        .collect()
}

/// Every property of `schema`, at any depth, has a description: the
/// paths of those that have none.
fn undescribed(schema: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(Value::Object(fields)) = schema.get("properties") {
        for (name, field) in fields {
            let at = format!("{path}.{name}");
            if field
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push(at.clone());
            }
            undescribed(field, &at, out);
        }
    }
    if let Some(items) = schema.get("items") {
        undescribed(items, &format!("{path}[]"), out);
    }
}

/// `write` embeds the partial brief's schema (issue 58: once — the shape
/// `files_read_first` and `files_skip` share in `$defs`, the fields `write`
/// fills in left out); `recover` and `lint` take the same shape and say so
/// instead of repeating it.
#[tokio::test]
async fn the_tools_that_take_a_brief_embed_the_partial_brief_schema() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let write = tools.iter().find(|t| t.name == "write").unwrap();
    let schema = Value::Object(write.input_schema.as_ref().clone());
    let brief = schema["properties"]["brief"].clone();
    assert_eq!(brief["type"], "object", "{brief}");
    let mut missing = Vec::new();
    undescribed(&brief, "brief", &mut missing);
    undescribed(&schema["$defs"]["file"], "$defs.file", &mut missing);
    assert!(missing.is_empty(), "write: no description for {missing:?}");
    assert!(
        brief["properties"]["resume"]["properties"]["done_when"]["description"]
            .as_str()
            .unwrap()
            .contains("verifiable"),
        "{brief}"
    );
    // What `write -F` takes validates; what it refuses does not.
    let with = |b: Value| json!({ "brief": b });
    assert_eq!(errors(&schema, &with(example())), "");
    for bad in [
        json!({"bogus": 1}),
        json!({"resume": {"done_when": ""}}),
        json!({"files_read_first": [{"path": "a"}]}),
        json!({"files_skip": [{"why": "a"}]}),
    ] {
        assert_ne!(errors(&schema, &with(bad.clone())), "", "write takes {bad}");
    }
    let required = &brief["properties"]["resume"]["required"];
    assert_eq!(required, &json!(["done_when", "resume_by"]));
    for name in ["recover", "lint"] {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let brief = &tool.input_schema["properties"]["brief"];
        assert_eq!(brief["type"], "object", "{name}: {brief}");
        assert!(
            brief["description"]
                .as_str()
                .unwrap()
                .contains("the shape `write`'s `brief` describes"),
            "{name}: {brief}"
        );
    }
    client.cancel().await.unwrap();
}

/// Issue 58: what the model receives for every tool (name, description
/// and input schema, as Claude Code sends them) fits in 12 KB, all the
/// opt-in tools served too; with the output schemas (all of `tools/list`)
/// it is measured and printed.
#[tokio::test]
async fn the_tool_definitions_fit_in_12_kb() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &["--allow", "push,fetch,split,drop,prune"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let model: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let facing = serde_json::to_vec(&model).unwrap().len();
    let listed = serde_json::to_vec(&json!({ "tools": tools }))
        .unwrap()
        .len();
    eprintln!(
        "tool definitions: {facing} bytes as the model receives them, {listed} bytes of tools/list with output schemas ({} tools)",
        tools.len()
    );
    assert!(facing <= 12_000, "{facing} bytes");
    client.cancel().await.unwrap();
}

/// Each tool with structured content, and arguments it succeeds with.
fn calls(transcript: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("resume", json!({"key": "feat"})),
        ("reground", json!({"key": "feat"})),
        (
            "brief",
            json!({"key": "feat", "task": "add leeway to verify()"}),
        ),
        ("list", json!({})),
        ("show", json!({"key": "feat"})),
        ("log", json!({"key": "feat"})),
        ("write", json!({"key": "other", "brief": example()})),
        ("recover", json!({"key": "feat"})),
        ("lint", json!({"key": "feat"})),
        ("validate", json!({"brief": example(), "partial": true})),
        ("usage", json!({"transcript": transcript})),
    ]
}

#[tokio::test]
async fn every_structured_result_is_valid_against_its_output_schema() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "feat", "-F", "-"], Some(EXAMPLE))
        .success();
    let transcript = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex-session.jsonl")
        .display()
        .to_string();
    let client = connect(&sb, &repo, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let calls = calls(&transcript);
    for (name, _) in &calls {
        let tool = tools.iter().find(|t| t.name == *name).unwrap();
        let schema = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{name} has no outputSchema"));
        assert_eq!(schema["type"], "object", "{name}");
    }
    for (name, args) in calls {
        let result = call(&client, name, args).await;
        assert!(!is_error(&result), "{name}: {}", text(&result));
        let structured = result
            .structured_content
            .unwrap_or_else(|| panic!("{name}: no structured content"));
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let schema = Value::Object(tool.output_schema.as_ref().unwrap().as_ref().clone());
        assert_eq!(errors(&schema, &structured), "", "{name}: {structured}");
    }
    // A result that breaks the schema is caught (the check is not vacuous).
    let write = tools.iter().find(|t| t.name == "write").unwrap();
    let schema = Value::Object(write.output_schema.as_ref().unwrap().as_ref().clone());
    assert_ne!(errors(&schema, &json!({"key": 1})), "");
    client.cancel().await.unwrap();
}

fn initialize(version: &str) -> Vec<u8> {
    let mut input = line(
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    input.extend(line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    input
}

/// The server's answers to `input`, one JSON value a line.
fn answers(sb: &Sandbox, dir: &Path, input: Vec<u8>) -> Vec<Value> {
    let (out, status) = raw(sb, dir, input);
    assert!(status.success(), "{status:?}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries only JSON-RPC"))
        .collect()
}

fn by_id(answers: &[Value], id: Value) -> Value {
    answers
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no answer for {id} in {answers:?}"))
}

#[test]
fn invalid_requests_are_answered_with_their_id_and_a_bogus_cursor_is_invalid_params() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut input = initialize("2025-06-18");
    input.extend(line(json!({"jsonrpc": "2.0", "id": 3, "method": 42})));
    input.extend(line(
        json!({"jsonrpc": "1.0", "id": "four", "method": "ping"}),
    ));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": "bogus"}}),
    ));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": 7}),
    ));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
    ));
    let answers = answers(&sb, &repo, input);
    for (id, code) in [
        (json!(3), -32600),
        (json!("four"), -32600),
        (json!(5), -32602),
        (json!(6), -32602),
    ] {
        let answer = by_id(&answers, id.clone());
        assert_eq!(answer["error"]["code"], code, "{id}: {answer}");
        assert_eq!(answer["jsonrpc"], "2.0");
    }
    assert!(
        by_id(&answers, json!(5))["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cursor")
    );
    assert!(by_id(&answers, json!(7))["result"]["tools"].is_array());
}

#[test]
fn before_initialize_requests_are_told_to_initialize_first_and_ping_is_answered() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut input = line(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    input.extend(line(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})));
    input.extend(initialize("2025-06-18"));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ));
    let answers = answers(&sb, &repo, input);
    let early = by_id(&answers, json!(1));
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize first"),
        "{early}"
    );
    assert_eq!(by_id(&answers, json!(2))["result"], json!({}));
    assert!(by_id(&answers, json!(3))["result"]["tools"].is_array());
}

#[test]
fn batches_are_taken_on_2025_03_26_and_refused_elsewhere() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let batch = || {
        line(json!([
            {"jsonrpc": "2.0", "id": 10, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}},
            {"jsonrpc": "2.0", "id": 11, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 12, "method": 5}
        ]))
    };
    let mut input = initialize("2025-03-26");
    input.extend(batch());
    input.extend(line(json!([])));
    let replies = answers(&sb, &repo, input);
    assert_eq!(
        by_id(&replies, json!("init"))["result"]["protocolVersion"],
        "2025-03-26"
    );
    // One array: the two requests' answers and the invalid member's error.
    let arrays: Vec<&Value> = replies.iter().filter(|a| a.is_array()).collect();
    assert_eq!(arrays.len(), 1, "{replies:?}");
    let members = arrays[0].as_array().unwrap();
    assert_eq!(members.len(), 3, "{members:?}");
    assert_eq!(by_id(members, json!(10))["result"], json!({}));
    assert!(by_id(members, json!(11))["result"]["tools"].is_array());
    assert_eq!(by_id(members, json!(12))["error"]["code"], -32600);
    // The empty batch: one Invalid Request (answered at once, so it may
    // come before the batch's array).
    let empty = by_id(&replies, Value::Null);
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert_eq!(replies.len(), 3, "{replies:?}");

    // 2025-06-18 has no batches: one Invalid Request, nothing run.
    let mut input = initialize("2025-06-18");
    input.extend(batch());
    let replies = answers(&sb, &repo, input);
    assert_eq!(replies.len(), 2, "{replies:?}");
    let refused = replies.last().unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-03-26")
    );
}

/// The `usage` tool takes `window`, as `usage --window` does.
#[tokio::test]
async fn usage_takes_the_window() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let transcript = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcript-basic.jsonl")
        .display()
        .to_string();
    let client = connect(&sb, &repo, &[]).await;
    for window in [json!("1M"), json!(1_000_000)] {
        let used = call(
            &client,
            "usage",
            json!({"transcript": transcript, "window": window}),
        )
        .await;
        assert!(!is_error(&used), "{}", text(&used));
        let meter = used.structured_content.unwrap();
        assert_eq!(
            (meter["window"].clone(), meter["window_source"].clone()),
            (json!(1_000_000), json!("flag"))
        );
    }
    client.cancel().await.unwrap();
}

/// docs/mcp.md's MCP table names every tool the server offers (with `--allow`
/// all of them) and, for each, exactly its arguments: `name?` optional,
/// `name` required.
#[tokio::test]
async fn the_readme_mcp_table_matches_the_tools() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/mcp.md")).unwrap();
    let section = &readme[readme.find("## MCP server").unwrap()..];
    let ticked = regex::Regex::new(r"`([a-z_]+)(\??)`").unwrap();
    let mut table: Vec<(String, Vec<(String, bool)>)> = Vec::new();
    for row in section
        .lines()
        .skip_while(|l| !l.starts_with("| tool |"))
        .skip(2)
    {
        let Some(row) = row.strip_prefix('|') else {
            break;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        let args: Vec<(String, bool)> = ticked
            .captures_iter(cells[1])
            .map(|c| (c[1].to_string(), c[2].is_empty()))
            .collect();
        for tool in ticked.captures_iter(cells[0]) {
            table.push((tool[1].to_string(), args.clone()));
        }
    }
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &["--allow", "push,fetch,split,drop,prune"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut listed: Vec<&str> = table.iter().map(|(t, _)| t.as_str()).collect();
    let mut served: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    listed.sort_unstable();
    served.sort_unstable();
    assert_eq!(listed, served);
    for (name, args) in &table {
        let tool = tools.iter().find(|t| t.name == name.as_str()).unwrap();
        let schema = Value::Object(tool.input_schema.as_ref().clone());
        let mut documented: Vec<(String, bool)> = args.clone();
        let mut actual: Vec<(String, bool)> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| {
                let required = schema["required"].as_array().unwrap().contains(&json!(k));
                (k.clone(), required)
            })
            .collect();
        documented.sort();
        actual.sort();
        assert_eq!(documented, actual, "docs/mcp.md's row for {name}");
    }
    client.cancel().await.unwrap();
}

/// Issue 56.8: a request too deep to parse or too large to keep is
/// answered with its id (read wherever it stands in the line), never
/// left unanswered; the session goes on.
#[test]
fn a_request_too_deep_or_too_large_is_answered_with_its_id() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut input = initialize("2025-06-18");
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    input.extend(
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"lint","arguments":{{"brief":{deep}}}}},"id":8}}"#
        )
        .into_bytes(),
    );
    input.push(b'\n');
    let big = "x".repeat(9 * 1024 * 1024);
    input.extend(
        format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"lint","arguments":{{"brief":"{big}"}}}},"id":"big"}}"#
        )
        .into_bytes(),
    );
    input.push(b'\n');
    input.extend(format!("{}\n", "[".repeat(300)).into_bytes());
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}),
    ));
    let answers = answers(&sb, &repo, input);
    for (id, words) in [
        (json!(8), "nests 203 levels"),
        (json!("big"), "over 8388608 bytes"),
    ] {
        let answer = by_id(&answers, id.clone());
        assert_eq!(answer["error"]["code"], -32600, "{id}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{id}: {message}");
    }
    let unknown = by_id(&answers, Value::Null);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nests 300 levels"),
        "{unknown}"
    );
    assert!(by_id(&answers, json!(10))["result"]["tools"].is_array());
}
