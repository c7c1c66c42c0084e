//! `git handoff import [DIR] [--force]`: store briefs kept as files by the
//! file-based handoff tools, as they were recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::brief::{Brief, BriefError};
use crate::cli::commands::{checks, read_file};
use crate::cli::{Format, Output};
use crate::write::{self, Source};
use crate::{brief::keys, git::repo, store, support::clock};

/// The folders `import` reads without DIR, relative to the main worktree.
pub const DEFAULT_DIRS: [&str; 2] = [".claude/handoffs", ".catalyst/handoffs"];

/// The legacy single-slot file; its key is the brief's `key` field.
pub const LEGACY_FILE: &str = "HANDOFF.json";

/// Import briefs from <key>.json files (and the legacy HANDOFF.json)
///
/// Reads DIR, or without it .claude/handoffs/ and .catalyst/handoffs/ at the
/// main worktree. Each file is validated and stored under its key as it was
/// recorded (its git state is not refreshed), with its history note, all in
/// one ref transaction. Reports per file: imported, skipped-invalid,
/// already-identical, kept-newer or skipped-duplicate. A stored brief is
/// replaced only by a strictly newer file, unless --force. Writes no
/// narrative entry; paths inside the briefs are never read.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder of <key>.json files (default: .claude/handoffs and .catalyst/handoffs at the main worktree)
    pub dir: Option<PathBuf>,
    /// Replace stored briefs even when they are newer than the file
    #[arg(long)]
    pub force: bool,
    /// Store secrets as given (with a warning); `push` still refuses them
    #[arg(long)]
    pub no_redact: bool,
    /// Print the report as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Stored (new key, or replacing an older brief, or any with --force).
    Imported,
    /// Not a valid brief, or not importable as it is; nothing stored.
    SkippedInvalid,
    /// The stored brief is byte for byte the same.
    AlreadyIdentical,
    /// The stored brief is as new or newer; kept (`--force` replaces it).
    KeptNewer,
    /// Another file of this import has the same key.
    SkippedDuplicate,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Imported => "imported",
            Status::SkippedInvalid => "skipped-invalid",
            Status::AlreadyIdentical => "already-identical",
            Status::KeptNewer => "kept-newer",
            Status::SkippedDuplicate => "skipped-duplicate",
        }
    }
}

/// The report line of one file.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The file, as found.
    pub file: String,
    /// The key it maps to, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What happened.
    pub status: Status,
    /// Why, when it was not simply imported or identical.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Classify every file, store the importable ones in one transaction, report.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let dirs = match &args.dir {
        Some(dir) => {
            if !dir.is_dir() {
                crate::refuse!(
                    "'{}' is not a directory; give the folder that holds the <key>.json files",
                    dir.display()
                );
            }
            vec![dir.clone()]
        }
        None => default_dirs(&repo)?,
    };

    let (mut rows, updates) = classify_all(&repo, &dirs, args.force)?;
    if !updates.is_empty() {
        store_all(&repo, updates, args.no_redact)?;
    }
    crate::cli::commands::redact_rows(&mut rows, crate::brief::redact::Options::from_repo(&repo));

    let invalid = rows
        .iter()
        .filter(|r| r.status == Status::SkippedInvalid)
        .count();
    let out = Output::report(args.format, &rows, |rows| report(rows, &dirs).into());
    if invalid > 0 {
        eprintln!(
            "error: {invalid} file{} skipped as invalid (listed above); fix {} and run import again — the other files were handled",
            if invalid == 1 { " was" } else { "s were" },
            if invalid == 1 { "it" } else { "them" }
        );
        return Ok(out.with_code(1));
    }
    Ok(out)
}

/// Every file of `dirs`, classified: a row each, and the updates of the
/// importable ones (the first file of each key).
fn classify_all(
    repo: &gix::Repository,
    dirs: &[PathBuf],
    force: bool,
) -> Result<(Vec<Row>, Vec<store::Update>)> {
    let mut rows = Vec::new();
    let mut updates: Vec<store::Update> = Vec::new();
    // key -> (file, canonical bytes) of the first file with that key
    let mut claimed: BTreeMap<String, (String, String)> = BTreeMap::new();
    for dir in dirs {
        for path in json_files(dir)? {
            let file = path.display().to_string();
            let mut row = Row {
                file: file.clone(),
                key: None,
                status: Status::SkippedInvalid,
                reason: None,
            };
            match classify(repo, &path, force) {
                Err(reason) => row.reason = Some(reason),
                Ok((key, canonical, outcome)) => {
                    row.key = Some(key.clone());
                    if let Some((first, same)) = claimed.get(&key) {
                        if *same == canonical {
                            row.status = Status::AlreadyIdentical;
                            row.reason = Some(format!("the same brief as '{first}'"));
                        } else {
                            row.status = Status::SkippedDuplicate;
                            row.reason = Some(format!(
                                "'{first}' has the same key; import this file alone with `git handoff import DIR`"
                            ));
                        }
                    } else {
                        claimed.insert(key.clone(), (file.clone(), canonical));
                        match outcome {
                            Outcome::Store(update, reason) => {
                                row.status = Status::Imported;
                                row.reason = reason;
                                updates.push(*update);
                            }
                            Outcome::Keep(status, reason) => {
                                row.status = status;
                                row.reason = reason;
                            }
                        }
                    }
                }
            }
            rows.push(row);
        }
    }
    Ok((rows, updates))
}

/// Store the updates in one transaction through the write path: as
/// recorded, except that secrets never land in a ref (unless `no_redact`).
fn store_all(repo: &gix::Repository, updates: Vec<store::Update>, no_redact: bool) -> Result<()> {
    let options = write::Options {
        redact: !no_redact,
        lint: false,
        ..write::Options::default()
    };
    checks::reported(write::write(repo, Source::Recorded(updates), &options))?;
    Ok(())
}

/// `.claude/handoffs` and `.catalyst/handoffs` at the main worktree, those
/// that exist.
fn default_dirs(repo: &gix::Repository) -> Result<Vec<PathBuf>> {
    let main = repo.main_repo().context("cannot open the main worktree")?;
    let root = main.workdir().ok_or_else(|| {
        crate::refusal!("the main repository is bare, so it has no .claude/handoffs; give the folder: `git handoff import DIR`")
    })?;
    let dirs: Vec<PathBuf> = DEFAULT_DIRS
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    if dirs.is_empty() {
        crate::refuse!(
            "no {} or {} folder at the main worktree ({}); give the folder: `git handoff import DIR`",
            DEFAULT_DIRS[0],
            DEFAULT_DIRS[1],
            root.display()
        );
    }
    Ok(dirs)
}

/// The `*.json` entries of `dir` (not recursive), sorted, with the legacy
/// slot last so that a `<key>.json` of the same key wins.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.ends_with(".json") {
            continue;
        }
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        files.push(entry.path());
    }
    files.sort_by_key(|p| {
        let legacy = p.file_name().is_some_and(|n| n == LEGACY_FILE);
        (legacy, p.clone())
    });
    Ok(files)
}

enum Outcome {
    /// Store this update; an optional note (replaced, forced).
    Store(Box<store::Update>, Option<String>),
    /// Leave the stored brief.
    Keep(Status, Option<String>),
}

/// Read and check one file, and decide against the stored brief: its key,
/// its canonical bytes and what to do. `Err` is why the file is invalid.
fn classify(
    repo: &gix::Repository,
    path: &Path,
    force: bool,
) -> std::result::Result<(String, String, Outcome), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("is a symlink; not followed (copy the file in instead)".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    let data = read_file(path).map_err(|e| format!("{e:#}"))?;
    let brief = Brief::from_slice(&data).map_err(|e| match e {
        BriefError::Invalid(ref issues) => format!(
            "{e}: {}",
            issues
                .iter()
                .map(|i| format!("{}: {}", i.path, i.message.replace('\n', " ")))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        other => other.to_string(),
    })?;
    // A name that is not UTF-8 cannot be a key, not even the key its lossy
    // reading would suggest.
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("the file name is not UTF-8 text, so it cannot name a key; rename the file to <key>.json")?
        .to_string();
    let legacy = path.file_name().is_some_and(|n| n == LEGACY_FILE);
    if !legacy && stem != brief.key {
        return Err(format!(
            "the file name says '{stem}' but the brief's key is '{}'; rename the file to {}.json",
            brief.key.escape_debug(),
            brief.key.escape_debug()
        ));
    }
    keys::validate(&brief.key).map_err(|e| e.to_string())?;
    store::refuse_secret_key(&brief.key, crate::brief::redact::Options::from_repo(repo))
        .map_err(|e| crate::cli::hints::store(&e))?;
    if let Some(issue) = brief.stored_size_issue() {
        return Err(issue.message);
    }
    let key = brief.key.clone();
    let canonical = brief.to_pretty_json();
    let stored = store::read(repo, &key).map_err(|e| format!("{e:#}"))?;
    let outcome = match stored {
        None => Outcome::Store(
            Box::new(store::Update {
                expected: None,
                brief,
            }),
            None,
        ),
        Some(s) if s.data == canonical.as_bytes() => Outcome::Keep(Status::AlreadyIdentical, None),
        Some(s) => {
            let stored_time = s
                .brief()
                .ok()
                .and_then(|b| clock::parse(&b.timestamp).map(|t| (t, b.timestamp)));
            let file_time = clock::parse(&brief.timestamp).unwrap_or(i64::MIN);
            let older = match &stored_time {
                Some((t, _)) => *t < file_time,
                None => false,
            };
            let note = match &stored_time {
                Some((_, ts)) => format!(
                    "stored brief is from {ts}, the file from {}",
                    brief.timestamp
                ),
                None => "the stored brief is unreadable".to_string(),
            };
            let update = Box::new(store::Update {
                expected: Some(s.id),
                brief,
            });
            if older {
                Outcome::Store(update, Some(format!("replaced an older version ({note})")))
            } else if force {
                Outcome::Store(update, Some(format!("replaced with --force ({note})")))
            } else {
                Outcome::Keep(
                    Status::KeptNewer,
                    Some(format!(
                        "{note}; the stored one is kept (--force replaces it)"
                    )),
                )
            }
        }
    };
    Ok((key, canonical, outcome))
}

/// The text report: one line per file, then the counts.
fn report(rows: &[Row], dirs: &[PathBuf]) -> String {
    if rows.is_empty() {
        return format!(
            "No .json files in {}; nothing imported.\n",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut out = String::new();
    for r in rows {
        let mut line = format!("{:17}  {}", r.status.label(), r.file);
        if let Some(key) = &r.key {
            line.push_str(&format!(" -> {key}"));
        }
        if let Some(reason) = &r.reason {
            line.push_str(&format!(": {}", reason.replace('\n', " ")));
        }
        out.push_str(&line);
        out.push('\n');
    }
    let count = |s: Status| rows.iter().filter(|r| r.status == s).count();
    out.push_str(&format!(
        "\n{} imported, {} skipped-invalid, {} already-identical, {} kept-newer, {} skipped-duplicate.\n",
        count(Status::Imported),
        count(Status::SkippedInvalid),
        count(Status::AlreadyIdentical),
        count(Status::KeptNewer),
        count(Status::SkippedDuplicate),
    ));
    out
}
