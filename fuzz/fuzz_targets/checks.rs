//! `lint::lint` and `redact::redact` on arbitrary JSON and text.
#![no_main]

use git_handoff::{lint, redact};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for emails in [true, false] {
        let options = redact::Options {
            emails,
            ..redact::Options::default()
        };
        let (clean, counts) = redact::redact(&text, options);
        // Redacted text holds nothing more to redact: what `redact` wrote,
        // `push` accepts.
        let (twice, more) = redact::redact(&clean, options);
        assert!(
            more.is_empty(),
            "redacted text still holds {more:?}: {clean:?}"
        );
        assert_eq!(twice, clean);
        let _ = redact::summary(&counts);
        assert_eq!(redact::scan(&text, options), counts);
    }
    let _ = lint::is_vague(&text);
    let value = match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(v) => v,
        Err(_) => serde_json::json!({
            "resume": {"done_when": text, "resume_by": text},
            "state": {"next_acceptance_check": text, "decisions": [text], "open_risks": [text]},
            "files_read_first": [{"path": text, "why": text}],
        }),
    };
    let findings = lint::lint(&value, &lint::Context::default());
    for f in &findings {
        let _ = f.line();
    }
    let mut redacted = value.clone();
    let counts = redact::redact_json(&mut redacted, redact::Options::default());
    let mut again = redacted.clone();
    let more = redact::redact_json(&mut again, redact::Options::default());
    assert!(
        more.is_empty(),
        "redacted JSON still holds {more:?} (first pass {counts:?})"
    );
});
