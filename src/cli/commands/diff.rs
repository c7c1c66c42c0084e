//! `git handoff diff KEY [OLD [NEW]]`: how two versions of a brief differ.

use anyhow::Result;

use crate::cli::commands::checked_key;
use crate::cli::{Format, Output, report};
use crate::store::history::{self, Selector};

/// Show how two versions of a brief differ (unified diff of their JSON)
///
/// Without OLD and NEW: the previous version against the current one; with
/// OLD only: OLD against the current one. A version is @{N} (0 is the
/// newest in `git handoff log KEY`), a version id or unique prefix,
/// @REMOTE (the remote's version as of the last fetch) or `current`.
/// KEY@{N} and KEY@REMOTE name OLD as `show` names a version:
/// `diff KEY@origin` compares origin's version with the current one
/// (`diff KEY @origin` is the same).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key; KEY@{N} or KEY@REMOTE names OLD too
    pub key: String,
    /// The older version (default: the one before NEW)
    pub old: Option<String>,
    /// The newer version (default: the current one)
    pub new: Option<String>,
    /// Print one line: which fields changed and how many lines
    #[arg(long)]
    pub summary: bool,
    /// Print the comparison as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Compare and render.
pub fn run(args: Args) -> Result<Output> {
    let repo = crate::cli::staged::open()?;
    let (key, named) = history::parse_key_spec(&repo, &args.key)?;
    let key = checked_key(&key)?;
    let parse = |spec: &String| {
        history::parse_selector(&repo, &key, spec).map_err(crate::cli::hints::version)
    };
    // KEY@… names OLD; the positionals then hold NEW at most.
    let (old_arg, new_arg) = match named {
        Selector::Current => (
            args.old.as_ref().map(parse).transpose()?,
            args.new.as_ref().map(parse).transpose()?,
        ),
        named if args.new.is_none() => (Some(named), args.old.as_ref().map(parse).transpose()?),
        _ => crate::refuse!(
            "'{}' names the older version already; give at most one more, the newer",
            args.key
        ),
    };
    let log = history::log(&repo, &key)?;
    if log.versions.is_empty() {
        return Err(crate::cli::commands::no_brief(&key));
    }
    let new_selector = match new_arg {
        Some(selector) => selector,
        None if log.current.is_some() => Selector::Current,
        None => Selector::Index(0),
    };
    let (new_index, new) =
        history::select(&log, &key, &new_selector).map_err(crate::cli::hints::version)?;
    let (old_selector, (old_index, old)) = match old_arg {
        Some(s) => {
            let found = history::select(&log, &key, &s).map_err(crate::cli::hints::version)?;
            (s, found)
        }
        None => {
            let next = new_index.map_or(0, |i| i + 1);
            let found = log.versions.get(next).ok_or_else(|| {
                let qk = crate::support::escape::shell_quote(&key);
                crate::refusal!(
                    "'{key}' has no version before {}; `git handoff log {qk}` lists the versions",
                    history::label(&key, &new_selector, new_index)
                )
            })?;
            (Selector::Index(next), (Some(next), found))
        }
    };
    let old_label = history::label(&key, &old_selector, old_index);
    let new_label = history::label(&key, &new_selector, new_index);
    let describe = |label: &str, v: &history::Version| {
        format!("{label} {} {}", &v.id.to_string()[..7], v.brief.timestamp)
    };
    let comparison = history::compare(
        old,
        new,
        &describe(&old_label, old),
        &describe(&new_label, new),
    );
    if args.format.is_json() {
        return Ok(report::pretty(&report::Diff {
            key: &key,
            old: side(&old_label, old),
            new: side(&new_label, new),
            fields: &comparison.fields,
            insertions: comparison.insertions,
            deletions: comparison.deletions,
            diff: &comparison.unified,
        }));
    }
    if args.summary {
        let n = comparison.fields.len();
        let line = if n == 0 && comparison.insertions + comparison.deletions == 0 {
            format!("{old_label}..{new_label}: no fields changed\n")
        } else {
            format!(
                "{old_label}..{new_label}: {n} field{} changed ({}), {} insertion{}(+), {} deletion{}(-)\n",
                if n == 1 { "" } else { "s" },
                comparison.fields.join(", "),
                comparison.insertions,
                if comparison.insertions == 1 { "" } else { "s" },
                comparison.deletions,
                if comparison.deletions == 1 { "" } else { "s" },
            )
        };
        return Ok(Output::human(line));
    }
    Ok(Output::human(comparison.unified))
}

/// One side of `diff --json`.
fn side<'a>(label: &'a str, v: &'a history::Version) -> report::DiffSide<'a> {
    report::DiffSide {
        label,
        id: v.id.to_string(),
        timestamp: &v.brief.timestamp,
    }
}
