//! `git handoff schema`: print the embedded JSON Schema.

use crate::brief::SCHEMA_JSON;
use crate::cli::Output;

/// Print the JSON Schema of a brief (schema version 1)
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Print the schema exactly as shipped in `schema/brief.schema.json`.
pub fn run(_args: Args) -> anyhow::Result<Output> {
    Ok(Output::json_text(SCHEMA_JSON))
}
