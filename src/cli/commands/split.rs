//! `git handoff split --plan FILE|- [--yes]`: fork a braided session into N
//! self-contained briefs, written in one ref transaction with one combined
//! narrative entry.

use anyhow::Result;

use crate::cli::commands::checks::{self, CheckArgs};
use crate::cli::commands::read_input;
use crate::cli::render::{self, SplitProposal, SplitThread};
use crate::cli::{Format, Output, report};
use crate::write::{self, Failed, Outcome, Source, plan};
use crate::{git::repo, store};

/// Fork the work into N self-contained briefs from a plan
///
/// The plan is JSON: {"why": TEXT, "shared": {partial brief}, "threads":
/// [{"key": SLUG, partial brief…}, …]}. The shared part is copied into every
/// thread (lists appended, the thread's own scalars win), the git state is
/// filled in as for `write`, and every thread is validated. Without --yes,
/// prints the proposal and writes nothing. With --yes, writes all N briefs
/// in one ref transaction (all or none, compare-and-swap on each) with their
/// history notes, and prepends one combined narrative entry. Any invalid
/// thread writes nothing and every error of every thread is listed.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan (JSON) from FILE, or - for stdin
    #[arg(long, value_name = "FILE|-")]
    pub plan: String,
    /// Write the briefs (without it, only the proposal is printed)
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub checks: CheckArgs,
    /// Print the result as JSON
    #[arg(id = "json", long = "json", action = clap::ArgAction::SetTrue, value_parser = Format::from_flag())]
    pub format: Format,
}

/// Compose every thread; propose, or write them all.
pub fn run(args: Args) -> Result<Output> {
    checks::run(args.format, compute(args), output)
}

/// The split, through the write path: its outcome, nothing printed (the
/// MCP server reports it its own way).
pub fn compute(args: Args) -> Result<Outcome, Failed> {
    let plan = plan::parse(&read_input(&args.plan)?)?;
    let repo = repo::open_cwd()?;
    let source = Source::Plan {
        plan,
        write: args.yes,
    };
    write::write(&repo, source, &args.checks.options(true))
}

/// What a split reports: the proposal, or the briefs written (their ids
/// and prompts) and the narrative entry, as text or JSON.
pub fn output(outcome: &Outcome, format: Format) -> Output {
    let threads = &outcome.briefs;
    let Some(stored) = &outcome.stored else {
        let proposal = proposal(outcome);
        return match format {
            Format::Json => report::pretty(&report::SplitProposed {
                written: false,
                proposal: &proposal,
                briefs: threads.iter().map(|t| &t.brief).collect(),
                checked: report::Checked::of(&outcome.notes),
            }),
            Format::Human => Output::human(render::split_proposal(&proposal)),
        };
    };
    let narrative = stored.narrative.as_ref().map(|n| n.path.clone());
    if format.is_json() {
        let threads = threads
            .iter()
            .zip(&stored.ids)
            .map(|(t, id)| report::SplitThread {
                key: t.brief.key.clone(),
                ref_name: store::ref_name(&t.brief.key),
                id: id.to_string(),
                previous: t.previous.map(|e| e.to_string()),
                prompt: t.brief.resume_prompt(),
            })
            .collect();
        return report::pretty(&report::SplitWritten {
            written: true,
            history: stored.history,
            narrative,
            threads,
            checked: report::Checked::of(&outcome.notes),
        });
    }
    let narrated = narrative
        .map(|rel| format!("narrative entry added to {rel}"))
        .unwrap_or_else(|| "no narrative entry (handoff.narrative is false)".to_string());
    let mut out = format!(
        "Split into {} briefs in one transaction; {narrated}.\n\n",
        threads.len()
    );
    for t in threads {
        out.push_str(&format!(
            "git handoff resume {}    # {}\n",
            crate::support::escape::shell_quote(&t.brief.key),
            render::one_line(&t.brief.resume.resume_by, 80)
        ));
    }
    out.push_str(
        "\nNext: one fresh session per thread — in each, start clean (`/clear`, or a new session) and run its `git handoff resume` line; do not carry on the braided work in this one.\n",
    );
    Output::human(out)
}

/// What `split` proposes before `--yes`: the reason, what is shared and
/// each thread's key, summary, own files, next check and risks.
fn proposal(outcome: &Outcome) -> SplitProposal {
    let plan = outcome.plan.as_ref().expect("a split has its plan");
    SplitProposal {
        why: plan.why.clone(),
        shared_decisions: plan.shared_decisions(),
        shared_files: plan.shared_files(),
        threads: outcome
            .briefs
            .iter()
            .map(|t| SplitThread {
                key: t.brief.key.clone(),
                exists: t.previous.is_some(),
                summary: t.brief.resume.resume_by.clone(),
                owns: t.owns.clone(),
                next_check: t.brief.state.next_acceptance_check.clone(),
                risks: t.brief.state.open_risks.clone(),
            })
            .collect(),
    }
}
