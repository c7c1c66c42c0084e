//! `git handoff pipeline save|list|show`: reusable multi-stage templates in
//! `<worktree root>/.claude/pipelines/<name>.md`.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;

use crate::agent::pipeline::{self, MAX_TEMPLATE_BYTES};
use crate::cli::{Format, Output, render, report};
use crate::{git::repo, support::atomic};

/// Save, list and show pipeline templates (.claude/pipelines/<name>.md)
///
/// A template is markdown with four sections: When to use, Decomposition
/// axis (concern, module or stage), Stages (one ### heading per stage with
/// run: parallel|sequential|background, role: and brief contract: lines, or
/// the method's numbered form `1. **<stage>** (parallel|sequential|background)`)
/// and Synthesis. Secrets and personal data are redacted before saving.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// The pipeline subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Store a template as .claude/pipelines/NAME.md (a skeleton without -F)
    Save(SaveArgs),
    /// List the templates of this worktree
    List(ListArgs),
    /// Print a template
    Show(ShowArgs),
}

/// `pipeline save`.
#[derive(Debug, clap::Args)]
pub struct SaveArgs {
    /// The template's name: letters, digits, - _ and inner dots
    pub name: String,
    /// Read the template (markdown) from FILE, or - for stdin; without it a skeleton is saved
    #[arg(short = 'F', long = "file", value_name = "FILE|-")]
    pub file: Option<String>,
    /// Replace an existing template with different content
    #[arg(long)]
    pub force: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// `pipeline list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print a JSON array instead of text
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// `pipeline show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The template's name
    pub name: String,
    /// Print JSON (name, path, markdown) instead of the markdown
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// One listed template.
#[derive(Debug, Serialize)]
struct Row {
    name: String,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    when_to_use: Option<String>,
}

/// Run the pipeline subcommand.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let root = repo::worktree_info(&repo)?.root;
    match args.action {
        Action::Save(a) => save(&root, a, crate::brief::redact::Options::from_repo(&repo)),
        Action::List(a) => list(&root, a, crate::brief::redact::Options::from_repo(&repo)),
        Action::Show(a) => show(&root, a, crate::brief::redact::Options::from_repo(&repo)),
    }
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read_template(source: &str) -> Result<String> {
    let mut data = Vec::new();
    let limit = MAX_TEMPLATE_BYTES as u64 + 1;
    if source == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut data)
            .context("cannot read the template from stdin")?;
    } else {
        let file =
            std::fs::File::open(source).with_context(|| format!("cannot read '{source}'"))?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            bail!("'{source}' is a directory; give a markdown file or - for stdin");
        }
        file.take(limit)
            .read_to_end(&mut data)
            .with_context(|| format!("cannot read '{source}'"))?;
    }
    if data.len() > MAX_TEMPLATE_BYTES {
        crate::refuse!("the template is larger than 256 KiB; nothing was written");
    }
    String::from_utf8(data)
        .map_err(|_| crate::refusal!("the template is not UTF-8 text; nothing was written"))
}

fn save(root: &Path, args: SaveArgs, redact: crate::brief::redact::Options) -> Result<Output> {
    let path = pipeline::file(root, &args.name)?;
    let (text, skeleton) = match &args.file {
        // A template is a committed file: no secret or personal data in it.
        Some(source) => (
            crate::cli::commands::redacted(&read_template(source)?, "the template", redact),
            false,
        ),
        None => (pipeline::skeleton(&args.name), true),
    };
    let problems = pipeline::check(&text);
    if !problems.is_empty() {
        let mut report = String::from("handoff-pipeline: INVALID\n");
        for p in &problems {
            report.push_str(&format!("  - {p}\n"));
        }
        eprint!("{report}");
        crate::refuse!(
            "template '{}' is invalid; nothing was written (`git handoff pipeline save {}` without -F saves a valid skeleton)",
            args.name,
            crate::support::escape::shell_quote(&args.name)
        );
    }
    let shown = rel(root, &path);
    let status = match std::fs::read(&path) {
        Ok(existing) if existing == text.as_bytes() => "unchanged",
        Ok(_) if !args.force => crate::refuse!(
            "template '{}' exists ({shown}) with other content; pass --force to replace it",
            args.name
        ),
        Ok(_) => "replaced",
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "saved",
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if status != "unchanged" {
        let dir = path.parent().expect("a template has a folder");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        atomic::write(&path, text.as_bytes())?;
    }
    if args.format.is_json() {
        return Ok(report::pretty(&report::PipelineSaved {
            name: &args.name,
            path: &shown,
            status,
            skeleton,
        }));
    }
    let mut out = format!("Pipeline '{}' {status}: {shown}\n", args.name);
    if skeleton {
        out.push_str("It is a skeleton: replace the <…> placeholders, or save your own with -F FILE --force.\n");
    }
    Ok(Output::human(out))
}

fn list(root: &Path, args: ListArgs, options: crate::brief::redact::Options) -> Result<Output> {
    let dir = pipeline::dir(root)?;
    let mut rows = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .collect::<std::io::Result<Vec<_>>>()
            .with_context(|| format!("cannot read {}", dir.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
    };
    for entry in entries {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(name) = file_name.strip_suffix(".md") else {
            continue;
        };
        if pipeline::validate_name(name).is_err()
            || !entry.file_type().map(|t| t.is_file()).unwrap_or(false)
        {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        rows.push(Row {
            name: name.to_string(),
            path: rel(root, &entry.path()),
            when_to_use: pipeline::summary(&text)
                .map(|line| crate::brief::redact::redact(&line, options).0),
        });
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    if args.format.is_json() {
        return Ok(Output::json(&rows));
    }
    if rows.is_empty() {
        return Ok(Output::human(format!(
            "No pipeline templates yet; `git handoff pipeline save NAME` creates one in {}/.\n",
            pipeline::DIR
        )));
    }
    let width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in &rows {
        let line = format!(
            "{:width$}  {}",
            r.name,
            render::one_line(r.when_to_use.as_deref().unwrap_or(""), 100)
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(Output::human(out))
}

/// A template as saved, redacted as `pipeline save` redacts: a hand edit
/// may have put a secret in it since.
fn show(root: &Path, args: ShowArgs, options: crate::brief::redact::Options) -> Result<Output> {
    let path = pipeline::file(root, &args.name)?;
    let text = match std::fs::read(&path) {
        Ok(bytes) => {
            String::from_utf8(bytes).map_err(|_| anyhow!("{} is not UTF-8 text", path.display()))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => crate::refuse!(
            "no pipeline template '{}'; `git handoff pipeline list` shows them",
            args.name
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let text = crate::cli::commands::redacted(&text, "the template", options);
    if args.format.is_json() {
        return Ok(report::pretty(&report::PipelineShown {
            name: &args.name,
            path: rel(root, &path),
            markdown: &text,
            problems: pipeline::check(&text),
        }));
    }
    Ok(Output::human(text))
}
