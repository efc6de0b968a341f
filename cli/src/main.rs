//! `keyroute`: route keys, simulate ring changes, compute Redis Cluster slots and plans.
//!
//! Exit status: 0 on success; 1 when a pool is empty (nothing to pick or lease); 2 on an error,
//! printed as `keyroute: error: <message> [CODE]` with the library's error code.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Debug, Parser)]
#[command(
    name = "keyroute",
    version,
    about = "Which node owns this key? Which proxy gets the next job?",
    after_help = "Exit status: 0 on success, 1 when a pool is empty (nothing to pick), 2 on \
    an error, printed as `keyroute: error: <message> [CODE]` with the library's error code \
    (docs/errors.md). Passwords in Redis URLs are never printed."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the node that owns each key (keys from the arguments, else stdin).
    Route(cmd::route::Args),
    /// Simulate adding or removing nodes and show how load and keys move.
    Simulate(cmd::simulate::Args),
    /// Print the Redis Cluster hash slot of each key.
    Slot(cmd::slot::Args),
    /// Print a resharding plan that moves a slot map to target weights.
    Plan(cmd::plan::Args),
    /// Print the text of a server-side script.
    Script(cmd::script::Args),
    /// Pick the least-used member of a pool on Redis (atomic, shared by all workers).
    Pick(cmd::pick::Args),
    /// Manage a least-used pool on Redis: seed, remove, restore, show.
    Pool(cmd::pool::Args),
    /// Leases on Redis: least-concurrency selection with deadlines (seed, acquire,
    /// release, reclaim, show).
    Lease(cmd::lease::Args),
    /// Affinity with a cap on Redis: each item held by one node, no node above the cap
    /// (take, release, show).
    Affinity(cmd::affinity::Args),
    /// Redis Cluster: show slot ranges per node, rebalance slots live.
    Cluster(cmd::cluster::Args),
    /// Run the caching broker service (ZeroMQ; docs/protocol.md).
    Serve(Box<cmd::serve::Args>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Route(args) => cmd::route::run(args),
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Slot(args) => cmd::slot::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Script(args) => cmd::script::run(args),
        Command::Pick(args) => cmd::pick::run(args),
        Command::Pool(args) => cmd::pool::run(args),
        Command::Lease(args) => cmd::lease::run(args),
        Command::Affinity(args) => cmd::affinity::run(args),
        Command::Cluster(args) => cmd::cluster::run(args),
        Command::Serve(args) => cmd::serve::run(*args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `keyroute route ... | head` closing the pipe early is not an error.
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", err.line());
            ExitCode::from(err.status())
        }
    }
}
