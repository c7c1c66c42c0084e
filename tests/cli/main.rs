//! The end-to-end test suite, one binary (as cargo's `tests/testsuite`):
//! a module per area, shared helpers in `support`. The crash tests are a
//! second binary, `tests/crash.rs`.

mod support;

mod adapters;
mod changed;
mod concurrency;
mod damage;
mod docs;
mod draft;
mod encodings;
mod fence;
mod first_contact;
mod fork;
mod formats;
mod graph;
mod health;
mod history;
mod hostile;
mod import_export;
mod index;
mod init;
mod lineage;
mod lint;
mod manual;
mod mcp;
mod mcp_conformance;
mod method;
mod method3;
mod method4;
mod method5;
mod mixed_team;
mod model;
mod narrative_merge;
mod net_model;
mod pipeline;
mod pre_push;
mod prune;
mod push_once;
mod quoting;
mod recover;
mod redaction_corpus;
mod reliability;
mod remotes;
mod resume;
mod secrets;
mod split;
mod staging;
mod summary;
mod sync;
mod sync_races;
mod transports;
mod usage;
mod version_args;
mod walk;
mod write;
