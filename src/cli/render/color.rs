//! Colour on a terminal: whether it is wanted (`color.handoff`,
//! `color.ui`, `NO_COLOR`) and the painter.

/// Whether to colour human text: never under `NO_COLOR`; else
/// `color.handoff`, else `color.ui` (`always`, `never`, `auto`/`true`);
/// `auto` means only when stdout is a terminal.
pub fn color_wanted(stdout_is_terminal: bool) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let setting = crate::git::repo::color_setting().unwrap_or_else(|| {
        std::env::current_dir()
            .ok()
            .and_then(|d| gix::discover(d).ok())
            .and_then(|repo| {
                let config = repo.config_snapshot();
                config
                    .string("color.handoff")
                    .or_else(|| config.string("color.ui"))
                    .map(|v| v.to_string().to_ascii_lowercase())
            })
    });
    match setting.as_deref() {
        Some("always") => true,
        Some("never") | Some("false") => false,
        _ => stdout_is_terminal,
    }
}

/// Colour a render: `!! ` warnings red (yellow for the softer ones),
/// headings bold, the current-key marker of `list` green.
pub fn paint(text: &str) -> String {
    const RED: &str = "\x1b[1;31m";
    const YELLOW: &str = "\x1b[33m";
    const BOLD: &str = "\x1b[1m";
    const GREEN: &str = "\x1b[32m";
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let color = if body.starts_with("!! REPO")
            || body.starts_with("!! BRANCH")
            || body.starts_with("!! MISSING")
        {
            Some(RED)
        } else if body.starts_with("!! ") {
            Some(YELLOW)
        } else if body.starts_with('#') {
            Some(BOLD)
        } else if body.starts_with("* ") {
            Some(GREEN)
        } else {
            None
        };
        match color {
            Some(c) => out.push_str(&format!("{c}{body}{RESET}{nl}")),
            None => out.push_str(line),
        }
    }
    out
}
