//! Redaction: secrets and personal data never land in a ref, a note or a
//! file written by git-handoff. Each finding is replaced by
//! `[REDACTED:<kind>]` and counted, never echoed.
//!
//! The rules are data, not code: `rules/gitleaks.json` is the gitleaks rule
//! set (MIT, see `rules/LICENSE-gitleaks`; ids, patterns, keywords, entropy
//! thresholds and allowlists), and `rules/handoff.json` adds the shapes
//! handoff text carries that gitleaks leaves to its generic rule and the
//! personal-data kinds (e-mail, phone, US SSN, Luhn-checked payment cards,
//! IP addresses). Both are embedded at build time. A rule runs only when one
//! of its keywords occurs in the text (the gitleaks prefilter), and each
//! pattern is compiled once, on first use. Every kind can be switched off
//! with `git config handoff.redact.<kind> false`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::{Captures, Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::Value;

/// The gitleaks rule set, as data.
const GITLEAKS: &str = include_str!("../../rules/gitleaks.json");
/// This project's complementary rules and the PII kinds, as data.
const HANDOFF: &str = include_str!("../../rules/handoff.json");

/// One allowlist group of a rule: a finding it matches is not a secret.
#[derive(Debug, Deserialize)]
struct Allow {
    /// What the regexes look at: `secret`, `match` or `line`.
    target: String,
    /// `or` (any predicate) or `and` (all of them).
    #[serde(default)]
    condition: String,
    #[serde(default)]
    regexes: Vec<String>,
    /// Substrings of the secret (any case) that mark it as an example.
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(skip)]
    compiled: OnceLock<Vec<Regex>>,
}

/// One redaction rule as the data files hold it.
#[derive(Debug, Deserialize)]
struct Rule {
    id: String,
    kind: String,
    pattern: String,
    /// The capture group holding the secret; absent: the first group that
    /// took part in the match, else the whole match.
    group: Option<usize>,
    /// Lowercase substrings one of which must occur for the rule to run.
    #[serde(default)]
    keywords: Vec<String>,
    /// Minimum Shannon entropy of the secret.
    entropy: Option<f64>,
    #[serde(default)]
    allow: Vec<Allow>,
    /// A named validator run on each finding (see [`check`]).
    check: Option<String>,
    #[serde(skip)]
    compiled: OnceLock<Option<Regex>>,
}

#[derive(Debug, Deserialize)]
struct GitleaksFile {
    rules: Vec<Rule>,
}

#[derive(Debug, Deserialize)]
struct HandoffFile {
    before: Vec<Rule>,
    after: Vec<Rule>,
}

/// The rule set in the order it is applied: this project's specific rules,
/// the gitleaks rules (their generic rule last), then the generic
/// assignments and the personal-data kinds.
/// The rule sets the gate runs, as compiled in (to key cached verdicts).
pub fn rule_sources() -> [&'static str; 2] {
    [GITLEAKS, HANDOFF]
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let gitleaks: GitleaksFile =
            serde_json::from_str(GITLEAKS).expect("rules/gitleaks.json parses");
        let handoff: HandoffFile =
            serde_json::from_str(HANDOFF).expect("rules/handoff.json parses");
        let (generic, specific): (Vec<Rule>, Vec<Rule>) = gitleaks
            .rules
            .into_iter()
            .partition(|r| r.id.starts_with("generic"));
        let mut all = handoff.before;
        all.extend(specific);
        all.extend(generic);
        all.extend(handoff.after);
        all
    })
}

impl Rule {
    fn regex(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| {
                RegexBuilder::new(&go_classes(&self.pattern))
                    .size_limit(1 << 24)
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// Whether a keyword occurs in `lower` (the text in lowercase).
    fn wanted(&self, lower: &str) -> bool {
        self.keywords.is_empty() || self.keywords.iter().any(|k| lower.contains(k.as_str()))
    }

    /// Whether the finding is not a secret: too little entropy, allowlisted,
    /// or refused by the rule's validator.
    fn dismissed(&self, secret: &str, whole: &str, text: &str, start: usize, end: usize) -> bool {
        if let Some(min) = self.entropy
            && entropy(secret) < min
        {
            return true;
        }
        if let Some(name) = &self.check
            && !check(name, secret, text, start, end)
        {
            return true;
        }
        let line = line_at(text, start, end);
        self.allow.iter().any(|a| a.allows(secret, whole, line))
    }
}

impl Allow {
    fn allows(&self, secret: &str, whole: &str, line: &str) -> bool {
        let regexes = self.compiled.get_or_init(|| {
            self.regexes
                .iter()
                .filter_map(|r| Regex::new(&go_classes(r)).ok())
                .collect()
        });
        let target = match self.target.as_str() {
            "match" => whole,
            "line" => line,
            _ => secret,
        };
        let lower = secret.to_lowercase();
        let by_regex = (!regexes.is_empty()).then(|| regexes.iter().any(|r| r.is_match(target)));
        let by_word = (!self.stopwords.is_empty()).then(|| {
            self.stopwords
                .iter()
                .any(|w| lower.contains(&w.to_lowercase()))
        });
        let results = [by_regex, by_word].into_iter().flatten();
        if self.condition == "and" {
            let mut results = results.peekable();
            results.peek().is_some() && results.all(|b| b)
        } else {
            results.into_iter().any(|b| b)
        }
    }
}

/// `pattern` with the meaning its rules were written for: in Go's RE2
/// (gitleaks' engine) `\\w`, `\\d`, `\\s` and `\\b` are ASCII, here they
/// would be Unicode. Spelled out as ASCII classes they match what gitleaks
/// matches, and compile to an automaton a fraction of the size (the
/// generic rule's `[\\w.-]{0,50}` alone is tens of milliseconds in Unicode).
/// A negated shorthand inside a class (`[\\W]`) is left as written.
fn go_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push(c);
                    break;
                };
                out.push_str(match (depth, n) {
                    (0, 'w') => "[0-9A-Za-z_]",
                    (0, 'W') => "[^0-9A-Za-z_]",
                    (0, 'd') => "[0-9]",
                    (0, 'D') => "[^0-9]",
                    (0, 's') => "[\\t\\n\\f\\r ]",
                    (0, 'S') => "[^\\t\\n\\f\\r ]",
                    (0, 'b') => "(?-u:\\b)",
                    (0, 'B') => "(?-u:\\B)",
                    (_, 'w') if depth > 0 => "0-9A-Za-z_",
                    (_, 'd') if depth > 0 => "0-9",
                    (_, 's') if depth > 0 => "\\t\\n\\f\\r ",
                    _ => {
                        out.push(c);
                        out.push(n);
                        continue;
                    }
                });
            }
            '[' if depth > 0 && chars.peek() == Some(&':') => {
                // A POSIX class, `[:alnum:]`, copied whole.
                out.push(c);
                for p in chars.by_ref() {
                    out.push(p);
                    if p == ']' {
                        break;
                    }
                }
            }
            '[' => {
                depth += 1;
                out.push(c);
                // `^` and a leading `]` are literal parts of the class.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().expect("peeked"));
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The line of `text` that holds `start..end`.
fn line_at(text: &str, start: usize, end: usize) -> &str {
    let from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = text[end..].find('\n').map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// What to redact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Redact e-mail addresses too (`handoff.redactEmails`, or
    /// `handoff.redact.email`).
    pub emails: bool,
    /// Kinds switched off with `handoff.redact.<kind> false`.
    pub off: &'static [&'static str],
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emails: true,
            off: &[],
        }
    }
}

impl Options {
    /// Options from git config: `handoff.redact.<kind>` (default true, see
    /// [`config_key`]) for every kind, and the older `handoff.redactEmails`.
    pub fn from_repo(repo: &gix::Repository) -> Options {
        let config = repo.config_snapshot();
        let off: Vec<&'static str> = kinds()
            .into_iter()
            .filter(|k| config.boolean(config_key(k).as_str()) == Some(false))
            .collect();
        let emails =
            config.boolean("handoff.redactEmails").unwrap_or(true) && !off.contains(&"email");
        Options {
            emails,
            off: if off.is_empty() {
                &[]
            } else {
                Box::leak(off.into_boxed_slice())
            },
        }
    }

    /// Whether findings of `kind` are redacted.
    pub fn enabled(&self, kind: &str) -> bool {
        !(self.off.contains(&kind) || (kind == "email" && !self.emails))
    }
}

/// The git config variable that switches `kind` on or off:
/// `handoff.redact.<kind>` with `_` written `-` (git's variable names
/// allow letters, digits and `-` only), e.g. `handoff.redact.ip-address`.
pub fn config_key(kind: &str) -> String {
    format!("handoff.redact.{}", kind.replace('_', "-"))
}

/// Every kind the rule set knows, sorted, without repeats.
pub fn kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = rules().iter().map(|r| r.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// How many rules the rule set holds (the gitleaks set and this project's).
pub fn rule_count() -> usize {
    rules().len()
}

/// How many secrets of each kind were found or replaced.
pub type Counts = BTreeMap<&'static str, usize>;

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts: BTreeMap<char, usize> = BTreeMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

/// A value that looks generated rather than a word or a placeholder: at
/// least 8 characters, entropy ≥ 3 bits per character, two character
/// classes, and not an obvious reference (`$VAR`, `{{x}}`, `os.environ…`).
fn high_entropy(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    v.len() >= 8 && !is_reference(v) && classes(v) >= 2 && entropy(v) >= 3.0
}

/// The character classes of `v` (lower, upper, digit, other).
fn classes(v: &str) -> usize {
    [
        v.chars().any(|c| c.is_ascii_lowercase()),
        v.chars().any(|c| c.is_ascii_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|b| **b)
    .count()
}

/// A reference to a secret rather than its value: `$VAR`, `{{x}}`,
/// `%VAR%`, `<placeholder>`, `os.environ[…]`, a call.
fn is_reference(v: &str) -> bool {
    v.starts_with(['$', '{', '%', '<'])
        || v.contains("REDACTED")
        || v.contains('(')
        || v.contains('[')
        || ["os.", "env.", "process.", "std::env"]
            .iter()
            .any(|p| v.starts_with(p))
}

/// Run the validator `name` on a finding `secret` at `start..end` of `text`.
fn check(name: &str, secret: &str, text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let digits: String = secret.chars().filter(char::is_ascii_digit).collect();
    match name {
        "high_entropy" => high_entropy(secret),
        // A password is short and human: any value of 6+ characters with
        // two character classes that is not a reference.
        "password" => {
            let v = secret.trim_matches(|c| c == '"' || c == '\'');
            v.len() >= 6 && !is_reference(v) && classes(v) >= 2
        }
        // `git@host:path` is an scp-style remote, not mail.
        "email" => after != Some(':'),
        "ssn" => {
            let (area, group, serial) = (&digits[..3], &digits[3..5], &digits[5..]);
            area != "000"
                && area != "666"
                && !area.starts_with('9')
                && group != "00"
                && serial != "0000"
                && !matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && !matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '.')
        }
        "luhn" => card_like(&digits) && !matches!(before, Some(c) if c == '-' || c == '.'),
        "ipv4" => ipv4_like(secret, text, start, before, after),
        "ipv6" => {
            let groups = secret.split(':').filter(|g| !g.is_empty()).count();
            groups >= 3
                && secret.chars().any(|c| c.is_ascii_digit())
                && !matches!(before, Some(c) if c == ':' || c.is_ascii_alphanumeric())
                && !matches!(after, Some(c) if c == ':' || c.is_ascii_alphanumeric())
        }
        "phone" => {
            (10..=15).contains(&digits.len())
                && !matches!(before, Some(c) if c.is_ascii_alphanumeric() || "-./_:".contains(c))
                && !matches!(after, Some(c) if c.is_ascii_alphanumeric() || "-/_".contains(c))
                && !digit_beyond_separator(text[..start].chars().rev())
                && !digit_beyond_separator(text[end..].chars())
        }
        _ => true,
    }
}

/// Whether `chars` (walking away from a match) start with one separator
/// and then a digit: the match is part of a longer number.
fn digit_beyond_separator(mut chars: impl Iterator<Item = char>) -> bool {
    matches!(chars.next(), Some(' ' | '-' | '.'))
        && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// A payment card number: 13–19 digits, a known issuer prefix, and a valid
/// Luhn check digit.
fn card_like(digits: &str) -> bool {
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let issuer = [
        "4", "51", "52", "53", "54", "55", "22", "23", "24", "25", "26", "27", "34", "37", "6011",
        "65", "35", "36", "30", "38", "62",
    ];
    if !issuer.iter().any(|p| digits.starts_with(p)) {
        return false;
    }
    let sum: u32 = digits
        .chars()
        .rev()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(i, d)| match i % 2 {
            0 => d,
            _ if d * 2 > 9 => d * 2 - 9,
            _ => d * 2,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// An IPv4 address that is not a version string (`v1.2.3.4`,
/// `version 1.2.3.4`, `1.2.3.4.5`), a loopback or the unspecified address.
fn ipv4_like(
    ip: &str,
    text: &str,
    start: usize,
    before: Option<char>,
    after: Option<char>,
) -> bool {
    if ip.starts_with("127.") || ip == "0.0.0.0" || ip.starts_with("255.") {
        return false;
    }
    if matches!(before, Some(c) if c.is_ascii_alphanumeric() || c == '.' || c == '-')
        || matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == '-')
        || (after == Some('.')
            && text[start + ip.len()..]
                .chars()
                .nth(1)
                .is_some_and(|c| c.is_ascii_digit()))
    {
        return false;
    }
    let lead = text[..start].trim_end().to_lowercase();
    !["version", "release", "v", "ver", "tag"]
        .iter()
        .any(|w| lead.ends_with(w))
}

/// Redact `text` with the default options (every kind on).
pub fn redact_text(text: &str) -> (String, Vec<(&'static str, usize)>) {
    let (out, counts) = redact(text, Options::default());
    (out, counts.into_iter().collect())
}

/// Replace every secret in `text` by `[REDACTED:<kind>]`; return the new
/// text and the counts per kind.
pub fn redact(text: &str, options: Options) -> (String, Counts) {
    let mut counts = Counts::new();
    let mut out = text.to_string();
    let lower = text.to_lowercase();
    for rule in rules() {
        if !rule.wanted(&lower) || !options.enabled(&rule.kind) {
            continue;
        }
        let Some(re) = rule.regex() else { continue };
        if !re.is_match(&out) {
            continue;
        }
        let mut found = 0;
        let replaced = re.replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("match");
            let secret = match rule.group {
                Some(g) => caps.get(g),
                None => caps.iter().skip(1).flatten().next().or(Some(whole)),
            };
            let Some(secret) = secret.filter(|s| !s.is_empty()) else {
                return whole.as_str().to_string();
            };
            if secret.as_str().contains("[REDACTED:")
                || rule.dismissed(
                    secret.as_str(),
                    whole.as_str(),
                    &out,
                    whole.start(),
                    whole.end(),
                )
            {
                return whole.as_str().to_string();
            }
            found += 1;
            let start = secret.start() - whole.start();
            let end = secret.end() - whole.start();
            let w = whole.as_str();
            format!("{}[REDACTED:{}]{}", &w[..start], rule.kind, &w[end..])
        });
        if found > 0 {
            out = replaced.into_owned();
            *counts.entry(rule.kind.as_str()).or_default() += found;
        }
    }
    (out, counts)
}

/// Count the secrets in `text` without changing it.
pub fn scan(text: &str, options: Options) -> Counts {
    redact(text, options).1
}

/// Redact every string of a JSON value in place, except object keys and
/// the brief's `key` field (a key with a secret is refused elsewhere).
pub fn redact_json(value: &mut Value, options: Options) -> Counts {
    let mut counts = Counts::new();
    walk(value, options, &mut counts, true);
    counts
}

fn walk(value: &mut Value, options: Options, counts: &mut Counts, top: bool) {
    match value {
        Value::String(s) => {
            let (new, found) = redact(s, options);
            if !found.is_empty() {
                *s = new;
                merge(counts, found);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| walk(v, options, counts, false)),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if top && k == "key" {
                    continue;
                }
                walk(v, options, counts, false);
            }
        }
        _ => {}
    }
}

/// Add `more` to `counts`.
pub fn merge(counts: &mut Counts, more: Counts) {
    for (k, n) in more {
        *counts.entry(k).or_default() += n;
    }
}

/// `3 secrets redacted (2 github_token, 1 email)`, or `None` for none.
pub fn summary(counts: &Counts) -> Option<String> {
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    Some(format!(
        "{total} secret{} redacted ({})",
        if total == 1 { "" } else { "s" },
        parts.join(", ")
    ))
}

/// The kinds of secret in `text` (with their counts), for checks that
/// refuse rather than rewrite (a key, a ref name, a line that leaves or
/// arrives). Never the secret itself.
pub fn find_in_text(text: &str, options: Options) -> Counts {
    scan(text, options)
}

/// The secrets in every string of `value`: object keys and the brief's
/// `key` field included (what [`redact_json`] leaves alone), for the
/// checks on what leaves or enters the repository.
pub fn find_in_json(value: &Value, options: Options) -> Counts {
    let mut counts = Counts::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => merge(&mut counts, scan(s, options)),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    merge(&mut counts, scan(k, options));
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    counts
}

/// The secrets in one line of a history note: a JSON object string by
/// string ([`find_in_json`]), anything else as text.
pub fn find_in_line(line: &[u8], options: Options) -> Counts {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) if value.is_object() => find_in_json(&value, options),
        _ => scan(&String::from_utf8_lossy(line), options),
    }
}

/// The rule a key matches, if any: a key becomes a ref name and part of
/// every history line, so one with a secret is refused, never redacted.
pub fn key_rule(key: &str, options: Options) -> Option<&'static str> {
    scan(key, options).into_keys().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind with true positives; the secret must be gone and counted.
    #[test]
    fn every_kind_is_caught() {
        let ghp = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let corpus: Vec<(&str, String, &str)> = vec![
            ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----".into(), "MIIEpAIBAAKCAQEA7"),
            ("private_key", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA".into(), "b3BlbnNzaC1rZXktdjEAAAAA"),
            ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLE is the id".into(), "AKIAIOSFODNN7EXAMPLE"),
            ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(), "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("github_token", format!("push with {ghp} please"), ghp.as_str()),
            ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz".into(), "github_pat_11ABCDEFG"),
            ("gitlab_token", "glpat-xxxxXXXX1234567890ab".into(), "glpat-xxxxXXXX1234567890ab"),
            ("slack_token", "xoxb-1234567890-abcdefghij".into(), "xoxb-1234567890-abcdefghij"),
            ("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(), "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
            ("google_api_key", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI".into(), "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"),
            ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".into(), "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
            ("bearer_token", "curl -H 'Authorization: Bearer abc123DEF456ghi789'".into(), "abc123DEF456ghi789"),
            ("url_credentials", "git clone https://alice:s3cr3tP4ss@example.com/repo.git".into(), "s3cr3tP4ss"),
            ("secret_assignment", "password=Tr0ub4dor&3xyz".into(), "Tr0ub4dor&3xyz"),
            ("secret_assignment", "api_key: \"9f8e7d6c5b4aQWERTY\"".into(), "9f8e7d6c5b4aQWERTY"),
            ("secret_assignment", "export TOKEN=Zx81_kqP0mnB72vT".into(), "Zx81_kqP0mnB72vT"),
            ("email", "ask jane.doe@corp.example.com about it".into(), "jane.doe@corp.example.com"),
        ];
        for (kind, text, secret) in corpus {
            let (out, counts) = redact(&text, Options::default());
            assert!(!out.contains(secret), "{kind}: {secret} survived in {out}");
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{kind}: {out}");
            assert_eq!(counts.get(kind), Some(&1), "{kind}: {counts:?} for {text}");
        }
    }

    /// What briefs normally hold stays as it is.
    #[test]
    fn near_misses_are_kept() {
        let keep = [
            "head at 3f9a2b1c4d5e6f708192a3b4c5d6e7f801234567",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "src/auth/token.rs:10-40",
            "cargo test auth::token::expiry",
            "token: string",
            "the password field must be hashed",
            "password=${DB_PASSWORD}",
            "api_key = os.environ['API_KEY']",
            "secret: <redacted>",
            "token=aaaaaaaaaaaa",
            "SGVsbG8gd29ybGQsIHRoaXMgaXMgYmFzZTY0",
            "git@github.com:org/repo.git",
            "npm i react@18.2.0 @types/node",
            "ghp_short",
            "AKIA lowercase akiaiosfodnn7example",
            "https://example.com/path?a=b",
            "Bearer of bad news",
            "eyJ is how base64 JSON starts",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----",
        ];
        for text in keep {
            let (out, counts) = redact(text, Options::default());
            assert_eq!(out, text, "changed: {counts:?}");
            assert!(counts.is_empty(), "{text}: {counts:?}");
        }
    }

    /// The rule files are well formed and every pattern and allowlist
    /// compiles with the `regex` crate.
    #[test]
    fn shorthand_classes_mean_what_they_mean_in_go() {
        assert_eq!(
            go_classes(r"(?i)[\w.-]{0,5}\s\d\b\\w[^\s\]][[:alnum:]\W]\x60"),
            r"(?i)[0-9A-Za-z_.-]{0,5}[\t\n\f\r ][0-9](?-u:\b)\\w[^\t\n\f\r \]][[:alnum:]\W]\x60"
        );
        assert_eq!(go_classes(r"[]a\w]"), r"[]a0-9A-Za-z_]");
        // ASCII, as in gitleaks: a letter outside ASCII is not a word
        // character, so it ends a token instead of extending it.
        let word = Regex::new(&go_classes(r"^\w+")).unwrap();
        assert_eq!(word.find("abcé").map(|m| m.as_str()), Some("abc"));
    }

    #[test]
    fn every_rule_compiles() {
        let bad: Vec<&str> = rules()
            .iter()
            .filter(|r| r.regex().is_none())
            .map(|r| r.id.as_str())
            .collect();
        assert!(bad.is_empty(), "rules that do not compile: {bad:?}");
        for rule in rules() {
            for allow in &rule.allow {
                for r in &allow.regexes {
                    assert!(
                        Regex::new(&go_classes(r)).is_ok(),
                        "{}: allowlist {r}",
                        rule.id
                    );
                }
            }
        }
        assert!(rule_count() > 200, "the gitleaks set is loaded");
        assert!(kinds().contains(&"payment_card"));
    }

    #[test]
    fn emails_can_be_kept_by_config() {
        let (out, counts) = redact(
            "mail a@b.example",
            Options {
                emails: false,
                ..Options::default()
            },
        );
        assert_eq!(out, "mail a@b.example");
        assert!(counts.is_empty());
    }

    #[test]
    fn json_strings_are_redacted_and_the_key_field_is_left_alone() {
        let mut v = serde_json::json!({"key": "k", "state": {"decisions": ["use sk_live_4eC39HqLyjWDarjtT1zdp7dc", "ok"]}});
        let counts = redact_json(&mut v, Options::default());
        assert_eq!(v["state"]["decisions"][0], "use [REDACTED:stripe_key]");
        assert_eq!(
            summary(&counts).unwrap(),
            "1 secret redacted (1 stripe_key)"
        );
        assert_eq!(summary(&Counts::new()), None);
    }
}
