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

type Client = RunningService<RoleClient, ()>;

/// `git handoff mcp ARGS` in `dir`, hermetic, with a connected client.
async fn connect(sb: &Sandbox, dir: &Path, args: &[&str]) -> Client {
    let mut cmd = sb.command("git", dir);
    cmd.arg("handoff").arg("mcp").args(args);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).expect("spawn");
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .expect("the call is answered")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

fn example() -> Value {
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

    // resume: the CLI's text, and its --json as structured content.
    let resumed = call(&client, "resume", json!({"key": "feat"})).await;
    assert!(!is_error(&resumed));
    let cli_text = stdout(&sb.handoff(&repo, &["resume", "feat"]).success());
    assert_eq!(text(&resumed), cli_text);
    let cli_json: Value =
        serde_json::from_str(&stdout(&sb.handoff(&repo, &["resume", "feat", "--json"]))).unwrap();
    assert_eq!(resumed.structured_content.unwrap(), cli_json);

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
    assert_eq!(linted.structured_content.unwrap(), cli_lint);
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
fn raw(sb: &Sandbox, dir: &Path, input: Vec<u8>) -> (String, std::process::ExitStatus) {
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

fn line(v: Value) -> Vec<u8> {
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
