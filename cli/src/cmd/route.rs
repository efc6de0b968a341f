//! `keyroute route`: the node (or replicas) owning each key.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use keyroute::config::{read_config_with, ConfigServer, ReadOptions};
use keyroute::engine::{Engine, Router};
use keyroute::error::ErrorCode;
use keyroute::ring::{parse_nodes, NodeSpec};

use super::keys::{arg_bytes, for_each_stdin_line, KeyJson};
use super::ring_args::{entries_help, ProfileArgs};
use super::text_file::{read_capped, read_text};
use super::{json_line, note_reading_stdin, CliError, Format};

/// Print the owner of each key, one line per key.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help(false), after_long_help = after_help(true))]
pub struct Args {
    #[command(flatten)]
    pub ring: ProfileArgs,
    /// Nodes, comma-separated: NAME, host:port, NAME=WEIGHT, host:port:WEIGHT [ALIAS].
    #[arg(
        long,
        short = 'n',
        conflicts_with_all = ["nodes_file", "config"],
        required_unless_present_any = ["nodes_file", "config"]
    )]
    pub nodes: Option<String>,
    /// A file of nodes, one per line, in the same grammar (also `NAME WEIGHT`).
    #[arg(long, short = 'f', conflicts_with = "config")]
    pub nodes_file: Option<PathBuf>,
    /// A proxy configuration: nutcracker.yml, nginx.conf or haproxy.cfg (detected).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// The pool (twemproxy), upstream (nginx) or backend (HAProxy) in --config.
    #[arg(long, requires = "config")]
    pub pool: Option<String>,
    /// How many addresses a hostname of --config resolves to (nginx plain hash), HOST=N.
    #[arg(long, value_name = "HOST=N", requires = "config")]
    pub resolved: Vec<String>,
    /// Accept servers marked down in --config where the proxy's rule is deterministic
    /// (nginx hash ... consistent).
    #[arg(long, requires = "config")]
    pub allow_down: bool,
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

/// The text after the options: node lists, keys, output, then every name of core's
/// registry (with each one's options in `--help`), then configurations and examples.
fn after_help(long: bool) -> String {
    let mut out = String::from(NODE_LISTS);
    out.push_str(if long {
        "Ring profiles, engines and fleet profiles (--profile NAME, or --engine NAME), with\n\
         --option NAME=VALUE (the ring profiles' also as --vnodes, --default-port and\n\
         --points-per-digest):\n"
    } else {
        "Ring profiles, engines and fleet profiles (--profile NAME, or --engine NAME), with\n\
         --option NAME=VALUE (--help lists each one's options):\n"
    });
    out.push_str(&entries_help(long));
    out.push_str(AFTER_ENGINES);
    out
}

const NODE_LISTS: &str = "\
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

";

const AFTER_ENGINES: &str = "
Replicas are the engine's candidates in order: the ring walk, the rendezvous ranking, or
(jump, Maglev, tables) the owner then the next nodes in list order.

A proxy's own configuration (--config FILE, the format is detected): a twemproxy pool, an
nginx upstream, an HAProxy 2.6 backend (--pool NAME when the file has several). Keys are
what the proxy hashes (the nginx hash expression's value, HAProxy's URI part or parameter
or header value, the memcached/redis key). A configuration keyroute cannot reproduce
exactly is refused with its file, line and reason [UNSUPPORTED_CONFIG]; --allow-down and
--resolved HOST=N supply what the file cannot say. With --format json each object also
has \"addresses\".

Examples:
  keyroute route --profile libketama --nodes 10.0.0.1:11211=1,10.0.0.2:11211=2 user:1
  seq 1 5 | keyroute route --nodes-file examples/fleet.txt --replicas 2
  keyroute route --nodes a,b=2 --format json user:1
  keyroute route --engine jedis --option version=2 --nodes redis-1,redis-2 user:1
  keyroute route --config /etc/nginx/nginx.conf --pool backend /index.html";

/// The nodes `--nodes` or `--nodes-file` describe.
fn nodes_of(args: &Args) -> Result<Vec<NodeSpec>, CliError> {
    let nodes = match (&args.nodes, &args.nodes_file) {
        (Some(list), _) => parse_nodes(list).map_err(|e| CliError::from(e).context("--nodes"))?,
        (None, Some(path)) => {
            let text = read_text(path, "nodes file")?;
            parse_nodes(&text)
                .map_err(|e| CliError::from(e).context(format!("nodes file {}", path.display())))?
        }
        (None, None) => {
            return Err(CliError::new(
                ErrorCode::BadNodeSpec,
                "give --nodes or --nodes-file",
            ))
        }
    };
    Ok(nodes)
}

/// The engine of `--config` (with its servers) or of the node list.
pub fn router_of(args: &Args) -> Result<(Router, Option<Vec<ConfigServer>>), CliError> {
    let Some(path) = &args.config else {
        return Ok((args.ring.router(&nodes_of(args)?)?, None));
    };
    let shown = path.display().to_string();
    let text = read_text(path, "configuration")?;
    let mut addresses = Vec::new();
    for r in &args.resolved {
        let parsed = r
            .split_once('=')
            .and_then(|(h, n)| Some((h.to_string(), n.parse::<u32>().ok()?)));
        match parsed {
            Some(p) => addresses.push(p),
            None => {
                return Err(CliError::new(
                    ErrorCode::BadOption,
                    format!("--resolved {r:?}: write HOST=N, e.g. --resolved cache.local=2"),
                ))
            }
        }
    }
    // nginx `include`: relative to the configuration's folder, read as text; a file over
    // the bound comes back cut just past it, for the reader to refuse by name.
    let dir = path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut resolve = |inc: &str| -> Option<String> {
        let p = std::path::Path::new(inc);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        };
        let bytes = read_capped(&full).ok()?;
        if bytes.len() > keyroute::config::MAX_CONFIG_BYTES {
            return Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        String::from_utf8(bytes).ok()
    };
    let mut options = ReadOptions {
        resolve: &mut resolve,
        addresses: &addresses,
        allow_down: args.allow_down,
    };
    let cfg = read_config_with(&text, &shown, args.pool.as_deref(), &mut options)?;
    Ok((cfg.router, Some(cfg.servers)))
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.replicas == 0 {
        return Err(CliError::new(
            ErrorCode::OutOfRange,
            "--replicas must be at least 1",
        ));
    }
    let (ring, servers) = router_of(&args)?;
    let address_of = |name: &str| -> Option<&str> {
        servers
            .as_ref()?
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.address.as_str())
    };
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
                #[serde(skip_serializing_if = "Option::is_none")]
                addresses: Option<Vec<Option<&'a str>>>,
            }
            let nodes: Vec<&str> = idx.iter().map(|&i| ring.node_name(i)).collect();
            let addresses = servers
                .as_ref()
                .map(|_| nodes.iter().map(|n| address_of(n)).collect());
            return json_line(
                out,
                &Line {
                    key: KeyJson::of(key),
                    nodes,
                    addresses,
                },
            );
        }
        for (j, &i) in idx.iter().enumerate() {
            if j > 0 {
                out.write_all(b" ")?;
            }
            out.write_all(ring.node_name(i).as_bytes())?;
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
