//! Colour on a terminal: whether it is wanted (`color.handoff`,
//! `color.ui`, `NO_COLOR`) and the [`Painter`] that colours the labelled
//! spans of human text ([`crate::cli::output::Style`]).

use std::io::Write;

use crate::cli::output::Style;

/// `color.handoff`, else `color.ui`, of the repository the command opened
/// (remembered by [`remember`], so that deciding on colour need not open
/// the repository again).
static SETTING: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Remember the colour setting of the repository a command opened (the
/// first one wins).
pub fn remember(repo: &gix::Repository) {
    if SETTING.get().is_some() {
        return;
    }
    let _ = SETTING.set(setting_of(repo));
}

/// `color.handoff`, else `color.ui`, lowercased.
fn setting_of(repo: &gix::Repository) -> Option<String> {
    let config = repo.config_snapshot();
    config
        .string("color.handoff")
        .or_else(|| config.string("color.ui"))
        .map(|v| v.to_string().to_ascii_lowercase())
}

/// Whether to colour human text: never under `NO_COLOR`; else
/// `color.handoff`, else `color.ui` (`always`, `never`, `auto`/`true`);
/// `auto` means only when stdout is a terminal.
pub fn color_wanted(stdout_is_terminal: bool) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let setting = SETTING.get().cloned().unwrap_or_else(|| {
        std::env::current_dir()
            .ok()
            .and_then(|d| gix::discover(d).ok())
            .and_then(|repo| setting_of(&repo))
    });
    match setting.as_deref() {
        Some("always") => true,
        Some("never") | Some("false") => false,
        _ => stdout_is_terminal,
    }
}

/// The one painter: mismatches red, softer drift warnings yellow, headings
/// bold, the current key green.
#[derive(Debug, Clone, Copy, Default)]
pub struct Painter;

impl Painter {
    /// The escape sequence that starts `style`.
    fn start(style: Style) -> &'static str {
        match style {
            Style::Mismatch => "\x1b[1;31m",
            Style::Drift => "\x1b[33m",
            Style::Heading => "\x1b[1m",
            Style::Current => "\x1b[32m",
        }
    }

    /// Write `text` in `style`.
    pub fn paint(&self, w: &mut impl Write, style: Style, text: &str) -> std::io::Result<()> {
        const RESET: &str = "\x1b[0m";
        write!(w, "{}{text}{RESET}", Painter::start(style))
    }
}
