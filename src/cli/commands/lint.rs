//! `git handoff lint [KEY | -F FILE]`: the method's anti-patterns.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::brief::lint::{self, Finding};
use crate::cli::commands::{Selection, read_input, refuse_ambiguous, select};
use crate::{brief, cli::Output, cli::render, drift, git::repo};

/// Check a brief for the handoff method's anti-patterns
///
/// Rules: vague-check, inlined-content, no-rejected-paths, over-long,
/// dangling-pointer, placeholder, secret (README, "Lint rules", has a bad and a
/// good example of each). Findings are warnings (exit 0); with --strict or
/// `git config handoff.strict true` they are errors (exit 1). `write` runs
/// the same checks (--strict, --no-lint).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stored brief to check (default: the current branch's)
    pub key: Option<String>,
    /// Check a brief file (or - for stdin) instead; partial briefs are fine
    #[arg(
        short = 'F',
        long = "file",
        value_name = "FILE|-",
        conflicts_with = "key"
    )]
    pub file: Option<String>,
    /// Treat findings as errors (exit 1)
    #[arg(long)]
    pub strict: bool,
    /// Print the findings as JSON
    #[arg(long)]
    pub json: bool,
}

/// Whether lint findings are errors: `--strict`, else `handoff.strict`.
pub fn strict(repo: Option<&gix::Repository>, flag: bool) -> bool {
    flag || repo
        .and_then(|r| r.config_snapshot().boolean("handoff.strict"))
        .unwrap_or(false)
}

/// Lint a brief (as JSON) in `repo`'s current worktree, with the resume
/// render's length when the brief is complete.
pub fn check(repo: Option<&gix::Repository>, value: &Value) -> Vec<Finding> {
    let root = repo
        .and_then(|r| repo::worktree_info(r).ok())
        .map(|w| w.root);
    let head_tree = repo
        .and_then(|r| r.head_tree_id().ok())
        .and_then(|id| repo.and_then(|r| r.find_tree(id).ok()));
    let head_has = |path: &str| {
        head_tree
            .as_ref()
            .is_some_and(|t| t.lookup_entry_by_path(path).ok().flatten().is_some())
    };
    let render_lines = serde_json::from_value::<brief::Brief>(value.clone())
        .ok()
        .map(|b| {
            render::resume_text(&b, &drift::Report::none(), &[])
                .lines()
                .count()
        });
    lint::lint(
        value,
        &lint::Context {
            root,
            head_has: Some(&head_has),
            render_lines,
        },
    )
}

/// The findings as stderr lines, `warning:` or `error:` by strictness.
pub fn report(findings: &[Finding], strict: bool) -> String {
    let level = if strict { "error" } else { "warning" };
    findings
        .iter()
        .map(|f| format!("{level}: {}\n", f.line()))
        .collect()
}

/// The one-line verdict on stdout: `lint: no findings` or `lint: N findings`.
pub fn summary(findings: &[Finding]) -> String {
    match findings.len() {
        0 => "lint: no findings\n".to_string(),
        1 => "lint: 1 finding\n".to_string(),
        n => format!("lint: {n} findings\n"),
    }
}

/// Lint and report.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd_for_reading().ok();
    let value = match &args.file {
        Some(source) => match brief::parse_json(&read_input(source)?) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => bail!("the brief must be a JSON object"),
            Err(e) => bail!("{e}"),
        },
        None => {
            let Some(repo) = repo.as_ref() else {
                bail!(
                    "not a git repository: `git handoff lint` checks a stored brief; use -F FILE outside a repository"
                )
            };
            match select(repo, args.key.as_deref())? {
                Selection::Found { stored, .. } => serde_json::from_slice(&stored.data)
                    .map_err(|e| anyhow::anyhow!("brief '{}' is not JSON: {e}", stored.key))?,
                Selection::Ambiguous(rows) => {
                    return Ok(refuse_ambiguous(&rows, "lint", args.json));
                }
            }
        }
    };
    let findings = check(repo.as_ref(), &value);
    let strict = strict(repo.as_ref(), args.strict);
    let code = u8::from(strict && !findings.is_empty());
    if args.json {
        return Ok(Output {
            stdout: render::json(&serde_json::json!({"strict": strict, "findings": findings})),
            code,
            text: false,
            verbatim: false,
        });
    }
    if findings.is_empty() {
        return Ok(Output::text(summary(&findings)));
    }
    eprint!("{}", report(&findings, strict));
    Ok(Output {
        stdout: summary(&findings),
        code,
        text: true,
        verbatim: false,
    })
}
