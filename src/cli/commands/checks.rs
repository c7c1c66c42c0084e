//! The checks every written brief passes: redaction (always, unless
//! `--no-redact`) and lint (unless `--no-lint`; errors with `--strict` or
//! `handoff.strict`). Shared by `write`, `recover`, `split` and `import`;
//! the lint check and its words are also `lint`'s and the MCP server's.

use std::cell::RefCell;

use anyhow::Result;
use serde_json::Value;

use crate::brief::Brief;
use crate::brief::lint::{self, Finding};
use crate::brief::redact::{self, Counts};
use crate::cli::render;
use crate::git::repo;

/// The flags that steer the checks.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CheckArgs {
    /// Store secrets as given (with a warning); `push` still refuses them
    #[arg(long)]
    pub no_redact: bool,
    /// Skip the lint checks
    #[arg(long)]
    pub no_lint: bool,
    /// Lint findings are errors: nothing is written (also git config handoff.strict)
    #[arg(long, conflicts_with = "no_lint")]
    pub strict: bool,
}

/// The checks of one command run.
pub struct Checks {
    redact: Option<redact::Options>,
    lint: bool,
    strict: bool,
    counts: RefCell<Counts>,
}

impl Checks {
    /// Checks as the flags and git config say.
    pub fn new(repo: &gix::Repository, args: &CheckArgs) -> Checks {
        if args.no_redact {
            eprintln!(
                "warning: --no-redact: secrets are stored as given; `git handoff push` will refuse to send them"
            );
        }
        Checks {
            redact: (!args.no_redact).then(|| redact::Options::from_repo(repo)),
            lint: !args.no_lint,
            strict: strict(Some(repo), args.strict),
            counts: RefCell::new(Counts::new()),
        }
    }

    /// Redact every string of a (partial) brief in place.
    pub fn redact_value(&self, value: &mut Value) {
        if let Some(options) = self.redact {
            let found = redact::redact_json(value, options);
            redact::merge(&mut self.counts.borrow_mut(), found);
        }
    }

    /// Redact a brief.
    pub fn redact_brief(&self, brief: Brief) -> Brief {
        if self.redact.is_none() {
            return brief;
        }
        let mut value = serde_json::to_value(&brief).expect("a brief serializes");
        let before = self.counts.borrow().values().sum::<usize>();
        self.redact_value(&mut value);
        if self.counts.borrow().values().sum::<usize>() == before {
            return brief;
        }
        serde_json::from_value(value).unwrap_or(brief)
    }

    /// Redact free text (a narrative entry).
    pub fn redact_text(&self, text: &str) -> String {
        match self.redact {
            Some(options) => {
                let (out, found) = redact::redact(text, options);
                redact::merge(&mut self.counts.borrow_mut(), found);
                out
            }
            None => text.to_string(),
        }
    }

    /// Lint a composed brief: findings go to stderr as warnings, or, when
    /// strict, as errors that stop the command before anything is written.
    pub fn lint(&self, repo: &gix::Repository, brief: &Brief) -> Result<()> {
        if !self.lint {
            return Ok(());
        }
        let value = serde_json::to_value(brief).expect("a brief serializes");
        let findings = check(Some(repo), &value);
        if findings.is_empty() {
            return Ok(());
        }
        let prefix = format!("[{}] ", brief.key);
        for line in findings_text(&findings, self.strict).lines() {
            let (level, rest) = line.split_once(": ").unwrap_or(("warning", line));
            eprintln!("{level}: {prefix}{rest}");
        }
        if self.strict {
            crate::refuse!(
                "brief '{}' has {} lint finding{} and lint is strict; nothing was written (fix them, or --no-lint)",
                brief.key,
                findings.len(),
                if findings.len() == 1 { "" } else { "s" }
            );
        }
        Ok(())
    }

    /// Say on stderr how many secrets of which kind were redacted (never
    /// the values).
    pub fn report(&self) {
        if let Some(summary) = redact::summary(&self.counts.borrow()) {
            eprintln!("note: {summary} before writing");
        }
    }
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
    let head_tree = repo.and_then(|r| r.find_tree(repo::head_tree_id(r)?).ok());
    let head_has = |path: &str| {
        head_tree
            .as_ref()
            .is_some_and(|t| t.lookup_entry_by_path(path).ok().flatten().is_some())
    };
    let render_lines = serde_json::from_value::<Brief>(value.clone())
        .ok()
        .map(|b| render::resume_lines(&b));
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
pub fn findings_text(findings: &[Finding], strict: bool) -> String {
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
