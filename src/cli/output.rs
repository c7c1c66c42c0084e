//! What a command produces and how it reaches stdout: the [`Format`] asked
//! for at the edge, the [`Body`] (human text made of labelled spans, JSON,
//! or stored bytes), the [`Output`] with its exit code, and the one place
//! that writes it out ([`Output::write_to`]), escaped and, when wanted,
//! painted ([`crate::cli::render::Painter`]).

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

use crate::cli::render::Painter;
use crate::support::escape;

/// How a command answers: text for people or JSON for tools. Decided once,
/// at the edge, from the command's `--json` flag ([`Format::from_flag`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Text for people (may be coloured on a terminal).
    #[default]
    Human,
    /// One JSON document.
    Json,
}

impl Format {
    /// The format a `--json` flag asks for: the value parser of every
    /// command's `--json` (`#[arg(long = "json", action = SetTrue,
    /// value_parser = Format::from_flag())]`), so that each keeps its own
    /// help line and the command line stays exactly as it was.
    pub fn from_flag() -> impl clap::builder::TypedValueParser<Value = Format> {
        use clap::builder::TypedValueParser;
        clap::builder::BoolishValueParser::new()
            .map(|json| if json { Format::Json } else { Format::Human })
    }

    /// Whether JSON was asked for.
    pub fn is_json(self) -> bool {
        self == Format::Json
    }
}

/// What a span of human text is, for the painter: the label, never the
/// colour, is decided by the renderer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A heading (`# Resume — key`, `## Decisions`).
    Heading,
    /// A drift warning that stops or redirects the work: another
    /// repository, another branch, a file to read first gone.
    Mismatch,
    /// A softer drift warning (stale, changed, dirty).
    Drift,
    /// The current branch's key in a listing.
    Current,
}

/// Human text: a string and the labelled spans in it. Renderers write into
/// it as into a `String` ([`Doc::push_str`], `write!`) and label what the
/// painter may colour with [`Doc::styled`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Doc {
    text: String,
    spans: Vec<(std::ops::Range<usize>, Style)>,
}

impl Doc {
    /// An empty text.
    pub fn new() -> Doc {
        Doc::default()
    }

    /// Append plain text.
    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// Append one plain character.
    pub fn push(&mut self, c: char) {
        self.text.push(c);
    }

    /// Append `s` labelled `style`.
    pub fn styled(&mut self, style: Style, s: &str) {
        let start = self.text.len();
        self.text.push_str(s);
        self.spans.push((start..self.text.len(), style));
    }

    /// Append `s` labelled `style` and a newline (unlabelled).
    pub fn styled_line(&mut self, style: Style, s: &str) {
        self.styled(style, s);
        self.text.push('\n');
    }

    /// Append another text, keeping its labels.
    pub fn append(&mut self, other: Doc) {
        let offset = self.text.len();
        self.text.push_str(&other.text);
        self.spans.extend(
            other
                .spans
                .into_iter()
                .map(|(r, s)| (r.start + offset..r.end + offset, s)),
        );
    }

    /// The text without labels.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the text ends with `s`.
    pub fn ends_with(&self, s: &str) -> bool {
        self.text.ends_with(s)
    }

    /// Remove the last character (never inside a label's span).
    pub fn pop(&mut self) -> Option<char> {
        let c = self.text.pop()?;
        let len = self.text.len();
        for (range, _) in &mut self.spans {
            range.end = range.end.min(len);
            range.start = range.start.min(len);
        }
        Some(c)
    }

    /// Whether any span is labelled (nothing to paint otherwise).
    pub fn is_labelled(&self) -> bool {
        !self.spans.is_empty()
    }

    /// Write the text out, each piece escaped ([`escape::clean`]) and each
    /// labelled span painted when a painter is given.
    pub fn write_to(&self, w: &mut impl Write, painter: Option<&Painter>) -> std::io::Result<()> {
        let mut at = 0;
        for (range, style) in &self.spans {
            if range.start < at || range.is_empty() {
                continue;
            }
            w.write_all(escape::clean(&self.text[at..range.start]).as_bytes())?;
            let span = escape::clean(&self.text[range.clone()]);
            match painter {
                Some(p) => p.paint(w, *style, &span)?,
                None => w.write_all(span.as_bytes())?,
            }
            at = range.end;
        }
        w.write_all(escape::clean(&self.text[at..]).as_bytes())
    }
}

impl std::fmt::Write for Doc {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

impl From<String> for Doc {
    fn from(text: String) -> Doc {
        Doc {
            text,
            spans: Vec::new(),
        }
    }
}

impl From<&str> for Doc {
    fn from(text: &str) -> Doc {
        Doc::from(text.to_string())
    }
}

/// The body of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Text for people, with labelled spans.
    Human(Doc),
    /// A JSON document, serialized (never coloured).
    Json(String),
    /// Stored bytes printed exactly (`show`): characters a terminal would
    /// act on are not escaped.
    Verbatim(Vec<u8>),
}

/// What a command produced: the body for stdout and the exit code.
/// Warnings and notes go to stderr as they happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Everything for stdout.
    pub body: Body,
    /// 0 success, 1 the check's answer is no.
    pub code: u8,
    /// One line for stderr, written after the body (an `error:` line that
    /// sums up the report above it, as `git push` ends with its own).
    pub trailer: Option<String>,
}

impl Output {
    /// Success with human text.
    pub fn human(doc: impl Into<Doc>) -> Output {
        Output {
            body: Body::Human(doc.into()),
            code: 0,
            trailer: None,
        }
    }

    /// Success with `value` as pretty JSON and a trailing newline.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Output {
        Output::json_text(crate::cli::render::json(value))
    }

    /// Success with `value` as one JSON line.
    pub fn json_line<T: Serialize + ?Sized>(value: &T) -> Output {
        let mut line = serde_json::to_string(value).expect("serializable");
        line.push('\n');
        Output::json_text(line)
    }

    /// Success with JSON text already serialized.
    pub fn json_text(text: impl Into<String>) -> Output {
        Output {
            body: Body::Json(text.into()),
            code: 0,
            trailer: None,
        }
    }

    /// Success with stored bytes to print exactly as they are.
    pub fn verbatim(bytes: impl Into<Vec<u8>>) -> Output {
        Output {
            body: Body::Verbatim(bytes.into()),
            code: 0,
            trailer: None,
        }
    }

    /// Success with nothing on stdout.
    pub fn empty() -> Output {
        Output::human(Doc::new())
    }

    /// `value` in `format`: JSON, or the human render `human` makes of it.
    pub fn report<T: Serialize + ?Sized>(
        format: Format,
        value: &T,
        human: impl FnOnce(&T) -> Doc,
    ) -> Output {
        match format {
            Format::Json => Output::json(value),
            Format::Human => Output::human(human(value)),
        }
    }

    /// The same output with exit code `code`.
    pub fn with_code(mut self, code: u8) -> Output {
        self.code = code;
        self
    }

    /// `self` with a line for stderr after the body (see [`Output::trailer`]).
    pub fn with_trailer(mut self, line: Option<String>) -> Output {
        self.trailer = line;
        self
    }

    /// The exit code as a process exit code.
    pub fn exit_code(&self) -> std::process::ExitCode {
        std::process::ExitCode::from(self.code)
    }

    /// Write the body out: human text and JSON escaped
    /// ([`escape::clean`]), human text painted when `painter` is given,
    /// verbatim bytes as they are. The one place output is written.
    pub fn write_to(&self, w: &mut impl Write, painter: Option<&Painter>) -> std::io::Result<()> {
        match &self.body {
            Body::Human(doc) => doc.write_to(w, painter),
            Body::Json(text) => w.write_all(escape::clean(text).as_bytes()),
            Body::Verbatim(bytes) => w.write_all(bytes),
        }
    }

    /// Whether the body may be painted: human text with labelled spans.
    pub fn paintable(&self) -> bool {
        matches!(&self.body, Body::Human(doc) if doc.is_labelled())
    }

    /// What [`Output::write_to`] writes without colour, as text (for the
    /// MCP server and tests).
    pub fn plain(&self) -> String {
        match &self.body {
            Body::Human(doc) => {
                let mut out = Vec::new();
                doc.write_to(&mut out, None).expect("writing to memory");
                String::from_utf8(out).expect("escaped text is UTF-8")
            }
            Body::Json(text) => escape::clean(text).into_owned(),
            Body::Verbatim(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        }
    }

    /// The unescaped text of the body (for callers that parse it).
    pub fn raw(&self) -> Cow<'_, str> {
        match &self.body {
            Body::Human(doc) => Cow::Borrowed(doc.as_str()),
            Body::Json(text) => Cow::Borrowed(text),
            Body::Verbatim(bytes) => String::from_utf8_lossy(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_escaped_and_painted_in_place() {
        let mut doc = Doc::new();
        doc.push_str("a\u{1b}b\n");
        doc.styled_line(Style::Heading, "# h\u{7}");
        doc.push_str("tail");
        let out = Output::human(doc);
        assert_eq!(out.plain(), "a\\u001bb\n# h\\u0007\ntail");
        let mut painted = Vec::new();
        out.write_to(&mut painted, Some(&Painter)).unwrap();
        assert_eq!(
            String::from_utf8(painted).unwrap(),
            "a\\u001bb\n\x1b[1m# h\\u0007\x1b[0m\ntail"
        );
        assert!(out.paintable());
        assert!(!Output::human("plain").paintable());
    }

    #[test]
    fn verbatim_bytes_are_untouched() {
        let out = Output::verbatim(b"x\x1by".to_vec());
        let mut w = Vec::new();
        out.write_to(&mut w, Some(&Painter)).unwrap();
        assert_eq!(w, b"x\x1by");
    }
}
