//! The brief: a typed mirror of `schema/brief.schema.json` (schema version "1"),
//! its embedded JSON Schema and validation.
//!
//! The `brief` layer: this type and what needs only a brief — [`keys`],
//! [`paths`] (the file pointers a brief records), [`lint`] and [`redact`].
//! Pure values; never opens a repository.

pub mod keys;
pub mod lint;
pub mod merge;
pub mod paths;
pub mod redact;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON Schema of a brief, as shipped in `schema/brief.schema.json`.
pub const SCHEMA_JSON: &str = include_str!("../../schema/brief.schema.json");

/// The only schema version this build reads and writes.
pub const SCHEMA_VERSION: &str = "1";

/// The schema's description of the property at `path` (dotted, e.g.
/// `resume.done_when`, `state.decisions`; a list's items' own properties
/// are not reached); empty when the schema describes none there.
pub fn described(path: &str) -> &'static str {
    static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    let schema =
        SCHEMA.get_or_init(|| serde_json::from_str(SCHEMA_JSON).expect("embedded schema is JSON"));
    let mut node = schema;
    for part in path.split('.') {
        match node.get("properties").and_then(|p| p.get(part)) {
            Some(next) => node = next,
            None => return "",
        }
    }
    node.get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

/// The largest brief accepted as input, in bytes (1 MiB). Briefs are resume
/// packets, not archives: anything larger is refused before it is parsed.
pub const MAX_BRIEF_BYTES: usize = 1024 * 1024;

/// A brief, schema version "1". Optional fields are omitted when empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Brief {
    /// Always `"1"`.
    pub schema_version: String,
    /// The key the brief is stored under (`refs/handoffs/<key>`).
    pub key: String,
    /// When it was written, `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    pub timestamp: String,
    /// `WRITE`, `RECOVER`, or `AUTO` (drafted from a session transcript,
    /// not written by the session).
    pub mode: String,
    /// How to resume.
    pub resume: Resume,
    /// The state of the work and of the repository when written.
    pub state: State,
    /// Files the next session should read first: where (a path, with
    /// `:lines`) and why, never their content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_read_first: Vec<FilePointer>,
    /// Files the next session can skip.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_skip: Vec<FilePointer>,
}

/// The `resume` object of a brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    /// One verifiable check that says the work is done: a command or test
    /// and its expected result.
    pub done_when: String,
    /// The next step, one sentence.
    pub resume_by: String,
    /// Overrides the generated resume prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// A pointer to where the longer history lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_pointer: Option<String>,
}

/// The `state` object of a brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// The branch the brief was written on (`HEAD` when detached).
    pub branch: String,
    /// The next check to run: a command or test and its expected result.
    pub next_acceptance_check: String,
    /// Where the brief was written.
    pub worktree: Worktree,
    /// The commit checked out when written (absent on an unborn branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// The summary line of `git diff --stat HEAD` when the tree was dirty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_summary: Option<String>,
    /// Test commands and their last result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestResult>,
    /// Useful commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// Locked decisions, each with its reason (`decision — why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    /// Paths tried and rejected (and why), so nobody retries them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected_paths: Vec<String>,
    /// Known risks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_risks: Vec<String>,
    /// The user's preferences and feedback that bind the work (the Input
    /// gate keeps them): "no new dependencies", "keep the public API".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferences: Vec<String>,
    /// Material kept word for word (the Output gate): the error being
    /// debugged, the code being modified, the last turns. At most
    /// [`MAX_VERBATIM_ITEMS`] entries of at most [`MAX_VERBATIM_CHARS`]
    /// characters; exempt from lint's `inlined-content` rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verbatim: Vec<Verbatim>,
}

/// The most entries `state.verbatim` may hold (the schema's `maxItems`).
pub const MAX_VERBATIM_ITEMS: usize = 8;

/// The most characters one `state.verbatim[].text` may hold (the schema's
/// `maxLength`, counted in characters as JSON Schema counts them).
pub const MAX_VERBATIM_CHARS: usize = 4000;

/// The most characters of one `state.verbatim[].what`.
pub const MAX_VERBATIM_WHAT: usize = 200;

/// One entry of `state.verbatim`: what it is and its exact text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Verbatim {
    /// What the text is, e.g. "the failing test's error".
    pub what: String,
    /// The text, exactly as it was (redacted like every field).
    pub text: String,
}

/// `state.worktree`: where the brief was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Worktree {
    /// The worktree's root directory.
    pub root: String,
    /// Whether it is a linked worktree (`git worktree add`).
    pub is_linked: bool,
    /// The absolute, canonical common git directory shared by all worktrees.
    pub git_common_dir: String,
}

/// One entry of `state.tests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestResult {
    /// The command that runs the test.
    pub cmd: String,
    /// `pass` or `fail`.
    pub result: String,
}

/// One entry of `files_read_first` or `files_skip`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilePointer {
    /// A path relative to the worktree root (may carry `:lines`).
    pub path: String,
    /// Why it matters.
    pub why: String,
}

impl Brief {
    /// The stored form: pretty JSON, 2-space indent, trailing newline.
    pub fn to_pretty_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a brief always serializes");
        s.push('\n');
        s
    }

    /// The history form: one compact JSON line, without newline.
    pub fn to_compact_json(&self) -> String {
        serde_json::to_string(self).expect("a brief always serializes")
    }

    /// The prompt that resumes the work: `resume.prompt` when set, else one
    /// generated from the key, the next step and the checks.
    pub fn resume_prompt(&self) -> String {
        if let Some(prompt) = self
            .resume
            .prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
        {
            return prompt.trim_end().to_string();
        }
        let next = sentence(&lower_first_word(self.resume.resume_by.trim()));
        self.prompt_with(&format!(
            "Resume '{}': run `git handoff resume {}`, then {next}",
            self.key,
            crate::support::escape::shell_quote(&self.key)
        ))
    }

    /// The prompt for a reader who has just resumed the brief: the generated
    /// one without its "run `git handoff resume`" step (a prompt the brief
    /// sets is kept as written).
    pub fn continue_prompt(&self) -> String {
        if self
            .resume
            .prompt
            .as_deref()
            .is_some_and(|p| !p.trim().is_empty())
        {
            return self.resume_prompt();
        }
        self.prompt_with(&format!(
            "Continue '{}': {}",
            self.key,
            sentence(self.resume.resume_by.trim())
        ))
    }

    /// `start`, then the next acceptance check and the done-when.
    fn prompt_with(&self, start: &str) -> String {
        format!(
            "{start} Next acceptance check: {check}. Done when: {done}.",
            check = self
                .state
                .next_acceptance_check
                .trim()
                .trim_end_matches('.'),
            done = self.resume.done_when.trim().trim_end_matches('.'),
        )
    }

    /// The one limit the schema cannot express: the stored form (indented
    /// JSON, see [`Brief::to_pretty_json`]) must fit [`MAX_BRIEF_BYTES`], or
    /// no command could read the brief back. Input at the cap grows when
    /// indented (a 10,000-entry list of short strings more than doubles), so
    /// this is checked before anything is stored.
    pub fn stored_size_issue(&self) -> Option<Issue> {
        let size = self.to_pretty_json().len();
        (size > MAX_BRIEF_BYTES).then(|| Issue {
            path: "(root)".into(),
            message: format!(
                "the brief is {size} bytes as stored (indented JSON); a brief may be at most 1 MiB ({MAX_BRIEF_BYTES} bytes): shorten its lists and strings, and point at files instead of pasting them"
            ),
        })
    }

    /// Parse and validate a stored brief.
    ///
    /// Stored briefs are nearly always valid, so the typed parse and a
    /// native check of the constraints types cannot express come first
    /// ([`Brief::conforms`]); the JSON Schema, whose compilation costs more
    /// than the rest of a read, is consulted only when they refuse, to say
    /// what is wrong. Both paths accept exactly the same briefs.
    pub fn from_slice(data: &[u8]) -> Result<Brief, BriefError> {
        match Brief::from_slice_fast(data) {
            Some(brief) => Ok(brief),
            None => Brief::from_slice_with_schema(data),
        }
    }

    /// The typed parse and [`Brief::conforms`]; `None` when either refuses.
    fn from_slice_fast(data: &[u8]) -> Option<Brief> {
        // `null` is the one value a typed parse accepts (as an absent
        // option) that the schema refuses: leave it to the schema.
        if data.len() > MAX_BRIEF_BYTES || data.windows(4).any(|w| w == b"null") {
            return None;
        }
        serde_json::from_slice::<Brief>(data)
            .ok()
            .filter(Brief::conforms)
    }

    /// [`Brief::from_slice`] through the JSON Schema alone.
    fn from_slice_with_schema(data: &[u8]) -> Result<Brief, BriefError> {
        let value = parse_json(data)?;
        let issues = validate(&value);
        if !issues.is_empty() {
            return Err(BriefError::Invalid(issues));
        }
        serde_json::from_value(value).map_err(|e| BriefError::Json(e.to_string()))
    }
}

impl Brief {
    /// The schema's constraints that the types do not carry: the constant
    /// version, non-empty strings, the timestamp (a real time, as
    /// [`validate`] requires) and head patterns, the enums. A typed brief
    /// that conforms is valid against the schema.
    fn conforms(&self) -> bool {
        let hex = |s: &str| {
            ((7..=40).contains(&s.len()) || s.len() == 64)
                && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        self.schema_version == SCHEMA_VERSION
            && !self.key.is_empty()
            && timestamp_shape(&self.timestamp)
            && matches!(self.mode.as_str(), "WRITE" | "RECOVER" | "AUTO")
            && !self.resume.done_when.is_empty()
            && !self.resume.resume_by.is_empty()
            && !self.state.branch.is_empty()
            && !self.state.next_acceptance_check.is_empty()
            && self.state.head_sha.as_deref().is_none_or(hex)
            && self
                .state
                .tests
                .iter()
                .all(|t| matches!(t.result.as_str(), "pass" | "fail"))
            && self
                .files_read_first
                .iter()
                .chain(&self.files_skip)
                .all(|p| !p.path.is_empty())
            && self.state.verbatim.len() <= MAX_VERBATIM_ITEMS
            && self.state.verbatim.iter().all(|v| {
                (1..=MAX_VERBATIM_WHAT).contains(&v.what.chars().count())
                    && (1..=MAX_VERBATIM_CHARS).contains(&v.text.chars().count())
            })
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`, digits where the schema's pattern has `[0-9]`.
fn timestamp_shape(s: &str) -> bool {
    const SHAPE: &[u8; 20] = b"0000-00-00T00:00:00Z";
    s.len() == SHAPE.len()
        && s.bytes().zip(SHAPE).all(|(b, &want)| {
            if want == b'0' {
                b.is_ascii_digit()
            } else {
                b == want
            }
        })
}

/// The text with its first letter lowercased when it starts with an
/// ordinary capitalised word (`Replace the stub` → `replace the stub`), so
/// that it reads on after "then"; acronyms, identifiers and code
/// (`API`, `README`, `FooBar`, `` `x` ``) are kept as written.
fn lower_first_word(s: &str) -> String {
    let word: &str = s.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    let mut chars = word.chars();
    let ordinary = chars.next().is_some_and(char::is_uppercase)
        && word.chars().count() > 1
        && chars.all(char::is_lowercase)
        && s.len() > word.len()
        && s[word.len()..].starts_with(' ');
    if !ordinary {
        return s.to_string();
    }
    let first = word.chars().next().map_or(0, char::len_utf8);
    let mut out: String = s[..first].to_lowercase();
    out.push_str(&s[first..]);
    out
}

fn sentence(s: &str) -> String {
    let mut out = s.trim().to_string();
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

/// A decision split into what was decided and why, as the method writes
/// it: `decision — why`; also `decision -- why`, `decision - why`,
/// `decision: because why`, `decision (because why)` and `decision because
/// why` (the `because` is kept in the why). `None` for the why when the
/// decision gives none.
pub fn split_decision(decision: &str) -> (&str, Option<&str>) {
    let text = decision.trim();
    let found = [" — ", " -- ", " - "]
        .iter()
        .find_map(|sep| text.split_once(sep))
        .or_else(|| {
            let inner = text.strip_suffix(')')?;
            let open = inner.rfind("(because ")?;
            Some((&text[..open], &inner[open + 1..]))
        })
        .or_else(|| {
            let at = text.find(": because ")?;
            Some((&text[..at], &text[at + 2..]))
        })
        .or_else(|| {
            let at = text.find(" because ")?;
            Some((&text[..at], &text[at + 1..]))
        });
    match found {
        Some((what, why)) if !what.trim().is_empty() && !why.trim().is_empty() => {
            (what.trim(), Some(why.trim()))
        }
        _ => (text, None),
    }
}

/// One schema violation: where and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Issue {
    /// The path of the offending value, like `state.tests[0].result`, or `(root)`.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// Why a byte string is not a brief.
#[derive(Debug, thiserror::Error)]
pub enum BriefError {
    /// Larger than [`MAX_BRIEF_BYTES`].
    #[error("input is {0} bytes; a brief may be at most 1 MiB (1048576 bytes)")]
    TooLarge(usize),
    /// Not UTF-8 text.
    #[error("input is not UTF-8 text: {0}")]
    NotUtf8(String),
    /// Not JSON.
    #[error("input is not valid JSON: {0}")]
    Json(String),
    /// Valid JSON that breaks the schema.
    #[error("brief does not match schema version 1 ({} error{})", .0.len(), if .0.len() == 1 { "" } else { "s" })]
    Invalid(Vec<Issue>),
    /// JSON that names one field twice in an object: readers disagree on
    /// which one counts (serde keeps the last), so it is refused.
    #[error("input repeats the field {0}; a field may appear once per object")]
    Duplicate(String),
}

/// Parse bytes as one JSON value, refusing oversized and non-UTF-8 input.
pub fn parse_json(data: &[u8]) -> Result<Value, BriefError> {
    if data.len() > MAX_BRIEF_BYTES {
        return Err(BriefError::TooLarge(data.len()));
    }
    let text = std::str::from_utf8(data).map_err(|e| BriefError::NotUtf8(e.to_string()))?;
    if text.trim().is_empty() {
        return Err(BriefError::Json("input is empty".into()));
    }
    let value = serde_json::from_str(text).map_err(|e| BriefError::Json(e.to_string()))?;
    if let Some(path) = duplicate_field(data) {
        return Err(BriefError::Duplicate(path));
    }
    Ok(value)
}

/// The path (`resume.resume_by`, `state.tests[0].cmd`) of the first field
/// an object of this JSON names twice, if any; `None` also for what is
/// not JSON.
pub fn duplicate_field(data: &[u8]) -> Option<String> {
    use serde::de::DeserializeSeed;
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(data);
    let seed = dupes::Seed {
        path: String::new(),
        found: &mut found,
    };
    seed.deserialize(&mut de).ok()?;
    found
}

/// A walk of a JSON document that notes the first field an object repeats.
mod dupes {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

    pub(super) struct Seed<'f> {
        pub(super) path: String,
        pub(super) found: &'f mut Option<String>,
    }

    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                let path = match self.path.is_empty() {
                    true => key.clone(),
                    false => format!("{}.{key}", self.path),
                };
                if !seen.insert(key) && self.found.is_none() {
                    *self.found = Some(path.clone());
                }
                map.next_value_seed(Seed {
                    path,
                    found: &mut *self.found,
                })?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while seq
                .next_element_seed(Seed {
                    path: format!("{}[{i}]", self.path),
                    found: &mut *self.found,
                })?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
}

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("embedded schema is JSON");
        jsonschema::draft7::new(&schema).expect("embedded schema compiles")
    })
}

/// The fields `write` fills in from git and the clock, which a partial
/// brief may leave out: at the root, and under `state`.
pub const FILLED_BY_WRITE: (&[&str], &[&str]) = (
    &["schema_version", "key", "timestamp", "mode"],
    &["branch", "worktree"],
);

/// The schema of a partial brief — what `write -F` takes: the brief schema
/// with the fields `write` fills in ([`FILLED_BY_WRITE`]) no longer
/// required. Every other rule (types, unknown fields, non-empty strings) is
/// the same.
pub fn partial_schema() -> Value {
    let mut schema: Value = serde_json::from_str(SCHEMA_JSON).expect("embedded schema is JSON");
    let unrequire = |node: &mut Value, filled: &[&str]| {
        if let Some(Value::Array(required)) = node.get_mut("required") {
            required.retain(|r| !r.as_str().is_some_and(|r| filled.contains(&r)));
        }
    };
    unrequire(&mut schema, FILLED_BY_WRITE.0);
    if let Some(state) = schema.pointer_mut("/properties/state") {
        unrequire(state, FILLED_BY_WRITE.1);
    }
    schema
}

fn partial_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::draft7::new(&partial_schema()).expect("partial schema compiles")
    })
}

/// The schema version of a brief a newer git-handoff wrote, which this one
/// cannot read: a JSON object with a string `key` and a string
/// `schema_version` that is not "1", or "1" with fields this version does
/// not know (and nothing else wrong). `None` for a brief this version reads
/// and for anything that is no brief at all. Such a brief is carried
/// verbatim: never replaced, deleted or pruned.
pub fn written_by_newer(data: &[u8]) -> Option<String> {
    if Brief::from_slice(data).is_ok() {
        return None;
    }
    let value = parse_json(data).ok()?;
    let object = value.as_object()?;
    object.get("key")?.as_str()?;
    let version = object.get("schema_version")?.as_str()?.to_string();
    if version != SCHEMA_VERSION {
        return Some(version);
    }
    let issues = validate(&value);
    let unknown_fields_only = !issues.is_empty()
        && issues.iter().all(|i| {
            i.message
                .starts_with("Additional properties are not allowed")
        });
    unknown_fields_only.then_some(version)
}

/// Validate a JSON value against the brief schema, collecting every error,
/// sorted by path.
pub fn validate(value: &Value) -> Vec<Issue> {
    issues_of(validator(), value)
}

/// Validate a partial brief — what `write -F` takes before it fills in the
/// key, timestamp, mode and git state — collecting every error, sorted by
/// path.
pub fn validate_partial(value: &Value) -> Vec<Issue> {
    issues_of(partial_validator(), value)
}

fn issues_of(validator: &jsonschema::Validator, value: &Value) -> Vec<Issue> {
    let mut issues: Vec<Issue> = validator
        .iter_errors(value)
        .map(|err| Issue {
            path: display_path(value, err.instance_path().as_str()),
            message: err.to_string(),
        })
        .collect();
    issues.sort_by(|a, b| a.path.cmp(&b.path).then(a.message.cmp(&b.message)));
    issues.dedup();
    issues
}

/// The one check `write` adds to the schema's timestamp pattern, which
/// admits 2026-13-45T99:99:99Z: a brief written here carries a real time
/// (its narrative heading, age and the merge driver need one). Stored and
/// imported briefs are not held to it — wire compatibility with the schema —
/// and read back with no age (no STALE line).
pub fn timestamp_issue(value: &Value) -> Option<Issue> {
    let ts = value.get("timestamp").and_then(Value::as_str)?;
    // Text that is no date-time at all is the pattern's to report.
    let shaped = ts.len() >= 20 && ts.is_ascii() && matches!(ts.as_bytes()[10], b'T' | b't');
    (shaped && crate::support::clock::parse(ts).is_none()).then(|| Issue {
        path: "timestamp".into(),
        message: format!(
            "\"{ts}\" is not a real date and time (RFC 3339, e.g. 2026-11-30T12:00:00Z)"
        ),
    })
}

/// Turn a JSON pointer into `state.tests[0].result` form, using the instance
/// to tell array indices from object keys.
pub fn display_path(root: &Value, pointer: &str) -> String {
    if pointer.is_empty() || pointer == "/" {
        return "(root)".to_string();
    }
    let mut out = String::new();
    let mut current = Some(root);
    for raw in pointer.trim_start_matches('/').split('/') {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match current {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{segment}]"));
                current = segment.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&segment);
                current = other.and_then(|v| v.get(&segment));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {

    /// Every property of the schema says what it is for: the one source
    /// for `git handoff schema`, the MCP tools' input schemas and help.
    #[test]
    fn every_schema_property_is_described() {
        fn walk(node: &Value, path: &str, missing: &mut Vec<String>) {
            if let Some(properties) = node.get("properties").and_then(Value::as_object) {
                for (name, field) in properties {
                    let here = format!("{path}{name}");
                    if field
                        .get("description")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        missing.push(here.clone());
                    }
                    walk(field, &format!("{here}."), missing);
                }
            }
            if let Some(items) = node.get("items") {
                walk(items, &format!("{path}[]."), missing);
            }
            if let Some(defs) = node.get("definitions").and_then(Value::as_object) {
                for (name, def) in defs {
                    walk(def, &format!("#{name}."), missing);
                }
            }
        }
        let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        let mut missing = Vec::new();
        walk(&schema, "", &mut missing);
        assert!(missing.is_empty(), "undescribed: {missing:?}");
    }

    #[test]
    fn a_decision_splits_at_every_separator_the_method_uses() {
        for (text, what, why) in [
            ("use <= — one clock", "use <=", Some("one clock")),
            ("use <= -- one clock", "use <=", Some("one clock")),
            ("B - because b", "B", Some("because b")),
            ("B: because b", "B", Some("because b")),
            ("B (because b)", "B", Some("because b")),
            (
                "keep JWT because one token format",
                "keep JWT",
                Some("because one token format"),
            ),
            ("Operator is <=", "Operator is <=", None),
            ("use a-b ranges", "use a-b ranges", None),
            (" — why alone", "— why alone", None),
            ("B (see docs)", "B (see docs)", None),
        ] {
            assert_eq!(split_decision(text), (what, why), "{text}");
        }
    }

    #[test]
    fn the_next_step_reads_on_after_then() {
        assert_eq!(lower_first_word("Replace the stub"), "replace the stub");
        assert_eq!(lower_first_word("Éditer le code"), "éditer le code");
        for kept in [
            "API docs first",
            "README first",
            "FooBar now",
            "`x` first",
            "I will",
            "Fix",
        ] {
            assert_eq!(lower_first_word(kept), kept);
        }
    }

    use super::*;
    use serde_json::json;

    fn minimal() -> Value {
        json!({
            "schema_version": "1", "key": "k", "timestamp": "2026-01-02T03:04:05Z", "mode": "WRITE",
            "resume": {"done_when": "d", "resume_by": "r"},
            "state": {"branch": "main", "next_acceptance_check": "c",
                      "worktree": {"root": "/r", "is_linked": false, "git_common_dir": "/r/.git"}}
        })
    }

    #[test]
    fn minimal_brief_is_valid_and_round_trips() {
        let v = minimal();
        assert!(validate(&v).is_empty());
        let b: Brief = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&b).unwrap(), v);
    }

    /// A named change to a brief, for the fast-path test.
    type Named = (&'static str, fn(&mut Value));

    /// The fast-path mutations of the optional fields of issue 34.
    fn new_field_mutations() -> Vec<Named> {
        vec![
            ("preference number", |v| {
                v["state"]["preferences"] = json!([1])
            }),
            ("verbatim empty text", |v| {
                v["state"]["verbatim"] = json!([{"what": "w", "text": ""}])
            }),
            ("verbatim empty what", |v| {
                v["state"]["verbatim"] = json!([{"what": "", "text": "t"}])
            }),
            ("verbatim no what", |v| {
                v["state"]["verbatim"] = json!([{"text": "t"}])
            }),
            ("verbatim extra", |v| {
                v["state"]["verbatim"] = json!([{"what": "w", "text": "t", "x": 1}])
            }),
            (
                "verbatim at the cap",
                |v| {
                    v["state"]["verbatim"] =
                        json!([{"what": "w", "text": "é".repeat(MAX_VERBATIM_CHARS)}])
                },
            ),
            (
                "verbatim over the cap",
                |v| {
                    v["state"]["verbatim"] =
                        json!([{"what": "w", "text": "é".repeat(MAX_VERBATIM_CHARS + 1)}])
                },
            ),
            (
                "verbatim what over the cap",
                |v| {
                    v["state"]["verbatim"] =
                        json!([{"what": "w".repeat(MAX_VERBATIM_WHAT + 1), "text": "t"}])
                },
            ),
            ("verbatim too many", |v| {
                v["state"]["verbatim"] = json!(vec![
                    json!({"what": "w", "text": "t"});
                    MAX_VERBATIM_ITEMS + 1
                ])
            }),
            ("verbatim as many as allowed", |v| {
                v["state"]["verbatim"] =
                    json!(vec![json!({"what": "w", "text": "t"}); MAX_VERBATIM_ITEMS])
            }),
        ]
    }

    /// The fast path of `from_slice` (typed parse + `conforms`) must accept
    /// exactly what the schema accepts.
    #[test]
    fn the_fast_path_agrees_with_the_schema() {
        let mut full = minimal();
        full["state"]["head_sha"] = json!("0123456789abcdef0123456789abcdef01234567");
        full["state"]["diff_summary"] = json!("1 file changed");
        full["state"]["tests"] = json!([{"cmd": "t", "result": "pass"}]);
        full["state"]["decisions"] = json!(["d"]);
        full["resume"]["prompt"] = json!("p");
        full["files_read_first"] = json!([{"path": "a.rs", "why": "w"}]);
        full["files_skip"] = json!([{"path": "b.rs", "why": ""}]);
        full["state"]["preferences"] = json!(["no new dependencies"]);
        full["state"]["verbatim"] = json!([{"what": "the error", "text": "E0308\n  mismatched"}]);
        type Mutation = fn(&mut Value);
        let mutations: Vec<(&str, Mutation)> = vec![
            ("unchanged", |_| {}),
            ("version", |v| v["schema_version"] = json!("2")),
            ("version type", |v| v["schema_version"] = json!(1)),
            ("empty key", |v| v["key"] = json!("")),
            ("no key", |v| {
                v.as_object_mut().unwrap().remove("key");
            }),
            ("timestamp", |v| {
                v["timestamp"] = json!("2026-01-02 03:04:05Z")
            }),
            ("timestamp newline", |v| {
                v["timestamp"] = json!("2026-01-02T03:04:05Z\n")
            }),
            ("timestamp digits", |v| {
                v["timestamp"] = json!("2026-01-0xT03:04:05Z")
            }),
            ("mode", |v| v["mode"] = json!("READ")),
            ("done_when empty", |v| v["resume"]["done_when"] = json!("")),
            ("resume_by empty", |v| v["resume"]["resume_by"] = json!("")),
            ("prompt null", |v| v["resume"]["prompt"] = json!(null)),
            ("prompt number", |v| v["resume"]["prompt"] = json!(3)),
            ("branch empty", |v| v["state"]["branch"] = json!("")),
            ("check empty", |v| {
                v["state"]["next_acceptance_check"] = json!("")
            }),
            ("head short", |v| v["state"]["head_sha"] = json!("abc")),
            ("head upper", |v| v["state"]["head_sha"] = json!("ABCDEF0")),
            ("head long", |v| {
                v["state"]["head_sha"] = json!("a".repeat(41))
            }),
            ("head null", |v| v["state"]["head_sha"] = json!(null)),
            ("summary null", |v| v["state"]["diff_summary"] = json!(null)),
            ("test result", |v| {
                v["state"]["tests"] = json!([{"cmd": "t", "result": "maybe"}])
            }),
            ("test extra", |v| {
                v["state"]["tests"] = json!([{"cmd": "t", "result": "fail", "x": 1}])
            }),
            ("decisions null", |v| v["state"]["decisions"] = json!(null)),
            ("decision number", |v| v["state"]["decisions"] = json!([1])),
            ("linked string", |v| {
                v["state"]["worktree"]["is_linked"] = json!("no")
            }),
            ("pointer empty", |v| {
                v["files_read_first"] = json!([{"path": "", "why": "w"}])
            }),
            ("skip empty", |v| {
                v["files_skip"] = json!([{"path": "", "why": ""}])
            }),
            ("pointer no why", |v| {
                v["files_skip"] = json!([{"path": "p"}])
            }),
            ("extra root", |v| v["extra"] = json!(true)),
            ("extra state", |v| v["state"]["extra"] = json!("x")),
            ("string with null", |v| {
                v["resume"]["resume_by"] = json!("null it")
            }),
            ("not an object", |v| *v = json!(["x"])),
        ];
        let mutations: Vec<Named> = mutations.into_iter().chain(new_field_mutations()).collect();
        for base in [minimal(), full] {
            for (name, mutate) in &mutations {
                let mut v = base.clone();
                mutate(&mut v);
                let data = serde_json::to_vec_pretty(&v).unwrap();
                let fast = Brief::from_slice_fast(&data);
                let schema = Brief::from_slice_with_schema(&data).ok();
                if data.windows(4).any(|w| w == b"null") {
                    // Left to the schema, whatever it says.
                    assert!(fast.is_none(), "{name}");
                } else {
                    assert_eq!(fast, schema, "{name}");
                }
                assert_eq!(Brief::from_slice(&data).ok(), schema, "{name}");
            }
        }
        assert!(Brief::from_slice_fast(&serde_json::to_vec(&minimal()).unwrap()).is_some());
        let duplicate = br#"{"key": "k", "key": "k"}"#;
        assert!(Brief::from_slice(duplicate).is_err());
    }

    /// The bounds of `state.verbatim` are the schema's.
    #[test]
    fn the_verbatim_bounds_are_the_schemas() {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        let v = &schema["properties"]["state"]["properties"]["verbatim"];
        assert_eq!(v["maxItems"], json!(MAX_VERBATIM_ITEMS));
        let item = &v["items"]["properties"];
        assert_eq!(item["text"]["maxLength"], json!(MAX_VERBATIM_CHARS));
        assert_eq!(item["what"]["maxLength"], json!(MAX_VERBATIM_WHAT));
    }

    #[test]
    fn every_error_is_collected_with_dotted_paths() {
        let mut v = minimal();
        v["state"]["tests"] = json!([{"cmd": "x", "result": "maybe"}]);
        v["extra"] = json!(1);
        v["mode"] = json!("READ");
        let issues = validate(&v);
        let paths: Vec<_> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["(root)", "mode", "state.tests[0].result"]);
    }

    #[test]
    fn an_impossible_timestamp_is_refused() {
        // The schema's pattern admits month 13, and such a date in the
        // narrative heading made the file unreadable to the merge driver.
        for ts in [
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01T24:00:00Z",
        ] {
            let mut v = minimal();
            v["timestamp"] = json!(ts);
            // write refuses it …
            assert_eq!(timestamp_issue(&v).unwrap().path, "timestamp", "{ts}");
            // … but the schema admits it, and a stored one reads back.
            assert!(validate(&v).is_empty(), "{ts}");
            assert!(Brief::from_slice(v.to_string().as_bytes()).is_ok(), "{ts}");
        }
        let mut v = minimal();
        v["timestamp"] = json!("2024-02-29T23:59:60Z");
        assert!(timestamp_issue(&v).is_none());
        v["timestamp"] = json!("yesterday");
        assert!(
            timestamp_issue(&v).is_none(),
            "the pattern complains, not this"
        );
        assert_eq!(validate(&v).len(), 1);
    }

    #[test]
    fn a_brief_that_grows_past_the_cap_when_stored_is_refused() {
        // Found by the reliability tests: 200,000 one-letter decisions are
        // 800 kB as input and 2.2 MB as stored, which nothing could read.
        let mut v = minimal();
        v["state"]["decisions"] = json!(vec!["a"; 200_000]);
        assert!(v.to_string().len() < MAX_BRIEF_BYTES);
        assert!(validate(&v).is_empty());
        let b: Brief = serde_json::from_value(v).unwrap();
        let issue = b.stored_size_issue().expect("too large as stored");
        assert!(issue.message.contains("as stored"), "{}", issue.message);
        assert!(Brief::from_slice(b.to_pretty_json().as_bytes()).is_err());
        let small: Brief = serde_json::from_value(minimal()).unwrap();
        assert_eq!(small.stored_size_issue(), None);
    }

    #[test]
    fn oversized_and_non_utf8_input_is_refused() {
        assert!(matches!(
            parse_json(&vec![b' '; MAX_BRIEF_BYTES + 1]),
            Err(BriefError::TooLarge(_))
        ));
        assert!(matches!(
            parse_json(b"\xff\xfe"),
            Err(BriefError::NotUtf8(_))
        ));
        assert!(matches!(parse_json(b"   "), Err(BriefError::Json(_))));
    }
}
