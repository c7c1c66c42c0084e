//! `git handoff summary new|latest|clean`: continue summaries in
//! `<worktree root>/.claude/memory/`.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::agent::summary::{self, Facts, Step, Template};
use crate::brief::redact::Options;
use crate::cli::commands::redacted;
use crate::support::atomic::{self, CreateError};
use crate::{cli::Output, git::repo, store, support::clock};

/// Write, read and clean continue summaries in .claude/memory/
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do
    #[command(subcommand)]
    pub action: Action,
}

/// `summary new`, `latest` and `clean`.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Write .claude/memory/<date>-<task-slug>.md from a template,
    /// pre-filled with what git and the current brief know
    New {
        /// The template
        #[arg(long, value_enum)]
        template: Template,
        /// The task the summary is about; names the file (default: the
        /// current brief's done-when)
        #[arg(long, value_name = "TEXT")]
        task: Option<String>,
    },
    /// Print the newest summary's Key Context for Continuation
    Latest,
    /// Consolidate summaries of the same task, archive old ones, delete
    /// old archived ones
    Clean {
        /// Archive summaries older than this (days: 30d, 4w, 30)
        #[arg(long, value_name = "AGE", default_value = "30d", value_parser = clock::parse_days)]
        archive_after: i64,
        /// Delete archived summaries older than this
        #[arg(long, value_name = "AGE", default_value = "90d", value_parser = clock::parse_days)]
        delete_after: i64,
        /// Say what would be done; change nothing
        #[arg(long)]
        dry_run: bool,
    },
}

/// Run the subcommand.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let info = repo::worktree_info(&repo)?;
    let dir = summary::memory_dir(&info.root)?;
    match args.action {
        Action::New { template, task } => new(&repo, &info.root, &dir, template, task.as_deref()),
        Action::Latest => latest(&info.root, &dir, Options::from_repo(&repo)),
        Action::Clean {
            archive_after,
            delete_after,
            dry_run,
        } => clean(
            &info.root,
            &dir,
            archive_after,
            delete_after,
            dry_run,
            Options::from_repo(&repo),
        ),
    }
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn new(
    repo: &gix::Repository,
    root: &Path,
    dir: &Path,
    template: Template,
    task: Option<&str>,
) -> Result<Output> {
    let key = crate::cli::commands::keyless_key_here(repo)?;
    let brief = store::read(repo, &key)
        .ok()
        .flatten()
        .and_then(|s| s.brief().ok());
    // Without --task, the brief names it: its done-when.
    let from_brief = brief.as_ref().map(|b| b.resume.done_when.clone());
    let task = task.or(from_brief.as_deref()).unwrap_or("").trim();
    if task.is_empty() {
        crate::refuse!(
            "a summary needs a task: --task TEXT says what it is about (no brief here names one)"
        );
    }
    let slug = crate::cli::commands::redacted_slug(task);
    if slug.is_empty() {
        crate::refuse!(
            "the task '{task}' has no letter or digit to name the file by; say what the task is"
        );
    }
    let now = clock::now().map_err(crate::refused)?;
    let head = repo::head_state(repo)?;
    let mem_rel = Path::new(summary::MEMORY_DIR);
    let facts = Facts {
        date: clock::date(now),
        task: task.to_string(),
        branch: head.branch_label().to_string(),
        head: head.sha().map(|s| s[..s.len().min(7)].to_string()),
        diff_summary: repo::diff_stat(repo)?.summary(),
        changed: repo::changed_files(repo)?
            .into_iter()
            .filter(|p| !Path::new(p).starts_with(mem_rel))
            .collect(),
        brief,
    };
    let path = dir.join(summary::file_name(&facts.date, &slug));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let text = redacted(
        &summary::render(template, &facts),
        "the summary",
        Options::from_repo(repo),
    );
    match atomic::create_new(&path, &text) {
        Ok(()) => Ok(Output::human(format!("{}\n", rel(root, &path)))),
        Err(CreateError::Exists(_)) => crate::refuse!(
            "'{}' exists already; edit it, or pass another --task",
            rel(root, &path)
        ),
        Err(CreateError::Other(e)) => Err(e),
    }
}

/// The newest summary's Key Context, redacted as writes are: the file is
/// ours, but a hand edit may have put a secret in it (issue 30, item 2),
/// and its name too.
fn latest(root: &Path, dir: &Path, options: Options) -> Result<Output> {
    let mut found = summary::scan(dir)?;
    if found.is_empty() {
        crate::refuse!(
            "no summaries in {}; `git handoff summary new --template task --task TEXT` writes one",
            summary::MEMORY_DIR
        );
    }
    // Newest first: by date, then by modification time, then by name.
    found.sort_by_cached_key(|f| {
        let mtime = std::fs::metadata(&f.path).and_then(|m| m.modified()).ok();
        (f.date.clone(), mtime, f.name.clone())
    });
    for f in found.iter().rev() {
        let text = std::fs::read_to_string(&f.path)
            .with_context(|| format!("cannot read {}", f.path.display()))?;
        if let Some(body) = summary::section_body(&text, summary::KEY_CONTEXT) {
            eprintln!(
                "from {}",
                redacted(&rel(root, &f.path), "the summary's name", options)
            );
            let body = redacted(&body, "the summary", options);
            return Ok(Output::human(format!("{body}\n")));
        }
    }
    bail!(
        "no summary in {} has a '{}' section (only the task template has one); `git handoff summary new --template task --task TEXT` writes one",
        summary::MEMORY_DIR,
        summary::KEY_CONTEXT
    )
}

fn clean(
    root: &Path,
    dir: &Path,
    archive_after: i64,
    delete_after: i64,
    dry_run: bool,
    options: Options,
) -> Result<Output> {
    if delete_after < archive_after {
        crate::refuse!(
            "--delete-after ({delete_after}d) is shorter than --archive-after ({archive_after}d); archived summaries would never be kept"
        );
    }
    let today = clock::now().map_err(crate::refused)?.div_euclid(86_400);
    let steps = summary::plan_clean(dir, today, archive_after, delete_after)?;
    let would = if dry_run { "would " } else { "" };
    let mut out = String::new();
    for step in &steps {
        let line = match step {
            Step::Consolidate { base, from } => format!(
                "{would}consolidate {} into {}",
                from.iter()
                    .map(|p| rel(root, p))
                    .collect::<Vec<_>>()
                    .join(", "),
                rel(root, base)
            ),
            Step::Archive { from, to, age_days } => {
                format!(
                    "{would}archive {} ({age_days}d old) to {}",
                    rel(root, from),
                    rel(root, to)
                )
            }
            Step::Delete { path, age_days } => {
                format!("{would}delete {} ({age_days}d old)", rel(root, path))
            }
            Step::Skip { path, reason } => format!("skip {}: {reason}", rel(root, path)),
        };
        if !dry_run {
            apply(step, options)?;
        }
        out.push_str(&line);
        out.push('\n');
    }
    if steps.is_empty() {
        out.push_str(&format!(
            "Nothing to clean in {} (archive after {archive_after}d, delete archived after {delete_after}d).\n",
            summary::MEMORY_DIR
        ));
    }
    Ok(Output::human(out))
}

fn apply(step: &Step, options: Options) -> Result<()> {
    match step {
        Step::Consolidate { base, from } => {
            let read = |p: &Path| {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
            };
            let base_text = read(base)?;
            let mut older = Vec::new();
            for p in from {
                let name = p
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                older.push((name, read(p)?));
            }
            let merged = summary::consolidate(&base_text, &older);
            if merged != base_text {
                atomic::write(
                    base,
                    redacted(&merged, "the consolidated summary", options).as_bytes(),
                )?;
            }
            for p in from {
                std::fs::remove_file(p)
                    .with_context(|| format!("cannot remove {}", p.display()))?;
            }
        }
        Step::Archive { from, to, .. } => {
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            match atomic::move_new(from, to) {
                Ok(()) => {}
                Err(CreateError::Exists(p)) => {
                    eprintln!("skipped {}: {} exists already", from.display(), p.display())
                }
                Err(CreateError::Other(e)) => return Err(e),
            }
        }
        Step::Delete { path, .. } => std::fs::remove_file(path)
            .with_context(|| format!("cannot delete {}", path.display()))?,
        Step::Skip { .. } => {}
    }
    Ok(())
}
