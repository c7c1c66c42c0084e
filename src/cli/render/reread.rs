//! `recover --show`: what to re-read before rebuilding a brief.

use crate::write::reread::{COMMITS, DIFF_LINES, ENTRIES, Reread};

/// The narrative's latest entries, the recent commits and the diff, under
/// headings, then the command that rebuilds the brief.
pub fn reread_text(key: &str, found: &Reread) -> String {
    let mut out =
        format!("# Recover — re-read this before rebuilding '{key}' (nothing was written)\n");
    match (&found.narrative, found.entries.as_slice()) {
        (Some(file), []) => out.push_str(&format!("\n## Narrative ({file}): no entries yet\n")),
        (Some(file), entries) => {
            let which = match entries.len().min(ENTRIES) {
                1 => "entry".to_string(),
                n => format!("{n} entries, newest first"),
            };
            out.push_str(&format!("\n## Narrative ({file}): the latest {which}\n"));
            for entry in entries {
                out.push('\n');
                out.push_str(entry.trim_end());
                out.push('\n');
            }
        }
        (None, _) => out.push_str("\n## Narrative: none (off, or no file yet)\n"),
    }
    out.push_str(&format!("\n## git log --oneline -{COMMITS}\n"));
    if found.commits.is_empty() {
        out.push_str("(no commit yet)\n");
    }
    for (sha, subject) in &found.commits {
        out.push_str(&format!("{sha} {subject}\n"));
    }
    match &found.diff_summary {
        None => out.push_str("\n## git diff HEAD: clean\n"),
        Some(summary) => {
            out.push_str(&format!("\n## git diff HEAD ({summary})\n"));
            out.push_str(&found.diff);
            if found.diff_cut {
                out.push_str(&format!(
                    "… (cut at {DIFF_LINES} lines: `git diff HEAD` shows the rest)\n"
                ));
            }
        }
    }
    if let Some(summary) = crate::brief::redact::summary(&found.redacted) {
        out.push_str(&format!("\n(shown redacted: {summary})\n"));
    }
    out.push_str(&format!(
        "\nThen rebuild it from what these show: `git handoff recover {}` with corrections (-F, or flags such as --resume-by, --next-check, --decision, --rejected).\n",
        crate::support::escape::shell_quote(key)
    ));
    out
}
