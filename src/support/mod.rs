//! Support: small leaf utilities with no knowledge of briefs or git —
//! atomic file writes, the clock, slugs, terminal-safe text, text cut to one line, the
//! test-only crash points and (in unit tests) the real git binary.
//! Depends on nothing else in the crate.

pub mod atomic;
pub mod clock;
pub mod escape;
pub mod failpoint;
pub mod owned_lock;
pub mod parallel;
pub mod refusal;
pub mod shared;
pub mod slug;
#[cfg(test)]
pub mod test_git;
pub mod text;
