//! `bauxite sim`: the scheduler simulator's command line (seed 003).

use anyhow::Result;

/// `bauxite sim` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum SimCommand {
    /// One scenario.
    Run,
}

/// Runs a `bauxite sim` subcommand.
pub fn run(command: SimCommand) -> Result<()> {
    match command {
        SimCommand::Run => anyhow::bail!("bauxite sim run: not built yet"),
    }
}
