//! `keyroute route`: the node (or replicas) owning each key.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use keyroute::error::ErrorCode;
use keyroute::ring::{parse_nodes, Ring};

use super::keys::{arg_bytes, for_each_stdin_line, KeyJson};
use super::ring_args::ProfileArgs;
use super::{json_line, note_reading_stdin, CliError, Format};

/// Print the owner of each key, one line per key.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Node lists (--nodes, and --nodes-file one entry per line; `#` starts a comment):
  cache-a, 10.0.0.1, 2001:db8::1      a name, weight 1
  10.0.0.1:11211, [::1]:6379          host:port keeps its port, weight 1
  NAME=WEIGHT                         10.0.0.1:11211=3, cache-a=2
  host:port:WEIGHT [ALIAS]            twemproxy: 10.0.0.1:11211:2 cache-a
  NAME WEIGHT                         libketama's ketama.servers: 10.0.1.1:11211 600
`a:2` is refused (AMBIGUOUS_NODE_SPEC): write a=2 (node a, weight 2) or a:2=1 (node a:2).

Keys are bytes: arguments are taken as given (UTF-8 or not); from stdin, one key per
line without its \\n or \\r\\n, and empty lines are skipped (pass an empty key as an
argument: '').

--format json prints one object per key: {\"key\":\"user:1\",\"nodes\":[\"a\",\"b\"]}
(\"key_hex\" instead of \"key\" for a key that is not UTF-8); nodes are the owner, then
the replicas.

Examples:
  keyroute route --profile libketama --nodes 10.0.0.1:11211=1,10.0.0.2:11211=2 user:1
  seq 1 5 | keyroute route --nodes-file examples/fleet.txt --replicas 2
  keyroute route --nodes a,b=2 --format json user:1")]
pub struct Args {
    #[command(flatten)]
    pub ring: ProfileArgs,
    /// Nodes, comma-separated: NAME, host:port, NAME=WEIGHT, host:port:WEIGHT [ALIAS].
    #[arg(
        long,
        short = 'n',
        conflicts_with = "nodes_file",
        required_unless_present = "nodes_file"
    )]
    pub nodes: Option<String>,
    /// A file of nodes, one per line, in the same grammar (also `NAME WEIGHT`).
    #[arg(long, short = 'f')]
    pub nodes_file: Option<PathBuf>,
    /// Print this many distinct nodes per key (owner first, then replicas clockwise);
    /// more than the ring has prints every node.
    #[arg(long, short = 'r', default_value_t = 1)]
    pub replicas: u64,
    /// Output: text (node names separated by spaces) or json (one object per line).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Keys; read from stdin, one per line, when none are given.
    #[arg(value_name = "KEY")]
    pub keys: Vec<OsString>,
}

/// The ring `--nodes` or `--nodes-file` describe.
pub fn ring_of(args: &Args) -> Result<Ring, CliError> {
    let nodes = match (&args.nodes, &args.nodes_file) {
        (Some(list), _) => parse_nodes(list).map_err(|e| CliError::from(e).context("--nodes"))?,
        (None, Some(path)) => {
            let shown = path.display();
            let bytes = std::fs::read(path).map_err(|e| {
                CliError::from(e).context(format!("cannot read nodes file {shown}"))
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                CliError::new(
                    ErrorCode::BadUtf8,
                    format!("nodes file {shown} is not UTF-8 text"),
                )
            })?;
            parse_nodes(&text)
                .map_err(|e| CliError::from(e).context(format!("nodes file {shown}")))?
        }
        (None, None) => {
            return Err(CliError::new(
                ErrorCode::BadNodeSpec,
                "give --nodes or --nodes-file",
            ))
        }
    };
    args.ring
        .ring(nodes.into_iter().map(|n| (n.name, n.weight)).collect())
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.replicas == 0 {
        return Err(CliError::new(
            ErrorCode::OutOfRange,
            "--replicas must be at least 1",
        ));
    }
    let ring = ring_of(&args)?;
    // A key has at most as many distinct owners as the ring has nodes: a larger count is
    // capped before anything is allocated.
    let replicas = usize::try_from(args.replicas)
        .unwrap_or(usize::MAX)
        .min(ring.len().max(1));
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut idx = Vec::with_capacity(replicas);
    let json = args.format == Format::Json;
    let mut emit = |key: &[u8], out: &mut BufWriter<io::StdoutLock<'_>>| -> Result<(), CliError> {
        ring.get_n_into(key, replicas, &mut idx);
        if json {
            #[derive(serde::Serialize)]
            struct Line<'a> {
                #[serde(flatten)]
                key: KeyJson<'a>,
                nodes: Vec<&'a str>,
            }
            let nodes = idx.iter().map(|&i| ring.nodes()[i].name()).collect();
            return json_line(
                out,
                &Line {
                    key: KeyJson::of(key),
                    nodes,
                },
            );
        }
        for (j, &i) in idx.iter().enumerate() {
            if j > 0 {
                out.write_all(b" ")?;
            }
            out.write_all(ring.nodes()[i].name().as_bytes())?;
        }
        out.write_all(b"\n")?;
        Ok(())
    };
    if args.keys.is_empty() {
        note_reading_stdin("keys");
        for_each_stdin_line(|key, _| emit(key, &mut out))?;
    } else {
        for (i, arg) in args.keys.iter().enumerate() {
            emit(&arg_bytes(arg, i + 1)?, &mut out)?;
        }
    }
    out.flush()?;
    Ok(())
}
