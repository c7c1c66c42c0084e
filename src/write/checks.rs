//! The checks every written brief passes: redaction (unless the options
//! turn it off) and lint (unless turned off; findings are errors when
//! strict, by the options or `handoff.strict`). They count and collect;
//! the front end says what they found.

use serde_json::Value;

use crate::brief::Brief;
use crate::brief::lint::{self, Finding};
use crate::brief::redact::{self, Counts};
use crate::git::repo;
use crate::write::{Keyed, Notes, Options, RenderLines, Warning};

/// The checks of one write: what redaction is on, whether and how to
/// lint, and what was found so far.
pub(crate) struct Checks {
    redact: Option<redact::Options>,
    lint: bool,
    render_lines: Option<RenderLines>,
    /// What the checks found, in the order they found it.
    pub notes: Notes,
}

impl Checks {
    /// Checks as the options and git config say; a write without
    /// redaction starts with its warning.
    pub fn new(repo: &gix::Repository, options: &Options) -> Checks {
        let mut notes = Notes {
            strict: strict(Some(repo), options.strict),
            ..Notes::default()
        };
        if !options.redact {
            notes.warnings.push(Warning::NoRedact);
        }
        Checks {
            redact: options.redact.then(|| redact::Options::from_repo(repo)),
            lint: options.lint,
            render_lines: options.render_lines,
            notes,
        }
    }

    /// Redact every string of a (partial) brief in place.
    pub fn redact_value(&mut self, value: &mut Value) {
        if let Some(options) = self.redact {
            let found = redact::redact_json(value, options);
            redact::merge(&mut self.notes.redacted, found);
        }
    }

    /// Redact a brief.
    pub fn redact_brief(&mut self, brief: Brief) -> Brief {
        if self.redact.is_none() {
            return brief;
        }
        let mut value = serde_json::to_value(&brief).expect("a brief serializes");
        let before = total(&self.notes.redacted);
        self.redact_value(&mut value);
        if total(&self.notes.redacted) == before {
            return brief;
        }
        serde_json::from_value(value).unwrap_or(brief)
    }

    /// Redact free text (a narrative entry, a plan's reason).
    pub fn redact_text(&mut self, text: &str) -> String {
        match self.redact {
            Some(options) => {
                let (out, found) = redact::redact(text, options);
                redact::merge(&mut self.notes.redacted, found);
                out
            }
            None => text.to_string(),
        }
    }

    /// Lint a composed brief; its findings join the notes under its key.
    pub fn lint(&mut self, repo: &gix::Repository, brief: &Brief) {
        if !self.lint {
            return;
        }
        let value = serde_json::to_value(brief).expect("a brief serializes");
        let findings = lint_value(Some(repo), &value, self.render_lines);
        self.notes
            .findings
            .extend(findings.into_iter().map(|finding| Keyed {
                key: brief.key.clone(),
                finding,
            }));
    }
}

fn total(counts: &Counts) -> usize {
    counts.values().sum()
}

/// Whether lint findings are errors: the `strict` flag, else
/// `handoff.strict`.
pub fn strict(repo: Option<&gix::Repository>, flag: bool) -> bool {
    flag || repo
        .and_then(|r| r.config_snapshot().boolean("handoff.strict"))
        .unwrap_or(false)
}

/// Lint a brief (as JSON) in `repo`'s current worktree: pointers checked
/// against the worktree and HEAD, and, when the brief is complete and
/// `render_lines` is given, the length of its resume render.
pub fn lint_value(
    repo: Option<&gix::Repository>,
    value: &Value,
    render_lines: Option<RenderLines>,
) -> Vec<Finding> {
    let root = repo
        .and_then(|r| repo::worktree_info(r).ok())
        .map(|w| w.root);
    let head_tree = repo.and_then(|r| r.find_tree(repo::head_tree_id(r)?).ok());
    let head_has = |path: &str| {
        head_tree
            .as_ref()
            .is_some_and(|t| t.lookup_entry_by_path(path).ok().flatten().is_some())
    };
    let render_lines = render_lines.and_then(|lines| {
        serde_json::from_value::<Brief>(value.clone())
            .ok()
            .map(|b| lines(&b))
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
