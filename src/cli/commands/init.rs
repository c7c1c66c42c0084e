//! `git handoff init [REMOTE] [--check]`: set a repository up for git-handoff.
//!
//! The setup is a list of independent [`Item`]s, each with a `check` (is it
//! set up?) and an `apply` (set it up). `init` applies what is missing and
//! leaves alone what is set up, so running it twice changes nothing the
//! second time; `init --check` only reports. To add a setup step, add an
//! [`Item`] to [`items`] ([`ConfigValue`] covers a plain config key).
//!
//! Config is read and written with the `git` binary: it is what merges and
//! pushes read, so `check` sees exactly what git will use (includes, `-c`,
//! every scope), and `git config --local` writes only the repository's own
//! config, under git's lock, never the global one.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, anyhow, bail};

use crate::cli::render::{self, SetupRow};
use crate::cli::{Format, Output, report};
use crate::{git::repo, narrative, store, store::remotes};

/// The merge driver's name in `merge.<name>.*` and in the `merge` attribute.
pub const DRIVER_ID: &str = "handoff-narrative";

/// `merge.handoff-narrative.driver`: how git runs the driver.
pub const DRIVER_COMMAND: &str = "git handoff merge-narrative %O %A %B %P";

/// `merge.handoff-narrative.name`: the driver's human-readable name.
pub const DRIVER_NAME: &str = "git-handoff narrative (merged as a log, newest entry first)";

/// Set this repository up for git-handoff, or check that it is
///
/// Registers the narrative merge driver in the repository's config
/// (merge.handoff-narrative.name and .driver) and adds
/// `<narrative path> merge=handoff-narrative` to .git/info/attributes when
/// git does not already see that attribute: both per clone, so the working
/// tree stays clean (a team may commit the line to .gitattributes instead;
/// init leaves it alone). For sharing: adds
/// refs/notes/handoffs to notes.rewriteRef (history notes follow rebase and
/// amend), sets notes.handoffs.mergeStrategy=cat_sort_uniq (a plain `git
/// notes merge` unions the history too) and, with REMOTE, handoff.remote.
/// Adds to each remote's remote.<name>.fetch two refspecs that bring its
/// briefs and history into refs/handoff-fetch/<name>/, so that a plain `git
/// fetch` or `git pull` brings the team's briefs: the next git-handoff
/// command takes them with the rules of `fetch` (validated, secret gate,
/// three-way), without the network. Never writes remote.*.push, so `git
/// push` behaves as before. What is set up is left alone, so running it
/// again changes nothing. Never writes global config. `--check` also
/// lists the remote's refs and reports (blocked) refs of git-handoff's own
/// bookkeeping there, which a plain `git push --mirror` copies, with the
/// command that removes them. With --pre-push, installs a pre-push hook
/// that runs the secret gate on every handoff ref and history a plain `git
/// push` would send and refuses a secret; an existing hook is kept (moved
/// to pre-push.before-handoff) and runs after it; with core.hooksPath set,
/// nothing is installed and the line to add is printed. `--check` reports
/// whether it is installed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote `push` and `fetch` use by default (sets handoff.remote)
    pub remote: Option<String>,
    /// Only report what is and is not set up (exit 1 when something is not)
    #[arg(long)]
    pub check: bool,
    /// Also install a pre-push hook that refuses a plain `git push` sending a secret in a brief, an archived brief or the history (an existing hook is kept and runs after it)
    #[arg(long)]
    pub pre_push: bool,
    /// Print the report as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// What the setup items work on.
pub struct Context {
    /// The current worktree's root, canonical.
    pub root: PathBuf,
    /// The narrative's path relative to the root, with `/` separators.
    pub narrative: String,
    /// The remote to record as `handoff.remote`, if one was given.
    pub remote: Option<String>,
    /// Every remote whose name fits in a ref name, each getting the fetch
    /// refspecs of [`FetchRefspecs`].
    pub remotes: Vec<String>,
}

/// The state of one setup item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Set up; says what is there.
    Done(String),
    /// Not set up, and `apply` sets it up; says what is missing.
    Missing(String),
    /// Not set up, and `apply` will not change it (the user chose
    /// otherwise); says what to do.
    Blocked(String),
}

/// One independent setup step.
pub trait Item {
    /// A short name for reports, like the config key or file it sets.
    fn name(&self) -> String;
    /// Whether it is set up; reads only.
    fn check(&self, ctx: &Context) -> Result<Status>;
    /// Set it up; called only when `check` said [`Status::Missing`].
    fn apply(&self, ctx: &Context) -> Result<()>;
}

/// Every setup item, in the order they are reported.
pub fn items(ctx: &Context) -> Vec<Box<dyn Item>> {
    let mut items: Vec<Box<dyn Item>> = vec![
        Box::new(ConfigValue {
            key: "merge.handoff-narrative.name",
            value: DRIVER_NAME.to_string(),
        }),
        Box::new(ConfigValue {
            key: "merge.handoff-narrative.driver",
            value: DRIVER_COMMAND.to_string(),
        }),
        Box::new(NarrativeAttribute),
        Box::new(NotesRewriteRef),
        Box::new(ConfigValue {
            key: "notes.handoffs.mergeStrategy",
            value: "cat_sort_uniq".to_string(),
        }),
        Box::new(RemoteBases),
    ];
    for remote in &ctx.remotes {
        items.push(Box::new(FetchRefspecs {
            remote: remote.clone(),
        }));
    }
    if let Some(remote) = &ctx.remote {
        items.push(Box::new(ConfigValue {
            key: "handoff.remote",
            value: remote.clone(),
        }));
    }
    items
}

/// Run init or init --check.
pub fn run(args: Args) -> Result<Output> {
    let repo = repo::open_cwd()?;
    let root = repo::worktree_info(&repo)?.root;
    let full = narrative::path(&repo, &root)?;
    let rel = full
        .strip_prefix(&root)
        .map_err(|_| anyhow!("the narrative {} is outside the worktree", full.display()))?;
    let narrative = rel
        .to_str()
        .ok_or_else(|| anyhow!("the narrative path {} is not UTF-8", rel.display()))?
        .replace(std::path::MAIN_SEPARATOR, "/");
    let remote = args
        .remote
        .as_deref()
        .map(|r| remotes::checked_remote(&repo, r))
        .transpose()?;
    let remotes = repo
        .remote_names()
        .iter()
        .filter_map(|r| remotes::checked_remote(&repo, &r.to_string()).ok())
        .collect();
    let ctx = Context {
        root,
        narrative,
        remote,
        remotes,
    };
    let mut rows: Vec<SetupRow> = items(&ctx)
        .iter()
        .map(|item| setup(item.as_ref(), &ctx, !args.check))
        .collect();
    if args.check || args.pre_push {
        let hook = super::hook::pre_push::PrePushHook {
            wanted: args.pre_push,
        };
        rows.push(setup(&hook, &ctx, !args.check));
    }
    if args.check {
        rows.extend(remote_bookkeeping(&repo, ctx.remote.as_deref()));
    }
    let ok = rows.iter().all(|r| r.status == "ok" || r.status == "set");
    let out = match args.format {
        Format::Json => report::pretty(&report::Setup {
            ok,
            changed: rows.iter().any(|r| r.status == "set"),
            items: &rows,
        }),
        Format::Human => Output::human(render::setup_text(&rows, args.check)),
    };
    Ok(out.with_code(if ok { 0 } else { 1 }))
}

/// `init --check` only: whether the remote (the one named, else the
/// default one, if any) holds refs of git-handoff's own bookkeeping, which
/// a plain `git push --mirror` copies there and `init` cannot prevent.
/// `blocked` with the command that removes them; nothing when there is no
/// remote.
fn remote_bookkeeping(repo: &gix::Repository, remote: Option<&str>) -> Option<SetupRow> {
    let remote = match remote {
        Some(r) => r.to_string(),
        None => remotes::default_remote(repo).ok()?,
    };
    let row = |status: &str, detail: String| SetupRow {
        name: format!("refs/handoff-* on '{remote}'"),
        status: status.to_string(),
        detail,
    };
    Some(match crate::sync::bookkeeping_on(repo, &remote) {
        Err(e) => row("failed", format!("{e:#}")),
        Ok(names) => match render::bookkeeping_warning(&remote, &names) {
            Some(warning) => row("blocked", warning),
            None => row("ok", "no bookkeeping refs there".to_string()),
        },
    })
}

/// Check one item and, when `apply` and it is missing, set it up and check
/// again. The row's status: `ok`, `set`, `missing`, `blocked` or `failed`.
fn setup(item: &dyn Item, ctx: &Context, apply: bool) -> SetupRow {
    let row = |status: &str, detail: String| SetupRow {
        name: item.name(),
        status: status.to_string(),
        detail,
    };
    let failed = |e: anyhow::Error| row("failed", format!("{e:#}"));
    match item.check(ctx) {
        Err(e) => failed(e),
        Ok(Status::Done(d)) => row("ok", d),
        Ok(Status::Blocked(d)) => row("blocked", d),
        Ok(Status::Missing(d)) if !apply => row("missing", d),
        Ok(Status::Missing(_)) => match item.apply(ctx).and_then(|()| item.check(ctx)) {
            Err(e) => failed(e),
            Ok(Status::Done(d)) => row("set", d),
            Ok(Status::Missing(d) | Status::Blocked(d)) => row("failed", d),
        },
    }
}

/// Run `git` in the current directory (the repository `open_cwd` found).
fn git(args: &[&str]) -> Result<std::process::Output> {
    Command::new("git")
        .args(args)
        .output()
        .with_context(|| format!("cannot run `git {}`; is git on PATH?", args.join(" ")))
}

/// A config key that must have one value.
pub struct ConfigValue {
    /// The key, like `merge.handoff-narrative.driver`.
    pub key: &'static str,
    /// The value it must have.
    pub value: String,
}

impl ConfigValue {
    /// The value git sees (any scope), or `None` when unset.
    fn current(&self) -> Result<Option<String>> {
        let out = git(&["config", "--get", self.key])?;
        match out.status.code() {
            Some(0) => Ok(Some(
                String::from_utf8_lossy(&out.stdout)
                    .trim_end_matches('\n')
                    .to_string(),
            )),
            Some(1) => Ok(None),
            _ => bail!(
                "`git config --get {}` failed: {}",
                self.key,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
}

impl Item for ConfigValue {
    fn name(&self) -> String {
        self.key.to_string()
    }

    fn check(&self, _ctx: &Context) -> Result<Status> {
        Ok(match self.current()? {
            Some(v) if v == self.value => Status::Done(v),
            Some(v) => Status::Missing(format!("is '{v}', should be '{}'", self.value)),
            None => Status::Missing(format!("not set (should be '{}')", self.value)),
        })
    }

    fn apply(&self, _ctx: &Context) -> Result<()> {
        let out = git(&["config", "--local", self.key, &self.value])?;
        if !out.status.success() {
            bail!(
                "`git config --local {}` failed: {}",
                self.key,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }
}

/// `refs/notes/handoffs` among the (multi-valued) `notes.rewriteRef`, so
/// that `git rebase` and `git commit --amend` copy the history notes to the
/// rewritten commits. A glob that covers it counts.
pub struct NotesRewriteRef;

impl NotesRewriteRef {
    const KEY: &'static str = "notes.rewriteRef";

    fn values() -> Result<Vec<String>> {
        let out = git(&["config", "--get-all", Self::KEY])?;
        match out.status.code() {
            Some(0) => Ok(String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect()),
            Some(1) => Ok(Vec::new()),
            _ => bail!(
                "`git config --get-all {}` failed: {}",
                Self::KEY,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
}

impl Item for NotesRewriteRef {
    fn name(&self) -> String {
        Self::KEY.to_string()
    }

    fn check(&self, _ctx: &Context) -> Result<Status> {
        let values = Self::values()?;
        let covering = values.iter().find(|v| {
            v.as_str() == store::NOTES_REF
                || v.strip_suffix('*')
                    .is_some_and(|prefix| store::NOTES_REF.starts_with(prefix))
        });
        Ok(match covering {
            Some(v) => Status::Done(v.clone()),
            None => Status::Missing(format!(
                "does not include {} (history notes would not follow rebase and amend)",
                store::NOTES_REF
            )),
        })
    }

    fn apply(&self, _ctx: &Context) -> Result<()> {
        let out = git(&["config", "--local", "--add", Self::KEY, store::NOTES_REF])?;
        if !out.status.success() {
            bail!(
                "`git config --local --add {}` failed: {}",
                Self::KEY,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }
}

/// `<narrative> merge=handoff-narrative` in the repository's
/// `info/attributes`: per clone, as the driver's config is, so `init`
/// leaves the working tree clean. A line committed to `.gitattributes`
/// works as well, and is left alone.
pub struct NarrativeAttribute;

/// The attributes file `init` writes, as reports name it.
pub const INFO_ATTRIBUTES: &str = ".git/info/attributes";

impl NarrativeAttribute {
    fn line(ctx: &Context) -> Result<String> {
        Ok(format!(
            "{} merge={DRIVER_ID}",
            attribute_pattern(&ctx.narrative)?
        ))
    }

    /// The repository's `info/attributes` (in the common git dir, shared
    /// by its worktrees), as git resolves it.
    fn info_file() -> Result<PathBuf> {
        let out = git(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "info/attributes",
        ])?;
        if !out.status.success() {
            bail!(
                "`git rev-parse --git-path info/attributes` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let path = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        Ok(PathBuf::from(path))
    }

    /// Whether `info/attributes` holds the line (else it comes from a
    /// `.gitattributes`).
    fn in_info_file(ctx: &Context) -> Result<bool> {
        let line = Self::line(ctx)?;
        Ok(std::fs::read_to_string(Self::info_file()?)
            .is_ok_and(|text| text.lines().any(|l| l.trim() == line)))
    }

    /// The `merge` attribute git sees for the narrative: `unspecified`,
    /// `set`, `unset` or a driver name.
    fn current(ctx: &Context) -> Result<String> {
        let path = ctx.root.join(&ctx.narrative);
        let path = path.to_str().expect("built from UTF-8 parts");
        let out = git(&["check-attr", "-z", "merge", "--", path])?;
        if !out.status.success() {
            bail!(
                "`git check-attr merge` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let fields: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
        fields
            .get(2)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .ok_or_else(|| anyhow!("cannot read the output of `git check-attr merge`"))
    }
}

impl Item for NarrativeAttribute {
    fn name(&self) -> String {
        INFO_ATTRIBUTES.to_string()
    }

    fn check(&self, ctx: &Context) -> Result<Status> {
        let path = &ctx.narrative;
        Ok(match Self::current(ctx)?.as_str() {
            DRIVER_ID if Self::in_info_file(ctx)? => Status::Done(format!(
                "{path} merge={DRIVER_ID}, for this clone only (as the driver's config)"
            )),
            DRIVER_ID => Status::Done(format!(
                "{path} merge={DRIVER_ID}, from a committed .gitattributes"
            )),
            "unspecified" => Status::Missing(format!(
                "{path} has no merge attribute, so git merges it as plain text; init adds it here, for this clone only"
            )),
            other => {
                let what = match other {
                    "set" => "merge".to_string(),
                    "unset" => "-merge".to_string(),
                    v => format!("merge={v}"),
                };
                Status::Blocked(format!(
                    "{path} has {what} from an attributes file (see `git check-attr -a {path}`); to merge it as a log, remove that line and run `git handoff init` again"
                ))
            }
        })
    }

    fn apply(&self, ctx: &Context) -> Result<()> {
        let line = Self::line(ctx)?;
        let file = Self::info_file()?;
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        append_line(&file, &line)
    }
}

/// The bases and remote histories live under `refs/handoff-remotes/`, not
/// where earlier versions kept them (`refs/remotes/<remote>/handoffs/`,
/// `refs/notes/remotes/<remote>/handoffs`, where git's own branches land).
struct RemoteBases;

impl Item for RemoteBases {
    fn name(&self) -> String {
        remotes::REMOTES_PREFIX.to_string()
    }

    fn check(&self, ctx: &Context) -> Result<Status> {
        let repo = gix::discover(&ctx.root).context("cannot open the repository")?;
        Ok(match remotes::legacy_count(&repo)? {
            0 => Status::Done("the bases are outside refs/remotes/".to_string()),
            n => Status::Missing(format!(
                "{n} ref{} of an earlier version under refs/remotes/*/handoffs/ or refs/notes/remotes/, where git's own branches land",
                if n == 1 { "" } else { "s" }
            )),
        })
    }

    fn apply(&self, ctx: &Context) -> Result<()> {
        let repo = gix::discover(&ctx.root).context("cannot open the repository")?;
        remotes::migrate(&repo)
    }
}

/// The fetch refspecs (`remote.<remote>.fetch`, multi-valued) that make a
/// plain `git fetch` or `git pull` bring the remote's briefs and history
/// into the staging namespace `git handoff fetch` uses; the next
/// git-handoff command takes them. Each is added once; the remote's own
/// refspecs are left alone, and `remote.<remote>.push` is never written.
pub struct FetchRefspecs {
    /// The remote.
    pub remote: String,
}

impl FetchRefspecs {
    fn key(&self) -> String {
        format!("remote.{}.fetch", self.remote)
    }

    /// Whether the remote is a partial clone's (its fetches filter
    /// objects out, which `git handoff fetch` turns off and a refspec
    /// cannot).
    fn partial(&self) -> Result<bool> {
        for key in ["promisor", "partialclonefilter"] {
            let out = git(&["config", "--get", &format!("remote.{}.{key}", self.remote)])?;
            if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() != "false" {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The remote's fetch refspecs, every scope.
    fn values(&self) -> Result<Vec<String>> {
        let key = self.key();
        let out = git(&["config", "--get-all", &key])?;
        Ok(match out.status.code() {
            Some(0) => String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect(),
            Some(1) => Vec::new(),
            _ => bail!(
                "`git config --get-all {key}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }

    /// The refspecs git-handoff needs that the remote lacks, and those of
    /// the same shape that stage into another remote's namespace (left by
    /// `git remote rename`, which rewrites only the default refspec).
    fn missing_and_stale(&self) -> Result<(Vec<String>, Vec<String>)> {
        let values = self.values()?;
        let ours = crate::sync::staged::refspecs(&self.remote);
        let missing = ours
            .iter()
            .filter(|s| !values.contains(s))
            .cloned()
            .collect();
        let stale = values
            .into_iter()
            .filter(|v| {
                !ours.contains(v)
                    && ["+refs/handoffs/*:", "+refs/notes/handoffs*:"]
                        .iter()
                        .any(|src| {
                            v.strip_prefix(src)
                                .is_some_and(|dst| dst.starts_with(remotes::STAGING_PREFIX))
                        })
            })
            .collect();
        Ok((missing, stale))
    }
}

impl Item for FetchRefspecs {
    fn name(&self) -> String {
        self.key()
    }

    fn check(&self, _ctx: &Context) -> Result<Status> {
        let (missing, stale) = self.missing_and_stale()?;
        if !missing.is_empty() && self.partial()? {
            // Not an error: `git handoff fetch` works as before.
            return Ok(Status::Done(format!(
                "not added: '{}' is a partial clone's remote, whose plain `git fetch` would leave the history's blobs behind; `git handoff fetch` brings the briefs whole",
                self.remote
            )));
        }
        let remote = &crate::support::escape::shell_quote(&self.remote);
        Ok(match (missing.is_empty(), stale.is_empty()) {
            (true, true) => Status::Done(format!(
                "`git fetch {remote}` brings the briefs and their history; the next git-handoff command takes them"
            )),
            (false, true) => Status::Missing(format!(
                "lacks {} (a plain `git fetch {remote}` does not bring the briefs)",
                missing.join(" and ")
            )),
            (_, false) => Status::Missing(format!(
                "has {}, which stage{} another remote's briefs (a renamed remote?); init replaces {}",
                stale.join(" and "),
                if stale.len() == 1 { "s" } else { "" },
                if stale.len() == 1 { "it" } else { "them" }
            )),
        })
    }

    fn apply(&self, _ctx: &Context) -> Result<()> {
        let key = self.key();
        let (missing, stale) = self.missing_and_stale()?;
        let unset = stale.iter().map(|spec| {
            vec![
                "config",
                "--local",
                "--fixed-value",
                "--unset-all",
                key.as_str(),
                spec.as_str(),
            ]
        });
        let add = missing
            .iter()
            .map(|spec| vec!["config", "--local", "--add", key.as_str(), spec.as_str()]);
        for args in unset.chain(add) {
            let out = git(&args)?;
            if !out.status.success() {
                bail!(
                    "`git {}` failed: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
        Ok(())
    }
}

/// The narrative log as drift tells its commits from work: its path in
/// the tree and the `.gitattributes` line this command adds for it;
/// `None` when the narrative is off.
pub fn drift_narrative(repo: &gix::Repository) -> Option<crate::drift::Narrative> {
    let path = narrative::tree_path(repo)?;
    let attribute = attribute_pattern(&path)
        .ok()
        .map(|pattern| format!("{pattern} merge={DRIVER_ID}"));
    Some(crate::drift::Narrative { path, attribute })
}

/// The `.gitattributes` pattern that matches exactly `rel` (relative to the
/// worktree root): glob characters escaped, anchored at the root, C-quoted
/// when it holds spaces or quotes.
pub fn attribute_pattern(rel: &str) -> Result<String> {
    if rel.chars().any(char::is_control) {
        bail!(
            "the narrative path '{}' holds control characters; add its merge={DRIVER_ID} line to .gitattributes by hand",
            rel.escape_default()
        );
    }
    let mut escaped = String::new();
    for c in rel.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    // A pattern without a slash would match the name in every directory.
    if !escaped.contains('/') {
        escaped.insert(0, '/');
    }
    if escaped.contains([' ', '"']) {
        return Ok(format!(
            "\"{}\"",
            escaped.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    Ok(escaped)
}

/// Append `line` to `file` (created if missing) under git's lock-file
/// protocol, unless the file already has it.
fn append_line(file: &Path, line: &str) -> Result<()> {
    if file.is_symlink() {
        bail!(
            "{} is a symlink; refusing to follow it: add `{line}` by hand",
            file.display()
        );
    }
    let mut lock = gix::lock::File::acquire_to_update_resource(
        file,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(5)),
        None,
        0,
    )
    .map_err(|_| {
        anyhow!(
            "cannot lock {}: '{}.lock' exists; if no other program is writing it, remove that file",
            file.display(),
            file.display()
        )
    })?;
    let existing = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let has_line = String::from_utf8_lossy(&existing)
        .lines()
        .any(|l| l.trim() == line);
    if has_line {
        bail!(
            "{} already has `{line}`, but git does not apply it: a .gitattributes closer to the file or .git/info/attributes overrides it (see `git check-attr -a`)",
            file.display()
        );
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(line.as_bytes());
    text.push(b'\n');
    lock.with_mut(|f| std::io::Write::write_all(f, &text))
        .with_context(|| format!("cannot write {}.lock", file.display()))?;
    lock.commit()
        .map_err(|e| anyhow!("cannot replace {}: {}", file.display(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_patterns_match_only_the_narrative() {
        let p = |s| attribute_pattern(s).unwrap();
        assert_eq!(p(".claude/PROJECT_STATE.md"), ".claude/PROJECT_STATE.md");
        assert_eq!(p("NOTES.md"), "/NOTES.md");
        assert_eq!(p("docs/a[1]*.md"), "docs/a\\[1\\]\\*.md");
        assert_eq!(p("docs/Project State.md"), "\"docs/Project State.md\"");
        assert_eq!(p("docs/a b*.md"), "\"docs/a b\\\\*.md\"");
        assert!(attribute_pattern("docs/a\nb").is_err());
    }
}
