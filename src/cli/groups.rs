//! The commands grouped by what you want to do: the top-level help
//! (`git handoff -h`) and the manual page list them this way, the common
//! ones first.

/// How a group is shown: one row per command with its summary, or the
/// names alone on one line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `  name   summary` per command.
    Rows,
    /// `  name, name, …` on one line.
    Names,
}

/// Every visible subcommand, each in one group.
pub const GROUPS: &[(&str, Shape, &[&str])] = &[
    ("Hand off", Shape::Rows, &["write", "draft", "recover"]),
    (
        "Pick up",
        Shape::Rows,
        &["resume", "list", "reground", "show"],
    ),
    (
        "Share with a team",
        Shape::Rows,
        &["fetch", "push", "resolve", "init"],
    ),
    (
        "Split the work",
        Shape::Rows,
        &["brief", "split", "fork", "handback", "pipeline"],
    ),
    ("Agents", Shape::Rows, &["hook", "mcp", "usage", "summary"]),
    (
        "History and tidying",
        Shape::Names,
        &["log", "diff", "drop", "prune", "restore", "lint", "redact"],
    ),
    (
        "Plumbing",
        Shape::Names,
        &[
            "validate",
            "schema",
            "import",
            "export",
            "merge-narrative",
            "completions",
            "install-man",
            "demo",
        ],
    ),
];

/// The grouped command list for the top-level help of `cmd` (built, so
/// that each subcommand's summary is known).
pub fn listing(cmd: &clap::Command) -> String {
    let width = GROUPS
        .iter()
        .filter(|(_, shape, _)| *shape == Shape::Rows)
        .flat_map(|(_, _, names)| names.iter().map(|n| n.len()))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (title, shape, names) in GROUPS {
        out.push_str(&format!("{title}:\n"));
        match shape {
            Shape::Rows => {
                for name in *names {
                    let about = cmd
                        .find_subcommand(name)
                        .and_then(|s| s.get_about())
                        .map(|a| a.to_string())
                        .unwrap_or_default();
                    out.push_str(&format!("  {name:width$}  {about}\n"));
                }
            }
            Shape::Names => out.push_str(&format!("  {}\n", names.join(", "))),
        }
    }
    out
}

/// The top-level help's template: the summary, usage, the grouped
/// commands, where to read more, the options.
pub fn template(cmd: &clap::Command) -> String {
    format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}Run `git handoff` alone for the briefs waiting here; `git handoff help <command>` for one command.\n\nOptions:\n{{options}}{{after-help}}",
        listing(cmd)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_visible_subcommand_is_in_one_group() {
        let mut cmd = crate::cli::Cli::command();
        cmd.build();
        let mut grouped: Vec<&str> = GROUPS
            .iter()
            .flat_map(|(_, _, n)| n.iter().copied())
            .collect();
        let mut visible: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(|s| s.get_name())
            .collect();
        grouped.sort();
        visible.sort();
        assert_eq!(grouped, visible);
    }
}
