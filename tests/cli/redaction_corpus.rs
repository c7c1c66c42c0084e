//! The redaction corpus: for every kind, values that must be caught and
//! near-misses that must survive, through the library's one filter (the
//! same one every write, note, narrative, fork file and push goes through).

use git_handoff::redact::{Options, kinds, redact};

/// Assert each hit is redacted as `kind` (the secret gone, counted once)
/// and each near-miss is left exactly as it was.
fn corpus(kind: &str, hits: &[(&str, &str)], misses: &[&str]) {
    assert!(kinds().contains(&kind), "unknown kind {kind}");
    for (text, secret) in hits {
        let (out, counts) = redact(text, Options::default());
        assert!(
            !out.contains(secret),
            "{kind}: {secret:?} survived in {out:?}"
        );
        assert!(
            out.contains(&format!("[REDACTED:{kind}]")),
            "{kind}: {text:?} became {out:?} ({counts:?})"
        );
    }
    for text in misses {
        let (out, counts) = redact(text, Options::default());
        assert_eq!(&out, text, "{kind}: near-miss changed ({counts:?})");
    }
}

/// What any brief holds and no rule may touch.
const EVERYDAY: &[&str] = &[
    "bump to version 1.2.3",
    "release v2.10.0-rc.1 and 10.4.1",
    "needs node >= 18.17.1, python 3.12.4 was fine",
    "due 2026-11-30, written 2026-11-30T12:00:00Z, 30/11/2026",
    "head at 3f9a2b1c4d5e6f708192a3b4c5d6e7f801234567",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "src/auth/token.rs:10-40 and cargo test auth::token::expiry",
    "timeout 30000 ms, 1700000000 epoch seconds, port 8080",
    "listen on 127.0.0.1:8080 or 0.0.0.0",
];

#[test]
fn everyday_text_survives_every_kind() {
    for text in EVERYDAY {
        let (out, counts) = redact(text, Options::default());
        assert_eq!(&out, text, "changed: {counts:?}");
    }
}

#[test]
fn passwords_and_generic_assignments() {
    corpus(
        "secret_assignment",
        &[
            ("password=hunter22", "hunter22"),
            ("DB_PASSWORD=pg_Secr3t!", "pg_Secr3t!"),
            ("export TOKEN=Zx81_kqP0mnB72vT", "Zx81_kqP0mnB72vT"),
            ("api_key: \"9f8e7d6c5b4aQWERTY\"", "9f8e7d6c5b4aQWERTY"),
        ],
        &[
            "the password field must be hashed",
            "password=${DB_PASSWORD}",
            "password: string",
            "api_key = os.environ['API_KEY']",
            "token: string",
            "token=aaaaaaaaaaaa",
        ],
    );
}

#[test]
fn provider_keys_from_the_gitleaks_set() {
    let openai = "sk-proj-Ab3dEf6hIj9kLm2nOp5qT3BlbkFJZx8wV7uT6sR5qP4oN3mL".to_string();
    let anthropic = format!("sk-ant-api03-{}AA", "aB3dE6fH9iK2lM5nP8qR".repeat(5));
    let npm = format!("npm_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    corpus(
        "openai_api_key",
        &[(&format!("OPENAI_API_KEY={openai}"), &openai)],
        &["sk-proj is the prefix OpenAI uses"],
    );
    corpus(
        "anthropic_api_key",
        &[(&format!("key {anthropic} here"), &anthropic)],
        &["sk-ant-api03- prefixes a key"],
    );
    corpus(
        "npm_access_token",
        &[(&format!("//registry.npmjs.org/:_authToken={npm}"), &npm)],
        &["npm_modules", "npm_config_cache=/tmp/npm"],
    );
    corpus(
        "stripe_key",
        &[
            (
                "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                "4eC39HqLyjWDarjtT1zdp7dc",
            ),
            (
                "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
                "4eC39HqLyjWDarjtT1zdp7dc",
            ),
        ],
        &["sk_live_ is the prefix"],
    );
    let ghp = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    corpus(
        "github_token",
        &[(&format!("push with {ghp}"), &ghp)],
        &["ghp_short", "gh_pages branch"],
    );
    corpus(
        "aws_access_key_id",
        &[("AKIAIOSFODNN7EXAMPLE is the id", "AKIAIOSFODNN7EXAMPLE")],
        &["akiaiosfodnn7example in lowercase"],
    );
}

#[test]
fn emails() {
    corpus(
        "email",
        &[("ask jane.doe@corp.example.com", "jane.doe@corp.example.com")],
        &[
            "git@github.com:org/repo.git",
            "npm i react@18.2.0 @types/node",
        ],
    );
    let off = Options {
        emails: false,
        ..Options::default()
    };
    assert_eq!(redact("a@b.example", off).0, "a@b.example");
}

#[test]
fn phone_numbers() {
    corpus(
        "phone",
        &[
            ("call +1 (555) 867-5309 today", "867-5309"),
            ("mobile +44 20 7946 0958", "7946 0958"),
            ("desk 555-867-5309", "555-867-5309"),
            ("call +15558675309", "+15558675309"),
        ],
        &[
            "v1.2.3",
            "2026-11-30",
            "build 20261130-1200",
            "range 100-200-300",
            "1700000000",
        ],
    );
}

#[test]
fn us_social_security_numbers() {
    corpus(
        "ssn",
        &[("SSN 123-45-6789 on file", "123-45-6789")],
        &[
            "000-12-3456",
            "666-12-3456",
            "900-12-3456",
            "123-00-4567",
            "2026-11-30",
            "lines 123-45",
        ],
    );
}

#[test]
fn payment_cards_are_luhn_checked() {
    corpus(
        "payment_card",
        &[
            ("card 4111 1111 1111 1111 exp", "4111 1111 1111 1111"),
            ("card 5500-0000-0000-0004", "5500-0000-0000-0004"),
            ("amex 378282246310005", "378282246310005"),
        ],
        &[
            "card 4111 1111 1111 1112",
            "order 1234567890123456",
            "epoch ms 1764504000000",
        ],
    );
}

#[test]
fn ip_addresses() {
    corpus(
        "ip_address",
        &[
            ("db at 10.20.30.40:5432", "10.20.30.40"),
            ("ssh deploy@203.0.113.7", "203.0.113.7"),
            (
                "v6 2001:db8:85a3::8a2e:370:7334 up",
                "2001:db8:85a3::8a2e:370:7334",
            ),
        ],
        &[
            "version 1.2.3.4",
            "v10.0.0.1",
            "1.2.3.4.5",
            "127.0.0.1",
            "std::fs::read",
            "cafe::face",
            "12:30:45",
        ],
    );
}

#[test]
fn each_kind_can_be_switched_off() {
    let off = Options {
        off: &["ssn", "payment_card"],
        ..Options::default()
    };
    let text = "123-45-6789 4111 1111 1111 1111 password=hunter22";
    let (out, _) = redact(text, off);
    assert_eq!(
        out,
        "123-45-6789 4111 1111 1111 1111 password=[REDACTED:secret_assignment]"
    );
}
