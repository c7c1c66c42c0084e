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

/// The `[mcp_servers.git-handoff]` table of a Codex config.toml, as JSON.
/// Its values are TOML basic strings, numbers, booleans and arrays of
/// them, which read as JSON.
fn codex_table(toml: &str) -> Value {
    let table = toml
        .split("[mcp_servers.git-handoff]\n")
        .nth(1)
        .expect("the [mcp_servers.git-handoff] table");
    let mut map = serde_json::Map::new();
    for line in table.lines().take_while(|l| !l.starts_with('[')) {
        if line.starts_with('#') {
            continue;
        }
        match line.split_once(" = ") {
            Some((key, v)) => {
                let value = serde_json::from_str(v).unwrap_or_else(|e| panic!("{line}: {e}"));
                map.insert(key.to_string(), value);
            }
            None => assert!(line.trim().is_empty() || line.starts_with('#'), "{line}"),
        }
    }
    Value::Object(map)
}

/// The command and arguments of the Codex config's server.
fn codex_server(toml: &str) -> (String, Vec<String>) {
    server_of(&json!({"mcpServers": {"git-handoff": codex_table(toml)}}))
}

/// Start the configured server in `dir` (Cursor's `${workspaceFolder}`
/// being `repo`) and resume the brief of `repo` through it.
async fn serves(sb: &Sandbox, dir: &Path, repo: &Path, (command, args): (String, Vec<String>)) {
    let mut cmd = sb.command(&command, dir);
    let workspace = repo.display().to_string();
    cmd.args(
        args.iter()
            .map(|a| a.replace("${workspaceFolder}", &workspace)),
    );
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
        serves(&sb, &repo, &repo, server_of(&json_file(rel))).await;
    }
    let codex = codex_server(&read("contrib/codex/config.toml"));
    serves(&sb, &repo, &repo, codex).await;
    // Cursor may start a stdio server in the home directory: the workspace
    // comes from `${workspaceFolder}`.
    let cursor = server_of(&json_file("contrib/cursor/mcp.json"));
    assert!(cursor.1.contains(&"${workspaceFolder}".to_string()));
    serves(&sb, &sb.home(), &repo, cursor).await;
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
    // No PreCompress hook: Gemini CLI 0.61 runs it before its own
    // threshold check, on every turn, and shows its systemMessage only to
    // the user; a reminder on every turn is noise (tests/harness/agents).
    assert!(settings["hooks"].get("PreCompress").is_none(), "{settings}");
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

/// Every error of `value` against `schema`, one a line (none: valid).
fn schema_errors(schema: &Value, value: &Value) -> String {
    jsonschema::validator_for(schema)
        .unwrap()
        .iter_errors(value)
        .map(|e| format!("{e} at {}\n", e.instance_path()))
        .collect()
}

/// An object with exactly these fields: `required` ones and optional
/// ones, each of the JSON Schema given.
fn closed(required: &[&str], fields: Value) -> Value {
    json!({"type": "object", "required": required, "properties": fields, "additionalProperties": false})
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn string_map() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

/// A stdio server entry of an `mcpServers` map: `command`, `args`, `env`
/// and the harness's `extra` keys.
fn stdio_server(extra: Value) -> Value {
    let mut fields = json!({"command": {"type": "string"}, "args": strings(), "env": string_map()});
    for (k, v) in extra.as_object().unwrap() {
        fields[k] = v.clone();
    }
    json!({"type": "object", "required": ["mcpServers"], "properties": {"mcpServers": {
        "type": "object", "additionalProperties": closed(&["command"], fields)}}})
}

/// A harness's `hooks` setting: each event (of `events`) a list of
/// groups (`matcher`, the group's `extra` keys, `hooks`), each hook a
/// command with the harness's `hook` keys.
fn hooks(events: &[&str], extra: Value, hook: Value) -> Value {
    let mut hook_fields = json!({"type": {"const": "command"}, "command": {"type": "string"}});
    for (k, v) in hook.as_object().unwrap() {
        hook_fields[k] = v.clone();
    }
    let mut group = json!({"matcher": {"type": "string"},
        "hooks": {"type": "array", "minItems": 1, "items": closed(&["type", "command"], hook_fields)}});
    for (k, v) in extra.as_object().unwrap() {
        group[k] = v.clone();
    }
    let events: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| {
            (
                e.to_string(),
                json!({"type": "array", "items": closed(&["hooks"], group.clone())}),
            )
        })
        .collect();
    json!({"type": "object", "properties": events, "additionalProperties": false})
}

/// The `key: value` lines of a markdown file's YAML front matter.
fn front_matter(text: &str) -> Value {
    let body = text.strip_prefix("---\n").expect("front matter");
    let end = body.find("\n---\n").expect("end of front matter");
    let mut map = serde_json::Map::new();
    for line in body[..end].lines() {
        let (key, value) = line.split_once(": ").unwrap_or_else(|| panic!("{line}"));
        let value = value.trim();
        let value = serde_json::from_str::<String>(value).unwrap_or_else(|_| value.to_string());
        map.insert(key.to_string(), Value::String(value));
    }
    Value::Object(map)
}

/// Issue 33: each adapter file holds to its harness's documented schema —
/// the key names and types the harness reads, and no others — not only to
/// JSON or TOML.
#[test]
fn each_adapter_file_holds_to_its_harness_schema() {
    // Claude Code: .mcp.json (stdio servers: type, command, args, env).
    let claude_mcp = stdio_server(json!({"type": {"const": "stdio"}}));
    assert_eq!(
        schema_errors(&claude_mcp, &json_file("contrib/claude/mcp.json")),
        ""
    );
    // Claude Code settings: hooks by event; a hook's type, command, timeout (s).
    let claude_events = [
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "UserPromptSubmit",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "SessionStart",
        "SessionEnd",
    ];
    let claude_settings = closed(
        &["hooks"],
        json!({"hooks": hooks(&claude_events, json!({}), json!({"timeout": {"type": "number"}}))}),
    );
    assert_eq!(
        schema_errors(&claude_settings, &json_file("contrib/claude/settings.json")),
        ""
    );
    // Claude Code slash commands: front matter keys, and a name that no
    // built-in command has (a project command of the same name is hidden
    // by it, or hides it).
    let command_keys = closed(
        &["description"],
        json!({"description": {"type": "string"}, "argument-hint": {"type": "string"},
               "allowed-tools": {"type": "string"}, "model": {"type": "string"},
               "disable-model-invocation": {"enum": ["true", "false"]}}),
    );
    let builtins = [
        "add-dir",
        "agents",
        "bug",
        "clear",
        "compact",
        "config",
        "context",
        "cost",
        "doctor",
        "exit",
        "export",
        "help",
        "hooks",
        "init",
        "login",
        "logout",
        "mcp",
        "memory",
        "model",
        "permissions",
        "pr-comments",
        "resume",
        "review",
        "rewind",
        "status",
        "statusline",
        "terminal-setup",
        "usage",
        "vim",
    ];
    let commands = Path::new(ROOT).join("contrib/claude/commands");
    for entry in std::fs::read_dir(&commands).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(
            !builtins.contains(&name.as_str()),
            "/{name} is a built-in command"
        );
        let rel = format!("contrib/claude/commands/{name}.md");
        assert_eq!(
            schema_errors(&command_keys, &front_matter(&read(&rel))),
            "",
            "{rel}"
        );
    }
    // Claude Code skills: name (the folder's, lowercase, digits, hyphens,
    // at most 64) and description (at most 1024).
    let skill = front_matter(&read("contrib/claude/skills/git-handoff/SKILL.md"));
    let skill_keys = closed(
        &["name", "description"],
        json!({"name": {"const": "git-handoff", "pattern": "^[a-z0-9-]{1,64}$"},
               "description": {"type": "string", "maxLength": 1024},
               "allowed-tools": {"type": "string"}}),
    );
    assert_eq!(schema_errors(&skill_keys, &skill), "");
    // Codex CLI: [mcp_servers.<name>] with command, args, env, cwd, the
    // timeouts, enabled.
    let codex = closed(
        &["command"],
        json!({"command": {"type": "string"}, "args": strings(), "env": string_map(),
               "env_vars": strings(),
               "cwd": {"type": "string"}, "startup_timeout_sec": {"type": "number"},
               "tool_timeout_sec": {"type": "number"}, "enabled": {"type": "boolean"}}),
    );
    assert_eq!(
        schema_errors(&codex, &codex_table(&read("contrib/codex/config.toml"))),
        ""
    );
    // Gemini CLI settings: mcpServers (command, args, env, cwd, timeout in
    // ms, trust) and hooks by Gemini's events; a group's sequential, a
    // hook's name, timeout (ms), description.
    let gemini_events = [
        "SessionStart",
        "SessionEnd",
        "BeforeAgent",
        "AfterAgent",
        "BeforeModel",
        "AfterModel",
        "BeforeToolSelection",
        "BeforeTool",
        "AfterTool",
        "PreCompress",
        "Notification",
    ];
    let mut gemini = stdio_server(
        json!({"cwd": {"type": "string"}, "timeout": {"type": "number"},
        "trust": {"type": "boolean"}}),
    );
    gemini["properties"]["hooks"] = hooks(
        &gemini_events,
        json!({"sequential": {"type": "boolean"}}),
        json!({"name": {"type": "string"}, "timeout": {"type": "number"}, "description": {"type": "string"}}),
    );
    assert_eq!(
        schema_errors(&gemini, &json_file("contrib/gemini/settings.json")),
        ""
    );
    // Cursor: mcpServers (command, args, env, type), ${workspaceFolder}
    // interpolated in args.
    let cursor = stdio_server(json!({"type": {"const": "stdio"}}));
    assert_eq!(
        schema_errors(&cursor, &json_file("contrib/cursor/mcp.json")),
        ""
    );
    // The check bites: a misspelt key, a wrong type.
    let wrong = json!({"mcpServers": {"git-handoff": {"command": "git", "arg": ["x"]}}});
    assert_ne!(schema_errors(&cursor, &wrong), "");
    let wrong =
        json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": 1}]}]}});
    assert_ne!(schema_errors(&claude_settings, &wrong), "");
}

/// The Claude Code plugin (`contrib/claude`, listed by the marketplace
/// manifest at the root) ships the same hooks and MCP server as the
/// hand-copy route, at the crate's version.
#[test]
fn the_claude_plugin_matches_the_hand_copied_configs() {
    let plugin = json_file("contrib/claude/.claude-plugin/plugin.json");
    assert_eq!(plugin["name"], "git-handoff");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(plugin["license"], env!("CARGO_PKG_LICENSE"));
    assert_eq!(
        json_file("contrib/claude/hooks/hooks.json")["hooks"],
        json_file("contrib/claude/settings.json")["hooks"]
    );
    assert_eq!(
        json_file("contrib/claude/.mcp.json"),
        json_file("contrib/claude/mcp.json")
    );
    let market = json_file(".claude-plugin/marketplace.json");
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], "git-handoff");
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    let source = entry["source"].as_str().unwrap();
    assert!(
        Path::new(ROOT)
            .join(source)
            .join(".claude-plugin/plugin.json")
            .exists()
    );
    for rel in [
        "commands/handoff-resume.md",
        "commands/handoff.md",
        "skills/git-handoff/SKILL.md",
        "README.md",
        "LICENSE",
    ] {
        assert!(Path::new(ROOT).join(source).join(rel).exists(), "{rel}");
    }
    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(Path::new(ROOT).join(licence).exists(), "{licence}");
    }
}
