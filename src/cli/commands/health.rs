//! `git handoff hook user-prompt-submit`: the per-turn session-health
//! signal. Before each prompt it reads what the transcript gained since the
//! last prompt ([`crate::agent::health`]) and, when a signal fires that was
//! not raised in this session yet, answers with one line suggesting
//! `git handoff reground` (`recover` at the strong level) as the
//! UserPromptSubmit hook's `additionalContext`. Otherwise, and on any
//! failure — garbage input, no transcript, outside a repository, a held
//! lock, a panic, the [`DEADLINE`] passed — it prints nothing and exits 0.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::agent::health::{self, Signal, State};
use crate::agent::usage::{self, WindowSource};
use crate::cli::{Output, report};
use crate::git::{repo, sticky};
use crate::support::{failpoint, owned_lock::Owned};

/// The most the hook runs: past it, it answers nothing and exits 0.
pub const DEADLINE: Duration = Duration::from_millis(1000);

/// The environment variable that turns the signal off (`0`, `false`,
/// `off`, `no`), as `git config handoff.health false` does.
pub const ENV: &str = "GIT_HANDOFF_HEALTH";

/// The folder, in the repository's common git dir, of the sessions' states.
const STATE_DIR: &str = "handoff-health";

/// A state not touched for this long belongs to a session long gone.
const STATE_AGE: Duration = Duration::from_secs(14 * 24 * 3600);

/// The most read from stdin.
const MAX_INPUT: u64 = 1024 * 1024;

/// Answer the hook within [`DEADLINE`]; never fails.
pub fn run() -> anyhow::Result<Output> {
    // A panic anywhere below is one more silent failure.
    std::panic::set_hook(Box::new(|_| {}));
    let (send, receive) = mpsc::channel();
    // Reading stdin is inside the deadline too: a harness that never
    // closes it gets no answer, not a hook that hangs.
    let worker = std::thread::Builder::new().spawn(move || {
        let mut input = Vec::new();
        let _ = std::io::stdin()
            .lock()
            .take(MAX_INPUT)
            .read_to_end(&mut input);
        let _ = send.send(answer(&input));
    });
    if worker.is_err() {
        return Ok(Output::empty());
    }
    // A worker still running at the deadline is left to the process's
    // exit; the state it may be writing is renamed into place whole.
    let answer = receive.recv_timeout(DEADLINE).ok().flatten();
    Ok(answer.map_or_else(Output::empty, |a| report::line(&a)))
}

fn off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "false" | "off" | "no"
    )
}

/// The hook input's session, transcript and directory.
struct Input {
    session: String,
    transcript: PathBuf,
    cwd: PathBuf,
    prompt: Option<String>,
}

fn parse(input: &[u8]) -> Option<Input> {
    let v: Value = serde_json::from_slice(input).ok()?;
    let field = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let cwd = PathBuf::from(field("cwd")?);
    Some(Input {
        session: sticky::valid_session(field("session_id")?)?.to_string(),
        transcript: PathBuf::from(field("transcript_path")?),
        cwd: cwd.is_dir().then_some(cwd)?,
        prompt: field("prompt").map(str::to_string),
    })
}

fn answer(input: &[u8]) -> Option<report::HookContext> {
    if std::env::var(ENV).is_ok_and(|v| off(&v)) {
        return None;
    }
    failpoint::reach("health-stall");
    failpoint::crash("health-crash");
    let input = parse(input)?;
    let repo = repo::open_at_for_reading(&input.cwd).ok()?;
    let config = repo.config_snapshot();
    if config.boolean("handoff.health") == Some(false) {
        return None;
    }
    // The configured window, else the one the harness stated for this
    // session at its start (a 1M model: the transcript does not say so).
    let window = config
        .string("handoff.contextWindow")
        .and_then(|v| usage::parse_tokens(&v.to_string()).ok())
        .map(|n| (n, WindowSource::Config))
        .or_else(|| {
            crate::agent::window::recorded(repo.git_dir(), &[input.session.as_str()])
                .map(|n| (n, WindowSource::Harness))
        });
    let dir = repo.common_dir().join(STATE_DIR);
    std::fs::create_dir_all(&dir).ok()?;
    let _lock =
        Owned::acquire(&dir.join(format!("{}.lock", input.session)), Duration::ZERO).ok()?;
    let file = dir.join(format!("{}.json", input.session));
    let mut state = load(&file, &dir);
    let (bytes, start, whole) = health::unread(&input.transcript, state.offset).ok()?;
    let mut fired = health::read(&mut state, &bytes, start, whole, input.prompt.as_deref());
    let effective = health::effective_window(&state, window);
    fired.extend(health::pressure(&state, effective));
    let signal = health::choose(&mut state, &fired);
    save(&file, &dir, &mut state, &repo)?;
    let words = words(signal?, &state, effective);
    Some(report::HookContext {
        hook_specific_output: report::HookSpecific {
            hook_event_name: "UserPromptSubmit",
            additional_context: words,
        },
    })
}

/// The session's state; a new session's (then the files of sessions long
/// gone are removed).
fn load(file: &Path, dir: &Path) -> State {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        Err(_) => {
            prune(dir);
            State::default()
        }
    }
}

fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > STATE_AGE);
        // The folder is the hook's own: a state, a lock or a staged file
        // (a run stopped at its deadline) this old is left over.
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Write the state, replacing the file whole. The one text it holds from
/// the session, the model's id, passes the redaction filter; the rest are
/// digests and counts of its own making.
fn save(file: &Path, dir: &Path, state: &mut State, repo: &gix::Repository) -> Option<()> {
    use std::io::Write;
    if let Some(model) = &state.model {
        let options = crate::brief::redact::Options::from_repo(repo);
        state.model = Some(crate::brief::redact::redact(model, options).0);
    }
    let text = serde_json::to_string(state).ok()?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".state-")
        .tempfile_in(dir)
        .ok()?;
    tmp.write_all(text.as_bytes()).ok()?;
    tmp.persist(file).ok()?;
    Some(())
}

/// The one line the model reads.
fn words(signal: Signal, state: &State, effective: u64) -> String {
    let at = || {
        format!(
            "context at {}% of the usable window ({} of {} tokens before the harness compacts)",
            u128::from(state.tokens) * 100 / u128::from(effective.max(1)),
            usage::grouped(state.tokens),
            usage::grouped(effective)
        )
    };
    let reground = "run `git handoff reground` to re-read the goal, the locked decisions and the files to keep in view before going on";
    let said = match signal {
        Signal::PressureStrong => format!(
            "{}: recall is degrading — run `git handoff recover` to rebuild the brief from the stored one and git's state now, then continue from it in a fresh context (/clear)",
            at()
        ),
        Signal::Pressure => format!("{}; {reground}", at()),
        Signal::StaleRead => format!(
            "a file was edited after it changed since it was last read; read it again, and {reground}"
        ),
        Signal::RecoverySpiral => format!(
            "{} files already read were read again in a row, unchanged: recall is slipping; {reground}",
            health::SPIRAL
        ),
        Signal::RepeatedCall => format!(
            "the same tool call ran {} times in the last {} with nothing edited between: a loop; {reground}",
            health::REPEATS,
            health::RECENT
        ),
        Signal::InstructionFade => format!(
            "the person repeated a message sent before: their instruction may have faded from context; {reground}"
        ),
    };
    format!("git-handoff session health: {said}.")
}
