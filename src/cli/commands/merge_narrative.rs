//! `git handoff merge-narrative %O %A %B [%P]`: the narrative's merge
//! driver. Merges the three versions as a log (see [`crate::narrative::merge`])
//! and writes the result to %A; anything it cannot merge that way is merged
//! as plain text by `git merge-file` (conflict markers and all) and reported
//! as a conflict, so git stops and no text is lost.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow};

use crate::{cli::Output, narrative::merge};

/// Merge three versions of the narrative as a log (git merge driver)
///
/// Git runs this for paths with the attribute merge=handoff-narrative once
/// `git handoff init` has registered the driver. Entries of both sides are
/// kept, newest first by heading date, ours before theirs on equal dates; an
/// entry edited differently on both sides is kept twice, the second marked.
/// Writes the result to OURS and exits 0. A file it cannot parse is merged
/// as plain text (conflict markers) instead and it exits 1, so git reports
/// a normal conflict.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The common ancestor's version (%O)
    pub base: PathBuf,
    /// The current branch's version (%A); the result is written here
    pub ours: PathBuf,
    /// The other branch's version (%B)
    pub theirs: PathBuf,
    /// The path being merged (%P), for messages
    pub path: Option<String>,
}

/// Run the driver.
pub fn run(args: Args) -> Result<Output> {
    let read = |p: &Path| -> Result<Vec<u8>> {
        std::fs::read(p).with_context(|| {
            format!(
                "merge-narrative: cannot read '{}'; git runs this as `git handoff merge-narrative %O %A %B %P`",
                p.display()
            )
        })
    };
    let (base, ours, theirs) = (read(&args.base)?, read(&args.ours)?, read(&args.theirs)?);
    let name = args.path.as_deref().unwrap_or("the narrative");
    let text = |bytes: &[u8], side: &'static str| {
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| merge::MergeError {
                side,
                line: None,
                reason: "is not UTF-8 text".into(),
            })
    };
    let merged = text(&base, "base").and_then(|b| {
        let o = text(&ours, "ours")?;
        let t = text(&theirs, "theirs")?;
        merge::merge(&b, &o, &t)
    });
    match merged {
        Ok(result) => {
            replace(&args.ours, result.as_bytes())?;
            Ok(Output::empty())
        }
        Err(why) => {
            let outcome = match text_merge(&args) {
                Ok(0) => {
                    "merged it as plain text (no overlapping changes, but check it)".to_string()
                }
                Ok(_) => "merged it as plain text with conflict markers".to_string(),
                Err(e) => format!("{e:#}"),
            };
            crate::refuse!(
                "cannot merge {name} as a log ({why}); {outcome}: resolve it by hand, `git add` it and continue"
            )
        }
    }
}

/// Git's own three-way text merge, written into %A; returns the number of
/// conflicts. %A is left as it was when `git merge-file` fails.
fn text_merge(args: &Args) -> Result<u32> {
    let out = Command::new("git")
        .args([
            "merge-file",
            "-p",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
        ])
        .arg(&args.ours)
        .arg(&args.base)
        .arg(&args.theirs)
        .output()
        .context("cannot run `git merge-file`; is git on PATH?")?;
    match out.status.code() {
        Some(n @ 0..=127) => {
            replace(&args.ours, &out.stdout)?;
            Ok(n as u32)
        }
        _ => Err(anyhow!(
            "`git merge-file` failed ({}); the file keeps ours' version: compare with `git checkout --theirs`",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// Replace `path` by a temporary file renamed into place.
fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .with_context(|| format!("cannot write the merge of {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| anyhow!("cannot replace {}: {}", path.display(), e.error))?;
    Ok(())
}
