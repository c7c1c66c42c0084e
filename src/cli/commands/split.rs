//! `git handoff split --plan FILE|- [--yes]`: fork a braided session into N
//! self-contained briefs, written in one ref transaction with one combined
//! narrative entry.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::{Map, Value};

use crate::brief::{Brief, Issue};
use crate::cli::commands::checks::{CheckArgs, Checks};
use crate::cli::commands::read_input;
use crate::cli::render::{self, SplitProposal, SplitThread};
use crate::cli::{Format, Output, report};
use crate::git::compose::{self, GitFacts, Lists, Mode};
use crate::{brief, brief::keys, git::repo, narrative, store, support::clock};

/// More threads than this draw a warning.
pub const MAX_RECOMMENDED_THREADS: usize = 4;

/// Fork the work into N self-contained briefs from a plan
///
/// The plan is JSON: {"why": TEXT, "shared": {partial brief}, "threads":
/// [{"key": SLUG, partial brief…}, …]}. The shared part is copied into every
/// thread (lists appended, the thread's own scalars win), the git state is
/// filled in as for `write`, and every thread is validated. Without --yes,
/// prints the proposal and writes nothing. With --yes, writes all N briefs
/// in one ref transaction (all or none, compare-and-swap on each) with their
/// history notes, and prepends one combined narrative entry. Any invalid
/// thread writes nothing and every error of every thread is listed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan (JSON) from FILE, or - for stdin
    #[arg(long, value_name = "FILE|-")]
    pub plan: String,
    /// Write the briefs (without it, only the proposal is printed)
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// A parsed plan, before its threads are composed.
struct Plan {
    why: String,
    shared: Value,
    threads: Vec<Value>,
}

/// One composed thread.
struct Thread {
    brief: Brief,
    /// The thread's own files_read_first paths (not the shared ones).
    owns: Vec<String>,
    expected: Option<gix::ObjectId>,
}

/// Compose every thread; propose, or write them all.
pub fn run(args: Args) -> Result<Output> {
    let mut plan = parse_plan(&read_input(&args.plan)?)?;
    let repo = repo::open_cwd()?;
    let checks = Checks::new(&repo, &args.checks);
    plan.why = checks.redact_text(&plan.why);
    checks.redact_value(&mut plan.shared);
    for thread in plan.threads.iter_mut() {
        checks.redact_value(thread);
    }
    let git = GitFacts::read(&repo)?;
    if plan.threads.len() > MAX_RECOMMENDED_THREADS {
        eprintln!(
            "warning: {} threads; fewer, coarser threads (at most {MAX_RECOMMENDED_THREADS}) are easier to resume and to merge back — consider folding some together, or RECOVER instead: `git handoff recover` rebuilds one brief from the stored one and git",
            plan.threads.len()
        );
    }
    let mut threads = compose_threads(&repo, &plan, &git)?;
    for thread in &mut threads {
        thread.brief = checks.redact_brief(thread.brief.clone());
        checks.lint(&repo, &thread.brief)?;
    }
    let proposal = proposal(&plan, &threads);
    if !args.yes {
        return Ok(match args.format {
            Format::Json => report::pretty(&report::SplitProposed {
                written: false,
                proposal: &proposal,
                briefs: threads.iter().map(|t| &t.brief).collect(),
            }),
            Format::Human => Output::human(render::split_proposal(&proposal)),
        });
    }

    let keys: Vec<&str> = threads.iter().map(|t| t.brief.key.as_str()).collect();
    // Lock the narrative first so that stored briefs always get their entry
    // (none when `handoff.narrative` is false).
    let pending = if narrative::disabled(&repo) {
        None
    } else {
        let entry = entry(&plan, &threads, &git);
        let narrative_path = narrative::path(&repo, &git.worktree.root)?;
        Some(narrative::Pending::prepare(
            &narrative_path,
            &checks.redact_text(&entry.render()),
            narrative::lock_wait(&repo),
        )?)
    };
    let updates: Vec<store::Update> = threads
        .iter()
        .map(|t| store::Update {
            expected: t.expected,
            brief: t.brief.clone(),
        })
        .collect();
    let written = store::write(
        &repo,
        &updates,
        &format!("handoff: split {}", keys.join(", ")),
    )?;
    let narrative_file = pending.map(narrative::Pending::commit).transpose()?;
    checks.report();
    if !written.history {
        eprintln!(
            "note: no commit on '{}' yet; the briefs are stored but their history notes are skipped until the first commit",
            git.head.branch_label()
        );
    }
    Ok(written_output(
        &threads,
        &written,
        narrative_file,
        &git.worktree.root,
        args.format,
    ))
}

/// What a written split reports: the briefs, their ids and prompts, and
/// the narrative entry, as text or JSON.
fn written_output(
    threads: &[Thread],
    written: &store::Written,
    narrative_file: Option<std::path::PathBuf>,
    root: &std::path::Path,
    format: Format,
) -> Output {
    let rel_narrative = narrative_file.map(|file| {
        file.strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string()
    });
    if format.is_json() {
        let threads = threads
            .iter()
            .zip(&written.ids)
            .map(|(t, (key, id))| report::SplitThread {
                key: key.clone(),
                ref_name: store::ref_name(key),
                id: id.to_string(),
                previous: t.expected.map(|e| e.to_string()),
                prompt: t.brief.resume_prompt(),
            })
            .collect();
        return report::pretty(&report::SplitWritten {
            written: true,
            history: written.history,
            narrative: rel_narrative,
            threads,
        });
    }
    let narrated = rel_narrative
        .map(|rel| format!("narrative entry added to {rel}"))
        .unwrap_or_else(|| "no narrative entry (handoff.narrative is false)".to_string());
    let mut out = format!(
        "Split into {} briefs in one transaction; {narrated}.\n\n",
        threads.len()
    );
    for t in threads {
        out.push_str(&format!(
            "git handoff resume {}    # {}\n",
            t.brief.key,
            render::one_line(&t.brief.resume.resume_by, 80)
        ));
    }
    Output::human(out)
}

/// What `split` proposes before `--yes`: the reason, what is shared and
/// each thread's key, summary, own files, next check and risks.
fn proposal(plan: &Plan, threads: &[Thread]) -> SplitProposal {
    SplitProposal {
        why: plan.why.clone(),
        shared_decisions: strings(&plan.shared, &["state", "decisions"]).len(),
        shared_files: files(&plan.shared).len(),
        threads: threads
            .iter()
            .map(|t| SplitThread {
                key: t.brief.key.clone(),
                exists: t.expected.is_some(),
                summary: t.brief.resume.resume_by.clone(),
                owns: t.owns.clone(),
                next_check: t.brief.state.next_acceptance_check.clone(),
                risks: t.brief.state.open_risks.clone(),
            })
            .collect(),
    }
}

/// Parse the plan's outer shape; thread contents are checked when composed.
fn parse_plan(data: &[u8]) -> Result<Plan> {
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

/// Compose every thread's brief; on any problem, list every error of every
/// thread on stderr and fail.
fn compose_threads(repo: &gix::Repository, plan: &Plan, git: &GitFacts) -> Result<Vec<Thread>> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut composed = Vec::new();
    let mut invalid: Vec<(String, Vec<Issue>)> = Vec::new();
    for (n, thread) in plan.threads.iter().enumerate() {
        let mut issues = Vec::new();
        let issue = |path: &str, message: String| Issue {
            path: path.into(),
            message,
        };
        let raw_key = thread
            .get("key")
            .and_then(Value::as_str)
            .map(str::to_string);
        let label = thread_label(repo, n, raw_key.as_deref());
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
        let key = thread_key(repo, n, raw_key.as_deref(), &mut seen, &mut issues);
        let mut value = plan.shared.clone();
        compose::merge(&mut value, thread.clone(), Lists::Append);
        // A bad key is reported above; compose under a stand-in to find the
        // thread's other errors too.
        let compose_key = key.clone().unwrap_or_else(|| format!("thread-{}", n + 1));
        match compose::compose(value, &compose_key, Mode::Write, git) {
            Ok(brief) => {
                if issues.is_empty() {
                    let expected = store::current_id(repo, &brief.key)?;
                    composed.push(Thread {
                        owns: files(thread),
                        brief,
                        expected,
                    });
                }
            }
            Err(more) => issues.extend(more),
        }
        if !issues.is_empty() {
            invalid.push((label, issues));
        }
    }
    if !invalid.is_empty() {
        eprint!("{}", render::split_invalid(&invalid));
        crate::refuse!(
            "{} of {} threads {} invalid; nothing was written (fix the plan and run again)",
            invalid.len(),
            plan.threads.len(),
            if invalid.len() == 1 { "is" } else { "are" }
        );
    }
    Ok(composed)
}

/// How an invalid thread is named on stderr: its number and its key,
/// redacted (a key holding a secret is refused, never echoed).
fn thread_label(repo: &gix::Repository, n: usize, raw_key: Option<&str>) -> String {
    match raw_key {
        Some(k) => format!(
            "thread {} '{}'",
            n + 1,
            crate::sync::gate::redacted_key(k, crate::brief::redact::Options::from_repo(repo))
                .escape_debug()
        ),
        None => format!("thread {} (no key)", n + 1),
    }
}

/// A thread's key when it is a valid, secret-free key that no earlier
/// thread has; otherwise the reason joins `issues`.
fn thread_key(
    repo: &gix::Repository,
    n: usize,
    raw_key: Option<&str>,
    seen: &mut BTreeMap<String, usize>,
    issues: &mut Vec<Issue>,
) -> Option<String> {
    let issue = |path: &str, message: String| Issue {
        path: path.into(),
        message,
    };
    let Some(k) = raw_key else {
        issues.push(issue(
            "key",
            "each thread needs its key, a slug like \"api-auth\"".into(),
        ));
        return None;
    };
    match keys::validate(k) {
        Ok(())
            if let Some(rule) = crate::brief::redact::key_rule(
                k,
                crate::brief::redact::Options::from_repo(repo),
            ) =>
        {
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
fn strings(value: &Value, path: &[&str]) -> Vec<String> {
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

/// The `files_read_first` entries (`path`, `why`) of a partial brief.
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

/// The one combined narrative entry of a split.
fn entry(plan: &Plan, threads: &[Thread], git: &GitFacts) -> narrative::Entry {
    let keys: Vec<&str> = threads.iter().map(|t| t.brief.key.as_str()).collect();
    let at = match git.head.sha() {
        Some(sha) => format!("at {} on `{}`", &sha[..7], git.head.branch_label()),
        None => format!("on `{}` (no commit yet)", git.head.branch_label()),
    };
    let mut done = format!(
        "- Split the work {at} into {} threads: {}",
        threads.len(),
        keys.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(diff) = &git.diff_summary {
        done.push_str(&format!("; uncommitted: {diff}"));
    }
    done.push_str("\n- Each thread is a self-contained brief; the shared part below is copied into every one\n");

    let bullets = |items: Vec<String>, prefix: &str| -> String {
        items
            .iter()
            .map(|i| format!("- {prefix}{}\n", narrative::inline(i)))
            .collect()
    };
    let decisions = narrative::decisions_section(
        &strings(&plan.shared, &["state", "decisions"]),
        &strings(&plan.shared, &["state", "rejected_paths"]),
    );
    let risks = bullets(strings(&plan.shared, &["state", "open_risks"]), "Risk: ");

    let mut pointers = String::new();
    for t in threads {
        pointers.push_str(&format!(
            "- `{key}`: {next} — next check: {check}; done when: {done} (`git handoff resume {key}`)\n",
            key = t.brief.key,
            next = render::one_line(&t.brief.resume.resume_by, 100),
            check = render::one_line(&t.brief.state.next_acceptance_check, 100),
            done = render::one_line(&t.brief.resume.done_when, 100),
        ));
    }
    // Each thread's own files, as `<key>: <path>:<lines>`.
    for t in threads {
        for path in &t.owns {
            pointers.push_str(&format!(
                "- {}: `{}`\n",
                t.brief.key,
                narrative::inline(path)
            ));
        }
    }
    pointers.push_str(&risks);
    if let Some(shared) = plan
        .shared
        .get("files_read_first")
        .and_then(Value::as_array)
    {
        for f in shared {
            if let (Some(path), Some(why)) = (
                f.get("path").and_then(Value::as_str),
                f.get("why").and_then(Value::as_str),
            ) {
                pointers.push_str(&format!(
                    "- Read first (every thread): `{}` — {}\n",
                    narrative::inline(path),
                    narrative::inline(why)
                ));
            }
        }
    }
    narrative::Entry {
        date: clock::date_of(&clock::format(git.now)).to_string(),
        label: format!("split: {}", keys.join(", ")),
        title: plan.why.clone(),
        sections: vec![
            (narrative::SECTIONS[0].into(), done),
            ("Shared decisions (cross-cutting)".into(), decisions),
            (narrative::SECTIONS[3].into(), pointers),
        ],
    }
}
