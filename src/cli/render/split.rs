//! `split`'s proposal and its invalid threads.

use serde::Serialize;

use super::one_line;
use crate::brief::Issue;

/// One thread of a split proposal.
#[derive(Debug, Clone, Serialize)]
pub struct SplitThread {
    /// The thread's key.
    pub key: String,
    /// Whether a brief is stored under the key already (it will be updated).
    pub exists: bool,
    /// One line: the thread's next step (`resume.resume_by`).
    pub summary: String,
    /// What the thread owns: its own `files_read_first` paths.
    pub owns: Vec<String>,
    /// Its next acceptance check.
    pub next_check: String,
    /// Its open risks, shared ones included.
    pub risks: Vec<String>,
}

/// A split, proposed or done.
#[derive(Debug, Clone, Serialize)]
pub struct SplitProposal {
    /// Why the work is split.
    pub why: String,
    /// Decisions copied into every thread.
    pub shared_decisions: usize,
    /// Files to read first copied into every thread.
    pub shared_files: usize,
    /// The threads, in plan order.
    pub threads: Vec<SplitThread>,
}

/// The proposal of `split` without `--yes`: at most 5 lines per thread.
pub fn split_proposal(p: &SplitProposal) -> String {
    let mut out = format!("Split proposal: {}\n", one_line(&p.why, 100));
    if p.shared_decisions + p.shared_files > 0 {
        out.push_str(&format!(
            "Shared with every thread: {} decision{}, {} file{} to read first.\n",
            p.shared_decisions,
            if p.shared_decisions == 1 { "" } else { "s" },
            p.shared_files,
            if p.shared_files == 1 { "" } else { "s" },
        ));
    }
    for (n, t) in p.threads.iter().enumerate() {
        let state = if t.exists {
            "updates the stored brief"
        } else {
            "new"
        };
        out.push_str(&format!(
            "\n{}. {} ({state}) — {}\n",
            n + 1,
            t.key,
            one_line(&t.summary, 90)
        ));
        if !t.owns.is_empty() {
            out.push_str(&format!("   owns: {}\n", one_line(&t.owns.join(", "), 100)));
        }
        out.push_str(&format!(
            "   next check: {}\n",
            one_line(&t.next_check, 100)
        ));
        if !t.risks.is_empty() {
            out.push_str(&format!(
                "   risks: {}\n",
                one_line(&t.risks.join("; "), 100)
            ));
        }
    }
    out.push_str(&format!(
        "\nNothing written. Run again with --yes to write these {} briefs in one transaction.\n",
        p.threads.len()
    ));
    out
}

/// Every error of every invalid thread of a split plan: the label of the
/// thread, then one `  - <path>: <message>` line per error.
pub fn split_invalid(threads: &[(String, Vec<Issue>)]) -> String {
    let mut out = String::from("handoff-split: INVALID\n");
    for (label, issues) in threads {
        out.push_str(&format!("{label}:\n"));
        for issue in issues {
            out.push_str(&super::issue_line(issue));
        }
    }
    out
}
