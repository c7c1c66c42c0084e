//! Git: opening the repository and reading what git says now — HEAD,
//! branch, worktrees and their status ([`repo`]), which line of work drift
//! is measured on ([`measure`]), the sticky key of a worktree ([`sticky`]),
//! a brief composed from a partial one plus those facts ([`compose`]), and
//! many trees read from packs the way git reads them ([`packs`]), every
//! ref read through the repository's own ref backend ([`refdb`]: gix for
//! the files backend, the `git` binary for reftable), the `git` subprocess
//! ([`cmd`]) and `git -c` settings ([`config`]).
//! Reads the repository; never writes a ref.

pub mod cmd;
pub mod compose;
pub mod config;
pub mod confined;
pub mod index_refresh;
mod loose_refs;
pub mod measure;
mod packed_refs;
pub mod packs;
pub mod refdb;
pub mod repo;
pub mod sticky;
