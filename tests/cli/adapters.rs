//! The adapters in contrib/ as shipped: each configuration parsed, and the
//! command it names run — the MCP server through a real MCP client, the
//! hooks with the harness's own input shape.

use std::path::Path;

use crate::support::{EXAMPLE, Sandbox, stdout};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json_file(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The command and arguments of an `mcpServers` entry.
fn server_of(config: &Value) -> (String, Vec<String>) {
    let entry = &config["mcpServers"]["git-handoff"];
    let command = entry["command"].as_str().expect("command").to_string();
    let args = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    (command, args)
}

/// The `[mcp_servers.git-handoff]` table of a Codex config.toml. Its
/// values are TOML basic strings and arrays of them, which read as JSON.
fn codex_server(toml: &str) -> (String, Vec<String>) {
    let table = toml
        .split("[mcp_servers.git-handoff]\n")
        .nth(1)
        .expect("the [mcp_servers.git-handoff] table");
    let mut command = None;
    let mut args = None;
    for line in table.lines().take_while(|l| !l.starts_with('[')) {
        match line.split_once(" = ") {
            Some(("command", v)) => command = Some(serde_json::from_str::<String>(v).unwrap()),
            Some(("args", v)) => args = Some(serde_json::from_str::<Vec<String>>(v).unwrap()),
            Some((other, _)) => panic!("unexpected key {other}"),
            None => assert!(line.trim().is_empty() || line.starts_with('#'), "{line}"),
        }
    }
    (command.expect("command"), args.expect("args"))
}

/// Start the configured server in `repo` and resume the brief through it.
async fn serves(sb: &Sandbox, repo: &Path, (command, args): (String, Vec<String>)) {
    let mut cmd = sb.command(&command, repo);
    cmd.args(&args);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ().serve(transport).await.expect("initialize");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "write"));
    let resumed = client
        .call_tool(CallToolRequestParams::new("resume"))
        .await
        .unwrap();
    assert_eq!(resumed.is_error, Some(false));
    assert!(resumed.structured_content.unwrap()["key"] == "main");
    client.cancel().await.unwrap();
}

fn repo_with_brief(sb: &Sandbox) -> std::path::PathBuf {
    let repo = sb.repo("r");
    sb.handoff_with(&repo, &["write", "-F", "-", "--no-lint"], Some(EXAMPLE))
        .success();
    repo
}

#[tokio::test]
async fn the_mcp_configs_start_a_working_server() {
    let sb = Sandbox::new();
    let repo = repo_with_brief(&sb);
    for rel in [
        "contrib/claude/mcp.json",
        "contrib/cursor/mcp.json",
        "contrib/gemini/settings.json",
    ] {
        serves(&sb, &repo, server_of(&json_file(rel))).await;
    }
    serves(&sb, &repo, codex_server(&read("contrib/codex/config.toml"))).await;
}

#[test]
fn the_claude_mcp_add_line_matches_the_config() {
    let readme = read("README.md");
    let line = "claude mcp add --scope project git-handoff -- git handoff mcp";
    assert!(readme.contains(line));
    let (command, args) = server_of(&json_file("contrib/claude/mcp.json"));
    assert!(line.ends_with(&format!("-- {command} {}", args.join(" "))));
}

#[test]
fn the_gemini_hooks_answer_in_geminis_shape() {
    let sb = Sandbox::new();
    let repo = repo_with_brief(&sb);
    let settings = json_file("contrib/gemini/settings.json");
    let command = |event: &str| {
        let command = settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{event}"))
            .to_string();
        assert!(command.starts_with("git handoff hook "), "{command}");
        command
    };
    // SessionStart after /clear: the brief as additionalContext.
    let start = command("SessionStart");
    let args: Vec<&str> = start.split(' ').skip(2).collect();
    let input = json!({
        "session_id": "s1",
        "transcript_path": sb.path("chat.json").display().to_string(),
        "cwd": repo.display().to_string(),
        "hook_event_name": "SessionStart",
        "timestamp": "2026-11-30T12:00:00.000Z",
        "source": "clear",
    });
    let out = sb
        .handoff_with(&repo, &args, Some(&input.to_string()))
        .success();
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("only JSON on stdout");
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext");
    assert!(context.contains("cargo test auth passes"), "{context}");
    // On startup: a pointer to `resume`.
    let mut startup = input.clone();
    startup["source"] = json!("startup");
    let out = sb
        .handoff_with(&repo, &args, Some(&startup.to_string()))
        .success();
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("git handoff resume main")
    );
    // PreCompress: a systemMessage, which Gemini shows.
    let compress = command("PreCompress");
    let args: Vec<&str> = compress.split(' ').skip(2).collect();
    let input = json!({
        "session_id": "s1", "cwd": repo.display().to_string(),
        "hook_event_name": "PreCompress", "timestamp": "2026-11-30T12:00:00.000Z", "trigger": "auto",
    });
    let out = sb
        .handoff_with(&repo, &args, Some(&input.to_string()))
        .success();
    let answer: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        answer["systemMessage"]
            .as_str()
            .unwrap()
            .contains("git handoff write")
    );
}

#[test]
fn the_codex_agents_snippet_names_the_tools_it_asks_for() {
    let snippet = read("contrib/codex/AGENTS.md");
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    // Every tool the snippet tells the agent to call exists on the server.
    let listed = stdout(&sb.handoff(&repo, &["mcp", "--help"]).success());
    for tool in ["resume", "write", "usage", "brief"] {
        assert!(snippet.contains(&format!("`{tool}`")), "{tool}");
        assert!(listed.contains(tool), "{tool} in mcp --help");
    }
    assert!(snippet.contains("40 %"));
}
