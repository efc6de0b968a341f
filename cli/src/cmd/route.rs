//! `keyroute route`: the node (or replicas) owning each key.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;

use keyroute::ring::parse_nodes;

use super::ring_args::ProfileArgs;
use super::CliError;

/// Print the owner of each key, one line per key.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  keyroute route --profile libketama --nodes 10.0.0.1:11211:1,10.0.0.2:11211:1 user:1\n  \
                        seq 1 5 | keyroute route --nodes a,b=2 --replicas 2"
)]
pub struct Args {
    #[command(flatten)]
    pub ring: ProfileArgs,
    /// Nodes, comma-separated: NAME, host:port, NAME=WEIGHT, host:port:WEIGHT [ALIAS] (see README).
    #[arg(
        long,
        short = 'n',
        conflicts_with = "nodes_file",
        required_unless_present = "nodes_file"
    )]
    pub nodes: Option<String>,
    /// A file of nodes, one per line, in the same grammar (also `NAME WEIGHT`, libketama style).
    #[arg(long, short = 'f')]
    pub nodes_file: Option<PathBuf>,
    /// Print this many distinct nodes per key (owner first, then replicas clockwise).
    #[arg(long, short = 'r', default_value_t = 1)]
    pub replicas: usize,
    /// Keys; read from stdin, one per line, when none are given.
    pub keys: Vec<String>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let nodes = match (&args.nodes, &args.nodes_file) {
        (Some(list), _) => parse_nodes(list)?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read nodes file {}: {e}", path.display()))?;
            parse_nodes(&text).map_err(|e| format!("nodes file {}: {e}", path.display()))?
        }
        (None, None) => return Err("give --nodes or --nodes-file".into()),
    };
    if args.replicas == 0 {
        return Err("--replicas must be at least 1".into());
    }
    let ring = args
        .ring
        .ring(nodes.into_iter().map(|n| (n.name, n.weight)).collect())?;
    // A key has at most as many distinct owners as the ring has nodes.
    let replicas = args.replicas.min(ring.len().max(1));
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut idx = Vec::with_capacity(replicas);
    let mut emit = |key: &[u8], out: &mut BufWriter<io::StdoutLock<'_>>| -> io::Result<()> {
        ring.get_n_into(key, replicas, &mut idx);
        for (j, &i) in idx.iter().enumerate() {
            if j > 0 {
                out.write_all(b" ")?;
            }
            out.write_all(ring.nodes()[i].name().as_bytes())?;
        }
        out.write_all(b"\n")
    };
    if args.keys.is_empty() {
        let stdin = io::stdin();
        let mut lock = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            if lock.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            let key = strip_eol(&line);
            emit(key, &mut out)?;
        }
    } else {
        for k in &args.keys {
            emit(k.as_bytes(), &mut out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// A line without its trailing `\n` / `\r\n`.
pub fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
