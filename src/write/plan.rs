//! Split plans: `{"why": TEXT, "shared": {partial brief}, "threads":
//! [{"key": SLUG, partial brief…}, …]}`, parsed, then composed thread by
//! thread (the shared part copied into each) with every error of every
//! thread collected.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::{Map, Value};

use crate::brief::{self, Issue, keys, redact};
use crate::git::compose::{self, GitFacts, Lists, Mode};
use crate::store;
use crate::write::checks::Checks;
use crate::write::{
    Composed, Notes, Options, Outcome, Refusal, Warning, after_store, narrate, narrates,
    refuse_strict, store_all,
};

/// More threads than this draw a warning.
pub const MAX_RECOMMENDED_THREADS: usize = 4;

/// A parsed plan, before its threads are composed.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Why the work is split.
    pub why: String,
    /// The partial brief copied into every thread.
    pub shared: Value,
    /// Each thread's partial brief, with its key.
    pub threads: Vec<Value>,
}

impl Plan {
    /// How many decisions the shared part holds.
    pub fn shared_decisions(&self) -> usize {
        strings(&self.shared, &["state", "decisions"]).len()
    }

    /// How many files to read first the shared part holds.
    pub fn shared_files(&self) -> usize {
        files(&self.shared).len()
    }
}

/// `split`: every thread composed and checked; stored with one combined
/// narrative entry when `write`.
pub(crate) fn write(
    repo: &gix::Repository,
    mut plan: Plan,
    write: bool,
    options: &Options,
    checks: &mut Checks,
) -> Result<Outcome> {
    plan.why = checks.redact_text(&plan.why);
    checks.redact_value(&mut plan.shared);
    for thread in plan.threads.iter_mut() {
        checks.redact_value(thread);
    }
    let git = narrate::git_facts(repo)?;
    if plan.threads.len() > MAX_RECOMMENDED_THREADS {
        checks
            .notes
            .warnings
            .push(Warning::ManyThreads(plan.threads.len()));
    }
    let mut threads = compose_threads(repo, &plan, &git)?;
    for thread in &mut threads {
        thread.brief = checks.redact_brief(thread.brief.clone());
        checks.lint(repo, &thread.brief);
    }
    refuse_strict(checks)?;
    if !write {
        return Ok(Outcome {
            briefs: threads,
            stored: None,
            plan: Some(plan),
            notes: Notes::default(),
        });
    }
    // Lock the narrative first so that stored briefs always get their entry.
    let pending = if narrates(repo, options) {
        let entry = narrate::split_entry(&plan, &threads, &git);
        let briefs: Vec<&crate::brief::Brief> = threads.iter().map(|t| &t.brief).collect();
        Some(narrate::stage(
            repo,
            &git.worktree.root,
            &entry,
            None,
            &briefs,
            checks,
        )?)
    } else {
        None
    };
    let keys: Vec<&str> = threads.iter().map(|t| t.brief.key.as_str()).collect();
    let reflog = format!("handoff: split {}", keys.join(", "));
    let stored = store_all(repo, &threads, &reflog, pending, Some(&git.worktree.root))?;
    after_store(checks, &stored, Some(&git.head), threads.len());
    Ok(Outcome {
        briefs: threads,
        stored: Some(stored),
        plan: Some(plan),
        notes: Notes::default(),
    })
}

/// Parse the plan's outer shape; thread contents are checked when composed.
pub fn parse(data: &[u8]) -> Result<Plan> {
    let value = brief::parse_json(data)
        .map_err(|e| crate::refusal!("the plan: {e}; nothing was written"))?;
    let Value::Object(mut map) = value else {
        crate::refuse!(
            "the plan must be a JSON object {{\"why\": …, \"shared\": {{…}}, \"threads\": [{{\"key\": …}}, …]}}; nothing was written"
        );
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "why" | "shared" | "threads"))
    {
        crate::refuse!(
            "unknown field '{unknown}' in the plan; a plan has only why, shared and threads. Nothing was written"
        );
    }
    let why = match map.remove("why") {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        _ => crate::refuse!(
            "the plan needs \"why\": a non-empty string saying why the work is split; nothing was written"
        ),
    };
    let shared = match map.remove("shared") {
        None => Value::Object(Map::new()),
        Some(Value::Object(s)) => {
            if s.contains_key("key") {
                crate::refuse!(
                    "\"shared\" cannot set a key; each thread has its own. Nothing was written"
                );
            }
            Value::Object(s)
        }
        Some(_) => {
            crate::refuse!(
                "\"shared\" in the plan must be an object of brief fields; nothing was written"
            )
        }
    };
    let threads = match map.remove("threads") {
        Some(Value::Array(t)) if !t.is_empty() => t,
        _ => crate::refuse!(
            "the plan needs \"threads\": a non-empty array of {{\"key\": SLUG, brief fields…}}; nothing was written"
        ),
    };
    Ok(Plan {
        why,
        shared,
        threads,
    })
}

/// Compose every thread's brief; on any problem, a [`Refusal::Threads`]
/// naming every error of every thread.
pub(crate) fn compose_threads(
    repo: &gix::Repository,
    plan: &Plan,
    git: &GitFacts,
) -> Result<Vec<Composed>> {
    let options = redact::Options::from_repo(repo);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut composed = Vec::new();
    let mut invalid: Vec<(String, Vec<Issue>)> = Vec::new();
    for (n, thread) in plan.threads.iter().enumerate() {
        let raw_key = thread.get("key").and_then(Value::as_str);
        let label = thread_label(options, n, raw_key);
        if !thread.is_object() {
            invalid.push((
                label,
                vec![issue(
                    "(root)",
                    "a thread must be an object {\"key\": SLUG, brief fields…}".into(),
                )],
            ));
            continue;
        }
        let mut issues = Vec::new();
        let key = thread_key(options, n, raw_key, &mut seen, &mut issues);
        let mut value = plan.shared.clone();
        compose::merge(&mut value, thread.clone(), Lists::Append);
        // A bad key is reported above; compose under a stand-in to find the
        // thread's other errors too.
        let compose_key = key.unwrap_or_else(|| format!("thread-{}", n + 1));
        match compose::compose(value, &compose_key, Mode::Write, git) {
            Ok(brief) if issues.is_empty() => composed.push(Composed {
                previous: store::current_id(repo, &brief.key)?,
                owns: files(thread),
                brief,
            }),
            Ok(_) => {}
            Err(more) => issues.extend(more),
        }
        if !issues.is_empty() {
            invalid.push((label, issues));
        }
    }
    if !invalid.is_empty() {
        return Err(Refusal::Threads {
            total: plan.threads.len(),
            invalid,
        }
        .into());
    }
    Ok(composed)
}

fn issue(path: &str, message: String) -> Issue {
    Issue {
        path: path.into(),
        message,
    }
}

/// How an invalid thread is named: its number and its key, redacted (a key
/// holding a secret is refused, never echoed).
fn thread_label(options: redact::Options, n: usize, raw_key: Option<&str>) -> String {
    match raw_key {
        Some(k) => format!(
            "thread {} '{}'",
            n + 1,
            crate::sync::gate::redacted_key(k, options).escape_debug()
        ),
        None => format!("thread {} (no key)", n + 1),
    }
}

/// A thread's key when it is a valid, secret-free key that no earlier
/// thread has; otherwise the reason joins `issues`.
fn thread_key(
    options: redact::Options,
    n: usize,
    raw_key: Option<&str>,
    seen: &mut BTreeMap<String, usize>,
    issues: &mut Vec<Issue>,
) -> Option<String> {
    let Some(k) = raw_key else {
        issues.push(issue(
            "key",
            "each thread needs its key, a slug like \"api-auth\"".into(),
        ));
        return None;
    };
    match keys::validate(k) {
        Ok(()) if let Some(rule) = redact::key_rule(k, options) => {
            issues.push(issue(
                "key",
                format!("the key holds a secret ({rule}); name the thread with a key without it"),
            ));
            None
        }
        Err(e) => {
            issues.push(issue("key", e.to_string()));
            None
        }
        Ok(()) => {
            if let Some(first) = seen.insert(k.to_string(), n + 1) {
                issues.push(issue(
                    "key",
                    format!("'{k}' is repeated in the plan (thread {first} has it too); each thread needs its own key"),
                ));
            }
            Some(k.to_string())
        }
    }
}

/// The strings of the array at `path` in a partial brief.
pub(crate) fn strings(value: &Value, path: &[&str]) -> Vec<String> {
    let mut current = Some(value);
    for field in path {
        current = current.and_then(|v| v.get(field));
    }
    current
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The `files_read_first` paths of a partial brief.
fn files(value: &Value) -> Vec<String> {
    value
        .get("files_read_first")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|f| f.get("path").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
