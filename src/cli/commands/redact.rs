//! `git handoff redact [--history]`: remove secrets from stored briefs and,
//! with `--history`, from the whole notes history (a rewrite).

use anyhow::{Result, anyhow};
use gix::bstr::ByteSlice;
use serde_json::Value;

use crate::brief::redact::{self, Counts, Options};
use crate::cli::{Format, Output, report};
use crate::{git::repo, store};

/// Remove secrets from the stored briefs (and with --history, from every version)
///
/// Every current brief under refs/handoffs, and every archived one under
/// refs/handoff-archive, is passed through the redaction filter and
/// replaced in place (compare-and-swap) when it held a secret.
/// With --history, refs/notes/handoffs is rewritten commit by commit with the
/// filter applied to every version: this is a history rewrite, like
/// `git filter-branch` — clones that already fetched the old history keep it.
/// Once it removed something, `fetch` refuses to merge those secrets back in
/// from a remote that still holds them (`fetch --allow-secrets` overrides),
/// and what the remotes held as of their last fetch is forgotten until the
/// next fetch.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also rewrite the notes history (every version of every brief)
    #[arg(long)]
    pub history: bool,
    /// Say what would change, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Redact the line of a history note: JSON briefs field by field, other
/// text as text.
pub fn redact_note(data: &[u8], options: Options, counts: &mut Counts) -> Option<Vec<u8>> {
    let mut changed = false;
    let mut out = Vec::with_capacity(data.len());
    for line in data.split_inclusive(|b| *b == b'\n') {
        let (body, newline) = match line.strip_suffix(b"\n") {
            Some(body) => (body, true),
            None => (line, false),
        };
        let replaced = match serde_json::from_slice::<Value>(body) {
            Ok(mut value) if value.is_object() => {
                let mut found = redact::redact_json(&mut value, options);
                // The key too: a line whose key holds a secret (refused
                // on write since, but older or hand-made) must not keep it.
                if let Some(Value::String(key)) = value.get_mut("key") {
                    let (text, in_key) = redact::redact(key, options);
                    if !in_key.is_empty() {
                        *key = text;
                        redact::merge(&mut found, in_key);
                    }
                }
                (!found.is_empty()).then(|| {
                    redact::merge(counts, found);
                    serde_json::to_vec(&value).expect("JSON serializes")
                })
            }
            _ => {
                let (text, found) = redact::redact(&body.to_str_lossy(), options);
                (!found.is_empty()).then(|| {
                    redact::merge(counts, found);
                    text.into_bytes()
                })
            }
        };
        match replaced {
            Some(new) => {
                changed = true;
                out.extend_from_slice(&new);
            }
            None => out.extend_from_slice(body),
        }
        if newline {
            out.push(b'\n');
        }
    }
    changed.then_some(out)
}

/// Where the briefs [`redact_briefs`] redacts live.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `refs/handoffs/*`.
    Live,
    /// `refs/handoff-archive/*` (`prune`).
    Archive,
}

/// The stored brief `data` of `key` passed through the current rules:
/// `None` when it holds no secret (or is no JSON), else the brief redacted
/// and what was found.
pub(crate) fn redacted_brief(
    key: &str,
    data: &[u8],
    options: Options,
) -> Result<Option<(crate::brief::Brief, Counts)>> {
    let Ok(mut value) = serde_json::from_slice::<Value>(data) else {
        return Ok(None);
    };
    let mut found = redact::redact_json(&mut value, options);
    // A repeated field hides its first values from the parsed reading
    // (which keeps the last): the raw bytes say what it holds, and the
    // brief rewritten from the parsed value holds it no more.
    if found.is_empty() && crate::brief::duplicate_field(data).is_some() {
        found = redact::find_in_line(data, options);
    }
    if found.is_empty() {
        return Ok(None);
    }
    let brief = serde_json::from_value(value)
        .map_err(|e| anyhow!("brief '{key}' cannot be re-read after redaction: {e}"))?;
    Ok(Some((brief, found)))
}

/// Redact every brief of `listed` in place (unless `dry_run`); the keys
/// that held a secret.
fn redact_briefs(
    repo: &gix::Repository,
    listed: Vec<store::Listed>,
    place: Place,
    options: Options,
    dry_run: bool,
    counts: &mut Counts,
) -> Result<Vec<String>> {
    let mut keys = Vec::new();
    for (key, entry) in listed {
        let Ok(stored) = entry else { continue };
        let Some((brief, found)) = redacted_brief(&key, &stored.data, options)? else {
            continue;
        };
        redact::merge(counts, found);
        if !dry_run {
            match place {
                Place::Live => store::replace(repo, &brief, stored.id, "handoff: redact")?,
                Place::Archive => {
                    store::replace_archived(repo, &brief, stored.id, "handoff: redact")?
                }
            };
        }
        keys.push(key);
    }
    Ok(keys)
}

/// Redact briefs, archived briefs, then (with --history) the notes
/// history; the list cache goes with what it summarized.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let options = Options::from_repo(&repo);
    let mut brief_counts = Counts::new();
    let (dry_run, live, archive) = (args.dry_run, Place::Live, Place::Archive);
    let keys = redact_briefs(
        &repo,
        store::list(&repo)?,
        live,
        options,
        dry_run,
        &mut brief_counts,
    )?;
    let archived = store::list_archived(&repo)?;
    let archived = redact_briefs(
        &repo,
        archived,
        archive,
        options,
        dry_run,
        &mut brief_counts,
    )?;
    let mut history_counts = Counts::new();
    let rewritten = if args.history {
        Some(store::rewrite_notes(
            &repo,
            &mut |data| redact_note(data, options, &mut history_counts),
            args.dry_run,
        )?)
    } else {
        None
    };
    if rewritten.as_ref().is_some_and(|r| r.tips.is_some()) && !args.dry_run {
        crate::sync::gate::mark_history_redacted(&repo)?;
        crate::store::remotes::forget_remote_secrets(&repo)?;
    }
    if !args.dry_run {
        // Rebuilt, filtered, by the next `list`: no summary of a blob
        // that held a secret stays behind (a cache written by an older
        // build may hold one unfiltered).
        crate::store::listcache::forget(&repo);
    }
    if args.format.is_json() {
        return Ok(report::pretty(&report::Redacted {
            dry_run: args.dry_run,
            briefs: &keys,
            archived: &archived,
            brief_secrets: &brief_counts,
            history_rewritten: rewritten.as_ref().map(|r| r.tips.is_some()),
            history_notes: rewritten.as_ref().map(|r| r.blobs),
            history_commits: rewritten.as_ref().map(|r| r.commits),
            history_secrets: &history_counts,
        }));
    }
    let verb = if args.dry_run {
        "would redact"
    } else {
        "redacted"
    };
    let mut out = String::new();
    let mut named = keys.clone();
    named.extend(archived.iter().map(|k| format!("{k} (archived)")));
    match redact::summary(&brief_counts) {
        Some(s) => out.push_str(&format!("Briefs: {verb} {} ({s}).\n", named.join(", "))),
        None => out.push_str("Briefs: no secrets found.\n"),
    }
    match (&rewritten, redact::summary(&history_counts)) {
        (None, _) => out.push_str(
            "History: not scanned; `git handoff redact --history` rewrites refs/notes/handoffs with the filter applied.\n",
        ),
        (Some(_), None) => out.push_str("History: no secrets found; nothing rewritten.\n"),
        (Some(r), Some(s)) => {
            out.push_str(&format!(
                "History: {} — this REWRITES refs/notes/handoffs: {} note{} in {} commit{} ({s}).\n",
                if args.dry_run { "would rewrite" } else { "rewritten" },
                r.blobs,
                if r.blobs == 1 { "" } else { "s" },
                r.commits,
                if r.commits == 1 { "" } else { "s" },
            ));
            if let (Some((old, new)), false) = (r.tips, args.dry_run) {
                out.push_str(&format!(
                    "  {} -> {}. The old chain stays in the local reflog until `git reflog expire --expire=now {} && git gc --prune=now`; clones that fetched it keep their copy.\n",
                    store::short(&old),
                    store::short(&new),
                    store::NOTES_REF
                ));
            }
        }
    }
    Ok(Output::human(out))
}
