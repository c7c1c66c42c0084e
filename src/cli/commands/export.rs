//! `git handoff export KEY [-o FILE]` and `export --all DIR`: write briefs
//! back as `<key>.json` files for tools that read files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::brief::Brief;
use crate::cli::commands::{checked_key, no_brief, read_file};
use crate::store::Stored;
use crate::{
    brief::keys, cli::Format, cli::Output, git::repo, store, support::atomic, support::clock,
};

/// Write briefs as <key>.json files, exactly as stored (an AUTO draft as RECOVER)
///
/// export KEY prints the brief (or writes it to -o FILE); export --all DIR
/// writes every brief as DIR/<key>.json. The bytes are the stored ones, so
/// `import` of an exported file stores the identical blob. Files are
/// replaced atomically; a file holding a newer brief (or no brief) is kept
/// unless --force.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The brief's key
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub key: Option<String>,
    /// Write to FILE instead of stdout
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "all"
    )]
    pub output: Option<PathBuf>,
    /// Write every brief as DIR/<key>.json (DIR is created if missing)
    #[arg(long, value_name = "DIR")]
    pub all: Option<PathBuf>,
    /// Replace files that hold a newer brief, or something that is not a brief
    #[arg(long)]
    pub force: bool,
    /// Print the report as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// What happened to one brief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The file was written.
    Exported,
    /// The file already held these bytes.
    Unchanged,
    /// The file holds a newer brief (or no brief) and was kept.
    KeptNewer,
    /// The brief cannot be exported (unreadable, or a key that is no file name).
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Exported => "exported",
            Status::Unchanged => "unchanged",
            Status::KeptNewer => "kept-newer",
            Status::Skipped => "skipped",
        }
    }
}

/// The report line of one brief.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The key.
    pub key: String,
    /// The file written or kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What happened.
    pub status: Status,
    /// Why, when it was kept or skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Export one brief or all of them.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    if let Some(dir) = &args.all {
        return export_all(&repo, dir, &args);
    }
    let key = checked_key(
        args.key
            .as_deref()
            .expect("clap requires KEY without --all"),
    )?;
    let stored = store::read(&repo, &key)?.ok_or_else(|| no_brief(&key))?;
    let Some(path) = &args.output else {
        return Ok(Output::json_text(
            String::from_utf8_lossy(&exported(&stored)).into_owned(),
        ));
    };
    if path.is_dir() {
        crate::refuse!(
            "'{}' is a directory; give a file name like {key}.json, or use `git handoff export --all DIR`",
            path.display()
        );
    }
    let row = export_one(&stored, path, args.force);
    let code = match row.status {
        Status::Exported | Status::Unchanged => 0,
        Status::KeptNewer | Status::Skipped => 1,
    };
    if code != 0 {
        crate::refuse!(
            "{} {}; nothing was written",
            path.display(),
            row.reason.as_deref().unwrap_or("was not written")
        );
    }
    finish(&[row], args.format)
}

fn export_all(repo: &gix::Repository, dir: &Path, args: &Args) -> Result<Output> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut rows = Vec::new();
    for (key, entry) in store::list(repo)? {
        let skip = |reason: String| Row {
            key: key.clone(),
            file: None,
            status: Status::Skipped,
            reason: Some(reason),
        };
        // A key is a single ref component, so <key>.json stays in DIR; a
        // foreign ref like refs/handoffs/a/b is no file name and is skipped.
        if let Err(e) = keys::validate(&key) {
            rows.push(skip(format!(
                "{e}; it would not be a file name inside {}",
                dir.display()
            )));
            continue;
        }
        let stored = match entry {
            Ok(s) => s,
            Err(e) => {
                rows.push(skip(format!("{e:#}")));
                continue;
            }
        };
        if let Err(e) = stored.brief() {
            rows.push(skip(crate::cli::hints::message(&e)));
            continue;
        }
        let path = dir.join(format!("{key}.json"));
        if path.parent() != Some(dir) {
            rows.push(skip(format!(
                "'{}' would leave {}",
                path.display(),
                dir.display()
            )));
            continue;
        }
        rows.push(export_one(&stored, &path, args.force));
    }
    let skipped = rows.iter().filter(|r| r.status == Status::Skipped).count();
    let mut out = finish(&rows, args.format)?;
    if rows.is_empty() && !args.format.is_json() {
        out = Output::human("No briefs to export; `git handoff write` creates one.\n");
    }
    if skipped > 0 {
        eprintln!(
            "error: {skipped} brief{} could not be exported (listed above); the others were",
            if skipped == 1 { "" } else { "s" }
        );
        out.code = 1;
    }
    Ok(out)
}

/// Write the stored bytes to `path` unless it holds the same bytes, a
/// newer brief or something that is not a brief (then only with `force`).
/// The bytes a brief is exported as: as stored, but for an AUTO draft,
/// whose mode the method's schema does not know: exported as RECOVER,
/// its prompt saying that it was drafted from a transcript.
fn exported(stored: &Stored) -> Vec<u8> {
    let Ok(mut brief) = Brief::from_slice(&stored.data) else {
        return stored.data.clone();
    };
    if brief.mode != crate::agent::draft::MODE {
        return stored.data.clone();
    }
    let prompt = brief.continue_prompt();
    brief.mode = "RECOVER".to_string();
    brief.resume.prompt = Some(format!(
        "(Exported from an AUTO draft: drafted from a session's transcript, not written by the session; verify before acting.) {prompt}"
    ));
    brief.to_pretty_json().into_bytes()
}

fn export_one(stored: &Stored, path: &Path, force: bool) -> Row {
    let data = exported(stored);
    let mut row = Row {
        key: stored.key.clone(),
        file: Some(path.display().to_string()),
        status: Status::Exported,
        reason: None,
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() && !force => {
            row.status = Status::KeptNewer;
            row.reason = Some("is a symlink; --force replaces the link with the file".into());
            return row;
        }
        // With --force a symlink is replaced, never read through.
        Ok(meta) if meta.file_type().is_symlink() => {}
        Ok(_) => {
            let existing = read_file(path).ok();
            if existing.as_deref() == Some(data.as_slice()) {
                row.status = Status::Unchanged;
                return row;
            }
            if !force {
                let stored_time = Brief::from_slice(&stored.data)
                    .ok()
                    .and_then(|b| clock::parse(&b.timestamp));
                let file_brief = existing.and_then(|d| Brief::from_slice(&d).ok());
                match file_brief {
                    None => {
                        row.status = Status::KeptNewer;
                        row.reason =
                            Some("holds something that is not a brief; --force replaces it".into());
                        return row;
                    }
                    Some(b) if clock::parse(&b.timestamp) >= stored_time => {
                        row.status = Status::KeptNewer;
                        row.reason = Some(format!(
                            "holds a brief as new or newer ({}); import it, or --force replaces it",
                            b.timestamp
                        ));
                        return row;
                    }
                    Some(_) => {}
                }
            }
        }
        Err(_) => {}
    }
    if let Err(e) = atomic::write(path, &data) {
        row.status = Status::Skipped;
        row.reason = Some(format!("{e:#}"));
    }
    row
}

fn finish(rows: &[Row], format: Format) -> Result<Output> {
    if format.is_json() {
        return Ok(Output::json(&rows));
    }
    let mut out = String::new();
    for r in rows {
        let mut line = format!("{:10}  {}", r.status.label(), r.key);
        if let Some(file) = &r.file {
            line.push_str(&format!(" -> {file}"));
        }
        if let Some(reason) = &r.reason {
            line.push_str(&format!(": {reason}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(Output::human(out))
}
