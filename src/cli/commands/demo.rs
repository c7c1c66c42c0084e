//! `git handoff demo [DIR]`: a one-command tour in a throwaway repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::{Doc, Output, Style};
use crate::support::clock;

/// Tour the whole loop in a throwaway repository (never the current one)
///
/// Builds a repository in DIR (or a new temporary directory it names), writes
/// a brief from a linked worktree, makes commits, deletes a file, leaves an
/// uncommitted change, then resumes from the main worktree a day and a half
/// later so that every drift warning shows — and finally shows a brief from
/// another project being refused.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to build the demo (must not exist or be empty)
    pub dir: Option<PathBuf>,
}

struct Tour {
    exe: PathBuf,
    log: Doc,
}

impl Tour {
    fn cmd(&self, program: &Path, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir);
        for var in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_COMMON_DIR",
            "GIT_HANDOFF_KEY",
            "GIT_HANDOFF_NOW",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("GIT_AUTHOR_NAME", "Demo")
            .env("GIT_AUTHOR_EMAIL", "demo@example.invalid")
            .env("GIT_COMMITTER_NAME", "Demo")
            .env("GIT_COMMITTER_EMAIL", "demo@example.invalid");
        cmd
    }

    /// Run git quietly; fail loudly.
    fn git(&mut self, dir: &Path, args: &[&str]) -> Result<String> {
        let out = self
            .cmd(Path::new("git"), dir)
            .args(args)
            .output()
            .context("cannot run git; is it installed?")?;
        if !out.status.success() {
            bail!(
                "demo step `git {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Run git-handoff, showing the command and what it printed.
    fn handoff(
        &mut self,
        dir: &Path,
        shown_dir: &str,
        args: &[&str],
        now: Option<&str>,
    ) -> Result<()> {
        let mut cmd = self.cmd(&self.exe.clone(), dir);
        cmd.args(args);
        if let Some(now) = now {
            cmd.env("GIT_HANDOFF_NOW", now);
        }
        let out = cmd.output().context("cannot run git-handoff")?;
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') {
                    format!("'{a}'")
                } else {
                    a.to_string()
                }
            })
            .collect();
        self.log
            .push_str(&format!("\n{shown_dir}$ git handoff {}\n", shown.join(" ")));
        self.log.push_str(&String::from_utf8_lossy(&out.stdout));
        self.log.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok(())
    }

    fn say(&mut self, text: &str) {
        self.log.push('\n');
        self.log.styled_line(Style::Heading, &format!("==> {text}"));
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Build the demo and return its transcript.
pub fn run(args: Args) -> Result<Output> {
    let base = base_dir(args.dir)?;
    let base = crate::git::repo::canonical(&base);
    let repo = base.join("app");
    let feature = base.join("app-feature");
    let other = base.join("other-project");
    let mut tour = Tour {
        exe: std::env::current_exe().context("cannot locate the git-handoff binary")?,
        log: Doc::from(format!("git-handoff demo in {}\n", base.display())),
    };
    let now = clock::now().map_err(anyhow::Error::msg)?;
    let earlier = clock::format(now - 31 * 3600);

    setup(&mut tour, &repo, &feature)?;
    hand_off(&mut tour, &feature, &earlier)?;
    resume(&mut tour, &repo, &feature)?;
    refuse_foreign(&mut tour, &base, &repo, &other)?;
    tour.log.push_str(&format!(
        "\nPlain git reads it all: git -C {} for-each-ref refs/handoffs; git -C {} log --notes=handoffs\nDelete the demo with: rm -rf {}\n",
        repo.display(),
        repo.display(),
        base.display()
    ));
    Ok(Output::human(tour.log))
}

/// The demo's directory: DIR when it is new or empty, else a new
/// temporary one that is kept.
fn base_dir(dir: Option<std::path::PathBuf>) -> Result<std::path::PathBuf> {
    Ok(match dir {
        Some(dir) => {
            if dir.exists()
                && std::fs::read_dir(&dir)
                    .map(|mut d| d.next().is_some())
                    .unwrap_or(true)
            {
                crate::refuse!(
                    "'{}' exists and is not empty; give a new directory for the demo",
                    dir.display()
                );
            }
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            dir
        }
        None => tempfile::Builder::new()
            .prefix("git-handoff-demo-")
            .tempdir()
            .context("cannot create a temporary directory")?
            .keep(),
    })
}

/// The app repository with two files, and its linked worktree on feat/jwt.
fn setup(tour: &mut Tour, repo: &Path, feature: &Path) -> Result<()> {
    std::fs::create_dir_all(repo)?;
    tour.git(repo, &["init", "-q", "-b", "main"])?;
    write_file(&repo.join("README.md"), "# app\n")?;
    write_file(
        &repo.join("src/auth.rs"),
        "pub fn verify(exp: u64, now: u64) -> bool {\n    now < exp\n}\n",
    )?;
    write_file(&repo.join("src/legacy.rs"), "// old token parser\n")?;
    tour.git(repo, &["add", "."])?;
    tour.git(repo, &["commit", "-q", "-m", "initial app"])?;
    tour.git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feat/jwt",
            feature.to_str().ok_or_else(|| anyhow!("non-UTF-8 path"))?,
        ],
    )?;
    Ok(())
}

/// A session in the linked worktree writes a brief, 31 hours ago.
fn hand_off(tour: &mut Tour, feature: &Path, earlier: &str) -> Result<()> {
    tour.say(
        "A session in the linked worktree app-feature (branch feat/jwt) hands off, 31 hours ago",
    );
    tour.handoff(
        feature,
        "app-feature",
        &[
            "write",
            "--done-when",
            "cargo test auth passes",
            "--resume-by",
            "Add a 30 s leeway to verify()",
            "--next-check",
            "cargo test auth::expiry",
            "--decision",
            "compare with <= and a 30 s leeway — tokens minted on a skewed clock still verify",
            "--rejected",
            "switching to chrono (too big for one check)",
            "--read",
            "src/auth.rs=the check under repair",
            "--read",
            "src/legacy.rs=the old parser, for reference",
        ],
        Some(earlier),
    )?;
    Ok(())
}

/// Work goes on, then a new session resumes: drift, a subagent brief and
/// a re-grounding.
fn resume(tour: &mut Tour, repo: &Path, feature: &Path) -> Result<()> {
    tour.say("Meanwhile: two commits touch auth.rs and delete legacy.rs; an edit stays uncommitted in app-feature");
    write_file(
        &feature.join("src/auth.rs"),
        "pub fn verify(exp: u64, now: u64) -> bool {\n    now <= exp + 30\n}\n",
    )?;
    tour.git(feature, &["commit", "-q", "-am", "auth: leeway"])?;
    tour.git(feature, &["rm", "-q", "src/legacy.rs"])?;
    tour.git(feature, &["commit", "-q", "-m", "drop the legacy parser"])?;
    write_file(&feature.join("README.md"), "# app\n\nWork in progress.\n")?;
    tour.log
        .push_str("(git commit ×2 and README.md edited in app-feature)\n");

    tour.say("A new session in the main worktree resumes it: drift is measured on feat/jwt, where the work is");
    tour.handoff(repo, "app", &["list"], None)?;
    tour.handoff(repo, "app", &["resume"], None)?;

    tour.say("A subagent gets a short brief; a long session re-grounds");
    tour.handoff(
        feature,
        "app-feature",
        &["brief", "--task", "Make cargo test auth::expiry pass"],
        None,
    )?;
    tour.handoff(feature, "app-feature", &["reground"], None)?;
    Ok(())
}

/// A brief copied in from another project is refused as a mismatch.
fn refuse_foreign(tour: &mut Tour, base: &Path, repo: &Path, other: &Path) -> Result<()> {
    tour.say("A brief from another project is refused");
    std::fs::create_dir_all(other)?;
    tour.git(other, &["init", "-q", "-b", "main"])?;
    tour.git(other, &["commit", "-q", "--allow-empty", "-m", "unrelated"])?;
    tour.handoff(
        other,
        "other-project",
        &[
            "write",
            "foreign",
            "--done-when",
            "cargo test parser passes",
            "--resume-by",
            "Handle UTF-8 in the parser",
            "--next-check",
            "cargo test parser::utf8",
            "--rejected",
            "a regex parser (unreadable errors)",
        ],
        None,
    )?;
    let blob = tour.git(other, &["cat-file", "-p", "refs/handoffs/foreign"])?;
    let blob_file = base.join("foreign.json");
    std::fs::write(&blob_file, blob)?;
    let id = tour.git(
        repo,
        &[
            "hash-object",
            "-w",
            blob_file
                .to_str()
                .ok_or_else(|| anyhow!("non-UTF-8 path"))?,
        ],
    )?;
    tour.git(repo, &["update-ref", "refs/handoffs/foreign", id.trim()])?;
    tour.handoff(repo, "app", &["resume", "foreign"], None)?;
    Ok(())
}
