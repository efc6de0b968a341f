//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> Result<(), CliError>`.
pub mod cluster;
pub mod pick;
pub mod plan;
pub mod pool;
pub mod ring_args;
pub mod route;
pub mod script;
pub mod simulate;
pub mod slot;

/// An error for the user: printed as `keyroute: error: ...`, exit status 2.
pub type CliError = Box<dyn std::error::Error>;
