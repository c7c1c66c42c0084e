//! One module per subcommand, each with its `Args` and its `run`.

pub mod brief;
pub mod checks;
pub mod completions;
pub mod demo;
pub mod diff;
pub mod draft;
pub mod drop;
pub mod export;
pub mod fetch;
pub mod fields;
pub mod fork;
pub mod handback;
pub mod health;
pub mod hook;
pub mod import;
pub mod init;
pub mod install_man;
pub mod lint;
pub mod list;
pub mod log;
pub mod mcp;
pub mod merge_narrative;
pub mod overview;
pub mod pipeline;
pub mod prune;
pub mod push;
pub mod recover;
pub mod redact;
pub mod reground;
pub mod resolve;
pub mod restore;
pub mod resume;
pub mod schema;
pub mod show;
pub mod split;
pub mod summary;
pub mod usage;
pub mod validate;
pub mod write;

use std::io::Read;

use anyhow::{Context, Result, anyhow};

use crate::brief::MAX_BRIEF_BYTES;
use crate::cli::Format;
use crate::{brief::keys, git::sticky};

/// Read a brief's bytes from FILE, or from stdin for `-`, refusing more
/// than [`MAX_BRIEF_BYTES`] without reading it all.
pub fn read_input(source: &str) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    let limit = MAX_BRIEF_BYTES as u64 + 1;
    if source == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut data)
            .context("cannot read the brief from stdin")?;
    } else {
        data = read_file(std::path::Path::new(source))?;
    }
    Ok(data)
}

/// Read a file of at most [`MAX_BRIEF_BYTES`] (one byte more is read, so
/// that an oversized file is detected without reading it all).
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    let shown = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot read '{shown}'"))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(anyhow!(
            "'{shown}' is a directory; give a brief file or - for stdin"
        ));
    }
    let mut data = Vec::new();
    file.take(MAX_BRIEF_BYTES as u64 + 1)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read '{shown}'"))?;
    Ok(data)
}

/// The arguments of a command on one named brief that answers with one
/// line, or one JSON line (`drop`, `restore`).
#[derive(Debug, clap::Args)]
pub struct NamedKey {
    /// The brief's key
    pub key: String,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

impl NamedKey {
    /// The key, checked, and the repository of the working directory.
    pub fn open(&self) -> Result<(String, gix::Repository)> {
        let key = checked_key(&self.key)?;
        Ok((key, crate::git::repo::open_cwd()?))
    }
}

/// Which brief a reading command reads: a stored one, by key, or a brief
/// file (`lint`, `reground`).
#[derive(Debug, clap::Args)]
pub struct BriefSource {
    /// The stored brief's key (default: this session's key, else the current branch's)
    pub key: Option<String>,
    /// Read the brief from FILE (or - for stdin) instead of a stored brief
    #[arg(
        short = 'F',
        long = "file",
        value_name = "FILE|-",
        conflicts_with = "key"
    )]
    pub file: Option<String>,
}

/// Validate a key given on the command line, with a hint.
pub fn checked_key(key: &str) -> Result<String> {
    keys::validate(key).map_err(|e| match keys::from_branch(key).filter(|k| k != key) {
        Some(branch_key) if key.contains('/') => {
            crate::refusal!("{e}; the key of branch '{key}' is '{branch_key}'")
        }
        _ => crate::refusal!("{e}; keys are single ref components like 'feat-jwt'"),
    })?;
    Ok(key.to_string())
}

/// The error for a key with no brief.
pub fn no_brief(key: &str) -> anyhow::Error {
    crate::refusal!("no brief for key '{key}'; `git handoff list` shows the keys")
}

/// [`no_brief`], offering what the repository knows of the key elsewhere:
/// a remote's value of it as of the last fetch (`KEY@REMOTE` reads it), or
/// remotes never fetched (`git handoff fetch` brings the team's briefs).
pub fn no_brief_here(repo: &gix::Repository, key: &str) -> anyhow::Error {
    if let Ok(values) = crate::store::remotes::remote_values(repo, key)
        && let Some(remote) = values.keys().next()
    {
        let qk = crate::support::escape::shell_quote(&format!("{key}@{remote}"));
        return crate::refusal!(
            "no brief for key '{key}' here; '{remote}' has one as of the last fetch: `git handoff resume {qk}` reads it"
        );
    }
    match crate::store::remotes::never_fetched(repo).ok().as_deref() {
        Some([remote, ..]) => crate::refusal!(
            "no brief for key '{key}' here, and the briefs of '{remote}' were never fetched: `git handoff fetch` brings the team's briefs"
        ),
        _ => no_brief(key),
    }
}

/// What to say where a repository has no brief at all: how to get the
/// team's when a remote's briefs were never fetched, else how to write one.
pub fn no_briefs_advice(repo: &gix::Repository) -> String {
    match crate::store::remotes::never_fetched(repo).ok().as_deref() {
        Some([remote, ..]) => format!(
            "the team's briefs on '{remote}' were never fetched here: `git handoff fetch` brings them (`git handoff write` creates one of your own)"
        ),
        _ => "`git handoff write` creates one for the current branch".to_string(),
    }
}

/// Which brief a keyless read command means.
pub enum Selection {
    /// This one; `others` are the other stored keys.
    Found {
        /// The selected brief.
        stored: crate::store::Stored,
        /// The other keys, sorted.
        others: Vec<String>,
    },
    /// No brief matches the current branch and several exist: the caller
    /// must list them and refuse to guess.
    Ambiguous(Vec<crate::cli::render::ListRow>),
}

/// Select the brief for `key`, or without one: the key a keyless `write`
/// targets ([`keyless_key`]: `GIT_HANDOFF_KEY`, else this session's sticky
/// key on its branch, else the current branch's), else the current
/// branch's; when that has none, the only brief if there is exactly one;
/// several → [`Selection::Ambiguous`]; none → error.
pub fn select(repo: &gix::Repository, key: Option<&str>) -> Result<Selection> {
    use crate::{git::repo as r, store};
    if let Some(spec) = key {
        let (key, selector) = crate::store::history::parse_key_spec(repo, spec)?;
        let key = checked_key(&key)?;
        let stored = match selector {
            crate::store::history::Selector::Current => {
                store::read(repo, &key)?.ok_or_else(|| no_brief_here(repo, &key))?
            }
            selector => version(repo, &key, &selector)?,
        };
        return Ok(Selection::Found {
            stored,
            others: Vec::new(),
        });
    }
    let head = r::head_state(repo)?;
    let keys = store::keys(repo)?;
    let sticky = keyless_key(repo, &head)?;
    let current = match keys.contains(&sticky) {
        true => sticky,
        false => r::default_key(&head)?,
    };
    if keys.contains(&current) {
        let stored = store::read(repo, &current)?.ok_or_else(|| no_brief(&current))?;
        let others = keys.into_iter().filter(|k| *k != current).collect();
        return Ok(Selection::Found { stored, others });
    }
    match keys.as_slice() {
        [] => Err(crate::refusal!(
            "no briefs in this repository yet; {}",
            no_briefs_advice(repo)
        )),
        [only] => {
            let stored = store::read(repo, only)?.ok_or_else(|| no_brief(only))?;
            Ok(Selection::Found {
                stored,
                others: Vec::new(),
            })
        }
        _ => Ok(Selection::Ambiguous(crate::cli::inventory::rows(
            repo,
            crate::support::clock::now().map_err(anyhow::Error::msg)?,
        )?)),
    }
}

/// An earlier version (`KEY@{N}`, a version id) or a remote's version
/// (`KEY@REMOTE`, as of the last fetch) as a stored brief.
pub fn version(
    repo: &gix::Repository,
    key: &str,
    selector: &crate::store::history::Selector,
) -> Result<crate::store::Stored> {
    use crate::store::history::{self, Selector};
    if let Selector::Remote(remote) = selector {
        return crate::store::remotes::remote_brief(repo, remote, key)?.ok_or_else(|| {
            let qr = crate::support::escape::shell_quote(remote);
            anyhow!(
                "no brief '{key}' from remote '{remote}'; `git handoff fetch {qr}` brings the remote's briefs"
            )
        });
    }
    let log = history::log(repo, key)?;
    let (_, v) = history::select(&log, key, selector).map_err(crate::cli::hints::version)?;
    Ok(crate::store::Stored {
        key: key.to_string(),
        id: v.id,
        data: v.pretty.clone().into_bytes(),
    })
}

/// The refusal for [`Selection::Ambiguous`]: the listing on stdout (JSON
/// with `json`), the reason on stderr naming `verb`, exit 1.
pub fn refuse_ambiguous(
    rows: &[crate::cli::render::ListRow],
    verb: &str,
    format: crate::cli::Format,
) -> crate::cli::Output {
    // None of the rows is this branch's: it would have been selected.
    eprintln!(
        "error: no brief under this branch's key and {} under others; pass a KEY: `git handoff {verb} <key>`",
        rows.len()
    );
    match format {
        crate::cli::Format::Json => {
            crate::cli::report::pretty(&crate::cli::report::Ambiguous::new(rows))
        }
        crate::cli::Format::Human => crate::cli::Output::human(crate::cli::render::list_text(
            rows,
            crate::cli::render::line_width(),
        )),
    }
    .with_code(1)
}

/// [`refuse_ambiguous`] as text and as JSON, the reason on stderr once
/// (for the MCP server, which answers with both).
pub fn ambiguous_both(
    rows: &[crate::cli::render::ListRow],
    verb: &str,
) -> (crate::cli::Output, crate::cli::Output) {
    let json = crate::cli::report::Ambiguous::new(rows);
    (
        refuse_ambiguous(rows, verb, crate::cli::Format::Human),
        crate::cli::report::pretty(&json).with_code(1),
    )
}

/// The key a keyless command or hook uses in `repo`: the one rule of
/// [`sticky::keyless_key`].
pub fn keyless_key(repo: &gix::Repository, head: &crate::git::repo::HeadState) -> Result<String> {
    sticky::keyless_key(repo, head)
}

/// The key a keyless reading command reads at the current HEAD:
/// [`keyless_key`] when a brief is stored under it, else the current
/// branch's key (`GIT_HANDOFF_KEY` overrides).
pub fn keyless_key_here(repo: &gix::Repository) -> Result<String> {
    let head = crate::git::repo::head_state(repo)?;
    let key = keyless_key(repo, &head)?;
    if crate::store::current_id(repo, &key)?.is_some() {
        return Ok(key);
    }
    crate::git::repo::default_key(&head)
}

/// Make `key` this worktree's sticky key after it was resumed (the method:
/// "the selected key becomes the sticky session key"), so that a later
/// keyless `write` continues that thread. It is remembered as the key of
/// the brief's own `branch`: resumed from another branch's worktree, a
/// keyless `write` here follows this worktree's branch (with the
/// branch-switch warning) rather than overwrite the brief with another
/// branch's state. Not in a bare repository, and not when
/// `GIT_HANDOFF_KEY` chose it (a per-process override never sticks).
pub fn adopt(repo: &gix::Repository, key: &str, explicit: bool, branch: &str) {
    if repo.workdir().is_none() {
        return;
    }
    if !explicit && std::env::var(sticky::KEY_ENV).is_ok_and(|k| !k.is_empty()) {
        return;
    }
    if let Ok(Some(current)) = sticky::read(repo)
        && current.key == key
        && current.branch.as_deref() == Some(branch)
        && current.session == sticky::current_session(repo)
    {
        return;
    }
    if let Err(e) = sticky::remember_on(repo, key, branch) {
        eprintln!("warning: this worktree's key could not be remembered: {e:#}");
    }
}

/// Pass text bound for a file through the redaction filter
/// ([`crate::brief::redact::redact_text`]); stderr says how many secrets of which
/// kind were replaced in `what` (never the values). The caller's
/// `options` carry `handoff.redactEmails`, as for briefs.
pub fn redacted(text: &str, what: &str, options: crate::brief::redact::Options) -> String {
    let (out, counts) = crate::brief::redact::redact(text, options);
    if let Some(summary) = crate::brief::redact::summary(&counts) {
        eprintln!("{summary} in {what}");
    }
    out
}

/// `import`'s report rows as they may be printed: a file name, a key or a
/// reason can hold a secret (a file named after a token, a schema message
/// quoting a value), and every line about user data passes the filter.
pub fn redact_rows(rows: &mut [import::Row], options: crate::brief::redact::Options) {
    let shown = |text: &mut String| *text = crate::brief::redact::redact(text, options).0;
    for row in rows {
        shown(&mut row.file);
        row.key.as_mut().map(shown);
        row.reason.as_mut().map(shown);
    }
}

/// A file-name slug of free text, made from its redacted form so that no
/// secret ends up in a file name.
pub fn redacted_slug(text: &str) -> String {
    crate::support::slug::slug(&crate::brief::redact::redact_text(text).0)
}

/// Where a brief shown to a model came from, for the marked block's first
/// line: its version, abbreviated ("not stored" without one), and the
/// history's record of the notes commit that stored it.
pub struct Provenance {
    version: String,
    record: Option<crate::store::provenance::Record>,
}

impl Provenance {
    /// The provenance of version `id` of `brief` (none: not stored).
    pub fn of(
        repo: &gix::Repository,
        id: Option<gix::ObjectId>,
        brief: &crate::brief::Brief,
    ) -> Provenance {
        let head = brief.state.head_sha.as_deref();
        Provenance {
            version: id.map_or("not stored".to_string(), |id| crate::store::short(&id)),
            record: id.and_then(|id| crate::store::provenance::of(repo, id, head).ok().flatten()),
        }
    }

    /// The block's source for `brief`.
    pub fn source<'a>(
        &'a self,
        brief: &'a crate::brief::Brief,
    ) -> crate::cli::render::fence::Source<'a> {
        crate::cli::render::fence::Source {
            key: &brief.key,
            version: &self.version,
            record: self.record.as_ref(),
            timestamp: &brief.timestamp,
        }
    }
}

/// A brief as it may reach a model (the session hooks' context, the MCP
/// results): every string passed through the redaction rules of today
/// once more, as summaries and fork files are, so that a brief stored or
/// fetched before a rule existed does not carry what the rule finds.
pub fn for_model(repo: &gix::Repository, brief: &crate::brief::Brief) -> crate::brief::Brief {
    use crate::brief::redact;
    let Ok(mut value) = serde_json::to_value(brief) else {
        return brief.clone();
    };
    let counts = redact::redact_json(&mut value, redact::Options::from_repo(repo));
    if counts.is_empty() {
        return brief.clone();
    }
    serde_json::from_value(value).unwrap_or_else(|_| brief.clone())
}
