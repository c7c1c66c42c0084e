//! `git handoff mcp`: the commands as Model Context Protocol tools, served
//! over stdio with the `rmcp` SDK.
//!
//! Every tool is a thin call into the command the CLI runs (its `Args`
//! parsed from the tool's arguments, then its `run`), in this process: the
//! same redaction, lint, compare-and-swap and narrative rules, the same
//! text, and the JSON `--json` prints as `structuredContent`. Each call
//! opens the repository afresh, so a switch of branch or worktree between
//! calls is seen. Only protocol messages go to stdout; the commands'
//! warnings and notes go to stderr, as on the command line.

use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::brief::Issue;
use crate::cli::commands::{self, Selection};
use crate::cli::{Output, report};
use crate::{cli::render, git::repo};

/// What the server tells the agent when it connects: the method in brief.
pub const INSTRUCTIONS: &str = "git-handoff keeps the working state of a coding session as a typed brief in git, so that the next session (yours after /clear, another agent's, a teammate's) resumes without replaying history.
- Start with `resume`: it shows the brief for this branch and what drifted since (commits, changed files, branch). Act on its `!!` warnings first.
- Hand off with `write` before your context fills (around 40 % of the window: `usage` says), before a risky step, and when you stop. `write` replaces the whole brief.
- A good brief: `resume.done_when` is one verifiable check (a command and its expected result), `resume.resume_by` the next step in one sentence, `state.next_acceptance_check` the next check to run; record `state.decisions` with their reasons and `state.rejected_paths` so nobody retries them; point at files with `files_read_first` (path + why) instead of pasting their content.
- `reground` re-reads the goal mid-session; `brief` prints a subagent's task (at most 30 lines); `recover` rebuilds a brief from the stored one plus the current git state.";

/// The tools served unless `--allow` names them: they touch remotes or
/// delete.
pub const OPT_IN: &[&str] = &["push", "fetch", "split", "drop", "prune"];

/// The tools served by default.
pub const DEFAULT_TOOLS: &[&str] = &[
    "resume", "reground", "brief", "list", "show", "log", "write", "recover", "lint", "validate",
    "usage",
];

/// The longest protocol line read; longer ones are dropped unread (a brief
/// is at most 1 MiB, so a call with one fits with room to spare).
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// The MCP server: which tools it offers.
#[derive(Debug, Clone)]
pub struct Server {
    tools: Arc<Vec<&'static str>>,
}

impl Server {
    /// A server with the default tools plus the opted-in ones (names from
    /// [`OPT_IN`]; anything else is refused).
    pub fn new(allow: &[String]) -> Result<Server> {
        let mut tools: Vec<&'static str> = DEFAULT_TOOLS.to_vec();
        for name in allow {
            match OPT_IN.iter().find(|t| **t == name.as_str()) {
                Some(t) if !tools.contains(t) => tools.push(t),
                Some(_) => {}
                None => crate::refuse!(
                    "--allow '{name}' is not a tool that needs opting in; choose from {}",
                    OPT_IN.join(", ")
                ),
            }
        }
        Ok(Server {
            tools: Arc::new(tools),
        })
    }

    /// The tool definitions this server lists.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.iter().map(|name| definition(name)).collect()
    }

    /// Run one tool: its result, or a tool error with the CLI's message.
    pub fn call(&self, name: &str, args: &Map<String, Value>) -> CallToolResult {
        if !self.tools.contains(&name) {
            return error_text(format!(
                "error: no tool '{name}' on this server{}",
                if OPT_IN.contains(&name) {
                    format!("; start it with `git handoff mcp --allow {name}` to offer it")
                } else {
                    String::new()
                }
            ));
        }
        let spec = SPECS.iter().find(|s| s.name == name);
        if let Some(unknown) = args
            .keys()
            .find(|k| !spec.is_some_and(|s| s.props.iter().any(|(p, _, _)| p == k)))
        {
            return error_text(format!(
                "error: '{name}' takes no argument '{}'; its arguments are in tools/list",
                crate::support::escape::clean(unknown)
            ));
        }
        match call(name, args) {
            Ok(result) => result,
            Err(e) => {
                let message = crate::cli::hints::message(&e);
                error_text(format!(
                    "error: {}",
                    crate::support::escape::clean(&message)
                ))
            }
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "git-handoff",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, &args).into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .iter()
            .find(|t| **t == name)
            .map(|name| definition(name))
    }
}

/// Serve on stdin and stdout until the client closes stdin.
pub fn serve(server: Server) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("cannot start the MCP server: {e}"))?;
    runtime.block_on(async move {
        use rmcp::ServiceExt;
        let (stdin, stdout) = rmcp::transport::stdio();
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new(stdin, stdout)
            .with_max_line_length(MAX_LINE);
        let running = server
            .serve(transport)
            .await
            .map_err(|e| anyhow!("the MCP client did not initialize: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| anyhow!("the MCP server stopped: {e}"))?;
        Ok::<(), anyhow::Error>(())
    })?;
    // A read of stdin may still be pending on the blocking pool; do not
    // wait for it.
    runtime.shutdown_background();
    Ok(())
}

fn error_text(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A tool's result from the CLI text and the `--json` value. The value
/// becomes `structuredContent` (an object: arrays are wrapped under
/// `wrap`); a non-zero exit code makes it a tool error.
fn result(text: &Output, value: Option<Value>, wrap: &str) -> CallToolResult {
    let content = vec![ContentBlock::text(text.plain())];
    let mut result = if text.code == 0 {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = value.map(|v| match v {
        Value::Object(_) => v,
        other => json!({ wrap: other }),
    });
    result
}

/// The JSON a command printed with `--json`.
fn parsed(output: &Output) -> Result<Value> {
    serde_json::from_str(&output.raw())
        .map_err(|e| anyhow!("internal: the command's JSON did not parse: {e}"))
}

/// Parse a command's `Args` from an argument vector, as clap does for
/// the command line.
fn parse<T: clap::Args>(argv: Vec<String>) -> Result<T> {
    let command = T::augment_args(clap::Command::new("git-handoff").no_binary_name(true));
    let matches = command.try_get_matches_from(argv).map_err(|e| {
        let text = e.to_string();
        let line = text.lines().next().unwrap_or("invalid arguments");
        anyhow!("{}", line.trim_start_matches("error: "))
    })?;
    Ok(T::from_arg_matches(&matches)?)
}

/// An optional string argument.
fn text(args: &Map<String, Value>, name: &str) -> Result<Option<String>> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => bail!("'{name}' must be a string"),
    }
}

/// An optional boolean argument.
fn flag(args: &Map<String, Value>, name: &str) -> Result<bool> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => bail!("'{name}' must be true or false"),
    }
}

/// An optional partial brief: a JSON object.
fn object(args: &Map<String, Value>, name: &str) -> Result<Option<Value>> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => bail!("'{name}' must be a JSON object (a partial brief)"),
    }
}

/// A positional value after `--`, so that nothing in it reads as a flag.
fn positional(argv: &mut Vec<String>, value: Option<String>) {
    if let Some(value) = value {
        argv.push("--".into());
        argv.push(value);
    }
}

/// `--json` first, then the key as a positional.
fn key_argv(args: &Map<String, Value>, json: bool) -> Result<Vec<String>> {
    let mut argv = Vec::new();
    if json {
        argv.push("--json".into());
    }
    positional(&mut argv, text(args, "key")?);
    Ok(argv)
}

/// A read command's text and JSON, computed once (`both`).
fn read_both<T: clap::Args>(
    argv: Vec<String>,
    both: fn(T) -> Result<(Output, Output)>,
    wrap: &str,
) -> Result<CallToolResult> {
    let (text, json) = both(parse(argv)?)?;
    Ok(result(&text, parsed(&json).ok(), wrap))
}

fn call(name: &str, args: &Map<String, Value>) -> Result<CallToolResult> {
    use crate::cli::commands as c;
    match name {
        // One selection (and one drift walk) serves the text and the JSON.
        "resume" => read_both(key_argv(args, false)?, c::resume::both, "resume"),
        "reground" => read_both(key_argv(args, false)?, c::reground::both, "reground"),
        "list" => {
            let mut argv = vec![];
            if flag(args, "archived")? {
                argv.push("--archived".to_string());
            }
            read_both(argv, c::list::both, "briefs")
        }
        "log" => read_both(key_argv(args, false)?, c::log::both, "versions"),
        "show" => show(args),
        "brief" => subagent(args),
        "write" => write(args),
        "recover" => recover(args),
        "lint" => lint(args),
        "validate" => validate(args),
        "usage" => usage(args),
        "push" | "fetch" => {
            let mut argv = vec!["--json".to_string()];
            positional(&mut argv, text(args, "remote")?);
            let output = if name == "push" {
                c::push::run(parse(argv)?)?
            } else {
                c::fetch::run(parse(argv)?)?
            };
            let value = parsed(&output).ok();
            Ok(result(&output, value, "report"))
        }
        "drop" => {
            let Some(key) = text(args, "key")? else {
                bail!("'key' is required: the brief to delete");
            };
            let output = c::drop::run(parse(key_argv(&json_key(key), true)?)?)?;
            let value = parsed(&output).ok();
            Ok(result(&output, value, "result"))
        }
        "prune" => {
            let mut argv = vec!["--json".to_string()];
            if flag(args, "dry_run")? {
                argv.push("--dry-run".into());
            }
            let output = c::prune::run(parse(argv)?)?;
            let value = parsed(&output).ok();
            Ok(result(&output, value, "result"))
        }
        "split" => split(args),
        other => bail!("no tool '{other}'"),
    }
}

fn json_key(key: String) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("key".into(), Value::String(key));
    map
}

/// `show`: the stored bytes as text, the brief as the structured value.
fn show(args: &Map<String, Value>) -> Result<CallToolResult> {
    let Some(key) = text(args, "key")? else {
        bail!("'key' is required: the brief to show (`list` names them)");
    };
    let mut argv = Vec::new();
    if let Some(version) = text(args, "version")? {
        argv.push(format!("--version={version}"));
    }
    positional(&mut argv, Some(key));
    let output = commands::show::run(parse(argv)?)?;
    let value = serde_json::from_str(&output.raw()).ok();
    Ok(result(&output, value, "brief"))
}

/// `brief`: the subagent brief; structured as its text and line count.
fn subagent(args: &Map<String, Value>) -> Result<CallToolResult> {
    let Some(task) = text(args, "task")? else {
        bail!("'task' is required: the subagent's task, one sentence");
    };
    let mut argv = vec![format!("--task={task}")];
    match args.get("scope") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let Value::String(s) = item else {
                    bail!("'scope' must be a list of strings");
                };
                argv.push(format!("--scope={s}"));
            }
        }
        Some(_) => bail!("'scope' must be a list of strings"),
    }
    positional(&mut argv, text(args, "key")?);
    let output = commands::brief::run(parse(argv)?)?;
    let brief = output.plain();
    let value = structured(&report::SubagentBrief {
        lines: brief.lines().count(),
        brief,
    });
    Ok(result(&output, Some(value), "brief"))
}

/// The tool error for an invalid brief: every schema error, one a line,
/// and as `structuredContent.errors`.
fn invalid(issues: &[Issue]) -> CallToolResult {
    let mut result = error_text(format!(
        "{}error: the brief is invalid; nothing was written (`git handoff schema` prints the schema)\n",
        render::invalid(issues)
    ));
    result.structured_content = Some(structured(&report::Validity {
        valid: false,
        errors: issues,
    }));
    result
}

/// `write`: the brief object (and narrative text) through `write`'s own
/// path, as `write -F` takes them.
fn write(args: &Map<String, Value>) -> Result<CallToolResult> {
    let Some(brief) = object(args, "brief")? else {
        bail!(
            "'brief' is required: a partial brief object (resume.done_when, resume.resume_by, state.next_acceptance_check, …)"
        );
    };
    let mut parsed_args: commands::write::Args = parse(key_argv(args, false)?)?;
    parsed_args.fields.value = Some(brief);
    parsed_args.narrative_text = text(args, "narrative")?;
    parsed_args.no_narrative = flag(args, "no_narrative")?;
    if parsed_args.no_narrative && parsed_args.narrative_text.is_some() {
        bail!("'narrative' and 'no_narrative' cannot be used together");
    }
    // One composition: an invalid brief comes back as its issues.
    let (text, json) = match commands::write::both(parsed_args) {
        Ok(both) => both,
        Err(e) => match e.downcast_ref::<commands::write::Invalid>() {
            Some(invalid_brief) => return Ok(invalid(&invalid_brief.issues)),
            None => return Err(e),
        },
    };
    Ok(result(&text, Some(parsed(&json)?), "result"))
}

/// `recover`: the stored brief plus corrections, as `recover -F` takes them.
fn recover(args: &Map<String, Value>) -> Result<CallToolResult> {
    let mut parsed_args: commands::recover::Args = parse(key_argv(args, false)?)?;
    parsed_args.fields.value = object(args, "brief")?;
    let (text, json) = commands::recover::both(parsed_args)?;
    Ok(result(&text, Some(parsed(&json)?), "result"))
}

/// `lint`: a stored brief (`key`) or a given one (`brief`); the findings
/// are the text (the CLI puts them on stderr) and the structured value.
fn lint(args: &Map<String, Value>) -> Result<CallToolResult> {
    let repo = repo::open_cwd_for_reading().ok();
    let value = match (object(args, "brief")?, text(args, "key")?) {
        (Some(_), Some(_)) => bail!("give either 'key' or 'brief', not both"),
        (Some(brief), None) => brief,
        (None, key) => {
            let Some(repo) = repo.as_ref() else {
                bail!("not a git repository: pass 'brief' to lint a brief outside a repository");
            };
            match commands::select(repo, key.as_deref())? {
                Selection::Found { stored, .. } => serde_json::from_slice(&stored.data)
                    .map_err(|e| anyhow!("brief '{}' is not JSON: {e}", stored.key))?,
                Selection::Ambiguous(rows) => {
                    let output =
                        commands::refuse_ambiguous(&rows, "lint", crate::cli::Format::Human);
                    return Ok(result(&output, None, "briefs"));
                }
            }
        }
    };
    let findings = commands::checks::check(repo.as_ref(), &value);
    let strict = commands::checks::strict(repo.as_ref(), flag(args, "strict")?);
    let output = Output::human(format!(
        "{}{}",
        commands::checks::findings_text(&findings, strict),
        commands::checks::summary(&findings)
    ))
    .with_code(u8::from(strict && !findings.is_empty()));
    let value = structured(&report::Linted {
        strict,
        findings: &findings,
    });
    Ok(result(&output, Some(value), "findings"))
}

/// `validate`: the schema check of `git handoff validate`; with `partial`,
/// that of `git handoff validate --partial` (what `write` needs from its
/// caller).
fn validate(args: &Map<String, Value>) -> Result<CallToolResult> {
    let Some(brief) = object(args, "brief")? else {
        bail!("'brief' is required: the brief object to check");
    };
    let checked = commands::validate::check(&serde_json::to_vec(&brief)?, flag(args, "partial")?)
        .map_err(|e| anyhow!("{e}"))?;
    let mut text = checked.text();
    if let Some(hint) = checked.hint() {
        text.push_str(hint);
        text.push('\n');
    }
    let output = Output::human(text).with_code(u8::from(!checked.issues.is_empty()));
    let value = structured(&report::Validity {
        valid: checked.issues.is_empty(),
        errors: &checked.issues,
    });
    Ok(result(&output, Some(value), "errors"))
}

/// A report as a tool's structured value.
fn structured<T: serde::Serialize>(report: &T) -> Value {
    serde_json::to_value(report).expect("reports serialize")
}

/// `usage`: the context meter of a transcript.
fn usage(args: &Map<String, Value>) -> Result<CallToolResult> {
    let mut argv = Vec::new();
    positional(&mut argv, text(args, "transcript")?);
    read_both(argv, commands::usage::both, "usage")
}

/// `split`: the proposal for a plan file, or with `yes` the briefs.
fn split(args: &Map<String, Value>) -> Result<CallToolResult> {
    let Some(plan) = text(args, "plan")? else {
        bail!("'plan' is required: the path of the plan (JSON) file");
    };
    if plan == "-" {
        bail!("'plan' must be a file path: stdin carries the MCP protocol");
    }
    let mut argv = vec![format!("--plan={plan}")];
    if flag(args, "yes")? {
        argv.push("--yes".into());
    }
    let text = commands::split::run(parse(argv)?)?;
    Ok(result(&text, None, "result"))
}

/// A tool's definition: name, description, input schema, hints.
fn definition(name: &str) -> Tool {
    let spec = SPECS
        .iter()
        .find(|s| s.name == name)
        .expect("every served tool has a spec");
    let mut properties = Map::new();
    for (prop, kind, description) in spec.props {
        let mut schema = match *kind {
            "string[]" => json!({"type": "array", "items": {"type": "string"}}),
            kind => json!({ "type": kind }),
        };
        schema["description"] = json!(description);
        properties.insert(prop.to_string(), schema);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), json!(spec.required));
    schema.insert("additionalProperties".into(), json!(false));
    let mut hints = ToolAnnotations::default();
    hints.read_only_hint = Some(spec.read_only);
    hints.destructive_hint = Some(matches!(name, "drop" | "prune" | "push"));
    hints.open_world_hint = Some(matches!(name, "push" | "fetch"));
    Tool::new(spec.name, spec.description, Arc::new(schema)).with_annotations(hints)
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
    "object",
    "A partial brief (JSON object): resume.done_when, resume.resume_by, state.next_acceptance_check, state.decisions, state.rejected_paths, files_read_first, …; the git state, key, timestamp and mode are filled in",
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
        props: &[KEY],
        required: &[],
    },
    Spec {
        name: "reground",
        description: "Print the goal, the first five locked decisions and the files to keep in view",
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
        ],
        required: &["brief"],
    },
    Spec {
        name: "recover",
        description: "Rebuild the brief from the stored one plus the current git state (mode RECOVER), with optional corrections; the narrative is untouched",
        read_only: false,
        props: &[WRITE_KEY, PARTIAL],
        required: &[],
    },
    Spec {
        name: "lint",
        description: "Check a stored brief (key) or a given one (brief) for the method's anti-patterns",
        read_only: true,
        props: &[KEY, PARTIAL, ("strict", "boolean", "Findings are errors")],
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
        props: &[(
            "transcript",
            "string",
            "The transcript (.jsonl); default: this directory's newest Claude Code session",
        )],
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

    #[test]
    fn allow_takes_only_opt_in_tools() {
        assert_eq!(Server::new(&[]).unwrap().tools().len(), DEFAULT_TOOLS.len());
        let all: Vec<String> = OPT_IN.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            Server::new(&all).unwrap().tools().len(),
            DEFAULT_TOOLS.len() + OPT_IN.len()
        );
        assert!(Server::new(&["write".into()]).is_err());
        assert!(Server::new(&["rm".into()]).is_err());
    }

    #[test]
    fn arguments_parse_as_the_command_line_does() {
        let args: commands::brief::Args =
            parse(vec!["--task=-x".into(), "--".into(), "-k".into()]).unwrap();
        assert_eq!(args.task.as_deref(), Some("-x"));
        assert_eq!(args.key.as_deref(), Some("-k"));
        let err = parse::<commands::resume::Args>(vec!["--nope".into()]).unwrap_err();
        assert!(!err.to_string().contains('\n'), "{err}");
    }
}
