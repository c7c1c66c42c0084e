//! `git handoff log [KEY]`: every version of a brief, newest first.

use anyhow::Result;
use serde::Serialize;

use crate::cli::commands::checked_key;
use crate::cli::{Format, Output};
use crate::store;
use crate::store::history::{self, Log, Selector};

/// List every version of a brief, newest first
///
/// Reads the history in refs/notes/handoffs (and every remote's copy), so
/// versions stay listed after `drop` and `git gc --prune=now`. Each line:
/// @{N}, version id, timestamp, mode, branch, short head, done-when; the
/// current version and each remote's last fetched one are marked.
/// KEY@{N} or KEY@REMOTE lists from that version down.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key (default: this session's key, else the current branch's); KEY@{N} or KEY@REMOTE to list from that version down
    pub key: Option<String>,
    /// Draw the version graph, as `git log --graph` draws commits
    #[arg(long, conflicts_with = "json")]
    pub graph: bool,
    /// Print a JSON array instead of text
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// One version as `log --json` prints it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Row {
    /// `N` of `KEY@{N}`.
    pub index: usize,
    /// The version id (blob id).
    pub id: String,
    /// When it was written.
    pub timestamp: String,
    /// WRITE, RECOVER or AUTO.
    pub mode: String,
    /// The branch it was written on.
    pub branch: String,
    /// The commit it was written at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// Its done-when check.
    pub done_when: String,
    /// Whether `refs/handoffs/<key>` points at it.
    pub current: bool,
    /// The remotes whose last fetched value it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<String>,
}

/// The rows of a log.
pub fn rows(log: &Log) -> Vec<Row> {
    log.versions
        .iter()
        .enumerate()
        .map(|(index, v)| Row {
            index,
            id: v.id.to_string(),
            timestamp: v.brief.timestamp.clone(),
            mode: v.brief.mode.clone(),
            branch: v.brief.state.branch.clone(),
            head_sha: v.brief.state.head_sha.clone(),
            // Any clone may have written it: shown through today's rules.
            done_when: crate::brief::redact::redact_text(&v.brief.resume.done_when).0,
            current: log.current == Some(v.id),
            remotes: log.remotes_at(&v.id),
        })
        .collect()
}

/// The log as aligned text.
pub fn text(rows: &[Row]) -> String {
    let iw = rows
        .iter()
        .map(|r| format!("@{{{}}}", r.index).len())
        .max()
        .unwrap_or(0);
    let bw = rows
        .iter()
        .map(|r| r.branch.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        let head = r.head_sha.as_deref().map_or("-", |s| &s[..s.len().min(7)]);
        let mut marks: Vec<String> = Vec::new();
        if r.current {
            marks.push("current".into());
        }
        marks.extend(r.remotes.iter().cloned());
        let marks = if marks.is_empty() {
            String::new()
        } else {
            format!("  ({})", marks.join(", "))
        };
        out.push_str(&format!(
            "{:iw$}  {}  {}  {:7}  {:bw$}  {head:7}  {}{marks}\n",
            format!("@{{{}}}", r.index),
            &r.id[..7],
            r.timestamp,
            r.mode,
            r.branch,
            r.done_when.lines().next().unwrap_or(""),
        ));
    }
    out
}

/// Read the history and render it.
pub fn run(args: Args) -> Result<Output> {
    if args.graph {
        return graph(&args);
    }
    let rows = compute(&args)?;
    Ok(Output::report(args.format, &rows, |rows| text(rows).into()))
}

/// The history as text and as JSON from one reading (for the MCP server).
pub fn both(args: Args) -> Result<(Output, Output)> {
    let rows = compute(&args)?;
    Ok((
        Output::report(Format::Human, &rows, |rows| text(rows).into()),
        Output::report(Format::Json, &rows, |rows| text(rows).into()),
    ))
}

/// The rows of the key's history, newest first.
fn compute(args: &Args) -> Result<Vec<Row>> {
    let repo = crate::cli::staged::open()?;
    let (key, from) = match &args.key {
        Some(spec) => history::parse_key_spec(&repo, spec)?,
        None => (
            crate::cli::commands::keyless_key_here(&repo)?,
            Selector::Current,
        ),
    };
    let key = checked_key(&key)?;
    let log = history::log(&repo, &key)?;
    if log.versions.is_empty() {
        crate::refuse!(
            "no version of '{key}' in the history ({}); `git handoff list` shows the keys",
            store::NOTES_REF
        );
    }
    let mut rows = rows(&log);
    // KEY@{N}, KEY@REMOTE: from that version down, as `git log REV` lists
    // from REV.
    if from != Selector::Current {
        let (index, _) = history::select(&log, &key, &from).map_err(crate::cli::hints::version)?;
        let first = index.unwrap_or(0);
        rows.retain(|row| row.index >= first);
    }
    Ok(rows)
}

/// A value from a lineage line (anyone can write one) as a word of the
/// graph's row: redacted, on one line, cut short, so that it can neither
/// leak a secret nor start a line of its own.
fn line_value(value: &str) -> String {
    crate::support::text::one_line(&crate::brief::redact::redact_text(value).0, 40)
}

/// `--graph`: every version the graph records, drawn with its parents;
/// the local brief and each remote's last fetched value marked, AUTO
/// drafts and merges named.
fn graph(args: &Args) -> Result<Output> {
    use crate::cli::render::graph::{Row as GraphRow, draw};
    let repo = crate::cli::staged::open()?;
    let key = match &args.key {
        Some(k) => checked_key(k)?,
        None => crate::cli::commands::keyless_key_here(&repo)?,
    };
    let log = history::log(&repo, &key)?;
    let mut graph = store::lineage::Graph::of_repo(&repo, &[])?;
    let nodes = graph.nodes(&key)?;
    if nodes.is_empty() {
        crate::refuse!(
            "no version of '{key}' in the version graph ({}); `git handoff log {}` lists the versions",
            store::NOTES_REF,
            crate::support::escape::shell_quote(&key)
        );
    }
    let mut marks: std::collections::HashMap<gix::ObjectId, Vec<String>> = Default::default();
    if let Some(current) = log.current {
        for v in graph.versions_of(&key, current)? {
            marks.entry(v).or_default().push("current".into());
        }
    }
    for (remote, tip) in &log.remote_tips {
        for v in graph.versions_of(&key, *tip)? {
            marks.entry(v).or_default().push(remote.clone());
        }
    }
    let by_blob: std::collections::HashMap<_, _> = log.versions.iter().map(|v| (v.id, v)).collect();
    let ids: std::collections::HashSet<_> = nodes.iter().map(|n| n.id).collect();
    let rows = nodes
        .into_iter()
        .map(|n| {
            let version = by_blob.get(&n.brief);
            let when = n
                .written
                .at
                .clone()
                .or_else(|| version.map(|v| v.brief.timestamp.clone()))
                .unwrap_or_default();
            let mut text = format!("{} {when}", n.brief.to_hex_with_len(7));
            if let Some(v) = version {
                text.push_str(&format!(" {}", v.brief.mode));
            }
            // A row with no parent drawn is named, or it would read as
            // the child of the row below it.
            let drawn = n.parents.iter().filter(|p| ids.contains(*p)).count();
            match (n.parents.len(), n.parents_known) {
                (_, false) => text.push_str(" parents unknown"),
                (0, true) => text.push_str(" root"),
                (len, true) if drawn < len => text.push_str(" parent not recorded"),
                (1, true) => {}
                (_, true) => text.push_str(" merge"),
            }
            if let Some(by) = &n.written.by {
                text.push_str(&format!(" by {}", line_value(by)));
            }
            if let Some(session) = &n.written.session {
                text.push_str(&format!(" session {}", line_value(session)));
            }
            if let Some(v) = version {
                let done = crate::brief::redact::redact_text(&v.brief.resume.done_when).0;
                text.push_str(&format!("  {}", done.lines().next().unwrap_or("")));
            }
            if let Some(m) = marks.get(&n.id) {
                text.push_str(&format!("  ({})", m.join(", ")));
            }
            GraphRow {
                id: n.id,
                parents: n.parents,
                when,
                text,
            }
        })
        .collect();
    Ok(Output::human(draw(rows).join("\n") + "\n"))
}
