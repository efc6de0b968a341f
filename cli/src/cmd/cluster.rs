//! Not written yet.
use super::CliError;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<(), CliError> {
    Err("not implemented yet".into())
}
