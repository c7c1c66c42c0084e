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
        &[
            "log", "diff", "drop", "prune", "restore", "lint", "validate", "redact",
        ],
    ),
    (
        "Plumbing",
        Shape::Names,
        &[
            "schema",
            "import",
            "export",
            "merge-narrative",
            "completions",
            "install-man",
            "demo",
            "help",
        ],
    ),
];

/// The one-line summary of subcommand `name` of `cmd` (built); empty for
/// none.
pub fn about(cmd: &clap::Command, name: &str) -> String {
    cmd.find_subcommand(name)
        .and_then(|s| s.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default()
}

/// The grouped command list for the top-level help of `cmd` (built, so
/// that each subcommand's summary is known): `long` lists every command
/// with its summary, else the groups of [`Shape::Names`] name theirs only.
pub fn listing(cmd: &clap::Command, long: bool) -> String {
    let width = GROUPS
        .iter()
        .filter(|(_, shape, _)| long || *shape == Shape::Rows)
        .flat_map(|(_, _, names)| names.iter().map(|n| n.len()))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (title, shape, names) in GROUPS {
        out.push_str(&format!("{title}:\n"));
        if *shape == Shape::Names && !long {
            let lines = wrap(&names.join(", "), COLUMNS - 2);
            out.push_str(&format!("  {}\n", lines.join(&pad(2))));
            continue;
        }
        for name in *names {
            let indent = width + 4;
            let lines = wrap(&about(cmd, name), COLUMNS - indent);
            out.push_str(&format!("  {name:width$}  {}\n", lines.join(&pad(indent))));
        }
    }
    out
}

/// The width the listing is wrapped to: the help's width off a terminal.
const COLUMNS: usize = 80;

/// A newline and `n` spaces: a wrapped row's continuation.
fn pad(n: usize) -> String {
    format!("\n{}", " ".repeat(n))
}

/// `text` cut into lines of at most `width` characters at spaces (a word
/// longer than that stays whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// The footer of every `-h`: where the words the output uses are defined.
pub const GLOSSARY: &str = "Terms: docs/glossary.md";

/// `cmd` (built) with the top-level help grouped: `-h` the short
/// listing, `--help` the long one; then where to read more, the options.
pub fn apply(cmd: clap::Command) -> clap::Command {
    let more = format!("`git handoff` alone lists the briefs waiting here. {GLOSSARY}");
    let (short, long) = (listing(&cmd, false), listing(&cmd, true));
    cmd.before_help(format!("{short}{more}"))
        .before_long_help(format!("{long}{more}"))
        .help_template(
            "{about-with-newline}\n{usage-heading} {usage}\n\n{before-help}Options:\n{options}{after-help}",
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
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name())
            .collect();
        grouped.sort();
        visible.sort();
        assert_eq!(grouped, visible);
    }
}
