//! Reading what a session did out of its transcript, newest line first:
//! Claude Code's JSON lines (`type` `user`/`assistant`, tool calls as
//! `tool_use` blocks, their results as `tool_result` blocks of the next
//! user line) and Codex CLI's rollout lines (`type` `response_item`,
//! `event_msg`, `turn_context`, `session_meta`, each with a `payload`).
//!
//! The file is read from the end through [`usage::read_back`], at most a
//! given number of bytes; a result line comes before its call in that
//! order, so results wait in a map until their call is read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::agent::draft::shell;
use crate::agent::usage::{self, ReadBack};
use crate::support::clock;

/// The most bytes of a command's output kept: its beginning (where the
/// first error usually is) and its end (the summary).
const OUTPUT_HEAD: usize = 8192;
const OUTPUT_TAIL: usize = 4096;
/// The most requests, runs, files and method lines kept while reading.
const MAX_REQUESTS: usize = 20;
const MAX_RUNS: usize = 400;
const MAX_TOUCHES: usize = 400;
const MAX_METHOD_LINES: usize = 40;

/// Whose transcript it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Harness {
    /// Claude Code (`~/.claude/projects/<folder>/<session>.jsonl`).
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// Codex CLI (`~/.codex/sessions/…/rollout-*.jsonl`).
    #[serde(rename = "codex")]
    Codex,
}

/// A file the session read or edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The path as the transcript gives it (absolute, or relative to the
    /// session's directory).
    pub path: String,
    /// Read (Read tool, `cat`, `sed -n` …).
    pub read: bool,
    /// Edited (Edit, Write, `apply_patch` …).
    pub edited: bool,
}

/// A command the session ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The command line (the script, for a shell wrapper).
    pub command: String,
    /// Its exit status, when the transcript records it.
    pub exit: Option<i64>,
    /// Its output: when long, its first 8 KiB and last 4 KiB.
    pub output: String,
}

/// The session's newest tool call when it has no result: the session ended
/// while it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfinished {
    /// A command (its command line).
    Run(String),
    /// An edit of a file (its path as the transcript gives it).
    Edit(String),
}

/// What a session did, as read back from its transcript; every list is
/// newest first.
#[derive(Debug, Clone)]
pub struct Session {
    /// Whose transcript.
    pub harness: Harness,
    /// When its last line was written (Unix seconds): the newest timestamp
    /// of a line, else the file's modification time.
    pub last_turn: Option<i64>,
    /// How much was read.
    pub read: ReadBack,
    /// The session's working directory, when a line names it.
    pub cwd: Option<PathBuf>,
    /// What the user asked, newest first.
    pub requests: Vec<String>,
    /// Files read or edited, newest first, each once.
    pub touches: Vec<Touch>,
    /// Commands run, newest first.
    pub runs: Vec<Run>,
    /// The newest tool call, when it has no result.
    pub unfinished: Option<Unfinished>,
    /// Lines of the agent's text that state a decision (`Decision: …`).
    pub decisions: Vec<String>,
    /// Lines of the agent's text that state a rejected path (`Rejected: …`).
    pub rejected: Vec<String>,
    /// The agent's newest prose (its last text block, as written).
    pub last_words: Option<String>,
}

/// A tool call's result, waiting for its call.
#[derive(Debug)]
struct Outcome {
    /// The harness marked it an error.
    error: bool,
    exit: Option<i64>,
    output: String,
}

/// The reader's state while lines come in, newest first.
#[derive(Debug, Default)]
struct Reader {
    claude: usize,
    codex: usize,
    other: usize,
    last_turn: Option<i64>,
    cwd: Option<PathBuf>,
    results: HashMap<String, Outcome>,
    /// Tool calls read so far (the first one read is the newest).
    calls: usize,
    unfinished: Option<Unfinished>,
    requests: Vec<String>,
    touches: Vec<Touch>,
    runs: Vec<Run>,
    decisions: Vec<String>,
    rejected: Vec<String>,
    last_words: Option<String>,
}

/// Read the session at `path` from the end, at most `limit` bytes. A file
/// that is neither harness's transcript (most of its lines are not their
/// JSON lines, or both harnesses' lines are mixed) or that records no
/// request and no tool call is refused: a draft is never guessed.
pub fn read(path: &Path, limit: u64) -> Result<Session> {
    let (mut file, len) = usage::open_transcript(path)?;
    let modified = file
        .metadata()
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    let mut reader = Reader::default();
    let read = usage::read_back(&mut file, len, limit, |line| {
        reader.line(line);
        false
    })
    .with_context(|| format!("cannot read the transcript '{}'", path.display()))?;
    reader.finish(path, read, modified)
}

/// When the session began: the timestamp of the first line that has one
/// among the file's first lines (Unix seconds).
pub fn started(path: &Path) -> Option<i64> {
    let head = usage::head(path)?;
    head.split(|b| *b == b'\n').find_map(|line| {
        let v: Value = serde_json::from_slice(line).ok()?;
        timestamp(&v)
    })
}

fn timestamp(v: &Value) -> Option<i64> {
    v.get("timestamp")
        .and_then(Value::as_str)
        .and_then(clock::parse)
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// Which harness wrote a line, by its shape.
fn harness_of(v: &Value) -> Option<Harness> {
    let kind = str_of(v, "type")?;
    if v.get("payload").is_some_and(Value::is_object)
        && matches!(
            kind,
            "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
        )
    {
        return Some(Harness::Codex);
    }
    let claude = v.get("message").is_some_and(Value::is_object)
        || ["uuid", "sessionId", "leafUuid"]
            .iter()
            .any(|k| v.get(*k).is_some_and(Value::is_string));
    claude.then_some(Harness::ClaudeCode)
}

/// `text` when short; else its first [`OUTPUT_HEAD`] and last
/// [`OUTPUT_TAIL`] bytes (cut at characters) around a line `…`.
fn kept(text: &str) -> String {
    if text.len() <= OUTPUT_HEAD + OUTPUT_TAIL {
        return text.to_string();
    }
    let mut end = OUTPUT_HEAD;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut start = text.len() - OUTPUT_TAIL;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{}\n…\n{}", &text[..end], &text[start..])
}

/// The text of a `content` value: a string, or the `text` of its blocks.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| str_of(i, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl Reader {
    fn line(&mut self, bytes: &[u8]) {
        let bytes = bytes.trim_ascii();
        if bytes.is_empty() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
            self.other += 1;
            return;
        };
        match harness_of(&v) {
            Some(harness) => {
                if self.last_turn.is_none() {
                    self.last_turn = timestamp(&v);
                }
                match harness {
                    Harness::ClaudeCode => {
                        self.claude += 1;
                        self.claude_line(&v);
                    }
                    Harness::Codex => {
                        self.codex += 1;
                        self.codex_line(&v);
                    }
                }
            }
            None => self.other += 1,
        }
    }

    fn finish(self, path: &Path, read: ReadBack, modified: Option<i64>) -> Result<Session> {
        let shown = path.display();
        let known = self.claude + self.codex;
        let lines = known + self.other;
        if lines == 0 {
            crate::refuse!(
                "'{shown}' holds no complete line{}; pass the session's .jsonl transcript",
                if read.whole {
                    String::new()
                } else {
                    format!(" in its last {} bytes", read.bytes)
                }
            );
        }
        if known == 0 {
            crate::refuse!(
                "'{shown}' is not a Claude Code or Codex CLI transcript: none of its last {lines} lines is one of their JSON lines; pass the session's .jsonl transcript"
            );
        }
        if self.claude > 0 && self.codex > 0 {
            crate::refuse!(
                "'{shown}' mixes Claude Code and Codex CLI lines; pass one session's .jsonl transcript"
            );
        }
        if self.other > known {
            crate::refuse!(
                "'{shown}' is garbled: {} of its last {lines} lines are not transcript lines; pass the session's .jsonl transcript",
                self.other
            );
        }
        if self.requests.is_empty() && self.touches.is_empty() && self.runs.is_empty() {
            crate::refuse!(
                "'{shown}' records no request and no tool call yet: there is nothing to draft from"
            );
        }
        Ok(Session {
            harness: if self.codex > 0 {
                Harness::Codex
            } else {
                Harness::ClaudeCode
            },
            last_turn: self.last_turn.or(modified),
            read,
            cwd: self.cwd,
            requests: self.requests,
            touches: self.touches,
            runs: self.runs,
            unfinished: self.unfinished,
            decisions: self.decisions,
            rejected: self.rejected,
            last_words: self.last_words,
        })
    }

    /// A user message: the newest few, each once in a row; what the
    /// harness injects (`<command-name>`, `<environment_context>`, caveats,
    /// interruptions, AGENTS.md) is not a request.
    fn request(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty()
            || text.starts_with('<')
            || text.starts_with("[Request interrupted")
            || text.starts_with("Caveat:")
            || text.starts_with("# AGENTS.md")
            || self.requests.len() >= MAX_REQUESTS
            || self.requests.last().is_some_and(|last| last == text)
        {
            return;
        }
        self.requests.push(text.to_string());
    }

    fn touch(&mut self, path: &str, edited: bool) {
        let path = path.trim();
        if path.is_empty() {
            return;
        }
        if let Some(t) = self.touches.iter_mut().find(|t| t.path == path) {
            t.read |= !edited;
            t.edited |= edited;
        } else if self.touches.len() < MAX_TOUCHES {
            self.touches.push(Touch {
                path: path.to_string(),
                read: !edited,
                edited,
            });
        }
    }

    /// Count a tool call; the newest one, when it has no result, is what
    /// the session was doing when it ended.
    fn call_read(&mut self, answered: bool, what: impl FnOnce() -> Option<Unfinished>) {
        if self.calls == 0 && !answered {
            self.unfinished = what();
        }
        self.calls += 1;
    }

    /// A command line and its outcome: a patch edits files; a command is a
    /// run, and the files it prints are reads.
    fn command(&mut self, script: &str, outcome: Option<Outcome>) {
        if script.contains("*** Begin Patch") {
            for path in shell::patched_files(script) {
                self.touch(&path, true);
            }
            return;
        }
        for path in shell::read_files(script) {
            self.touch(&path, false);
        }
        if self.runs.len() < MAX_RUNS {
            let (exit, output) = outcome.map_or((None, String::new()), |o| (o.exit, o.output));
            self.runs.push(Run {
                command: script.trim().to_string(),
                exit,
                output,
            });
        }
    }

    /// The agent's prose: its newest text, and the lines that state a
    /// decision or a rejected path in the method's words (`Decision: …`,
    /// `Rejected: …`), newest first.
    fn assistant_text(&mut self, text: &str) {
        if self.last_words.is_none() && !text.trim().is_empty() {
            self.last_words = Some(text.trim().to_string());
        }
        for line in text.lines().rev() {
            let plain = line.replace("**", "");
            let plain = plain.trim_start_matches(|c: char| c.is_whitespace() || "-*•>".contains(c));
            let lower = plain.to_ascii_lowercase();
            let (list, rest) = if let Some(rest) = ["decision:", "decided:"]
                .iter()
                .find_map(|p| lower.starts_with(p).then(|| &plain[p.len()..]))
            {
                (&mut self.decisions, rest)
            } else if let Some(rest) = ["rejected path:", "rejected:"]
                .iter()
                .find_map(|p| lower.starts_with(p).then(|| &plain[p.len()..]))
            {
                (&mut self.rejected, rest)
            } else {
                continue;
            };
            let rest = rest.trim();
            if !rest.is_empty() && list.len() < MAX_METHOD_LINES && !list.iter().any(|d| d == rest)
            {
                list.push(rest.to_string());
            }
        }
    }
}

/// Claude Code's lines.
impl Reader {
    fn claude_line(&mut self, v: &Value) {
        if flag(v, "isSidechain") {
            return;
        }
        if self.cwd.is_none() {
            self.cwd = str_of(v, "cwd").map(PathBuf::from);
        }
        let Some(message) = v.get("message").filter(|m| m.is_object()) else {
            return;
        };
        let role = str_of(v, "type").or_else(|| str_of(message, "role"));
        let content = message.get("content");
        match role {
            Some("user") if !flag(v, "isMeta") && !flag(v, "isCompactSummary") => match content {
                Some(Value::String(text)) => self.request(text),
                Some(Value::Array(items)) => {
                    for item in items.iter().rev() {
                        match str_of(item, "type") {
                            Some("tool_result") => self.claude_result(item),
                            Some("text") => self.request(str_of(item, "text").unwrap_or("")),
                            _ => {}
                        }
                    }
                }
                _ => {}
            },
            Some("assistant") => {
                for item in content
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .rev()
                {
                    match str_of(item, "type") {
                        Some("text") => self.assistant_text(str_of(item, "text").unwrap_or("")),
                        Some("tool_use") => self.claude_call(item),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A `tool_result` block: an error result of a shell command starts
    /// `Exit code N`; any other error means the tool did nothing (refused,
    /// interrupted, a bad argument).
    fn claude_result(&mut self, item: &Value) {
        let Some(id) = str_of(item, "tool_use_id") else {
            return;
        };
        let error = flag(item, "is_error");
        let text = content_text(item.get("content"));
        let (exit, output) = if error {
            let text = text.strip_prefix("Error: ").unwrap_or(&text);
            match text.strip_prefix("Exit code ") {
                Some(rest) => {
                    let (code, output) = rest.split_once('\n').unwrap_or((rest, ""));
                    (code.trim().parse().ok(), output)
                }
                None => (None, text),
            }
        } else {
            (Some(0), text.as_str())
        };
        let outcome = Outcome {
            error,
            exit,
            output: kept(output),
        };
        self.results.insert(id.to_string(), outcome);
    }

    fn claude_call(&mut self, item: &Value) {
        let outcome = str_of(item, "id").and_then(|id| self.results.remove(id));
        let input = item.get("input").unwrap_or(&Value::Null);
        let path = str_of(input, "file_path").or_else(|| str_of(input, "notebook_path"));
        let name = str_of(item, "name");
        self.call_read(outcome.is_some(), || match name {
            Some("Edit" | "MultiEdit" | "Write" | "NotebookEdit") => {
                path.map(|p| Unfinished::Edit(p.to_string()))
            }
            Some("Bash") => str_of(input, "command").map(|c| Unfinished::Run(c.to_string())),
            _ => None,
        });
        if outcome
            .as_ref()
            .is_some_and(|o| o.error && o.exit.is_none())
        {
            return;
        }
        match name {
            Some("Read" | "NotebookRead") => path.into_iter().for_each(|p| self.touch(p, false)),
            Some("Edit" | "MultiEdit" | "Write" | "NotebookEdit") => {
                path.into_iter().for_each(|p| self.touch(p, true))
            }
            Some("Bash") => {
                if let Some(command) = str_of(input, "command") {
                    self.command(command, outcome);
                }
            }
            _ => {}
        }
    }
}

/// Codex CLI's lines.
impl Reader {
    fn codex_line(&mut self, v: &Value) {
        let payload = &v["payload"];
        match str_of(v, "type") {
            Some("session_meta" | "turn_context") if self.cwd.is_none() => {
                self.cwd = str_of(payload, "cwd").map(PathBuf::from);
            }
            Some("event_msg") => match str_of(payload, "type") {
                Some("user_message") => self.request(str_of(payload, "message").unwrap_or("")),
                Some("agent_message") => {
                    self.assistant_text(str_of(payload, "message").unwrap_or(""))
                }
                _ => {}
            },
            Some("response_item") => self.codex_item(payload),
            _ => {}
        }
    }

    fn codex_item(&mut self, p: &Value) {
        let call_id = str_of(p, "call_id");
        match str_of(p, "type") {
            Some("message") => {
                let text = content_text(p.get("content"));
                match str_of(p, "role") {
                    Some("user") => self.request(&text),
                    Some("assistant") => self.assistant_text(&text),
                    _ => {}
                }
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                if let Some(id) = call_id {
                    let outcome = codex_outcome(p.get("output"));
                    self.results.insert(id.to_string(), outcome);
                }
            }
            Some("function_call") => {
                let outcome = call_id.and_then(|id| self.results.remove(id));
                let args: Value = str_of(p, "arguments")
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                let script = match str_of(p, "name") {
                    Some("shell" | "container.exec" | "local_shell") => argv(args.get("command")),
                    Some("shell_command") => str_of(&args, "command").map(str::to_string),
                    Some("exec_command") => str_of(&args, "cmd").map(str::to_string),
                    Some("apply_patch") => str_of(&args, "input").map(str::to_string),
                    _ => None,
                };
                if let Some(script) = script {
                    self.codex_call(script, outcome);
                }
            }
            Some("custom_tool_call") if str_of(p, "name") == Some("apply_patch") => {
                let outcome = call_id.and_then(|id| self.results.remove(id));
                self.codex_call(str_of(p, "input").unwrap_or("").to_string(), outcome);
            }
            Some("local_shell_call") => {
                let outcome = call_id.and_then(|id| self.results.remove(id));
                if let Some(script) = argv(p.pointer("/action/command")) {
                    self.codex_call(script, outcome);
                }
            }
            _ => {}
        }
    }
}

impl Reader {
    /// A Codex tool call: a command line or a patch.
    fn codex_call(&mut self, script: String, outcome: Option<Outcome>) {
        self.call_read(outcome.is_some(), || {
            if script.contains("*** Begin Patch") {
                shell::patched_files(&script)
                    .into_iter()
                    .next()
                    .map(Unfinished::Edit)
            } else {
                Some(Unfinished::Run(script.trim().to_string()))
            }
        });
        self.command(&script, outcome);
    }
}

/// A command vector's script.
fn argv(value: Option<&Value>) -> Option<String> {
    let words: Vec<String> = value?
        .as_array()?
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect();
    (!words.is_empty()).then(|| shell::argv_script(&words))
}

/// A Codex tool output: `{"output": …, "metadata": {"exit_code": N}}` as
/// JSON text, or text that begins `Exit code: N` … `Output:` or holds
/// `Process exited with code N`; anything else has no exit status.
fn codex_outcome(output: Option<&Value>) -> Outcome {
    let text = match output {
        Some(Value::String(s)) => s.clone(),
        Some(v) => str_of(v, "content").map_or_else(|| content_text(Some(v)), str::to_string),
        None => String::new(),
    };
    if let Ok(v) = serde_json::from_str::<Value>(&text)
        && let Some(out) = str_of(&v, "output")
    {
        let exit = v.pointer("/metadata/exit_code").and_then(Value::as_i64);
        return Outcome {
            error: false,
            exit,
            output: kept(out),
        };
    }
    let exit = text.lines().find_map(|line| {
        let line = line.trim();
        line.strip_prefix("Exit code:")
            .or_else(|| line.strip_prefix("Process exited with code"))
            .and_then(|n| n.trim().parse().ok())
    });
    let output = text
        .split_once("\nOutput:\n")
        .map_or(text.as_str(), |(_, out)| out);
    Outcome {
        error: false,
        exit,
        output: kept(output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(lines: &[&str]) -> Result<Session> {
        let mut reader = Reader::default();
        for line in lines.iter().rev() {
            reader.line(line.as_bytes());
        }
        reader.finish(
            Path::new("t.jsonl"),
            ReadBack {
                bytes: 0,
                whole: true,
            },
            None,
        )
    }

    #[test]
    fn claude_calls_meet_their_results() {
        let s = session(&[
            r#"{"type":"user","cwd":"/w","timestamp":"2026-11-30T11:00:00.000Z","message":{"role":"user","content":"fix the expiry check in auth"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/src/a.rs"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo test"}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"..."},{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":"Exit code 101\ntest result: FAILED"}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Edit","input":{"file_path":"/w/src/b.rs"}},{"type":"text","text":"**Decision:** use <= — one clock\nRejected: chrono"}]}}"#,
            r#"{"type":"user","timestamp":"2026-11-30T11:05:00.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","is_error":true,"content":"<tool_use_error>File has not been read yet</tool_use_error>"}]}}"#,
        ])
        .unwrap();
        assert_eq!(s.harness, Harness::ClaudeCode);
        assert_eq!(s.requests, ["fix the expiry check in auth"]);
        assert_eq!(s.runs.len(), 1);
        assert_eq!(
            (s.runs[0].exit, s.runs[0].output.as_str()),
            (Some(101), "test result: FAILED")
        );
        // The refused edit did nothing.
        assert_eq!(
            s.touches,
            [Touch {
                path: "/w/src/a.rs".into(),
                read: true,
                edited: false
            }]
        );
        assert_eq!(s.decisions, ["use <= — one clock"]);
        assert_eq!(s.rejected, ["chrono"]);
        assert_eq!(s.last_turn, clock::parse("2026-11-30T11:05:00Z"));
        assert_eq!(s.cwd.as_deref(), Some(Path::new("/w")));
    }

    #[test]
    fn codex_outputs_give_exit_codes() {
        let json = codex_outcome(Some(&Value::String(
            r#"{"output":"boom\n","metadata":{"exit_code":2,"duration_seconds":0.1}}"#.into(),
        )));
        assert_eq!((json.exit, json.output.as_str()), (Some(2), "boom\n"));
        let text = codex_outcome(Some(&Value::String(
            "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAILED".into(),
        )));
        assert_eq!((text.exit, text.output.as_str()), (Some(1), "FAILED"));
        let none = codex_outcome(Some(&Value::String("aborted".into())));
        assert_eq!(none.exit, None);
    }

    #[test]
    fn foreign_and_garbled_files_are_refused() {
        let err = |lines: &[&str]| format!("{:#}", session(lines).unwrap_err());
        assert!(
            err(&[r#"{"a":1}"#, "[1,2]"]).contains("not a Claude Code or Codex CLI transcript")
        );
        assert!(
            err(&[
                "junk",
                "junk",
                r#"{"type":"user","message":{"content":"hi there"}}"#
            ])
            .contains("garbled")
        );
        assert!(
            err(&[
                r#"{"type":"user","message":{"content":"hi there"}}"#,
                r#"{"type":"event_msg","payload":{"type":"user_message","message":"x"}}"#
            ])
            .contains("mixes")
        );
        assert!(err(&[r#"{"type":"summary","leafUuid":"x"}"#]).contains("nothing to draft"));
    }

    #[test]
    fn injected_user_text_is_no_request() {
        let s = session(&[
            r#"{"type":"user","message":{"content":"the real request"}}"#,
            r#"{"type":"user","isMeta":true,"message":{"content":"Caveat: meta"}}"#,
            r#"{"type":"user","message":{"content":"<command-name>/clear</command-name>"}}"#,
            r#"{"type":"user","message":{"content":"[Request interrupted by user]"}}"#,
        ])
        .unwrap();
        assert_eq!(s.requests, ["the real request"]);
    }
}
