//! What one line shows without parsing it: how deep it nests and its
//! top-level `id`, read byte by byte in constant memory, so that a request
//! too large to keep or too deep to parse is still answered with its id.

use serde_json::Value;

/// The longest `id` value kept (a longer one is not read).
const MAX_ID: usize = 256;

/// A streaming reading of one line of JSON, tolerant of anything.
#[derive(Debug, Default)]
pub struct Probe {
    depth: usize,
    /// The deepest nesting seen.
    pub deepest: usize,
    started: bool,
    /// The line is an object (its first bracket is `{`).
    object: bool,
    in_string: bool,
    escaped: bool,
    /// At the top level of the object, the next string is a key.
    key_next: bool,
    in_key: bool,
    /// The key being read (its first bytes: only `id` matters).
    key: Vec<u8>,
    /// The last key read at the top level was `id`.
    id_key: bool,
    /// The `id` value being read, until its `,` or `}`.
    value: Option<Vec<u8>>,
    /// The last `id` read whole.
    id: Option<Vec<u8>>,
}

impl Probe {
    /// Read `bytes`, the next part of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// The line's top-level `id`, when it is a string or a number.
    pub fn id(&self) -> Option<Value> {
        let raw = self.id.as_deref()?;
        serde_json::from_slice::<Value>(raw)
            .ok()
            .filter(|id| id.is_string() || id.is_number())
    }

    fn byte(&mut self, b: u8) {
        let ends_value = !self.in_string && self.depth == 1 && matches!(b, b',' | b'}' | b']');
        if ends_value {
            if let Some(value) = self.value.take() {
                self.id = (value.len() <= MAX_ID).then_some(value);
            }
        } else if let Some(value) = &mut self.value
            && value.len() <= MAX_ID
        {
            value.push(b);
        }
        if self.in_string {
            self.string_byte(b);
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.key_next && self.value.is_none() {
                    self.in_key = true;
                    self.key_next = false;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                if !self.started {
                    self.started = true;
                    self.object = b == b'{';
                    self.key_next = self.object;
                }
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 && self.object && self.id_key => {
                self.id_key = false;
                self.value = Some(Vec::new());
            }
            b',' if self.depth == 1 => self.key_next = self.object,
            _ => {}
        }
    }

    fn string_byte(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            if self.in_key {
                self.in_key = false;
                self.id_key = self.key == b"id";
            }
            return;
        }
        if self.in_key && self.key.len() < 3 {
            self.key.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn probe(text: &str) -> Probe {
        let mut p = Probe::default();
        for chunk in text.as_bytes().chunks(3) {
            p.feed(chunk);
        }
        p
    }

    #[test]
    fn the_top_level_id_is_read_wherever_it_stands() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        for (text, id) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#.to_string(),
                json!(7),
            ),
            (
                format!(r#"{{"params":{{"a":{deep},"id":1}},"id":"a\"b,}}"}}"#),
                json!("a\"b,}"),
            ),
            (r#"{ "id" : -1.5 }"#.into(), json!(-1.5)),
        ] {
            let p = probe(&text);
            assert_eq!(p.id(), Some(id), "{text}");
        }
        for text in [
            r#"{"params":{"id":1}}"#,
            r#"[{"id":1}]"#,
            r#"{"id":[1]}"#,
            r#"{"idx":1,"x":"id"}"#,
            r#"{"id":"unterminated"#,
        ] {
            assert_eq!(probe(text).id(), None, "{text}");
        }
        assert_eq!(probe(&deep).deepest, 300);
        assert_eq!(probe(r#"{"a":"[[[["}"#).deepest, 1);
    }
}
