//! `git handoff mcp` driven by a real MCP client (the `rmcp` SDK's client
//! over the child process's stdio), in temporary repositories; and raw
//! garbage on the server's stdin.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{EXAMPLE, Sandbox, handoff_refs, stdout};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

pub(crate) type Client = RunningService<RoleClient, ()>;

/// `git handoff mcp ARGS` in `dir`, hermetic, with a connected client.
pub(crate) async fn connect(sb: &Sandbox, dir: &Path, args: &[&str]) -> Client {
    let mut cmd = sb.command("git", dir);
    cmd.arg("handoff").arg("mcp").args(args);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).expect("spawn");
    ().serve(transport).await.expect("initialize")
}

pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .expect("the call is answered")
}

pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

pub(crate) fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

pub(crate) fn example() -> Value {
    serde_json::from_str(EXAMPLE).unwrap()
}

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.list_all_tools().await.expect("tools/list");
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn write_resume_brief_lint_over_mcp_match_the_cli() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &[]).await;
    let info = client.peer_info().expect("server info");
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or("")
            .contains("resume")
    );

    let names = tool_names(&client).await;
    for name in [
        "resume", "reground", "brief", "list", "show", "log", "write", "recover", "lint",
        "validate", "usage",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }

    // write over MCP, then the same input with `write -F` and the same
    // clock: the same blob, byte for byte.
    let wrote = call(&client, "write", json!({"key": "feat", "brief": example()})).await;
    assert!(!is_error(&wrote), "{}", text(&wrote));
    assert!(text(&wrote).starts_with("Wrote brief 'feat' (refs/handoffs/feat, version "));
    let structured = wrote.structured_content.clone().expect("structured");
    assert_eq!(structured["key"], "feat");
    let over_mcp = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/feat"]);
    let mcp_id = sb.git(&repo, &["rev-parse", "refs/handoffs/feat"]);
    assert_eq!(structured["id"], mcp_id.trim());
    std::fs::write(sb.path("in.json"), EXAMPLE).unwrap();
    let cli = sb
        .handoff(
            &repo,
            &["write", "feat", "-F", sb.path("in.json").to_str().unwrap()],
        )
        .success();
    assert!(stdout(&cli).starts_with("Wrote brief 'feat'"));
    let by_cli = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/feat"]);
    assert_eq!(over_mcp, by_cli);
    assert_eq!(mcp_id, sb.git(&repo, &["rev-parse", "refs/handoffs/feat"]));

    // resume: the CLI's render, inside the marked block a model reads as
    // data (each line behind `| `), and that text once as structured
    // content: a harness that hands the model only the structured result
    // (Claude Code) still shows it the `!!` lines; the brief as JSON only
    // on request.
    let resumed = call(&client, "resume", json!({"key": "feat"})).await;
    assert!(!is_error(&resumed));
    let cli_text = stdout(&sb.handoff(&repo, &["resume", "feat"]).success());
    let shown = text(&resumed);
    assert!(
        shown.contains("\n--- BEGIN BRIEF feat (version "),
        "{shown}"
    );
    for line in cli_text
        .lines()
        .filter(|l| !l.starts_with("Next step") && !l.starts_with("!! "))
    {
        let fenced = if line.is_empty() {
            "|\n".to_string()
        } else {
            format!("| {line}\n")
        };
        assert!(shown.contains(&fenced), "{line:?} in {shown}");
    }
    let structured = resumed.structured_content.unwrap();
    assert_eq!(structured["text"], shown.as_str());
    let cli_json: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "feat", "--json"]))).unwrap();
    assert_eq!(structured["id"], cli_json["id"]);
    assert!(structured.get("brief").is_none(), "{structured}");

    // brief: the CLI's subagent brief.
    let brief = call(
        &client,
        "brief",
        json!({"key": "feat", "task": "add leeway", "scope": ["src/auth.rs"]}),
    )
    .await;
    let cli_brief = stdout(
        &sb.handoff(
            &repo,
            &[
                "brief",
                "feat",
                "--task",
                "add leeway",
                "--scope",
                "src/auth.rs",
            ],
        )
        .success(),
    );
    assert_eq!(text(&brief), cli_brief);
    assert!(cli_brief.contains("## Task"));

    // lint: the CLI's --json as the structured value, the findings (which
    // the CLI prints on stderr) in the text.
    let linted = call(&client, "lint", json!({"key": "feat"})).await;
    assert!(!is_error(&linted), "{}", text(&linted));
    let cli_lint: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["lint", "feat", "--json"]))).unwrap();
    assert!(!cli_lint["findings"].as_array().unwrap().is_empty());
    assert!(
        text(&linted).contains("dangling-pointer"),
        "{}",
        text(&linted)
    );
    let mut structured = linted.structured_content.clone().unwrap();
    assert_eq!(structured["text"], text(&linted).as_str());
    structured.as_object_mut().unwrap().remove("text");
    assert_eq!(structured, cli_lint);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn strict_lint_list_and_log_over_mcp() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "feat", "-F", "-"], Some(EXAMPLE))
        .success();
    let client = connect(&sb, &repo, &[]).await;
    // Strict findings on a given brief are a tool error.
    let vague = call(
        &client,
        "lint",
        json!({"brief": {"resume": {"done_when": "it works"}}, "strict": true}),
    )
    .await;
    assert!(is_error(&vague), "strict findings are an error");
    assert!(text(&vague).contains("vague-check"), "{}", text(&vague));
    assert!(text(&vague).starts_with("error: "), "{}", text(&vague));

    // list and log wrap their arrays.
    let listed = call(&client, "list", json!({})).await;
    assert_eq!(
        listed.structured_content.unwrap()["briefs"][0]["key"],
        "feat"
    );
    let log = call(&client, "log", json!({"key": "feat"})).await;
    assert!(log.structured_content.unwrap()["versions"].is_array());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_secret_in_a_write_is_redacted() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &[]).await;
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let mut brief = example();
    brief["state"]["commands"] = json!([format!("GITHUB_TOKEN={token} cargo test")]);
    let wrote = call(
        &client,
        "write",
        json!({"brief": brief, "narrative": format!("### Decisions\n- rotate {token}\n")}),
    )
    .await;
    assert!(!is_error(&wrote), "{}", text(&wrote));
    let stored = sb.git(&repo, &["cat-file", "-p", "refs/handoffs/main"]);
    assert!(!stored.contains(&token), "{stored}");
    assert!(stored.contains("REDACTED"), "{stored}");
    let narrative = std::fs::read_to_string(repo.join(".claude/PROJECT_STATE.md")).unwrap();
    assert!(!narrative.contains(&token));
    let shown = call(&client, "show", json!({"key": "main"})).await;
    assert!(!text(&shown).contains(&token));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_invalid_brief_is_a_tool_error_listing_every_error_and_writes_nothing() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &[]).await;
    let before = handoff_refs(&sb, &repo);
    let bad = json!({"resume": {"done_when": ""}, "bogus": 1});
    let answer = call(&client, "write", json!({"brief": bad})).await;
    assert!(is_error(&answer));
    let message = text(&answer);
    assert!(
        message.starts_with("handoff-validate: INVALID\n"),
        "{message}"
    );
    let errors = answer.structured_content.unwrap()["errors"].clone();
    let errors = errors.as_array().unwrap();
    // An unknown field, an empty done_when, a missing resume_by and a
    // missing next_acceptance_check: each its own line.
    assert!(errors.len() >= 4, "{errors:?}");
    for e in errors {
        let line = format!("  - {}: ", e["path"].as_str().unwrap());
        assert!(message.contains(&line), "{line} in {message}");
    }
    assert!(message.contains("resume_by"), "{message}");
    assert!(message.contains("next_acceptance_check"), "{message}");
    assert!(message.contains("bogus"), "{message}");
    assert_eq!(handoff_refs(&sb, &repo), before);
    assert!(!repo.join(".claude").exists());

    // Not an object at all, and a bad key: one clear line each, nothing
    // written, the server still serving.
    let answer = call(&client, "write", json!({"brief": [1, 2]})).await;
    assert!(is_error(&answer));
    assert!(
        text(&answer).contains("must be a JSON object"),
        "{}",
        text(&answer)
    );
    let answer = call(&client, "write", json!({"key": "../x", "brief": example()})).await;
    assert!(is_error(&answer));
    assert_eq!(text(&answer).lines().count(), 1, "{}", text(&answer));
    assert_eq!(handoff_refs(&sb, &repo), before);
    // A misspelt argument is refused, not ignored.
    let answer = call(
        &client,
        "write",
        json!({"brief": example(), "narative": "### Decisions\n- x\n"}),
    )
    .await;
    assert!(is_error(&answer));
    assert!(text(&answer).contains("'narative'"), "{}", text(&answer));
    assert_eq!(handoff_refs(&sb, &repo), before);

    // validate: the same errors, nothing needed from git.
    let checked = call(&client, "validate", json!({"brief": {"resume": {}}})).await;
    assert!(is_error(&checked));
    assert_eq!(checked.structured_content.unwrap()["valid"], false);
    let checked = call(
        &client,
        "validate",
        json!({"brief": example(), "partial": true}),
    )
    .await;
    assert!(!is_error(&checked), "{}", text(&checked));
    assert_eq!(text(&checked), "handoff-validate: OK\n");
    // A partial brief checked as a whole one: as the CLI says on stderr,
    // first that it is a partial brief, then the errors.
    let checked = call(&client, "validate", json!({"brief": example()})).await;
    assert!(is_error(&checked));
    let said = text(&checked);
    assert!(
        said.starts_with(
            "a partial brief: valid for `git handoff write -F`; as a stored brief it lacks: "
        ),
        "{said}"
    );
    assert!(said.contains("\nhandoff-validate: INVALID\n"), "{said}");
    client.cancel().await.unwrap();
}

/// The `kind`s of a structured result's warnings.
fn warning_kinds(structured: &Value) -> Vec<String> {
    structured["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Issue 32: what the checks of a write found reaches the agent, not the
/// server's stderr: findings, redactions and warnings in the text and as
/// `findings`, `redacted` and `warnings`, equal to `--json`'s.
#[tokio::test]
async fn write_recover_and_split_results_carry_findings_redactions_and_warnings() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let client = connect(&sb, &repo, &["--allow", "split"]).await;
    let token = format!("ghp_{}", "Zq8xW2vN5m".repeat(4));
    let mut vague = example();
    vague["resume"]["done_when"] = json!("tests pass");
    vague["state"]["commands"] = json!([format!("GITHUB_TOKEN={token} cargo test")]);
    let wrote = call(
        &client,
        "write",
        json!({"key": "feat", "brief": vague.clone()}),
    )
    .await;
    assert!(!is_error(&wrote), "{}", text(&wrote));
    let said = text(&wrote);
    assert!(said.starts_with("Wrote brief 'feat'"), "{said}");
    assert!(
        said.contains("\nwarning: [feat] resume.done_when: vague-check: 'tests pass'"),
        "{said}"
    );
    assert!(
        said.contains("note: 1 secret redacted (1 github_token) before writing\n"),
        "{said}"
    );
    assert!(!said.contains(&token));
    let structured = wrote.structured_content.clone().unwrap();
    let findings = structured["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["key"] == "feat" && f["rule"] == "vague-check"),
        "{structured}"
    );
    assert_eq!(structured["redacted"], json!({"github_token": 1}));
    assert_eq!(warning_kinds(&structured), ["narrative-untracked"]);
    // The same input on the command line: the same findings, redactions
    // and warnings in `--json`, and the same lines on stderr.
    let out = sb
        .handoff_with(
            &repo,
            &["write", "feat", "--json", "-F", "-"],
            Some(&vague.to_string()),
        )
        .success();
    let cli: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for field in ["findings", "redacted", "warnings"] {
        assert_eq!(cli[field], structured[field], "{field}");
    }
    let err = crate::support::stderr(&out);
    assert!(said.ends_with(&err), "{said:?} ends with {err:?}");

    // A keyless write after a branch switch: the warning.
    sb.git(&repo, &["switch", "-q", "-c", "other"]);
    let wrote = call(&client, "write", json!({"brief": example()})).await;
    let structured = wrote.structured_content.clone().unwrap();
    assert!(
        warning_kinds(&structured).contains(&"key-choice".to_string()),
        "{structured}"
    );
    assert!(
        text(&wrote).contains("warning: branch switched: this write targets 'other'"),
        "{}",
        text(&wrote)
    );

    // recover: the redaction of a correction.
    let recovered = call(
        &client,
        "recover",
        json!({"key": "feat", "brief": {"state": {"decisions": [format!("rotate {token}")]}}}),
    )
    .await;
    assert!(!is_error(&recovered), "{}", text(&recovered));
    let structured = recovered.structured_content.clone().unwrap();
    assert_eq!(structured["redacted"], json!({"github_token": 1}));
    assert!(!structured["findings"].as_array().unwrap().is_empty());
    assert!(text(&recovered).contains("note: 1 secret redacted (1 github_token)"));

    // split: the proposal and the written briefs carry them too.
    let plan = json!({"why": "two threads", "threads": [
        {"key": "t-a", "resume": {"done_when": "tests pass", "resume_by": "a"}, "state": {"next_acceptance_check": "cargo test a", "decisions": [format!("use {token}")]}},
        {"key": "t-b", "resume": {"done_when": "cargo test b passes", "resume_by": "b"}, "state": {"next_acceptance_check": "cargo test b"}}]});
    std::fs::write(sb.path("plan.json"), plan.to_string()).unwrap();
    let plan_path = sb.path("plan.json").to_str().unwrap().to_string();
    for yes in [false, true] {
        let split = call(&client, "split", json!({"plan": plan_path, "yes": yes})).await;
        assert!(!is_error(&split), "{}", text(&split));
        let structured = split.structured_content.clone().expect("structured");
        assert_eq!(structured["written"], yes);
        assert!(
            structured["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["key"] == "t-a" && f["rule"] == "vague-check"),
            "{structured}"
        );
        assert_eq!(structured["redacted"], json!({"github_token": 1}));
        assert!(text(&split).contains("warning: [t-a] resume.done_when: vague-check"));
    }
    client.cancel().await.unwrap();
}

/// Strict lint over MCP: a tool error listing every finding, in the text
/// and as structured `findings`; nothing written.
#[tokio::test]
async fn a_strict_refusal_over_mcp_lists_every_finding() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.git(&repo, &["config", "handoff.strict", "true"]);
    let client = connect(&sb, &repo, &[]).await;
    let mut vague = example();
    vague["resume"]["done_when"] = json!("tests pass");
    vague["state"]["next_acceptance_check"] = json!("works");
    let answer = call(&client, "write", json!({"key": "feat", "brief": vague})).await;
    assert!(is_error(&answer));
    let said = text(&answer);
    assert!(
        said.contains("error: [feat] resume.done_when: vague-check")
            && said.contains("error: [feat] state.next_acceptance_check: vague-check"),
        "{said}"
    );
    assert!(
        said.contains("error: brief 'feat' has 3 lint findings and lint is strict; nothing was written (fix them; lint is strict by git config handoff.strict)"),
        "{said}"
    );
    let structured = answer.structured_content.unwrap();
    assert_eq!(structured["valid"], false);
    assert_eq!(structured["findings"].as_array().unwrap().len(), 3);
    assert_eq!(handoff_refs(&sb, &repo), "");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn opt_in_tools_are_absent_unless_allowed() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "doomed", "-F", "-"], Some(EXAMPLE))
        .success();
    let client = connect(&sb, &repo, &[]).await;
    let names = tool_names(&client).await;
    for name in ["push", "fetch", "split", "drop", "prune"] {
        assert!(!names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let refused = call(&client, "drop", json!({"key": "doomed"})).await;
    assert!(is_error(&refused));
    assert!(
        text(&refused).contains("--allow drop"),
        "{}",
        text(&refused)
    );
    assert!(handoff_refs(&sb, &repo).contains("refs/handoffs/doomed"));
    client.cancel().await.unwrap();

    let client = connect(&sb, &repo, &["--allow", "drop,prune"]).await;
    let names = tool_names(&client).await;
    assert!(names.iter().any(|n| n == "drop") && names.iter().any(|n| n == "prune"));
    assert!(!names.iter().any(|n| n == "push"));
    let dropped = call(&client, "drop", json!({"key": "doomed"})).await;
    assert!(!is_error(&dropped), "{}", text(&dropped));
    assert!(!handoff_refs(&sb, &repo).contains("refs/handoffs/doomed"));
    client.cancel().await.unwrap();

    // An unknown name for --allow is a usage error before serving.
    let out = sb.handoff(&repo, &["mcp", "--allow", "rm"]).code(1);
    assert!(crate::support::stderr(&out).contains("push, fetch, split, drop, prune"));
}

#[tokio::test]
async fn repo_pins_the_served_repository() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let elsewhere = sb.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    sb.handoff_with(&repo, &["write", "-F", "-"], Some(EXAMPLE))
        .success();
    let client = connect(&sb, &elsewhere, &["--repo", repo.to_str().unwrap()]).await;
    let listed = call(&client, "list", json!({})).await;
    assert_eq!(
        listed.structured_content.unwrap()["briefs"][0]["key"],
        "main"
    );
    // A switch of branch between calls is seen: calls re-open the repository.
    sb.git(&repo, &["switch", "-q", "-c", "other"]);
    let resumed = call(&client, "resume", json!({"key": "main"})).await;
    assert!(
        text(&resumed).contains("BRANCH MISMATCH"),
        "{}",
        text(&resumed)
    );
    client.cancel().await.unwrap();
    // Not a repository: refused at start.
    sb.handoff(&repo, &["mcp", "--repo", elsewhere.to_str().unwrap()])
        .code(128);
}

/// Run the server on raw bytes; its stdout and how it ended, with the
/// wait bounded.
pub(crate) fn raw(sb: &Sandbox, dir: &Path, input: Vec<u8>) -> (String, std::process::ExitStatus) {
    let mut child = sb
        .command("git", dir)
        .args(["handoff", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server hung on garbage input");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    writer.join().unwrap();
    (reader.join().unwrap(), status)
}

pub(crate) fn line(v: Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&v).unwrap();
    bytes.push(b'\n');
    bytes
}

#[test]
fn garbage_on_stdin_gets_an_error_or_a_clean_exit() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let init = line(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let initialized = line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut input = init.clone();
    input.extend(initialized);
    input.extend(b"this is not json-rpc\n");
    input.extend(vec![b'x'; 10 * 1024 * 1024]);
    input.push(b'\n');
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
    ));
    input.extend(line(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list", "arguments": {"archived": "yes"}}})));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    ));
    let (out, status) = raw(&sb, &repo, input);
    assert!(status.success(), "{status:?}");
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("stdout carries only JSON-RPC"))
        .collect();
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).cloned();
    assert!(by_id(1).unwrap()["result"]["serverInfo"]["name"] == "git-handoff");
    assert_eq!(by_id(2).unwrap()["error"]["code"], -32601);
    let bad_args = by_id(3).unwrap();
    assert_eq!(bad_args["result"]["isError"], true, "{bad_args}");
    assert!(by_id(4).unwrap()["result"]["tools"].is_array());

    // Before initialize, and only garbage: a clean exit at end of input.
    let (out, status) = raw(&sb, &repo, b"\x00\xff{{{\n[1,2,3]\n".to_vec());
    assert!(!out.contains("panicked"));
    assert!(status.code().is_some(), "ended by a signal: {status:?}");
    let (_, status) = raw(&sb, &repo, Vec::new());
    assert!(status.code().is_some(), "{status:?}");
}

/// Issue 48.2: a request that repeats a field (the brief's first value
/// hidden from a parsed reading) is refused with the field's path, and
/// nothing is written.
#[test]
fn a_request_that_repeats_a_field_is_refused_by_path() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let mut input = line(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    input.extend(line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    input.extend(format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"write","arguments":{{"key":"k","brief":{{"resume":{{"done_when":"d","resume_by":"{token}","resume_by":"ok"}},"state":{{"next_acceptance_check":"c"}}}}}}}}}}"#
    ).into_bytes());
    input.push(b'\n');
    let (out, status) = raw(&sb, &repo, input);
    assert!(status.success(), "{status:?}");
    let answer: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|a| a["id"] == 2)
        .unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("params.arguments.brief.resume.resume_by"),
        "{message}"
    );
    assert!(!out.contains(&token));
    let refs = sb.git(&repo, &["for-each-ref", "refs/handoffs/"]);
    assert_eq!(refs, "");
}

/// Issue 57: an incomplete write over a stored key points at `write` with
/// `"update": true` (not `recover`), and that call works.
#[tokio::test]
async fn an_incomplete_write_over_a_stored_key_points_at_update() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    sb.write_plain_brief(&repo, "k");
    let client = connect(&sb, &repo, &[]).await;
    let part = json!({"resume": {"resume_by": "then this"}});
    let answer = call(&client, "write", json!({"key": "k", "brief": part.clone()})).await;
    assert!(is_error(&answer));
    let message = text(&answer);
    assert!(
        message.contains("call `write` again with \"key\": \"k\", \"update\": true"),
        "{message}"
    );
    assert!(!message.contains("recover"), "{message}");
    let answer = call(
        &client,
        "write",
        json!({"key": "k", "brief": part, "update": true}),
    )
    .await;
    assert!(!is_error(&answer), "{}", text(&answer));
    client.cancel().await.unwrap();
}
