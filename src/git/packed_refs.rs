//! The packed refs below a namespace, read off the bytes gix holds.
//!
//! gix decodes and validates every name of a `packed-refs` listing; a push
//! or fetch lists two namespaces of a thousand refs each, and that was a
//! fifth of what the process spent. `packed-refs` is sorted (gix sorts a
//! file that does not say it is), so the namespace is one run of lines:
//! found with one search, each line split at its space. Names are git's
//! as written (git never writes a name it refuses); a peeled line (`^id`)
//! belongs to the line before and is passed over.

use anyhow::{Result, anyhow};
use gix::ObjectId;
use gix::bstr::ByteSlice;

/// The refs of a `packed-refs` body `data` (after its header, sorted by
/// name) below `prefix`, by full name, in order.
pub fn below(data: &[u8], prefix: &str) -> Result<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    // A name follows its id and a space: the first such match is the
    // first line of the run (a line holds no other space).
    let Some(start) = data.find(format!(" {prefix}")).map(|at| {
        data[..at]
            .rfind_byte(b'\n')
            .map_or(0, |newline| newline + 1)
    }) else {
        return Ok(out);
    };
    for line in data[start..].lines() {
        if line.first() == Some(&b'^') {
            continue;
        }
        let (id, name) = line
            .split_once_str(" ")
            .ok_or_else(|| anyhow!("cannot read packed-refs: a line without a name"))?;
        if !name.starts_with(prefix.as_bytes()) {
            break;
        }
        let id = ObjectId::from_hex(id)
            .map_err(|e| anyhow!("cannot read packed-refs: {e} in the line of {name:?}"))?;
        out.push((name.to_str_lossy().into_owned(), id));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::below;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    fn names(data: &str, prefix: &str) -> Vec<String> {
        below(data.as_bytes(), prefix)
            .unwrap()
            .into_iter()
            .map(|(name, id)| format!("{name} {}", &id.to_string()[..1]))
            .collect()
    }

    /// The run of the namespace only: not a neighbour whose name merely
    /// begins alike, not a peeled line, at the start, middle and end.
    #[test]
    fn the_namespace_is_one_run_of_lines() {
        let data = format!(
            "{A} refs/a/x\n{B} refs/b/one\n^{A}\n{A} refs/b/two\n{B} refs/bb/x\n{A} refs/c/x\n"
        );
        assert_eq!(names(&data, "refs/a/"), ["refs/a/x 1"]);
        assert_eq!(names(&data, "refs/b/"), ["refs/b/one 2", "refs/b/two 1"]);
        assert_eq!(names(&data, "refs/c/"), ["refs/c/x 1"]);
        assert!(names(&data, "refs/d/").is_empty());
        assert!(names("", "refs/a/").is_empty());
        assert!(below(b"zz refs/a/x\n", "refs/a/").is_err());
    }
}
