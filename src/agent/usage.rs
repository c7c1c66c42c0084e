//! The context-utilization meter: how full an agent session's context
//! window is, read from its transcript (JSON lines). Claude Code's
//! assistant lines carry `message.usage` and `message.model`; Codex CLI's
//! session files carry `event_msg` lines of `payload.type` `token_count`
//! (`payload.info.last_token_usage`, `payload.info.model_context_window`)
//! and `turn_context` lines naming the model.
//!
//! Utilization = `input_tokens + cache_read_input_tokens +
//! cache_creation_input_tokens` of the most recent assistant message with
//! usage (for Codex: the last request's input tokens, cached ones
//! included), divided by the context window.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::Serialize;
use serde_json::Value;

/// The context window of a model unless it is a 1M-context variant.
pub const DEFAULT_WINDOW: u64 = 200_000;

/// The context window of the 1M-context variants.
pub const LARGE_WINDOW: u64 = 1_000_000;

/// The utilization, in percent, from which it is time to hand off.
pub const DEFAULT_THRESHOLD: u64 = 40;

/// The first block read from the end of a transcript; each further block
/// doubles, up to [`MAX_BLOCK`], so long lines cost linear time.
const FIRST_BLOCK: usize = 64 * 1024;
const MAX_BLOCK: usize = 8 * 1024 * 1024;

/// The token counts of one assistant message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Sample {
    /// `message.model`, when given.
    pub model: Option<String>,
    /// `message.usage.input_tokens`.
    pub input_tokens: u64,
    /// `message.usage.cache_read_input_tokens`.
    pub cache_read_input_tokens: u64,
    /// `message.usage.cache_creation_input_tokens`.
    pub cache_creation_input_tokens: u64,
    /// The context window the transcript records (Codex CLI's
    /// `model_context_window`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

impl Sample {
    /// The tokens in context: input + cache read + cache creation.
    pub fn tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Parse one transcript line, and whether it is Codex CLI's: `Some` for
/// an assistant message of the main session (not a sidechain, not a
/// `<synthetic>` placeholder) whose `message.usage` holds at least one of
/// the three input counts. Anything else — other lines, broken JSON, a
/// partial line — is `None`.
fn parse_any(line: &[u8]) -> Option<(Sample, bool)> {
    if !contains(line, b"usage") {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("type").and_then(Value::as_str) == Some("event_msg") {
        return codex_sample(&v).map(|s| (s, true));
    }
    claude_sample(&v).map(|s| (s, false))
}

/// A Claude Code assistant line's counts (not a sidechain's, not a
/// `<synthetic>` placeholder's).
pub fn claude_sample(v: &Value) -> Option<Sample> {
    let message = v.get("message")?;
    let assistant = v.get("type").and_then(Value::as_str) == Some("assistant")
        || message.get("role").and_then(Value::as_str) == Some("assistant");
    if !assistant || v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let model = message
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    if model.as_deref() == Some("<synthetic>") {
        return None;
    }
    let usage = message.get("usage")?;
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let (input, read, creation) = (
        field("input_tokens"),
        field("cache_read_input_tokens"),
        field("cache_creation_input_tokens"),
    );
    if input.is_none() && read.is_none() && creation.is_none() {
        return None;
    }
    Some(Sample {
        model,
        input_tokens: input.unwrap_or(0),
        cache_read_input_tokens: read.unwrap_or(0),
        cache_creation_input_tokens: creation.unwrap_or(0),
        context_window: None,
    })
}

/// A Codex CLI `token_count` event with counts: the last request's input
/// (its cached part as cache reads) and the recorded window. `info` is
/// `null` until the first response.
fn codex_sample(v: &Value) -> Option<Sample> {
    let payload = v.get("payload")?;
    if payload.get("type").and_then(Value::as_str) != Some("token_count") {
        return None;
    }
    let info = payload.get("info")?;
    let last = info.get("last_token_usage")?;
    let input = last.get("input_tokens").and_then(Value::as_u64)?;
    let cached = last
        .get("cached_input_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(input);
    Some(Sample {
        model: None,
        input_tokens: input - cached,
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
        context_window: info
            .get("model_context_window")
            .and_then(Value::as_u64)
            .filter(|w| *w > 0),
    })
}

/// The model a Codex CLI `turn_context` line names.
fn codex_model(line: &[u8]) -> Option<String> {
    if !contains(line, b"turn_context") {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("type").and_then(Value::as_str) != Some("turn_context") {
        return None;
    }
    let model = v.get("payload")?.get("model")?.as_str()?;
    Some(model.to_string())
}

/// Whether the transcript is Claude Code's: one of its first lines is a
/// user or assistant message. Such a transcript with no usage yet reads
/// 0 %; any other without usage records none that can be read.
pub fn is_claude_transcript(path: &Path) -> bool {
    head(path).is_some_and(|head| {
        head.split(|b| *b == b'\n').any(|line| {
            serde_json::from_slice::<Value>(line).is_ok_and(|v| {
                matches!(
                    v.get("type").and_then(Value::as_str),
                    Some("user" | "assistant")
                ) && v.get("message").is_some_and(Value::is_object)
            })
        })
    })
}

/// The first [`FIRST_BLOCK`] bytes of the file at `path` (its first lines,
/// the last one maybe cut); `None` when it cannot be read.
pub fn head(path: &Path) -> Option<Vec<u8>> {
    let file = File::open(path).ok()?;
    let mut head = Vec::new();
    file.take(FIRST_BLOCK as u64).read_to_end(&mut head).ok()?;
    Some(head)
}

/// The most recent usage sample of the transcript at `path`, reading from
/// the end; `None` when no line has one. A missing or unreadable file is an
/// error.
pub fn last_sample(path: &Path) -> Result<Option<Sample>> {
    let (mut file, len) = open_transcript(path)?;
    last_sample_of(&mut file, len)
        .with_context(|| format!("cannot read the transcript '{}'", path.display()))
}

/// Open the transcript at `path` for reading, with its length. Anything but
/// a regular file is refused before it is opened: opening a FIFO for
/// reading blocks until a writer appears, and a device may never end.
pub fn open_transcript(path: &Path) -> Result<(File, u64)> {
    let shown = path.display();
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(crate::refusal!(
            "'{shown}' is {}, not a regular file; pass the session's .jsonl transcript",
            if meta.is_dir() {
                "a directory"
            } else {
                "a special file (a FIFO, socket or device)"
            }
        ));
    }
    let file = File::open(path).map_err(|e| {
        anyhow!("cannot read the transcript '{shown}': {e}; pass the session's .jsonl transcript")
    })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read the transcript '{shown}'"))?;
    if !meta.is_file() {
        return Err(anyhow!(
            "'{shown}' is not a regular file; pass the session's .jsonl transcript"
        ));
    }
    Ok((file, meta.len()))
}

fn last_sample_of<R: Read + Seek>(reader: &mut R, len: u64) -> std::io::Result<Option<Sample>> {
    // A Codex sample names no model: the nearest `turn_context` before it
    // does.
    let mut found: Option<Sample> = None;
    read_back(reader, len, u64::MAX, |line| match &mut found {
        None => match parse_any(line) {
            Some((sample, codex)) => {
                found = Some(sample);
                !codex
            }
            None => false,
        },
        Some(sample) => {
            sample.model = codex_model(line);
            sample.model.is_some()
        }
    })?;
    Ok(found)
}

/// How far [`read_back`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadBack {
    /// The bytes read, from the end.
    pub bytes: u64,
    /// Whether every line back to the start of the file was read.
    pub whole: bool,
}

/// Give the lines of `reader` (`len` bytes) to `take`, newest first and
/// without their newline, reading blocks from the end: the first block is
/// [`FIRST_BLOCK`] bytes and each further one doubles, up to
/// [`MAX_BLOCK`], so long lines cost linear time. Stops when `take` returns
/// `true`, at the start of the file, or once `limit` bytes are read: a line
/// whose start lies before the limit is not given, so memory stays within
/// `limit` plus one block.
pub fn read_back<R: Read + Seek>(
    reader: &mut R,
    len: u64,
    limit: u64,
    mut take: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<ReadBack> {
    let mut pos = len;
    let mut block = FIRST_BLOCK;
    // Bytes from `pos` to the first newline after it not yet given: the
    // tail of a line whose start is not read yet.
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let read = len - pos;
        let n = (block as u64).min(pos).min(limit.saturating_sub(read)) as usize;
        pos -= n as u64;
        let mut buf = vec![0; n];
        reader.seek(SeekFrom::Start(pos))?;
        reader.read_exact(&mut buf)?;
        buf.extend_from_slice(&pending);
        pending = buf;
        // Only the block just read can hold a newline: the rest was split.
        let mut scan = n;
        while let Some(i) = pending[..scan].iter().rposition(|&b| b == b'\n') {
            let line = pending.split_off(i + 1);
            pending.truncate(i);
            scan = i;
            if take(&line) {
                return Ok(ReadBack {
                    bytes: len - pos,
                    whole: false,
                });
            }
        }
        if pos == 0 {
            take(&pending);
            return Ok(ReadBack {
                bytes: len,
                whole: true,
            });
        }
        if len - pos >= limit {
            return Ok(ReadBack {
                bytes: len - pos,
                whole: false,
            });
        }
        block = (block * 2).min(MAX_BLOCK);
    }
}

/// The model table: a model id holding one of these marks runs with this
/// window (the 1M-context variants, `claude-sonnet-4-5[1m]`,
/// `…-1m-…`); any other with [`DEFAULT_WINDOW`]. A guess the harness's
/// own word replaces (`WindowSource::Harness`), and the config overrides.
pub const MODEL_WINDOWS: &[(&str, u64)] = &[("1m", LARGE_WINDOW)];

/// The context window of a model by its id, from [`MODEL_WINDOWS`].
pub fn window_for_model(model: Option<&str>) -> u64 {
    let Some(model) = model else {
        return DEFAULT_WINDOW;
    };
    let lower = model.to_ascii_lowercase();
    MODEL_WINDOWS
        .iter()
        .find(|(mark, _)| {
            lower
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|p| p == *mark)
        })
        .map_or(DEFAULT_WINDOW, |(_, window)| *window)
}

/// Parse a token count: `200000`, `200_000`, `200,000`, `200k`, `1M`.
pub fn parse_tokens(s: &str) -> Result<u64, String> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| *c != '_' && *c != ',')
        .collect();
    let (num, unit) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        _ => (t.as_str(), 1),
    };
    match num.parse::<u64>() {
        Ok(n) if n > 0 && n.checked_mul(unit).is_some() => Ok(n * unit),
        _ => Err(format!(
            "'{s}' is not a number of tokens; write it like 200000, 200k or 1M"
        )),
    }
}

/// Where the window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowSource {
    /// `--window`.
    Flag,
    /// `handoff.contextWindow`.
    Config,
    /// The model id.
    Model,
    /// The transcript (Codex CLI records the model's window).
    Transcript,
    /// The harness said it (Claude Code's status-line input:
    /// `context_window.context_window_size`).
    Harness,
    /// More tokens were in use than the model's default window holds, so
    /// the session runs with the 1M window.
    Observed,
}

/// The meter's reading.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Meter {
    /// Tokens in context.
    pub tokens: u64,
    /// The context window.
    pub window: u64,
    /// `tokens / window`, in whole percent (rounded down, at most 100).
    pub percent: u64,
    /// The hand-off threshold, in percent.
    pub threshold: u64,
    /// The model of the message read, if known.
    pub model: Option<String>,
    /// Whether utilization is at or over the threshold.
    pub over: bool,
    /// Where the window came from.
    pub window_source: WindowSource,
    /// The transcript read.
    pub transcript: String,
    /// The counts read, when an assistant message with usage was found.
    pub usage: Option<Sample>,
}

/// Compute the reading. `window` is the flag's or config's choice, if any.
pub fn meter(
    sample: Option<Sample>,
    window: Option<(u64, WindowSource)>,
    threshold: u64,
    transcript: &Path,
) -> Meter {
    let tokens = sample.as_ref().map_or(0, Sample::tokens);
    let model = sample.as_ref().and_then(|s| s.model.clone());
    let recorded = sample
        .as_ref()
        .and_then(|s| s.context_window)
        .map(|w| (w, WindowSource::Transcript));
    let (window, window_source) = window.or(recorded).unwrap_or_else(|| {
        let by_model = window_for_model(model.as_deref());
        if tokens > by_model && by_model < LARGE_WINDOW {
            (LARGE_WINDOW, WindowSource::Observed)
        } else {
            (by_model, WindowSource::Model)
        }
    });
    let exact = tokens as u128 * 100;
    Meter {
        tokens,
        window,
        percent: (exact / window as u128).min(100) as u64,
        threshold,
        model,
        over: exact >= threshold as u128 * window as u128,
        window_source,
        transcript: transcript.display().to_string(),
        usage: sample,
    }
}

/// Where the harness keeps transcripts: `$CLAUDE_CONFIG_DIR/projects`, else
/// `~/.claude/projects`.
pub fn projects_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("projects"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude").join("projects"))
}

/// The harness's folder name for a session started in `dir`: every
/// character that is not an ASCII letter or digit becomes `-`.
pub fn project_folder(dir: &Path) -> String {
    dir.display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The newest `*.jsonl` transcript of a session started in one of `dirs`.
pub fn find_transcript(projects: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    for dir in dirs {
        let folder = projects.join(project_folder(dir));
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let newest = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| {
                let meta = e.metadata().ok().filter(|m| m.is_file())?;
                Some((meta.modified().ok()?, e.path()))
            })
            .max();
        if let Some((_, path)) = newest {
            return Some(path);
        }
    }
    None
}

/// Where Codex CLI keeps its session files: `$CODEX_HOME/sessions`, else
/// `~/.codex/sessions`.
pub fn codex_sessions_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("sessions"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".codex").join("sessions"))
}

/// The most sessions files looked into for their working directory.
const MAX_ROLLOUTS: usize = 2_000;

/// The newest Codex CLI session file (`YYYY/MM/DD/rollout-*.jsonl` under
/// `sessions`) of a session started in one of `dirs`: the working
/// directory its first line (`session_meta`) records. The newest by
/// modification time first, at most [`MAX_ROLLOUTS`] of them.
pub fn find_codex_rollout(sessions: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    let mut rollouts = Vec::new();
    let mut folders = vec![(sessions.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() && depth < 3 {
                folders.push((path, depth + 1));
            } else if meta.is_file() && depth == 3 && is_rollout(&path) {
                rollouts.extend(meta.modified().ok().map(|t| (t, path)));
            }
        }
    }
    rollouts.sort_by(|a, b| b.cmp(a));
    rollouts
        .into_iter()
        .take(MAX_ROLLOUTS)
        .map(|(_, path)| path)
        .find(|path| codex_cwd(path).is_some_and(|cwd| dirs.contains(&cwd)))
}

fn is_rollout(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The working directory a Codex session file records on its first line.
fn codex_cwd(path: &Path) -> Option<PathBuf> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let mut first = Vec::new();
    std::io::BufReader::new(file.take(64 * 1024))
        .read_until(b'\n', &mut first)
        .ok()?;
    let meta: Value = serde_json::from_slice(&first).ok()?;
    (meta.get("type")? == "session_meta")
        .then(|| meta.pointer("/payload/cwd")?.as_str().map(PathBuf::from))
        .flatten()
}

/// `1M`, `200k`, or the number with thousands separators.
pub fn short_tokens(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        grouped(n)
    }
}

/// The number with `,` between thousands: `82,310`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn assistant(model: &str, input: u64, read: u64, creation: u64) -> String {
        format!(
            r#"{{"type":"assistant","message":{{"role":"assistant","model":"{model}","usage":{{"input_tokens":{input},"cache_read_input_tokens":{read},"cache_creation_input_tokens":{creation},"output_tokens":7}}}}}}"#
        )
    }

    fn last(text: &str) -> Option<Sample> {
        let mut c = Cursor::new(text.as_bytes().to_vec());
        last_sample_of(&mut c, text.len() as u64).unwrap()
    }

    #[test]
    fn the_most_recent_usage_wins_and_junk_is_skipped() {
        let text = format!(
            "{}\n{}\nnot json\n{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"usage?\"}}}}\n{}",
            assistant("m", 1, 2, 3),
            assistant("m", 10, 20, 30),
            r#"{"type":"assistant","message":{"role":"assistant","model":"m","usage":{"input_tok"#
        );
        let s = last(&text).unwrap();
        assert_eq!(s.tokens(), 60);
        assert_eq!(last("").map(|s| s.tokens()), None);
        assert_eq!(last(&assistant("m", 5, 0, 0)).unwrap().tokens(), 5);
    }

    #[test]
    fn codex_token_counts_take_the_model_of_their_turn() {
        let turn = |m: &str| format!(r#"{{"type":"turn_context","payload":{{"model":"{m}"}}}}"#);
        let count = |input: u64| {
            format!(
                r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":40}},"model_context_window":1000}}}}}}"#
            )
        };
        let empty = r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#;
        let text = format!(
            "{}\n{}\n{}\n{}\n{empty}\n",
            turn("a"),
            count(50),
            turn("b"),
            count(100)
        );
        let s = last(&text).unwrap();
        assert_eq!((s.tokens(), s.cache_read_input_tokens), (100, 40));
        assert_eq!(
            (s.model.as_deref(), s.context_window),
            (Some("b"), Some(1000))
        );
        // No turn_context at all: no model, still the counts.
        assert_eq!(last(&count(7)).unwrap().model, None);
        assert_eq!(last(empty), None);
    }

    #[test]
    fn sidechains_and_synthetic_messages_do_not_count() {
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"role":"assistant","model":"m","usage":{"input_tokens":999}}}"#;
        let synth = assistant("<synthetic>", 0, 0, 0);
        let text = format!("{}\n{side}\n{synth}\n", assistant("m", 1, 1, 1));
        assert_eq!(last(&text).unwrap().tokens(), 3);
    }

    #[test]
    fn lines_longer_than_a_block_are_read_whole() {
        let big = format!(
            r#"{{"type":"assistant","pad":"{}","message":{{"role":"assistant","model":"m","usage":{{"input_tokens":42}}}}}}"#,
            "x".repeat(3 * FIRST_BLOCK)
        );
        let text = format!(
            "{}\n{big}\n{}\n",
            assistant("m", 1, 0, 0),
            "y".repeat(FIRST_BLOCK + 5)
        );
        assert_eq!(last(&text).unwrap().tokens(), 42);
    }

    #[test]
    fn reading_back_stops_at_the_limit_without_a_cut_line() {
        let text = format!("first\n{}\nlast\n", "x".repeat(3 * FIRST_BLOCK));
        let mut lines = Vec::new();
        let mut c = Cursor::new(text.as_bytes().to_vec());
        let back = read_back(&mut c, text.len() as u64, FIRST_BLOCK as u64, |l| {
            lines.push(String::from_utf8_lossy(l).into_owned());
            false
        })
        .unwrap();
        // The long line starts before the limit: neither it nor any part of
        // it is given.
        assert_eq!(lines, ["", "last"]);
        assert_eq!(
            back,
            ReadBack {
                bytes: FIRST_BLOCK as u64,
                whole: false
            }
        );
        let mut lines = Vec::new();
        let back = read_back(&mut c, text.len() as u64, u64::MAX, |l| {
            lines.push(l.len());
            false
        })
        .unwrap();
        assert_eq!(lines, [0, 4, 3 * FIRST_BLOCK, 5]);
        assert!(back.whole);
    }

    #[test]
    fn one_m_variants_are_recognized() {
        for m in [
            "claude-sonnet-4-5[1m]",
            "claude-opus-4-6[1M]",
            "sonnet-context-1m-2025-08-07",
            "x-1m",
        ] {
            assert_eq!(window_for_model(Some(m)), LARGE_WINDOW, "{m}");
        }
        for m in [
            "claude-opus-4-1-20250805",
            "claude-sonnet-4-5-20250929",
            "m1m",
            "11m",
            "",
        ] {
            assert_eq!(window_for_model(Some(m)), DEFAULT_WINDOW, "{m}");
        }
    }

    #[test]
    fn tokens_parse_and_print() {
        assert_eq!(parse_tokens("200k"), Ok(200_000));
        assert_eq!(parse_tokens("1M"), Ok(1_000_000));
        assert_eq!(parse_tokens("128,000"), Ok(128_000));
        assert!(parse_tokens("0").is_err() && parse_tokens("lots").is_err());
        assert_eq!(short_tokens(200_000), "200k");
        assert_eq!(short_tokens(1_000_000), "1M");
        assert_eq!(short_tokens(150_500), "150,500");
        assert_eq!(grouped(82_310), "82,310");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(12), "12");
    }

    #[test]
    fn meter_rounds_down_and_compares_exactly() {
        let s = |t| Sample {
            model: Some("m".into()),
            input_tokens: t,
            ..Sample::default()
        };
        let m = meter(Some(s(82_310)), None, 40, Path::new("t"));
        assert_eq!((m.percent, m.window, m.over), (41, 200_000, true));
        let m = meter(Some(s(79_999)), None, 40, Path::new("t"));
        assert_eq!((m.percent, m.over), (39, false));
        let m = meter(Some(s(80_000)), None, 40, Path::new("t"));
        assert!(m.over);
        let m = meter(Some(s(300_000)), None, 40, Path::new("t"));
        assert_eq!(
            (m.window, m.window_source),
            (1_000_000, WindowSource::Observed)
        );
        let m = meter(
            Some(s(300_000)),
            Some((100_000, WindowSource::Flag)),
            40,
            Path::new("t"),
        );
        assert_eq!(m.percent, 100);
    }

    #[test]
    fn project_folders_match_the_harness() {
        assert_eq!(
            project_folder(Path::new("/home/a/my.repo")),
            "-home-a-my-repo"
        );
    }
}
