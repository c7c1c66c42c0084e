//! Git: opening the repository and reading what git says now — HEAD,
//! branch, worktrees and their status ([`repo`]), which line of work drift
//! is measured on ([`measure`]), the sticky key of a worktree ([`sticky`]),
//! a brief composed from a partial one plus those facts ([`compose`]), and
//! many trees read from packs the way git reads them ([`packs`]).
//! Reads the repository; never writes a ref.

pub mod compose;
pub mod measure;
pub mod packs;
pub mod repo;
pub mod sticky;
