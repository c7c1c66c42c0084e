//! `write` and `recover`: one brief, from its input (and, for
//! corrections, the stored brief), with its key chosen as the sticky and
//! branch rules say.

use anyhow::Result;
use serde_json::{Map, Value};

use crate::brief::redact;
use crate::brief::{self, Issue};
use crate::git::compose::{self, Lists, Mode};
use crate::git::repo::HeadState;
use crate::git::sticky;
use crate::store;
use crate::write::checks::Checks;
use crate::write::{
    Composed, NotAnObject, Notes, Options, Outcome, Refusal, Single, Warning, after_store, narrate,
    narrates, patch, refuse_strict, store_all,
};

/// `write` and `recover`: one brief, from its input (and, for corrections,
/// the stored brief).
pub(crate) fn write(
    repo: &gix::Repository,
    mut single: Single,
    mode: Mode,
    options: &Options,
    checks: &mut Checks,
) -> Result<Outcome> {
    let git = narrate::git_facts(repo)?;
    let input = Value::Object(std::mem::take(&mut single.brief));
    let verb = match mode {
        Mode::Write => "write",
        Mode::Recover => "recover",
    };
    let choice = choose_key(repo, &git.head, &single, &input, verb)?;
    checks
        .notes
        .warnings
        .extend(choice.warning.clone().map(Warning::KeyChoice));
    let key = choice.key.clone();
    // Corrections start from the stored version, which is also their
    // compare-and-swap value.
    let stored = match (mode, single.update) {
        (Mode::Recover, _) | (Mode::Write, true) => store::read(repo, &key)?,
        (Mode::Write, false) => None,
    };
    let mut value = base(&key, stored.as_ref())?;
    if let Some(ground) = single.ground.take() {
        ground(repo, &mut value)?;
    }
    apply_input(&mut value, input, single.update);
    if let Some(flags) = &single.patch {
        patch::apply(&mut value, flags)?;
    }
    checks.redact_value(&mut value);
    let markdown = single.narrative.as_deref().map(|md| checks.redact_text(md));
    if let Some(edit) = single.edit.take() {
        value = edit(repo, &key, value, &git)?;
    }
    let previous = match (mode, single.expected) {
        (_, Some(checked)) => checked,
        (Mode::Recover, None) => stored.map(|s| s.id),
        (Mode::Write, None) if single.update => stored.map(|s| s.id),
        (Mode::Write, None) => store::current_id(repo, &key)?,
    };
    // The version replaced, read once for the two checks on it.
    let replaced = previous.and_then(|id| Some(repo.find_blob(id).ok()?.detach().data));
    refuse_over_newer(&key, replaced.as_deref())?;
    let brief = compose::compose(value, &key, mode, &git)
        .map_err(|issues| refused_composition(&key, previous.is_some(), mode, issues))?;
    let whole = mode == Mode::Write && !single.update;
    let over = previous.zip(replaced.as_deref()).filter(|_| whole);
    checks.notes.warnings.extend(left_behind(&brief, over));
    // What git recorded (the branch name, the diff summary) goes through
    // the same filter as what was given.
    let brief = checks.redact_brief(brief);
    checks.lint(repo, &brief);
    refuse_strict(checks)?;
    let composed = vec![Composed {
        brief,
        previous,
        owns: Vec::new(),
    }];
    let pending = if mode == Mode::Write && narrates(repo, options) {
        let update = replaced
            .as_deref()
            .filter(|_| single.update && markdown.is_none());
        let (root, new) = (&git.worktree.root, &composed[0].brief);
        Some(stage_entry(
            repo,
            root,
            new,
            (previous, update),
            markdown.as_deref(),
            checks,
        )?)
    } else {
        None
    };
    let reflog = format!("handoff: {verb} {key}");
    let stored = store_all(repo, &composed, &reflog, pending, Some(&git.worktree.root))?;
    if choice.remember
        && let Err(e) = sticky::remember(repo, &key, &git.head)
    {
        let why = format!("{e:#}");
        checks.notes.warnings.push(Warning::NotRemembered(why));
    }
    after_store(checks, &stored, Some(&git.head), 1);
    Ok(Outcome {
        briefs: composed,
        stored: Some(stored),
        plan: None,
        notes: Notes::default(),
    })
}

/// The input over the base: as a JSON Merge Patch for an update (a new
/// version written now: the stored one's time and mode go), else merged
/// with its lists replacing the base's.
fn apply_input(value: &mut Value, input: Value, update: bool) {
    if update {
        if let Some(map) = value.as_object_mut() {
            map.remove("timestamp");
            map.remove("mode");
        }
        compose::merge_patch(value, input);
    } else {
        compose::merge(value, input, Lists::Replace);
    }
}

/// Stage the narrative entry of a write of `new` over `previous`. An
/// update (`replaced`: the bytes of the version it replaces) amends the
/// session's own uncommitted entry, else adds a short correcting one: a
/// committed entry is never rewritten.
fn stage_entry(
    repo: &gix::Repository,
    root: &std::path::Path,
    new: &brief::Brief,
    (previous, replaced): (Option<gix::ObjectId>, Option<&[u8]>),
    markdown: Option<&str>,
    checks: &mut Checks,
) -> Result<crate::narrative::Pending> {
    let update = previous.filter(|_| replaced.is_some());
    let amend = update.and_then(|id| narrate::amendable(repo, root, &new.key, id));
    let entry = match (update, &amend) {
        (Some(_), None) => {
            let old = replaced.and_then(|b| brief::Brief::from_slice(b).ok());
            narrate::correction_entry(old.as_ref(), new)
        }
        _ => narrate::brief_entry(repo, new, previous, markdown)?,
    };
    narrate::stage(repo, root, &entry, amend.as_deref(), &[new], checks)
}

/// The list fields a whole-brief write can leave behind.
const CARRIED: [(&str, &str); 5] = [
    ("decisions", "/state/decisions"),
    ("rejected paths", "/state/rejected_paths"),
    ("preferences", "/state/preferences"),
    ("open risks", "/state/open_risks"),
    ("files to read first", "/files_read_first"),
];

/// A whole-brief write over a stored version: the list entries of that
/// version the new brief does not hold (a teammate's decisions, say),
/// which `--update` would have kept.
fn left_behind(brief: &brief::Brief, previous: Option<(gix::ObjectId, &[u8])>) -> Option<Warning> {
    let (id, data) = previous?;
    let old: Value = serde_json::from_slice(data).ok()?;
    let new = serde_json::to_value(brief).ok()?;
    let entries = |v: &Value, pointer: &str| -> Vec<String> {
        v.pointer(pointer)
            .and_then(Value::as_array)
            .map(|items| items.iter().map(Value::to_string).collect())
            .unwrap_or_default()
    };
    let dropped: Vec<(&'static str, usize)> = CARRIED
        .iter()
        .map(|(field, pointer)| {
            let kept = entries(&new, pointer);
            let lost = entries(&old, pointer)
                .iter()
                .filter(|e| !kept.contains(e))
                .count();
            (*field, lost)
        })
        .filter(|(_, lost)| *lost > 0)
        .collect();
    (!dropped.is_empty()).then(|| Warning::Replaced {
        key: brief.key.clone(),
        version: store::short(&id),
        dropped,
    })
}

/// The key a single write targets: the key asked for or the input's `key`
/// (which must agree), else the sticky / branch rules of
/// [`sticky::choose`] (`verb` names the command in its warning). A key
/// holding a secret is refused.
fn choose_key(
    repo: &gix::Repository,
    head: &HeadState,
    single: &Single,
    input: &Value,
    verb: &str,
) -> Result<sticky::Choice> {
    let inner = input.get("key").and_then(Value::as_str);
    let explicit = match (single.key.as_deref(), inner) {
        (Some(arg), Some(inner)) if arg != inner => {
            return Err(crate::refusal!(
                "the KEY argument '{arg}' differs from the brief's key '{inner}'; drop one of them"
            ));
        }
        (Some(arg), _) => Some(arg),
        (None, inner) => inner,
    };
    let choice = sticky::choose(repo, head, explicit, single.key_from_branch, verb)?;
    store::refuse_secret_key(&choice.key, redact::Options::from_repo(repo))?;
    Ok(choice)
}

/// What corrections start from: the stored brief's object, or an empty
/// one when none is stored.
fn base(key: &str, stored: Option<&store::Stored>) -> Result<Value> {
    Ok(match stored {
        Some(s) => match brief::parse_json(&s.data) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => {
                return Err(NotAnObject {
                    key: key.to_string(),
                    short: store::short(&s.id),
                }
                .into());
            }
        },
        None => Value::Object(Map::new()),
    })
}

/// The refusal for a brief that did not compose.
fn refused_composition(key: &str, stored: bool, mode: Mode, issues: Vec<Issue>) -> anyhow::Error {
    let key = key.to_string();
    match mode {
        Mode::Write => Refusal::Invalid {
            key,
            stored,
            issues,
        },
        Mode::Recover => Refusal::Unrecoverable {
            key,
            stored,
            missing: missing_fields(&issues),
            issues,
        },
    }
    .into()
}

/// The required fields the schema reports missing, as `resume.done_when`.
fn missing_fields(issues: &[Issue]) -> Vec<String> {
    issues
        .iter()
        .filter_map(|i| {
            let name = i.message.strip_suffix(" is a required property")?;
            let name = name.trim_matches('"');
            Some(if i.path == "(root)" {
                name.to_string()
            } else {
                format!("{}.{name}", i.path)
            })
        })
        .collect()
}

/// A brief a newer git-handoff wrote is never replaced by this one: it
/// holds what this version cannot read, and a write would drop it.
fn refuse_over_newer(key: &str, previous: Option<&[u8]>) -> Result<()> {
    let Some(data) = previous else {
        return Ok(());
    };
    if let Some(schema) = crate::brief::written_by_newer(data) {
        let qk = crate::support::escape::shell_quote(key);
        crate::refuse!(
            "brief '{key}' was written by a newer git-handoff (schema {schema}): upgrade to write over it, or `git handoff drop {qk}` first; nothing was written"
        );
    }
    Ok(())
}
