//! A draft brief composed from an agent session's own transcript, without
//! a model: for the session that never wrote its brief (it crashed, the
//! terminal closed, the context was too far gone). Deterministic: the same
//! transcript and worktree give the same draft.
//!
//! [`session::read`] reads what the session did from the end of its
//! transcript (Claude Code's or Codex CLI's JSON lines, at most
//! [`READ_LIMIT`] bytes); [`compose`] turns it into a [`Draft`]: the last
//! request, the files read and edited, the commands run with their last
//! exit status (test runs as tests), the last error output, and decisions
//! or rejected paths only where the agent wrote them in the method's words.
//! [`Draft::partial`] is the partial brief (mode `AUTO`) that `write`
//! completes with the git state.

pub mod session;
mod shell;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::brief::{FilePointer, TestResult};
pub use session::{Harness, Run, Session, Touch, Unfinished};

/// The most bytes read from the end of a transcript: the draft describes
/// the session's last 16 MiB, whatever the file's size.
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// The mode of a brief drafted from a transcript.
pub const MODE: &str = "AUTO";

/// List caps, under lint's limits (12 entries, 8 lines per string).
const MAX_FILES: usize = 10;
const MAX_EDITED: usize = 8;
const MAX_COMMANDS: usize = 8;
const MAX_TESTS: usize = 8;
const MAX_METHOD: usize = 8;
const MAX_ERROR_LINES: usize = 7;
const MAX_LINE: usize = 200;
/// The longest the agent's last words are kept, in characters.
const MAX_WORDS: usize = 300;
const MAX_TASK: usize = 300;

/// The last failing command and the telling lines of what it printed: the
/// verbatim material the next session starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The command (its first line).
    pub command: String,
    /// Its exit status: not 0; or 0 or unknown for a test run whose runner
    /// reported failures (its output piped through `tail`, say).
    pub exit: Option<i64>,
    /// The telling lines of its output, verbatim, at most seven, each cut
    /// to 200 characters.
    pub output: Vec<String>,
}

impl Failure {
    /// The failure as one open risk: a heading line, then the output.
    pub fn risk(&self) -> String {
        let how = match self.exit {
            Some(exit) if exit != 0 => format!("exited {exit}"),
            _ => "reported failing tests".to_string(),
        };
        let mut text = format!(
            "Last error, `{}` {how}{}",
            self.command,
            if self.output.is_empty() { "" } else { ":" }
        );
        for line in &self.output {
            text.push('\n');
            text.push_str(line);
        }
        text
    }
}

/// A draft brief and what it was read from.
#[derive(Debug, Clone, Serialize)]
pub struct Draft {
    /// Whose transcript.
    pub harness: Harness,
    /// The transcript read.
    pub transcript: PathBuf,
    /// When its last line was written (Unix seconds), if known.
    pub last_turn: Option<i64>,
    /// The bytes read from its end.
    pub bytes_read: u64,
    /// Whether it was read back to its first line.
    pub whole: bool,
    /// The last request (the newest of four words or more, else the
    /// newest), on one line.
    pub task: Option<String>,
    /// `resume.done_when`.
    pub done_when: String,
    /// `resume.resume_by`.
    pub resume_by: String,
    /// `state.next_acceptance_check`.
    pub next_check: String,
    /// Test commands and their last result, newest first.
    pub tests: Vec<TestResult>,
    /// Other commands with their last exit status, newest first.
    pub commands: Vec<String>,
    /// Files read and edited, newest first.
    pub files: Vec<FilePointer>,
    /// Decisions the agent stated (`Decision: …`), oldest first.
    pub decisions: Vec<String>,
    /// Rejected paths the agent stated (`Rejected: …`), oldest first.
    pub rejected: Vec<String>,
    /// The last command that failed and was not run successfully since.
    pub failure: Option<Failure>,
    /// Whether the session did something: edited a file or ran a command
    /// that did more than look around. A session that only read and talked
    /// leaves the state as it found it.
    pub acted: bool,
    /// What the session was doing when it ended, as an open risk: its
    /// newest tool call, which has no result.
    pub unfinished: Option<String>,
    /// The agent's last words, as an open risk: what it meant to do next,
    /// often, in one line of at most [`MAX_WORDS`] characters.
    pub last_words: Option<String>,
}

/// Compose the draft of `session` (read from `transcript`) for the
/// worktree at `root`: file paths become relative to it, and files outside
/// it or gone are left out.
pub fn compose(session: &Session, transcript: &Path, root: &Path) -> Draft {
    let latest = latest_runs(&session.runs);
    let tests = tests(&latest);
    let commands = commands(&latest);
    let failure = latest.iter().find(|run| failed(run)).map(|run| Failure {
        command: one_line(&display(&run.command), MAX_LINE),
        exit: run.exit,
        // Redacted whole before any line is picked or cut: a private key
        // whose BEGIN line is not kept still matches its rule here.
        output: telling_lines(&crate::brief::redact::redact_text(&run.output).0),
    });
    let task = task(&session.requests);
    let (done_when, resume_by, next_check) = goal(task.as_deref(), &tests, failure.as_ref());
    Draft {
        harness: session.harness,
        transcript: transcript.to_path_buf(),
        last_turn: session.last_turn,
        bytes_read: session.read.bytes,
        whole: session.read.whole,
        task,
        done_when,
        resume_by,
        next_check,
        tests,
        commands,
        files: files(session, root),
        decisions: oldest_first(&session.decisions),
        rejected: oldest_first(&session.rejected),
        failure,
        acted: session.touches.iter().any(|t| t.edited)
            || session
                .runs
                .iter()
                .any(|r| !shell::is_inspection(&r.command)),
        last_words: session.last_words.as_deref().map(|words| {
            let flat = words.split_whitespace().collect::<Vec<_>>().join(" ");
            format!(
                "The session's last words (check them against the code): {}",
                cut(&flat, MAX_WORDS)
            )
        }),
        unfinished: session.unfinished.as_ref().map(|u| match u {
            Unfinished::Run(command) => format!(
                "The session ended while `{}` ran: no result was recorded",
                one_line(&display(command), MAX_LINE)
            ),
            Unfinished::Edit(path) => format!(
                "The session ended during an edit of {}: check whether it was applied",
                relative(path, session.cwd.as_deref().unwrap_or(root), root)
                    .unwrap_or_else(|| path.clone())
            ),
        }),
    }
}

/// Each command's newest run whose exit status is known, else its newest
/// run (one cut short by the session's end), newest first.
fn latest_runs(runs: &[Run]) -> Vec<&Run> {
    let key = |r: &Run| one_line(&r.command, usize::MAX);
    let mut seen = std::collections::HashSet::new();
    let known: std::collections::HashSet<String> =
        runs.iter().filter(|r| r.exit.is_some()).map(key).collect();
    runs.iter()
        .filter(|r| r.exit.is_some() || !known.contains(&key(r)))
        .filter(|r| seen.insert(key(r)))
        .collect()
}

/// A command as the draft shows it: a test run as the check to run again
/// ([`shell::check_command`]), any other as it was run.
fn display(command: &str) -> String {
    if shell::is_test(command) {
        shell::check_command(command)
    } else {
        command.to_string()
    }
}

/// Whether a run failed: a non-zero exit status, or a test runner that
/// reported failures.
fn failed(run: &Run) -> bool {
    run.exit.is_some_and(|exit| exit != 0)
        || (shell::is_test(&run.command) && shell::runner_verdict(&run.output) == Some(false))
}

/// Test runs whose result is known: from the runner's own summary, else
/// from the exit status.
fn tests(latest: &[&Run]) -> Vec<TestResult> {
    latest
        .iter()
        .filter(|r| shell::is_test(&r.command))
        .filter_map(|r| {
            let pass = match (shell::runner_verdict(&r.output), r.exit) {
                (Some(false), _) => false,
                (_, Some(exit)) => exit == 0,
                (Some(true), None) => true,
                (None, None) => return None,
            };
            Some(TestResult {
                cmd: one_line(&display(&r.command), MAX_LINE),
                result: if pass { "pass" } else { "fail" }.to_string(),
            })
        })
        .take(MAX_TESTS)
        .collect()
}

/// The other commands that did something, each with its last exit status
/// as a shell comment (so that the line still runs).
fn commands(latest: &[&Run]) -> Vec<String> {
    latest
        .iter()
        .filter(|r| !shell::is_inspection(&r.command))
        .filter(|r| {
            !shell::is_test(&r.command)
                || (r.exit.is_none() && shell::runner_verdict(&r.output).is_none())
        })
        .map(|r| {
            let status = match r.exit {
                Some(exit) => format!("exit {exit}"),
                None => "exit status unknown".to_string(),
            };
            format!("{}  # {status}", one_line(&r.command, MAX_LINE))
        })
        .take(MAX_COMMANDS)
        .collect()
}

/// The newest request of four words or more (a "yes" or "go on"
/// continues the one before), else the newest.
fn task(requests: &[String]) -> Option<String> {
    let chosen = requests
        .iter()
        .find(|r| r.split_whitespace().count() >= 4)
        .or(requests.first())?;
    Some(one_line(chosen, MAX_TASK))
}

/// `done_when`, `resume_by` and `next_acceptance_check`: the failing test,
/// else the newest test, else the failing command names the check.
fn goal(
    task: Option<&str>,
    tests: &[TestResult],
    failure: Option<&Failure>,
) -> (String, String, String) {
    let failing = tests.iter().find(|t| t.result == "fail");
    let check = failing
        .or(tests.first())
        .map(|t| t.cmd.clone())
        .or_else(|| failure.map(|f| f.command.clone()));
    let request = task.map(|t| format!("the last request is met: {t}"));
    let done_when = match (&check, &request) {
        (Some(cmd), Some(req)) => format!("`{cmd}` passes, and {req}"),
        (Some(cmd), None) => format!("`{cmd}` passes"),
        (None, Some(req)) => upper_first(req),
        (None, None) => "`git diff` holds the change the session was making, reviewed".to_string(),
    };
    let verify = "Check this draft against `git status` and `git diff`, then";
    let resume_by = match (failure, task) {
        (Some(f), _) => format!(
            "{verify} fix what makes `{}` fail (its last output is under open risks).",
            f.command
        ),
        (None, Some(t)) => format!("{verify} continue the last request: {}", one_line(t, 120)),
        (None, None) => format!("{verify} decide the next step from the transcript."),
    };
    let next_check = check.unwrap_or_else(|| "git diff --stat HEAD".to_string());
    (done_when, resume_by, next_check)
}

/// The files to read first: every edited file (at most eight), then the
/// files read, newest first, at most ten in all.
fn files(session: &Session, root: &Path) -> Vec<FilePointer> {
    let cwd = session.cwd.as_deref().unwrap_or(root);
    let inside: Vec<(String, &Touch)> = session
        .touches
        .iter()
        .filter_map(|t| Some((relative(&t.path, cwd, root)?, t)))
        .filter(|(rel, _)| root.join(rel).is_file())
        .collect();
    let mut keep: Vec<bool> = inside.iter().map(|_| false).collect();
    let mut kept = 0;
    for (i, (_, t)) in inside.iter().enumerate() {
        if t.edited && kept < MAX_EDITED {
            keep[i] = true;
            kept += 1;
        }
    }
    for (i, _) in inside.iter().enumerate() {
        if !keep[i] && kept < MAX_FILES {
            keep[i] = true;
            kept += 1;
        }
    }
    let mut seen = std::collections::HashSet::new();
    inside
        .into_iter()
        .zip(keep)
        .filter(|((rel, _), keep)| *keep && seen.insert(rel.clone()))
        .map(|((rel, t), _)| FilePointer {
            path: rel,
            why: match (t.read, t.edited) {
                (true, true) => "read and edited in the last session",
                (false, true) => "edited in the last session",
                _ => "read in the last session",
            }
            .to_string(),
        })
        .collect()
}

/// `path` relative to the worktree `root` (`/`-separated), a relative
/// path taken from the session's directory `cwd`; `None` outside it.
fn relative(path: &str, cwd: &Path, root: &Path) -> Option<String> {
    let full = cwd.join(path);
    let rel = full
        .strip_prefix(root)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            let real = std::fs::canonicalize(&full).ok()?;
            real.strip_prefix(root).ok().map(Path::to_path_buf)
        })?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            std::path::Component::CurDir => Some(String::new()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The newest `MAX_METHOD` items, oldest first.
fn oldest_first(newest_first: &[String]) -> Vec<String> {
    let mut v: Vec<String> = newest_first
        .iter()
        .take(MAX_METHOD)
        .map(|s| one_line(s, MAX_LINE))
        .collect();
    v.reverse();
    v
}

/// Words that mark a line of output as telling: where the error is said.
const TELLING: &[&str] = &[
    "panicked",
    "assert",
    "error",
    "Error",
    "ERROR",
    "FAIL",
    "failed",
    "Exception",
    "Traceback",
    "expected",
    "left:",
    "right:",
];

/// Telling words in lines that tell nothing: where to look for more.
const NOISE: &[&str] = &["RUST_BACKTRACE", "/rustc/", "test result: ok"];

/// The lines of a failing command's output to keep, verbatim: the first
/// telling ones (at most six) and the last line, else the last seven; each
/// without terminal colours and cut to [`MAX_LINE`] characters.
fn telling_lines(output: &str) -> Vec<String> {
    let lines: Vec<String> = output
        .lines()
        .map(|l| strip_ansi(l.trim_end()))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut keep: Vec<bool> = lines
        .iter()
        .map(|l| TELLING.iter().any(|w| l.contains(w)) && !is_noise(l))
        .collect();
    if keep.iter().any(|k| *k) {
        let mut shown = 0;
        for k in keep.iter_mut() {
            if *k {
                shown += 1;
                *k = shown < MAX_ERROR_LINES;
            }
        }
        if let Some(last) = keep.last_mut() {
            *last = true;
        }
    } else {
        let from = lines.len().saturating_sub(MAX_ERROR_LINES);
        keep.iter_mut().skip(from).for_each(|k| *k = true);
    }
    let mut seen = std::collections::HashSet::new();
    lines
        .iter()
        .zip(keep)
        .filter(|(l, k)| *k && seen.insert(l.as_str()))
        .map(|(l, _)| cut(l, MAX_LINE))
        .collect()
}

/// Whether a line with a telling word tells nothing: a [`NOISE`] line, or
/// a frame of a backtrace (`  12: core::panicking::assert_failed`).
fn is_noise(line: &str) -> bool {
    let frame = line
        .trim_start()
        .split_once(": ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    frame || NOISE.iter().any(|w| line.contains(w))
}

/// A line without its terminal escape sequences (`ESC [ … letter`).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A text's first line, whitespace collapsed, cut to `max` characters
/// (`…` marks a cut, and a first line of several).
fn one_line(text: &str, max: usize) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or("");
    let line = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if lines.next().is_some() {
        cut(&format!("{line} …"), max)
    } else {
        cut(&line, max)
    }
}

/// `text` cut to `max` characters, redacted whole first
/// ([`crate::brief::redact::cut_redacted`]).
fn cut(text: &str, max: usize) -> String {
    crate::brief::redact::cut_redacted(text, max)
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Draft {
    /// Whether the session left nothing open in its transcript: no failing
    /// last test, no command that failed and was not rerun successfully,
    /// no decision and no rejected approach stated. With a clean worktree
    /// at its end (which git says, not the transcript) it was a trivial
    /// session — the skill's typo fixed and committed — which needs no
    /// hand-over.
    pub fn left_nothing_open(&self) -> bool {
        self.failure.is_none()
            && self.tests.first().is_none_or(|t| t.result != "fail")
            && self.decisions.is_empty()
            && self.rejected.is_empty()
    }

    /// The partial brief: mode `AUTO`, the resume fields, the transcript as
    /// the history pointer, the state lists and the files to read first;
    /// empty lists are left out. `write` fills in the rest.
    pub fn partial(&self) -> Value {
        let mut state = Map::new();
        state.insert("next_acceptance_check".into(), json!(self.next_check));
        let mut list = |name: &str, items: Value| {
            if items.as_array().is_some_and(|a| !a.is_empty()) {
                state.insert(name.into(), items);
            }
        };
        list("tests", json!(self.tests));
        list("commands", json!(self.commands));
        list("decisions", json!(self.decisions));
        list("rejected_paths", json!(self.rejected));
        let mut risks: Vec<String> = self.failure.iter().map(Failure::risk).collect();
        risks.extend(self.unfinished.iter().cloned());
        risks.extend(self.last_words.iter().cloned());
        list("open_risks", json!(risks));
        let mut brief = json!({
            "mode": MODE,
            "resume": {
                "done_when": self.done_when,
                "resume_by": self.resume_by,
                "history_pointer": self.transcript.display().to_string(),
            },
            "state": state,
        });
        if !self.files.is_empty() {
            brief["files_read_first"] = json!(self.files);
        }
        brief
    }
}

/// Ground a stored brief (`base`, as JSON) in what the session did, as
/// `recover --from-transcript` does: the draft's test results replace the
/// stored ones of the same command; its commands, decisions, rejected
/// paths, open risks and files to read first follow the stored ones (each
/// once); its goal (done when, next step, next check) and the transcript
/// pointer fill only what the stored brief lacks. The mode is not taken.
pub fn ground(base: &mut Value, draft: &Draft) {
    let partial = draft.partial();
    let Some(base) = base.as_object_mut() else {
        return;
    };
    for (section, field) in [
        ("resume", "done_when"),
        ("resume", "resume_by"),
        ("resume", "history_pointer"),
        ("state", "next_acceptance_check"),
    ] {
        let slot = base.entry(section).or_insert_with(|| json!({}));
        if let (Some(slot), Some(given)) = (slot.as_object_mut(), partial[section].get(field))
            && !slot.contains_key(field)
        {
            slot.insert(field.into(), given.clone());
        }
    }
    if let Some(state) = base.get_mut("state").and_then(Value::as_object_mut) {
        let tests = list(&partial["state"]["tests"]);
        let cmds: Vec<&Value> = tests.iter().map(|t| &t["cmd"]).collect();
        let kept: Vec<Value> = list(state.get("tests").unwrap_or(&Value::Null))
            .into_iter()
            .filter(|t| !cmds.contains(&&t["cmd"]))
            .collect();
        if !tests.is_empty() {
            state.insert("tests".into(), Value::Array([tests.clone(), kept].concat()));
        }
        for field in ["commands", "decisions", "rejected_paths", "open_risks"] {
            append(state, field, list(&partial["state"][field]), |a, b| a == b);
        }
    }
    let files = list(&partial["files_read_first"]);
    append(base, "files_read_first", files, |a, b| {
        a["path"] == b["path"]
    });
}

/// The safety net's draft over a brief someone wrote (`base`, as JSON,
/// stored as version `over`): the stored brief grounded in the session
/// ([`ground`]: its goal, decisions, rejected paths, risks, files and
/// every other field kept), what the transcript added marked `drafted: `,
/// a first open risk that says what happened, mode AUTO and the write's
/// own time.
pub fn over(base: &mut Value, draft: &Draft, over: &str) {
    let before = base.clone();
    ground(base, draft);
    let Some(map) = base.as_object_mut() else {
        return;
    };
    map.remove("timestamp");
    map.insert("mode".into(), json!(MODE));
    let key = map
        .get("key")
        .and_then(Value::as_str)
        .unwrap_or("KEY")
        .to_string();
    let Some(state) = map.get_mut("state").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["commands", "decisions", "rejected_paths", "open_risks"] {
        let had = list(&before["state"][field]);
        if let Some(items) = state.get_mut(field).and_then(Value::as_array_mut) {
            for item in items.iter_mut().filter(|i| !had.contains(i)) {
                if let Some(text) = item.as_str() {
                    *item = json!(format!("drafted: {text}"));
                }
            }
        }
    }
    let qk = crate::support::escape::shell_quote(&key);
    let note = format!(
        "AUTO draft over {over}: the session's transcript added what is marked 'drafted:'; `git handoff diff {qk}` shows the change"
    );
    let risks = state.entry("open_risks").or_insert_with(|| json!([]));
    if let Some(risks) = risks.as_array_mut() {
        risks.insert(0, json!(note));
    }
}

fn list(value: &Value) -> Vec<Value> {
    value.as_array().cloned().unwrap_or_default()
}

/// Append the items `same` finds no match for to the list `field` of `map`
/// (created when absent; left alone when it is no list).
fn append(
    map: &mut Map<String, Value>,
    field: &str,
    items: Vec<Value>,
    same: impl Fn(&Value, &Value) -> bool,
) {
    if items.is_empty() {
        return;
    }
    let slot = map.entry(field).or_insert_with(|| json!([]));
    if let Some(have) = slot.as_array_mut() {
        for item in items {
            if !have.iter().any(|h| same(h, &item)) {
                have.push(item);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::usage::ReadBack;

    fn run(command: &str, exit: Option<i64>, output: &str) -> Run {
        Run {
            command: command.into(),
            exit,
            output: output.into(),
        }
    }

    fn session(requests: &[&str], runs: Vec<Run>) -> Session {
        Session {
            harness: Harness::ClaudeCode,
            last_turn: None,
            read: ReadBack {
                bytes: 10,
                whole: true,
            },
            cwd: None,
            requests: requests.iter().map(|s| s.to_string()).collect(),
            touches: Vec::new(),
            runs,
            unfinished: None,
            last_words: None,
            decisions: vec!["b".into(), "a".into()],
            rejected: Vec::new(),
        }
    }

    #[test]
    fn the_failing_test_is_the_check_and_the_last_error_a_risk() {
        let s = session(
            &["yes", "fix the auth expiry bug please"],
            vec![
                run(
                    "cargo test auth 2>&1 | tail",
                    Some(0),
                    "test result: FAILED. 0 passed; 1 failed",
                ),
                run("cargo build", Some(0), ""),
                run("ls src", Some(0), ""),
                run(
                    "cargo test auth 2>&1 | tail",
                    Some(0),
                    "test result: ok. 1 passed",
                ),
                run("make lint", Some(2), "a\n\nb\n"),
            ],
        );
        let d = compose(&s, Path::new("t.jsonl"), Path::new("/nowhere"));
        assert_eq!(d.task.as_deref(), Some("fix the auth expiry bug please"));
        assert_eq!(d.tests.len(), 1);
        assert_eq!(
            (d.tests[0].cmd.as_str(), d.tests[0].result.as_str()),
            ("cargo test auth", "fail")
        );
        assert_eq!(d.next_check, "cargo test auth");
        assert_eq!(d.commands, ["cargo build  # exit 0", "make lint  # exit 2"]);
        let f = d.failure.as_ref().unwrap();
        assert_eq!(
            f.risk(),
            "Last error, `cargo test auth` reported failing tests:\ntest result: FAILED. 0 passed; 1 failed"
        );
        assert!(
            d.done_when
                .starts_with("`cargo test auth` passes, and the last request is met: fix the auth")
        );
        assert!(
            d.resume_by
                .contains("fix what makes `cargo test auth` fail")
        );
        let s = session(&["x"], vec![run("make lint", Some(2), "a\n\nb\n")]);
        let lint = compose(&s, Path::new("t"), Path::new("/x"))
            .failure
            .unwrap();
        assert_eq!(
            (lint.command.as_str(), lint.exit, lint.output.clone()),
            ("make lint", Some(2), vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(lint.risk(), "Last error, `make lint` exited 2:\na\nb");
        assert_eq!(d.decisions, ["a", "b"]);
        let p = d.partial();
        assert_eq!(p["mode"], "AUTO");
        assert_eq!(p["state"]["open_risks"][0], f.risk());
        assert!(p.get("files_read_first").is_none());
    }

    #[test]
    fn without_tests_or_failures_the_request_is_the_goal() {
        let d = compose(
            &session(&["rename the config key"], Vec::new()),
            Path::new("t"),
            Path::new("/x"),
        );
        assert_eq!(
            d.done_when,
            "The last request is met: rename the config key"
        );
        assert_eq!(d.next_check, "git diff --stat HEAD");
        assert!(
            d.resume_by
                .ends_with("continue the last request: rename the config key")
        );
    }

    #[test]
    fn paths_are_made_relative_to_the_worktree() {
        let root = Path::new("/w");
        assert_eq!(
            relative("/w/src/a.rs", root, root).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            relative("src/a.rs", Path::new("/w/sub"), root).as_deref(),
            Some("sub/src/a.rs")
        );
        assert_eq!(relative("/elsewhere/a.rs", root, root), None);
        assert_eq!(relative("../a.rs", root, root), None);
    }

    #[test]
    fn grounding_keeps_the_stored_goal_and_adds_what_the_session_did() {
        let s = session(
            &["fix the auth expiry bug please"],
            vec![run("cargo test auth", Some(1), "boom")],
        );
        let d = compose(&s, Path::new("t.jsonl"), Path::new("/x"));
        let mut base = json!({
            "resume": {"done_when": "stored goal", "resume_by": "stored step"},
            "state": {"next_acceptance_check": "stored check", "decisions": ["a"],
                      "tests": [{"cmd": "cargo test auth", "result": "pass"}, {"cmd": "other", "result": "pass"}]}
        });
        ground(&mut base, &d);
        assert_eq!(base["resume"]["done_when"], "stored goal");
        assert_eq!(base["resume"]["history_pointer"], "t.jsonl");
        assert_eq!(base["state"]["next_acceptance_check"], "stored check");
        assert_eq!(
            base["state"]["tests"],
            json!([{"cmd": "cargo test auth", "result": "fail"}, {"cmd": "other", "result": "pass"}])
        );
        assert_eq!(base["state"]["decisions"], json!(["a", "b"]));
        assert_eq!(
            base["state"]["open_risks"][0],
            "Last error, `cargo test auth` exited 1:\nboom"
        );
        let mut empty = json!({});
        ground(&mut empty, &d);
        assert_eq!(empty["resume"]["done_when"], d.done_when);
    }

    #[test]
    fn the_telling_lines_of_an_error_are_kept() {
        let out = "running 1 test\ntest compound ... FAILED\n\nthread 'compound' panicked at tests/d.rs:12:5:\nassertion `left == right` failed\n  left: None\n right: Some(125)\nstack backtrace:\n   2: core::panicking::assert_failed_inner\n             at /rustc/abc/library/std/src/panicking.rs:689:5\nnote: run with `RUST_BACKTRACE=full`\ntest result: FAILED. 0 passed; 1 failed\n\u{1b}[1m\u{1b}[31merror\u{1b}[0m: test failed, to rerun pass `--test d`\n";
        assert_eq!(
            telling_lines(out),
            [
                "test compound ... FAILED",
                "thread 'compound' panicked at tests/d.rs:12:5:",
                "assertion `left == right` failed",
                "  left: None",
                " right: Some(125)",
                "test result: FAILED. 0 passed; 1 failed",
                "error: test failed, to rerun pass `--test d`",
            ]
        );
        assert_eq!(telling_lines("a\nb\nc\nd\ne\nf\ng\nh\n").len(), 7);
    }

    #[test]
    fn one_line_cuts_and_marks() {
        assert_eq!(one_line("a\nb", 10), "a …");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
