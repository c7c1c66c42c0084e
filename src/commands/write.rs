//! `git handoff write [KEY]`: store a brief with the git state filled in,
//! record its history and prepend its narrative entry.

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Map, Value, json};

use crate::brief::{self, Brief, BriefError};
use crate::commands::{checked_key, read_input};
use crate::{Output, clock, narrative, render, repo, store};

/// Write a brief for KEY from JSON and flags, with the git state filled in
///
/// Takes a partial brief from -F FILE or -F - (stdin) and/or the field
/// flags, fills schema_version, key, timestamp, mode and the git state
/// (branch, worktree, head_sha, diff_summary), validates it, stores it under
/// refs/handoffs/<KEY> (compare-and-swap), adds the version to the history in
/// refs/notes/handoffs and prepends an entry to the narrative log. Prints the
/// resume prompt. An invalid brief writes nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The key (default: GIT_HANDOFF_KEY, else the branch with / as -, else HANDOFF)
    pub key: Option<String>,
    /// Read a partial brief (JSON) from FILE, or - for stdin
    #[arg(short = 'F', long = "file", value_name = "FILE|-")]
    pub file: Option<String>,
    /// resume.done_when: one verifiable check that says the work is done
    #[arg(long, value_name = "TEXT")]
    pub done_when: Option<String>,
    /// resume.resume_by: the next step, one sentence
    #[arg(long, value_name = "TEXT")]
    pub resume_by: Option<String>,
    /// state.next_acceptance_check: the next check to run
    #[arg(long = "next-check", value_name = "TEXT")]
    pub next_check: Option<String>,
    /// resume.prompt: replaces the generated resume prompt
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Add to state.decisions (repeatable)
    #[arg(long = "decision", value_name = "TEXT")]
    pub decisions: Vec<String>,
    /// Add to state.rejected_paths (repeatable)
    #[arg(long = "rejected", value_name = "TEXT")]
    pub rejected: Vec<String>,
    /// Add to state.open_risks (repeatable)
    #[arg(long = "risk", value_name = "TEXT")]
    pub risks: Vec<String>,
    /// Add to state.commands (repeatable)
    #[arg(long = "command", value_name = "CMD")]
    pub commands: Vec<String>,
    /// Add to state.tests as CMD=pass or CMD=fail (repeatable)
    #[arg(long = "test", value_name = "CMD=pass|fail")]
    pub tests: Vec<String>,
    /// Add to files_read_first as PATH=WHY (repeatable)
    #[arg(long = "read", value_name = "PATH=WHY")]
    pub read: Vec<String>,
    /// Add to files_skip as PATH=WHY (repeatable)
    #[arg(long = "skip", value_name = "PATH=WHY")]
    pub skip: Vec<String>,
    /// Take the narrative entry's sections from a markdown FILE (### sections)
    #[arg(long, value_name = "FILE")]
    pub narrative: Option<String>,
    /// Print the result as JSON
    #[arg(long)]
    pub json: bool,
}

impl Args {
    fn has_field_flags(&self) -> bool {
        self.done_when.is_some()
            || self.resume_by.is_some()
            || self.next_check.is_some()
            || self.prompt.is_some()
            || !self.decisions.is_empty()
            || !self.rejected.is_empty()
            || !self.risks.is_empty()
            || !self.commands.is_empty()
            || !self.tests.is_empty()
            || !self.read.is_empty()
            || !self.skip.is_empty()
    }
}

/// Build, validate, store and narrate the brief.
pub fn run(args: Args) -> Result<Output> {
    if args.file.is_none() && !args.has_field_flags() {
        bail!(
            "nothing to write: give a brief with -F FILE (or -F - for stdin) or field flags such as --done-when, --resume-by, --next-check"
        );
    }
    let mut value = match &args.file {
        Some(source) => match brief::parse_json(&read_input(source)?) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(_) => bail!(
                "the brief must be a JSON object ({{\"resume\": …, \"state\": …}}); nothing was written"
            ),
            Err(e) => bail!("{e}; nothing was written"),
        },
        None => Value::Object(Map::new()),
    };
    let narrative_md = match &args.narrative {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read narrative file '{path}'"))?,
        ),
        None => None,
    };
    apply_flags(&mut value, &args)?;

    let repo = repo::open_cwd()?;
    let head = repo::head_state(&repo)?;
    let input_key = value.get("key").and_then(Value::as_str).map(str::to_string);
    let key = match (&args.key, input_key) {
        (Some(arg), Some(inner)) if *arg != inner => {
            bail!(
                "the KEY argument '{arg}' differs from the brief's key '{inner}'; drop one of them"
            )
        }
        (Some(arg), _) => checked_key(arg)?,
        (None, Some(inner)) => checked_key(&inner)?,
        (None, None) => repo::default_key(&head)?,
    };
    // Compare-and-swap base: the version that exists as the write begins.
    let expected = store::current_id(&repo, &key)?;

    let now = clock::now().map_err(anyhow::Error::msg)?;
    let worktree = repo::worktree_info(&repo)?;
    let diff = repo::diff_stat(&repo)?;
    fill_git_state(&mut value, &key, now, &head, &worktree, diff.summary());

    let issues = brief::validate(&value);
    if !issues.is_empty() {
        eprint!("{}", render::invalid(&issues));
        bail!(
            "brief '{key}' is invalid; nothing was written (`git handoff schema` prints the schema)"
        );
    }
    let brief: Brief =
        serde_json::from_value(value).map_err(|e| anyhow!(BriefError::Json(e.to_string())))?;

    let narrative_path = narrative::path(&repo, &worktree.root)?;
    let mut entry = narrative::entry_from_brief(&brief, None);
    if let Some(md) = &narrative_md {
        narrative::apply_markdown(&mut entry, md)?;
    }
    // Lock the narrative first so that a stored brief always gets its entry.
    let pending = narrative::Pending::prepare(
        &narrative_path,
        &entry.render(),
        narrative::lock_wait(&repo),
    )?;
    let written = store::write(
        &repo,
        &[store::Update {
            expected,
            brief: brief.clone(),
        }],
        &format!("handoff: write {key}"),
    )?;
    let narrative_file = pending.commit()?;
    let id = written.ids[0].1;
    if !written.history {
        eprintln!(
            "note: no commit on '{}' yet; the brief is stored but its history note is skipped until the first commit",
            head.branch_label()
        );
    }

    let rel_narrative = narrative_file
        .strip_prefix(&worktree.root)
        .unwrap_or(&narrative_file)
        .display()
        .to_string();
    let prompt = brief.resume_prompt();
    if args.json {
        return Ok(Output::ok(render::json(&json!({
            "key": key,
            "ref": store::ref_name(&key),
            "id": id.to_string(),
            "previous": expected.map(|e| e.to_string()),
            "history": written.history,
            "narrative": rel_narrative,
            "prompt": prompt,
        }))));
    }
    Ok(Output::ok(format!(
        "Wrote brief '{key}' ({}, version {}); narrative entry added to {rel_narrative}.\n\n{prompt}\n",
        store::ref_name(&key),
        store::short(&id),
    )))
}

fn object<'a>(value: &'a mut Value, field: &str) -> Result<&'a mut Map<String, Value>> {
    let map = value.as_object_mut().expect("the brief is an object");
    let entry = map
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    entry
        .as_object_mut()
        .ok_or_else(|| anyhow!("'{field}' in the brief must be an object; nothing was written"))
}

fn push_all(map: &mut Map<String, Value>, field: &str, items: Vec<Value>) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let slot = map.entry(field).or_insert_with(|| Value::Array(Vec::new()));
    let list = slot
        .as_array_mut()
        .ok_or_else(|| anyhow!("'{field}' in the brief must be an array; nothing was written"))?;
    list.extend(items);
    Ok(())
}

fn pointer(flag: &str, spec: &str) -> Result<Value> {
    match spec.split_once('=') {
        Some((path, why)) if !path.trim().is_empty() => {
            Ok(json!({"path": path.trim(), "why": why.trim()}))
        }
        _ => bail!(
            "--{flag} '{spec}' needs the form PATH=WHY, like --{flag} 'src/auth.rs=under repair'"
        ),
    }
}

/// Merge the field flags into the partial brief: scalars replace, lists append.
fn apply_flags(value: &mut Value, args: &Args) -> Result<()> {
    {
        let resume = object(value, "resume")?;
        for (field, flag) in [
            ("done_when", &args.done_when),
            ("resume_by", &args.resume_by),
            ("prompt", &args.prompt),
        ] {
            if let Some(text) = flag {
                resume.insert(field.into(), Value::String(text.clone()));
            }
        }
    }
    {
        let state = object(value, "state")?;
        if let Some(check) = &args.next_check {
            state.insert("next_acceptance_check".into(), Value::String(check.clone()));
        }
        let strings = |v: &Vec<String>| v.iter().cloned().map(Value::String).collect::<Vec<_>>();
        push_all(state, "decisions", strings(&args.decisions))?;
        push_all(state, "rejected_paths", strings(&args.rejected))?;
        push_all(state, "open_risks", strings(&args.risks))?;
        push_all(state, "commands", strings(&args.commands))?;
        let mut tests = Vec::new();
        for spec in &args.tests {
            match spec.rsplit_once('=') {
                Some((cmd, result @ ("pass" | "fail"))) if !cmd.trim().is_empty() => {
                    tests.push(json!({"cmd": cmd.trim(), "result": result}))
                }
                _ => bail!(
                    "--test '{spec}' needs the form CMD=pass or CMD=fail, like --test 'cargo test auth=pass'"
                ),
            }
        }
        push_all(state, "tests", tests)?;
    }
    let map = value.as_object_mut().expect("the brief is an object");
    let read = args
        .read
        .iter()
        .map(|s| pointer("read", s))
        .collect::<Result<Vec<_>>>()?;
    push_all(map, "files_read_first", read)?;
    let skip = args
        .skip
        .iter()
        .map(|s| pointer("skip", s))
        .collect::<Result<Vec<_>>>()?;
    push_all(map, "files_skip", skip)?;
    Ok(())
}

/// Fill what `write` owns: schema_version, key, timestamp and mode when
/// absent, and the git state always (as recorded now, never as given).
fn fill_git_state(
    value: &mut Value,
    key: &str,
    now: i64,
    head: &repo::HeadState,
    worktree: &repo::WorktreeInfo,
    diff_summary: Option<String>,
) {
    let map = value.as_object_mut().expect("the brief is an object");
    map.entry("schema_version")
        .or_insert_with(|| json!(brief::SCHEMA_VERSION));
    map.insert("key".into(), json!(key));
    map.entry("timestamp")
        .or_insert_with(|| json!(clock::format(now)));
    map.entry("mode").or_insert_with(|| json!("WRITE"));
    if let Some(Value::Object(state)) = map.get_mut("state") {
        state.insert("branch".into(), json!(head.branch_label()));
        state.insert(
            "worktree".into(),
            json!({
                "root": worktree.root.display().to_string(),
                "is_linked": worktree.is_linked,
                "git_common_dir": worktree.common_dir.display().to_string(),
            }),
        );
        match head.sha() {
            Some(sha) => state.insert("head_sha".into(), json!(sha)),
            None => state.remove("head_sha"),
        };
        match diff_summary {
            Some(d) => state.insert("diff_summary".into(), json!(d)),
            None => state.remove("diff_summary"),
        };
    }
}
