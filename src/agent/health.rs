//! Session health: signals, read from a Claude Code transcript before each
//! prompt, that the agent's recall is degrading and it is time to reground
//! (or, at the strong level, to recover). The method's session-health hook:
//!
//! - **context pressure**: the tokens in context reach half
//!   ([`Signal::Pressure`]) or 70 % ([`Signal::PressureStrong`]) of the
//!   effective window — the window less the harness's auto-compact
//!   reserve ([`AUTOCOMPACT_RESERVE`]);
//! - **the same tool call repeated**: one call (tool and input alike)
//!   [`REPEATS`] times among the agent's last [`RECENT`] tool calls with
//!   no edit between them (an edit between two test runs is progress, not
//!   a loop);
//! - **a stale read**: an edit of a file written since the agent last read
//!   it — by a subagent or a shell command that writes it — or the
//!   harness's own refusal of such an edit (`modified since read`);
//! - **a recovery spiral**: [`SPIRAL`] reads in a row of files (the same
//!   part of them) already read and unchanged since;
//! - **instruction fade**: the person sends a message they sent before
//!   (of at least [`FADE_WORDS`] words: `continue` is no instruction).
//!
//! The transcript is read from where the last reading stopped
//! ([`State::offset`]), at most [`READ_LIMIT`] bytes from its end
//! ([`FIRST_LIMIT`] at a session's first reading); what the readings learnt
//! lives in a small [`State`] of digests and counts (of the session's text
//! only the model's id), which the caller keeps per session. Files
//! only; no refs; nothing printed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::usage::{self, Sample, WindowSource};

/// The tokens Claude Code keeps free below its window before it compacts
/// on its own: up to 20,000 for the model's answer and a 13,000-token
/// buffer (its `/context` shows the two as the "autocompact buffer").
pub const AUTOCOMPACT_RESERVE: u64 = 33_000;

/// Context pressure, in percent of the effective window: the first alert.
pub const PRESSURE: u64 = 50;
/// Context pressure, in percent of the effective window: the strong alert.
pub const PRESSURE_STRONG: u64 = 70;
/// How many of the agent's latest tool calls are compared.
pub const RECENT: usize = 5;
/// How many equal calls among them are a loop.
pub const REPEATS: usize = 3;
/// How many re-reads in a row are a recovery spiral.
pub const SPIRAL: u32 = 3;
/// The fewest words of a message whose repetition is instruction fade.
pub const FADE_WORDS: usize = 4;
/// The most bytes read in one reading, from the end of the transcript.
pub const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// The most read at a session's first reading (the plugin installed in a
/// long session): its recent history, about a hundred turns.
pub const FIRST_LIMIT: u64 = 1024 * 1024;

/// The most files and messages a state remembers.
const MAX_FILES: usize = 4096;
const MAX_PROMPTS: usize = 256;

/// A health signal, the most urgent first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Signal {
    /// The context is at [`PRESSURE_STRONG`] % of the effective window.
    PressureStrong,
    /// An edit of a file written since it was last read.
    StaleRead,
    /// [`SPIRAL`] re-reads in a row.
    RecoverySpiral,
    /// The same tool call [`REPEATS`] times in the last [`RECENT`].
    RepeatedCall,
    /// The same message from the person, again.
    InstructionFade,
    /// The context is at [`PRESSURE`] % of the effective window.
    Pressure,
}

/// What one file's reads and writes left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct FileMark {
    /// The parts read (offset and limit) since the agent last changed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parts: Vec<u64>,
    /// Written by something else (a subagent, a shell command) since the
    /// agent last read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    changed: bool,
}

/// What the readings of one session's transcript learnt: digests and
/// counts only, never the session's text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The transcript's bytes already read.
    pub offset: u64,
    /// The signals already raised in this session (each once).
    #[serde(default)]
    pub alerted: BTreeSet<Signal>,
    /// The tokens in context at the newest usage read.
    #[serde(default)]
    pub tokens: u64,
    /// The model of that message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The digests of the latest tool calls since the last edit, oldest
    /// first.
    #[serde(default)]
    recent: VecDeque<u64>,
    /// The re-reads in a row, up to the latest tool call.
    #[serde(default)]
    streak: u32,
    /// The files read, by the digest of their path.
    #[serde(default)]
    files: BTreeMap<String, FileMark>,
    /// The digests of the person's messages, oldest first.
    #[serde(default)]
    prompts: VecDeque<u64>,
    /// The digest of the message the last hook counted before the
    /// transcript held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<u64>,
}

/// One reading's findings: the signals that fired and whether the
/// transcript's newest message from the person is still unanswered.
#[derive(Debug, Default)]
struct Fold {
    fired: BTreeSet<Signal>,
    last_prompt: Option<u64>,
    answered: bool,
}

/// FNV-1a, 64 bits: a digest stable across builds.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn path_key(path: &str) -> String {
    format!("{:016x}", digest(path.as_bytes()))
}

/// A message's words, lowercased, one space between: its digest, when it
/// has at least [`FADE_WORDS`] words and is no command.
fn prompt_digest(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.starts_with('/') || text.starts_with('<') || text.starts_with("Caveat:") {
        return None;
    }
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    (words.len() >= FADE_WORDS).then(|| digest(words.join(" ").as_bytes()))
}

/// The bytes of the transcript at `path` not read yet: from `offset`, at
/// most [`READ_LIMIT`] from its end ([`FIRST_LIMIT`] when nothing was read
/// yet), up to its last newline (a line being
/// written is left for the next reading). The bytes, the offset they start
/// at, and whether the start is a line's (else the first line is cut and
/// is skipped). A transcript shorter than `offset` (replaced) is read
/// afresh.
pub fn unread(path: &Path, offset: u64) -> std::io::Result<(Vec<u8>, u64, bool)> {
    let mut file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let len = meta.len();
    let offset = if offset > len { 0 } else { offset };
    let limit = if offset == 0 { FIRST_LIMIT } else { READ_LIMIT };
    let start = offset.max(len.saturating_sub(limit));
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.seek(SeekFrom::Start(start))?;
    file.take(len - start).read_to_end(&mut bytes)?;
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    let whole = start == offset || start == 0;
    Ok((bytes, start, whole))
}

/// Read `bytes` (whole lines, from `start`; the first one cut unless
/// `whole`) into `state`, then weigh the person's new `prompt` (the hook's
/// input). The signals that fired.
pub fn read(
    state: &mut State,
    bytes: &[u8],
    start: u64,
    whole: bool,
    prompt: Option<&str>,
) -> BTreeSet<Signal> {
    let mut fold = Fold::default();
    let mut lines = bytes.split(|b| *b == b'\n');
    if !whole {
        lines.next();
    }
    for line in lines.filter(|l| !l.is_empty()) {
        if let Some(v) = relevant(line) {
            line_event(state, &mut fold, &v);
        }
    }
    state.offset = start + bytes.len() as u64;
    if let Some(d) = prompt.and_then(prompt_digest) {
        // The transcript may hold the message already (then it was
        // weighed above) or not yet (then it is weighed now, and its line
        // in the transcript is skipped at the next reading).
        if fold.last_prompt != Some(d) || fold.answered {
            weigh_prompt(state, &mut fold, d);
            state.pending = Some(d);
        }
    }
    cap(state);
    fold.fired
}

/// The needles [`relevant`] looks for, each line searched once for all.
const NEEDLES: [&str; 6] = [
    "\"tool_use_id\"",
    "compact_boundary",
    "\"assistant\"",
    "\"tool_use\"",
    "\"usage\"",
    "modified since read",
];
const USER: &str = "\"user\"";

fn needles() -> &'static aho_corasick::AhoCorasick {
    static SEARCH: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    SEARCH.get_or_init(|| {
        let mut all = NEEDLES.to_vec();
        all.push(USER);
        aho_corasick::AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(all)
            .expect("fixed needles compile")
    })
}

/// The line parsed, when it may matter: a compaction, a tool call or a
/// usage, a message of the person, a refused edit. Tool results — most of
/// a transcript's bytes — are not parsed.
fn relevant(line: &[u8]) -> Option<Value> {
    let mut found = 0u8;
    // No needle overlaps another: the leftmost matches find them all.
    for m in needles().find_iter(line) {
        found |= 1 << m.pattern().as_usize();
    }
    let has = |i: usize| found & (1 << i) != 0;
    let (result, user) = (has(0), has(NEEDLES.len()));
    let wanted =
        has(1) || (has(2) && (has(3) || has(4))) || (!result && user) || (result && has(5));
    if !wanted {
        return None;
    }
    serde_json::from_slice(line).ok().filter(Value::is_object)
}

fn line_event(state: &mut State, fold: &mut Fold, v: &Value) {
    let kind = v.get("type").and_then(Value::as_str);
    if kind == Some("system")
        && v.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
    {
        // What the agent read is gone from its context: reading it again
        // is recovery, not a spiral.
        state.files.clear();
        state.recent.clear();
        state.streak = 0;
        return;
    }
    let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
    let Some(message) = v.get("message") else {
        return;
    };
    let content = message.get("content");
    match kind {
        Some("assistant") if sidechain => subagent_calls(state, content),
        Some("assistant") => {
            if let Some(sample) = usage::claude_sample(v) {
                state.tokens = sample.tokens();
                state.model = sample.model;
            }
            fold.answered = true;
            let cwd = v.get("cwd").and_then(Value::as_str);
            for call in tool_uses(content) {
                tool_call(state, fold, call, cwd);
            }
        }
        Some("user") if !sidechain => user_line(state, fold, v, content),
        _ => {}
    }
}

fn tool_uses(content: Option<&Value>) -> impl Iterator<Item = &Value> {
    content
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
}

/// The file a Read, Edit, MultiEdit, Write or NotebookEdit call names.
fn file_of(input: &Value) -> Option<&str> {
    ["file_path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
}

/// A subagent's edits change files behind the agent's back.
fn subagent_calls(state: &mut State, content: Option<&Value>) {
    for call in tool_uses(content) {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        if matches!(name, "Edit" | "MultiEdit" | "Write" | "NotebookEdit")
            && let Some(path) = call.get("input").and_then(file_of)
        {
            changed_behind(state, path);
        }
    }
}

fn changed_behind(state: &mut State, path: &str) {
    if let Some(mark) = state.files.get_mut(&path_key(path)) {
        mark.changed = true;
    }
}

fn tool_call(state: &mut State, fold: &mut Fold, call: &Value, cwd: Option<&str>) {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("");
    let input = call.get("input").unwrap_or(&Value::Null);
    let read = name == "Read";
    let mut edit = false;
    match (name, file_of(input)) {
        ("Read", Some(path)) => read_file(state, fold, path, input),
        ("Edit" | "MultiEdit" | "NotebookEdit" | "Write", Some(path)) => {
            let mark = state.files.entry(path_key(path)).or_default();
            if mark.changed && name != "Write" {
                fold.fired.insert(Signal::StaleRead);
            }
            *mark = FileMark::default();
            edit = true;
        }
        ("Bash", _) => {
            let command = input.get("command").and_then(Value::as_str).unwrap_or("");
            for path in shell_writes(command, cwd) {
                changed_behind(state, &path);
            }
        }
        _ => {}
    }
    if !read {
        state.streak = 0;
    }
    if edit {
        state.recent.clear();
        return;
    }
    let key = digest(format!("{name}\0{input}").as_bytes());
    state.recent.push_back(key);
    while state.recent.len() > RECENT {
        state.recent.pop_front();
    }
    if state.recent.iter().filter(|k| **k == key).count() >= REPEATS {
        fold.fired.insert(Signal::RepeatedCall);
    }
}

fn read_file(state: &mut State, fold: &mut Fold, path: &str, input: &Value) {
    let part = digest(
        format!(
            "{}:{}",
            input.get("offset").unwrap_or(&Value::Null),
            input.get("limit").unwrap_or(&Value::Null)
        )
        .as_bytes(),
    );
    let mark = state.files.entry(path_key(path)).or_default();
    if mark.parts.contains(&part) && !mark.changed {
        state.streak += 1;
        if state.streak >= SPIRAL {
            fold.fired.insert(Signal::RecoverySpiral);
        }
    } else {
        state.streak = 0;
    }
    if mark.changed {
        mark.parts.clear();
        mark.changed = false;
    }
    if !mark.parts.contains(&part) {
        mark.parts.push(part);
    }
}

/// The files a shell command writes in place, as absolute paths (relative
/// words joined to the session's directory): a redirection's target, the
/// files of `sed -i`, `tee`'s, the target of `cp`/`mv`, the paths
/// of `git checkout`/`git restore`.
fn shell_writes(command: &str, cwd: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for segment in command.split(['\n', ';', '|', '&']) {
        let words: Vec<&str> = segment
            .split_whitespace()
            .map(|w| w.trim_matches(['\'', '"']))
            .collect();
        let paths = |from: usize| -> Vec<&str> {
            words[from.min(words.len())..]
                .iter()
                .copied()
                .filter(|w| !w.starts_with('-') && w.contains(['/', '.']))
                .collect()
        };
        for (i, w) in words.iter().enumerate() {
            if let Some(target) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
                out.extend(if target.is_empty() {
                    words.get(i + 1).copied()
                } else {
                    Some(target)
                });
            }
        }
        let written = match words.as_slice() {
            // The first operand of `sed` is its script.
            ["sed", rest @ ..] if rest.iter().any(|w| w.starts_with("-i")) => {
                let script = rest.iter().position(|w| !w.starts_with('-'));
                paths(script.map_or(rest.len(), |i| i + 2))
            }
            ["tee", ..] => paths(1),
            ["cp" | "mv", ..] => paths(1).last().copied().into_iter().collect(),
            ["git", "checkout" | "restore", ..] => paths(2),
            _ => Vec::new(),
        };
        out.extend(written);
    }
    out.into_iter()
        .filter(|w| !w.is_empty() && !w.starts_with('&') && *w != "/dev/null")
        .filter_map(|w| match (w.starts_with('/'), cwd) {
            (true, _) => Some(w.to_string()),
            (false, Some(dir)) => Some(format!(
                "{}/{}",
                dir.trim_end_matches('/'),
                w.trim_start_matches("./")
            )),
            (false, None) => None,
        })
        .collect()
}

/// A user line: a message of the person (a string, or text blocks), or
/// the harness's refusal of an edit of a file changed since it was read.
fn user_line(state: &mut State, fold: &mut Fold, v: &Value, content: Option<&Value>) {
    if let Some(blocks) = content.and_then(Value::as_array)
        && blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
    {
        let refused = blocks.iter().any(|b| {
            b.get("is_error").and_then(Value::as_bool) == Some(true)
                && b.get("content")
                    .map(Value::to_string)
                    .is_some_and(|t| t.contains("modified since read"))
        });
        if refused {
            fold.fired.insert(Signal::StaleRead);
        }
        return;
    }
    if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let text = match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return,
    };
    let Some(d) = prompt_digest(&text) else {
        return;
    };
    fold.last_prompt = Some(d);
    fold.answered = false;
    if state.pending == Some(d) {
        // The hook weighed it already, before the transcript held it.
        state.pending = None;
        return;
    }
    state.pending = None;
    weigh_prompt(state, fold, d);
}

fn weigh_prompt(state: &mut State, fold: &mut Fold, d: u64) {
    if state.prompts.contains(&d) {
        fold.fired.insert(Signal::InstructionFade);
    } else {
        state.prompts.push_back(d);
    }
}

fn cap(state: &mut State) {
    while state.prompts.len() > MAX_PROMPTS {
        state.prompts.pop_front();
    }
    if state.files.len() > MAX_FILES {
        state.files.clear();
    }
}

/// The effective window: the context window — `window` when the
/// configuration names one, else as `usage` decides it from the model and
/// the tokens in use — less [`AUTOCOMPACT_RESERVE`] (never under half the
/// window).
pub fn effective_window(state: &State, window: Option<(u64, WindowSource)>) -> u64 {
    let sample = Sample {
        model: state.model.clone(),
        input_tokens: state.tokens,
        ..Sample::default()
    };
    let window = usage::meter(Some(sample), window, 100, Path::new("")).window;
    window.saturating_sub(AUTOCOMPACT_RESERVE).max(window / 2)
}

/// The context pressure signals the state's tokens raise in `effective`.
pub fn pressure(state: &State, effective: u64) -> Option<Signal> {
    let used = u128::from(state.tokens) * 100;
    let of = |percent: u64| u128::from(percent) * u128::from(effective.max(1));
    if used >= of(PRESSURE_STRONG) {
        Some(Signal::PressureStrong)
    } else if used >= of(PRESSURE) {
        Some(Signal::Pressure)
    } else {
        None
    }
}

/// The one signal to raise now: the most urgent of `fired` not raised in
/// this session yet, recorded as raised (the strong pressure alert
/// raises the first one with it).
pub fn choose(state: &mut State, fired: &BTreeSet<Signal>) -> Option<Signal> {
    let signal = fired.iter().copied().find(|s| !state.alerted.contains(s))?;
    state.alerted.insert(signal);
    if signal == Signal::PressureStrong {
        state.alerted.insert(Signal::Pressure);
    }
    Some(signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: Value) -> String {
        serde_json::json!({"type": "assistant", "cwd": "/w", "message": {"role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": name, "input": input}]}})
        .to_string()
    }

    fn said(text: &str) -> String {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": text}})
            .to_string()
    }

    fn usage_line(tokens: u64, model: &str) -> String {
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "model": model,
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 1, "cache_read_input_tokens": tokens - 1}}})
        .to_string()
    }

    fn run(lines: &[String]) -> BTreeSet<Signal> {
        let text = lines.join("\n") + "\n";
        read(&mut State::default(), text.as_bytes(), 0, true, None)
    }

    fn read_of(path: &str) -> String {
        call("Read", serde_json::json!({"file_path": path}))
    }

    fn edit_of(path: &str) -> String {
        call(
            "Edit",
            serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"}),
        )
    }

    #[test]
    fn a_call_repeated_three_times_in_five_without_an_edit_is_a_loop() {
        let test = call("Bash", serde_json::json!({"command": "cargo test"}));
        let ls = call("Bash", serde_json::json!({"command": "ls"}));
        assert!(
            run(&[
                test.clone(),
                ls.clone(),
                test.clone(),
                ls.clone(),
                test.clone()
            ])
            .contains(&Signal::RepeatedCall)
        );
        // An edit between the runs is progress.
        let e = edit_of("/w/a.rs");
        assert!(run(&[test.clone(), e.clone(), test.clone(), e, test.clone()]).is_empty());
        // Three in seven: the first is out of the window.
        let other = |c: &str| call("Bash", serde_json::json!({"command": c}));
        let spread = [
            test.clone(),
            other("a"),
            other("b"),
            test.clone(),
            other("c"),
            other("d"),
            test,
        ];
        assert!(run(&spread).is_empty());
    }

    #[test]
    fn an_edit_of_a_file_changed_behind_the_agent_is_a_stale_read() {
        let sed = call(
            "Bash",
            serde_json::json!({"command": "sed -i s/a/b/ src/a.rs"}),
        );
        let fired = run(&[read_of("/w/src/a.rs"), sed.clone(), edit_of("/w/src/a.rs")]);
        assert_eq!(fired, BTreeSet::from([Signal::StaleRead]));
        // Read again after the change: fresh.
        assert!(
            run(&[
                read_of("/w/src/a.rs"),
                sed,
                read_of("/w/src/a.rs"),
                edit_of("/w/src/a.rs")
            ])
            .is_empty()
        );
        // The agent's own edits, one after another, are no stale read.
        let own = edit_of("/w/src/a.rs");
        assert!(run(&[read_of("/w/src/a.rs"), own.clone(), own]).is_empty());
        // The harness's refusal.
        let refused = serde_json::json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "is_error": true,
             "content": "<tool_use_error>File has been modified since read</tool_use_error>"}]}});
        assert_eq!(
            run(&[refused.to_string()]),
            BTreeSet::from([Signal::StaleRead])
        );
    }

    #[test]
    fn shell_commands_write_their_targets_only() {
        let w = |c: &str| shell_writes(c, Some("/w"));
        assert_eq!(w("sed -i 's/a/b/' src/a.rs"), ["/w/src/a.rs"]);
        assert_eq!(w("sed -i.bak -e x /abs/a.rs"), ["/abs/a.rs"]);
        assert_eq!(w("cp src/a.rs /tmp/b.rs"), ["/tmp/b.rs"]);
        assert_eq!(w("echo x > ./out.txt && cat src/a.rs"), ["/w/out.txt"]);
        assert_eq!(w("cargo test 2>&1 | tee log.txt"), ["/w/log.txt"]);
        assert_eq!(w("git checkout -- src/a.rs"), ["/w/src/a.rs"]);
        assert!(w("cat src/a.rs; grep -n x src/b.rs 2>/dev/null").is_empty());
    }

    #[test]
    fn three_rereads_in_a_row_are_a_spiral_but_not_after_an_edit_or_a_compaction() {
        let files = ["/w/a", "/w/b", "/w/c"].map(read_of);
        let mut lines: Vec<String> = files.to_vec();
        lines.extend(files.iter().cloned());
        assert!(run(&lines).contains(&Signal::RecoverySpiral));
        // Two re-reads, then something else, then one: no row of three.
        let grep = call("Grep", serde_json::json!({"pattern": "x"}));
        let broken = [&files[..], &files[..2], &[grep], &files[2..]].concat();
        assert!(run(&broken).is_empty());
        let compact = r#"{"type":"system","subtype":"compact_boundary"}"#.to_string();
        assert!(run(&[&files[..], &[compact], &files[..]].concat()).is_empty());
        // Paging through one file is no re-read.
        let page = |o: u64| {
            call(
                "Read",
                serde_json::json!({"file_path": "/w/a", "offset": o}),
            )
        };
        assert!(run(&[page(1), page(100), page(200), page(300)]).is_empty());
    }

    #[test]
    fn the_same_instruction_again_is_fade_but_short_replies_are_not() {
        let ask = said("please fix the expiry check in auth");
        assert_eq!(
            run(&[ask.clone(), usage_line(10, "m"), ask]),
            BTreeSet::from([Signal::InstructionFade])
        );
        assert!(run(&[said("continue"), said("continue"), said("yes go on")]).is_empty());
        // The hook's prompt, before the transcript holds it, and after.
        let mut state = State::default();
        let first = said("please fix the expiry check in auth") + "\n";
        let text = first.clone() + &usage_line(10, "m") + "\n";
        assert!(read(&mut state, text.as_bytes(), 0, true, None).is_empty());
        let again = Some("Please fix the expiry  check in auth");
        assert_eq!(
            read(&mut state, b"", text.len() as u64, true, again),
            BTreeSet::from([Signal::InstructionFade])
        );
        // Already in the transcript, unanswered: weighed once.
        let mut state = State::default();
        let p = Some("please fix the expiry check in auth");
        assert!(read(&mut state, first.as_bytes(), 0, true, p).is_empty());
        // Counted by the hook first, its line read later: once.
        let mut state = State::default();
        assert!(read(&mut state, b"", 0, true, p).is_empty());
        assert!(read(&mut state, first.as_bytes(), 0, true, None).is_empty());
    }

    #[test]
    fn pressure_is_measured_on_the_window_less_the_reserve() {
        let mut state = State::default();
        let text = usage_line(84_000, "claude-sonnet-4-5") + "\n";
        read(&mut state, text.as_bytes(), 0, true, None);
        let effective = effective_window(&state, None);
        assert_eq!(effective, 167_000);
        assert_eq!(pressure(&state, effective), Some(Signal::Pressure));
        state.tokens = 83_000;
        assert_eq!(pressure(&state, effective), None);
        state.tokens = 117_000;
        assert_eq!(pressure(&state, effective), Some(Signal::PressureStrong));
        let configured = effective_window(&state, Some((1_000_000, WindowSource::Config)));
        assert_eq!(pressure(&state, configured), None);
    }

    #[test]
    fn each_signal_is_chosen_once_the_most_urgent_first() {
        let mut state = State::default();
        let fired = BTreeSet::from([Signal::Pressure, Signal::RepeatedCall]);
        assert_eq!(choose(&mut state, &fired), Some(Signal::RepeatedCall));
        assert_eq!(choose(&mut state, &fired), Some(Signal::Pressure));
        assert_eq!(choose(&mut state, &fired), None);
        let mut state = State::default();
        let strong = BTreeSet::from([Signal::PressureStrong]);
        assert_eq!(choose(&mut state, &strong), Some(Signal::PressureStrong));
        assert_eq!(
            choose(&mut state, &BTreeSet::from([Signal::Pressure])),
            None
        );
    }

    #[test]
    fn a_reading_resumes_at_its_offset_and_skips_a_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "one\ntwo\nthr").unwrap();
        let (bytes, start, whole) = unread(&path, 0).unwrap();
        assert_eq!(
            (bytes.as_slice(), start, whole),
            (&b"one\ntwo\n"[..], 0, true)
        );
        let (bytes, start, _) = unread(&path, 8).unwrap();
        assert_eq!((bytes.len(), start), (0, 8));
        // Replaced by a shorter file: read afresh.
        let (_, start, whole) = unread(&path, 99).unwrap();
        assert_eq!((start, whole), (0, true));
    }

    #[test]
    fn the_state_holds_no_text_of_the_session() {
        let mut state = State::default();
        let lines = [
            said("the password is hunter2 and the key is AKIAIOSFODNN7EXAMPLE"),
            read_of("/home/ada/secret-project/token.txt"),
            usage_line(5_000, "claude-sonnet-4-5"),
        ];
        let text = lines.join("\n") + "\n";
        read(&mut state, text.as_bytes(), 0, true, None);
        let saved = serde_json::to_string(&state).unwrap();
        for word in ["hunter2", "AKIA", "/home", "secret-project", "token.txt"] {
            assert!(!saved.contains(word), "{saved}");
        }
        // The redaction filter it passes leaves it as it is.
        let options = crate::brief::redact::Options::default();
        assert_eq!(crate::brief::redact::redact(&saved, options).0, saved);
        let back: State = serde_json::from_str(&saved).unwrap();
        assert_eq!(back, state);
    }
}
