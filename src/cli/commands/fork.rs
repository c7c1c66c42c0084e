//! `git handoff fork`: split a side task off into an independent session
//! through a file in the OS temp dir; `fork list` and `fork consume`.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Result, anyhow, bail};

use crate::agent::fork::{self, Artifact, ForkDoc, Header, Kind, Pointer};
use crate::brief::redact::Options;
use crate::cli::commands::redacted;
use crate::cli::{Format, Output, report};
use crate::{git::repo, narrative, store, support::clock};

/// Split a side task off into an independent session
///
/// Writes <tmpdir>/handoff-<purpose>-<date>.md (the OS temp dir, TMPDIR
/// honoured; never inside the repository) with Date, Purpose, Scope,
/// Pointers, Suggested Skills, Key Context to Start and, with --hand-back,
/// Hand-Back Expected, plus Decisions Made, Artifacts and Current State
/// from the current brief and git — only the decisions and uncommitted
/// files that bear on the purpose (and --context), most relevant first —
/// and prints its path. Fork only a side task outside this session's
/// scope; a full context is no reason to fork (write the brief and continue
/// in a fresh session). `fork list` shows this repository's fork and
/// hand-back files, consumed ones marked; `fork consume FILE` prints one
/// and keeps it as FILE.consumed; `fork done FILE`, once the merge is
/// confirmed, deletes the fork and its hand-back, consumed or not.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    /// List or consume fork and hand-back files
    #[command(subcommand)]
    pub action: Option<Action>,
    /// What the side task is for; names the file
    #[arg(long, required = true, value_name = "TEXT", display_order = 0)]
    pub purpose: Option<String>,
    /// A skill the side session should use (repeatable)
    #[arg(long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,
    /// A file (PATH[:LINES]), brief or narrative section to point at,
    /// never copied (repeatable)
    #[arg(long = "pointer", value_name = "PATH[:LINES]")]
    pub pointers: Vec<String>,
    /// Why the --pointer just before it matters
    #[arg(long = "why", value_name = "TEXT")]
    pub whys: Vec<String>,
    /// A fact the side session needs to start, e.g. a decision that bears
    /// on the purpose (repeatable)
    #[arg(long = "context", value_name = "TEXT")]
    pub context: Vec<String>,
    /// Ask the side session for a hand-back document when done
    #[arg(long)]
    pub hand_back: bool,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// `fork list` and `fork consume`.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// List this repository's fork and hand-back files; consumed ones wait for `fork done`
    List {
        /// Print a JSON array instead of text
        #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
        format: Format,
    },
    /// Print a fork or hand-back file and keep it as FILE.consumed
    Consume {
        /// The file: its path in the temp dir, or its name
        file: String,
    },
    /// Delete a fork file and its hand-back, once the merge is confirmed
    Done {
        /// The fork file (consumed or not): its path in the temp dir, or its name
        file: String,
    },
}

/// Write the fork file, or list or consume.
pub fn run(args: Args) -> Result<Output> {
    match args.action {
        Some(Action::List { format }) => list(format),
        Some(Action::Consume { ref file }) => consume(file),
        Some(Action::Done { ref file }) => done(file),
        None => write(&args),
    }
}

fn write(args: &Args) -> Result<Output> {
    let purpose = args.purpose.as_deref().unwrap_or("").trim();
    if purpose.is_empty() {
        crate::refuse!("fork needs a purpose: --purpose TEXT says what the side task is");
    }
    let slug = crate::cli::commands::redacted_slug(purpose);
    if slug.is_empty() {
        crate::refuse!(
            "the purpose '{purpose}' has no letter or digit to name the file by; say what the side task is"
        );
    }
    let pointers = pair_pointers(&std::env::args_os().collect::<Vec<_>>(), args)?;
    let repo = repo::open_cwd()?;
    let info = repo::worktree_info(&repo)?;
    let dir = fork::dir();
    refuse_inside(&dir, &info)?;
    let head = repo::head_state(&repo)?;
    let key = crate::cli::commands::keyless_key_here(&repo)?;
    let brief = store::read(&repo, &key)
        .ok()
        .flatten()
        .and_then(|s| s.brief().ok());
    let now = clock::now().map_err(crate::refused)?;

    let mut all_pointers = pointers;
    if let Some(brief) = &brief {
        all_pointers.push(Pointer {
            target: format!(
                "Brief `{}`: `git handoff resume {}`",
                brief.key,
                crate::support::escape::shell_quote(&brief.key)
            ),
            why: Some("the parent session's state; read it, do not rewrite it".into()),
        });
    }
    if let Ok(path) = narrative::path(&repo, &info.root)
        && path.is_file()
    {
        let rel = path.strip_prefix(&info.root).unwrap_or(&path);
        all_pointers.push(Pointer {
            target: format!("Narrative: {}, the entries marked [{key}]", rel.display()),
            why: Some("why the parent's decisions were made".into()),
        });
    }
    let mut context = args.context.clone();
    let at = head
        .sha()
        .map(|s| format!(" at {}", &s[..s.len().min(7)]))
        .unwrap_or_default();
    context.push(format!(
        "Repository: {} (branch {}{at})",
        info.root.display(),
        head.branch_label()
    ));
    let focus = format!("{purpose} {}", args.context.join(" "));
    let (decisions, artifacts, current_state) = parent_state(&repo, &head, brief.as_ref(), &focus);
    let doc = ForkDoc {
        header: Header {
            kind: Kind::Fork,
            repo: info.common_dir.display().to_string(),
            purpose: purpose.to_string(),
            date: clock::date(now),
            key: brief.as_ref().map(|b| b.key.clone()),
            hand_back: args.hand_back,
            fork: None,
        },
        parent_goal: brief.as_ref().map(|b| b.resume.done_when.clone()),
        pointers: all_pointers,
        skills: args.skills.clone(),
        context,
        decisions,
        artifacts,
        current_state,
    };
    let stem = fork::fork_stem(&slug, &doc.header.date);
    let path = fork::create(&dir, &stem, |p| {
        redacted(&doc.render(p), "the fork file", Options::from_repo(&repo))
    })?;
    if args.format.is_json() {
        return Ok(report::line(&report::Forked {
            path: path.display().to_string(),
            kind: "fork",
            purpose,
            hand_back: args.hand_back,
        }));
    }
    Ok(Output::human(format!("{}\n", path.display())))
}

/// Refuse a temp dir inside the repository: fork files must never land in it.
fn refuse_inside(dir: &Path, info: &repo::WorktreeInfo) -> Result<()> {
    if dir.starts_with(&info.root) || dir.starts_with(&info.common_dir) {
        crate::refuse!(
            "the temp dir {} is inside this repository; fork files never go there: set TMPDIR to a directory outside it",
            dir.display()
        );
    }
    Ok(())
}

/// Pair each `--why` with the `--pointer` before it, reading the order
/// from the raw command line (clap keeps each option's values, not their
/// interleaving). When the raw line does not match what was parsed (the
/// library called directly), the n-th `--why` goes with the n-th pointer.
fn pair_pointers(raw: &[OsString], args: &Args) -> Result<Vec<Pointer>> {
    const VALUED: [&str; 5] = ["--purpose", "--skill", "--pointer", "--why", "--context"];
    let mut pointers: Vec<Pointer> = Vec::new();
    let mut whys = 0;
    let mut i = 0;
    while i < raw.len() {
        let arg = raw[i].to_string_lossy();
        if arg == "--" {
            break;
        }
        let (flag, value) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.to_string(), None),
        };
        if VALUED.contains(&flag.as_str()) {
            let value = match value {
                Some(v) => v,
                None => {
                    i += 1;
                    raw.get(i)
                        .map(|v| v.to_string_lossy().into_owned())
                        .unwrap_or_default()
                }
            };
            match flag.as_str() {
                "--pointer" => pointers.push(Pointer {
                    target: value,
                    why: None,
                }),
                "--why" => {
                    whys += 1;
                    match pointers.last_mut() {
                        Some(p) if p.why.is_none() => p.why = Some(value),
                        Some(p) => bail!(
                            "two --why for the pointer '{}'; give one --why after each --pointer",
                            p.target
                        ),
                        None => bail!(
                            "--why must follow the --pointer it explains: --pointer PATH --why TEXT"
                        ),
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    let parsed: Vec<&String> = pointers.iter().map(|p| &p.target).collect();
    if parsed.iter().copied().eq(args.pointers.iter()) && whys == args.whys.len() {
        return Ok(pointers);
    }
    if args.whys.len() > args.pointers.len() {
        return Err(anyhow!(
            "more --why than --pointer; give one --why after each --pointer"
        ));
    }
    Ok(args
        .pointers
        .iter()
        .enumerate()
        .map(|(n, p)| Pointer {
            target: p.clone(),
            why: args.whys.get(n).cloned(),
        })
        .collect())
}

fn list(format: Format) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let common = repo::worktree_info(&repo)?.common_dir.display().to_string();
    let alias = crate::brief::redact::redact_text(&common).0;
    let dir = fork::dir();
    let mut found = fork::list(&dir, &common, &[alias])?;
    // A purpose is ours (redacted when written) but hand edits happen.
    let options = Options::from_repo(&repo);
    for a in &mut found {
        a.header.purpose = crate::brief::redact::redact(&a.header.purpose, options).0;
    }
    Ok(Output::report(format, &found, |found| {
        list_text(found, &dir).into()
    }))
}

fn list_text(found: &[Artifact], dir: &Path) -> String {
    if found.is_empty() {
        return format!(
            "No fork or hand-back files for this repository in {}.\n",
            dir.display()
        );
    }
    let pw = found
        .iter()
        .map(|a| a.header.purpose.chars().count().min(40))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for a in found {
        let purpose: String = a.header.purpose.chars().take(40).collect();
        let purpose = purpose.split_whitespace().collect::<Vec<_>>().join(" ");
        let state = if a.consumed {
            "  (consumed, awaiting `fork done`)"
        } else {
            ""
        };
        out.push_str(&format!(
            "{:9}  {}  {purpose:pw$}  {}{state}\n",
            a.header.kind.label(),
            a.header.date,
            a.path.display()
        ));
    }
    if found.iter().any(|a| a.consumed) {
        out.push_str(
            "Consumed files are kept until `git handoff fork done FORKFILE`, once the merge is confirmed.\n",
        );
    }
    out
}

fn consume(file: &str) -> Result<Output> {
    let dir = fork::dir();
    let path = fork::resolve(&dir, file)?;
    let (header, body) = fork::consume(&path)?;
    // Redacted when written, but an agent edits these files: what is
    // printed passes the filter again.
    let options = repo::open_cwd()
        .map(|repo| Options::from_repo(&repo))
        .unwrap_or_default();
    let body = crate::cli::commands::redacted(&body, "the file", options);
    if let Ok(repo) = repo::open_cwd()
        && let Ok(info) = repo::worktree_info(&repo)
        && header.repo != info.common_dir.display().to_string()
    {
        eprintln!(
            "note: this {} belongs to another repository ({})",
            header.kind.label(),
            header.repo
        );
    }
    eprintln!(
        "Consumed {0}; kept as {0}{1} until `git handoff fork done` after the merge",
        path.display(),
        fork::CONSUMED_SUFFIX
    );
    Ok(Output::human(body))
}

fn done(file: &str) -> Result<Output> {
    let dir = fork::dir();
    let path = fork::resolve(&dir, file)?;
    let deleted = fork::done(&path)?;
    Ok(Output::human(
        deleted
            .iter()
            .map(|p| format!("Deleted {}\n", p.display()))
            .collect::<String>(),
    ))
}

/// The most decisions a fork file copies.
const FORK_DECISIONS: usize = 5;
/// The most uncommitted files a fork file names.
const FORK_FILES: usize = 10;

/// The parent's state for the fork file, sliced to the fork's purpose
/// (`focus`: the purpose and the --context facts): Decisions Made (the
/// brief's decisions that bear on it, most relevant first), Artifacts (the
/// uncommitted files that bear on it, the brief) and Current State (branch
/// and head, uncommitted summary, tests, next step). What is cut is
/// counted in one line that says where the rest is.
fn parent_state(
    repo: &gix::Repository,
    head: &repo::HeadState,
    brief: Option<&crate::brief::Brief>,
    focus: &str,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut decisions, cut) = crate::cli::render::relevant_slice(
        brief.map(|b| b.state.decisions.clone()).unwrap_or_default(),
        focus,
        FORK_DECISIONS,
    );
    if let (Some(b), 1..) = (brief, cut) {
        decisions.push(format!(
            "(+{cut} more, not about this purpose: `git handoff resume {}`)",
            crate::support::escape::shell_quote(&b.key)
        ));
    }
    let (files, cut) = crate::cli::render::relevant_slice(
        repo::changed_files(repo).unwrap_or_default(),
        focus,
        FORK_FILES,
    );
    let mut artifacts: Vec<String> = files
        .into_iter()
        .map(|f| format!("`{f}` (uncommitted)"))
        .collect();
    if cut > 0 {
        artifacts.push(format!(
            "(+{cut} more uncommitted, not about this purpose: `git status`)"
        ));
    }
    if let Some(b) = brief {
        artifacts.push(format!("Brief `refs/handoffs/{}`", b.key));
    }
    let mut state = vec![format!(
        "Branch {}{}",
        head.branch_label(),
        head.sha()
            .map(|s| format!(" at {}", &s[..s.len().min(7)]))
            .unwrap_or_default()
    )];
    if let Some(summary) = repo::diff_stat(repo).ok().and_then(|d| d.summary()) {
        state.push(format!("Uncommitted: {summary}"));
    }
    if let Some(b) = brief {
        for t in &b.state.tests {
            state.push(format!("Test `{}`: {}", t.cmd, t.result));
        }
        state.push(format!("Next step: {}", b.resume.resume_by));
        state.push(format!("Done when: {}", b.resume.done_when));
    }
    (decisions, artifacts, state)
}
