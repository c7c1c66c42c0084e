//! Redaction: secrets and personal data never land in a ref, a note or a
//! file written by git-handoff. The rules are one table; each finding is
//! replaced by `[REDACTED:<kind>]` and counted, never echoed.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::{Captures, Regex};
use serde_json::Value;

/// One redaction rule: a kind, a pattern, and which capture group holds the
/// secret (0 = the whole match).
struct Rule {
    kind: &'static str,
    pattern: &'static str,
    group: usize,
    /// Extra check on the captured value (e.g. entropy); `None` accepts all.
    accept: Option<fn(&str) -> bool>,
}

/// The rule table, applied in order (more specific kinds first).
const RULES: &[Rule] = &[
    Rule {
        kind: "private_key",
        pattern: r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "url_credentials",
        pattern: r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]+:([^\s/@]+)@",
        group: 1,
        accept: None,
    },
    Rule {
        kind: "bearer_token",
        pattern: r"(?i)\bauthorization\s*:\s*(?:bearer|token|basic)\s+([A-Za-z0-9._~+/=\-]{8,})",
        group: 1,
        accept: None,
    },
    Rule {
        kind: "bearer_token",
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)",
        group: 1,
        accept: None,
    },
    Rule {
        kind: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{10,}",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "github_token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "gitlab_token",
        pattern: r"\bglpat-[A-Za-z0-9_\-]{20,}",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "slack_token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "stripe_key",
        pattern: r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "google_api_key",
        pattern: r"\bAIza[0-9A-Za-z_\-]{35}\b",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "aws_access_key_id",
        pattern: r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b",
        group: 0,
        accept: None,
    },
    Rule {
        kind: "aws_secret_key",
        pattern: r#"(?i)aws[_\-.]?secret[_\-.]?(?:access[_\-.]?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
        group: 1,
        accept: None,
    },
    Rule {
        kind: "secret_assignment",
        pattern: r#"(?i)\b(?:password|passwd|passphrase|pwd|secret|client[_\-]?secret|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|token|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token)["']?\s*[:=]\s*["']?([^\s"',;<>`]{8,})"#,
        group: 1,
        accept: Some(high_entropy),
    },
];

/// E-mail addresses (PII), unless `handoff.redactEmails=false`. A match
/// followed by `:` is an scp-style git remote (`git@host:path`), not mail.
const EMAIL: &str = r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b(:?)";

/// What to redact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Redact e-mail addresses too.
    pub emails: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { emails: true }
    }
}

impl Options {
    /// Options from git config (`handoff.redactEmails`, default true).
    pub fn from_repo(repo: &gix::Repository) -> Options {
        Options {
            emails: repo
                .config_snapshot()
                .boolean("handoff.redactEmails")
                .unwrap_or(true),
        }
    }
}

/// How many secrets of each kind were found or replaced.
pub type Counts = BTreeMap<&'static str, usize>;

fn compiled() -> &'static [(Regex, &'static Rule)] {
    static COMPILED: OnceLock<Vec<(Regex, &'static Rule)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        RULES
            .iter()
            .map(|r| (Regex::new(r.pattern).expect("redaction rules compile"), r))
            .collect()
    })
}

fn email() -> &'static Regex {
    static EMAIL_RE: OnceLock<Regex> = OnceLock::new();
    EMAIL_RE.get_or_init(|| Regex::new(EMAIL).expect("email rule compiles"))
}

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
    if v.len() < 8
        || v.starts_with('$')
        || v.starts_with('{')
        || v.starts_with('%')
        || v.contains("REDACTED")
    {
        return false;
    }
    if v.contains('(')
        || v.contains('[')
        || v.starts_with("os.")
        || v.starts_with("env.")
        || v.starts_with("process.")
    {
        return false;
    }
    let classes = [
        v.chars().any(|c| c.is_ascii_lowercase()),
        v.chars().any(|c| c.is_ascii_uppercase()),
        v.chars().any(|c| c.is_ascii_digit()),
        v.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    classes >= 2 && entropy(v) >= 3.0
}

/// Redact `text` with the default options (e-mails on).
pub fn redact_text(text: &str) -> (String, Vec<(&'static str, usize)>) {
    let (out, counts) = redact(text, Options::default());
    (out, counts.into_iter().collect())
}

/// Replace every secret in `text` by `[REDACTED:<kind>]`; return the new
/// text and the counts per kind.
pub fn redact(text: &str, options: Options) -> (String, Counts) {
    let mut counts = Counts::new();
    let mut out = text.to_string();
    for (re, rule) in compiled() {
        if !re.is_match(&out) {
            continue;
        }
        let replaced = re.replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("match");
            let Some(secret) = caps.get(rule.group) else {
                return whole.as_str().to_string();
            };
            if let Some(accept) = rule.accept
                && !accept(secret.as_str())
            {
                return whole.as_str().to_string();
            }
            *counts.entry(rule.kind).or_default() += 1;
            let start = secret.start() - whole.start();
            let end = secret.end() - whole.start();
            let w = whole.as_str();
            format!("{}[REDACTED:{}]{}", &w[..start], rule.kind, &w[end..])
        });
        out = replaced.into_owned();
    }
    if options.emails {
        let replaced = email().replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("match").as_str();
            if !caps[1].is_empty() {
                return whole.to_string();
            }
            *counts.entry("email").or_default() += 1;
            "[REDACTED:email]".to_string()
        });
        out = replaced.into_owned();
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
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        ];
        for text in keep {
            let (out, counts) = redact(text, Options::default());
            assert_eq!(out, text, "changed: {counts:?}");
            assert!(counts.is_empty(), "{text}: {counts:?}");
        }
    }

    #[test]
    fn emails_can_be_kept_by_config() {
        let (out, counts) = redact("mail a@b.example", Options { emails: false });
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
