//! Engine options shared by `route` and `simulate`, and their help, from core's registry
//! (`keyroute::engine::ENTRIES`): the CLI keeps no list of names or options of its own.

use std::fmt::Write as _;

use keyroute::engine::{EngineEntry, EngineError, EntryKind, Router, ENTRIES};
use keyroute::error::ErrorCode;
use keyroute::ring::NodeSpec;

use super::CliError;

/// `--profile`/`--engine`, `--option`, `--vnodes`, `--default-port`, `--points-per-digest`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    #[arg(
        long,
        short = 'p',
        visible_alias = "engine",
        default_value = "native",
        help = profile_help()
    )]
    pub profile: String,
    /// An engine or profile option NAME=VALUE (repeatable), e.g. --option hash=fnv1a_64,
    /// --option table_size=65537, --option version=2.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// Virtual nodes: native points per unit of weight (160), ketama digests per server
    /// (40), java-hashcode points per node (150). The same as --option vnodes=N.
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub vnodes: Option<i128>,
    /// Port left out of hashed server strings (node-hashring's `default port`; 0 for none).
    /// The same as --option default_port=N.
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub default_port: Option<i128>,
    /// Points per MD5 digest, 1 to 4 (3 = node-hashring's hash_ring compatibility). The
    /// same as --option points_per_digest=N.
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub points_per_digest: Option<i128>,
}

/// Any integer: the range check (and its error code) is the core's.
fn integer(text: &str) -> Result<i128, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not an integer (or is beyond 128 bits)"))
}

/// The kinds of entry in the registry's order, each with its names.
fn by_kind() -> Vec<(EntryKind, Vec<&'static EngineEntry>)> {
    let mut out: Vec<(EntryKind, Vec<&'static EngineEntry>)> = Vec::new();
    for e in ENTRIES {
        match out.iter_mut().find(|(k, _)| *k == e.kind()) {
            Some((_, list)) => list.push(e),
            None => out.push((e.kind(), vec![e])),
        }
    }
    out
}

/// `--profile`'s help: every name, by kind.
fn profile_help() -> String {
    let mut out = String::from(
        "Ring profile, engine or fleet profile (`keyroute route --help` lists their options)",
    );
    for (kind, entries) in by_kind() {
        let names: Vec<&str> = entries.iter().map(|e| e.name()).collect();
        let _ = write!(out, "; {}s: {}", kind.as_str(), names.join(", "));
    }
    out
}

/// Every name with what it reproduces and, when `options`, each option with its values
/// and default: the engines section of `route --help`.
pub fn entries_help(options: bool) -> String {
    let mut out = String::new();
    for (kind, entries) in by_kind() {
        let _ = writeln!(out, "  {}s:", kind.as_str());
        for e in entries {
            let mut name = e.name().to_string();
            if !e.aliases().is_empty() {
                let _ = write!(name, " ({})", e.aliases().join(", "));
            }
            let _ = writeln!(out, "    {name:<24} {}", e.peer());
            if options {
                for o in e.options() {
                    let _ = writeln!(out, "      {:<22} {}", o.name(), o.doc());
                }
            }
        }
    }
    out
}

impl ProfileArgs {
    /// `--option` values, then `--vnodes`, `--default-port` and `--points-per-digest`, as
    /// (name, value).
    pub fn option_pairs(&self) -> Result<Vec<(String, String)>, CliError> {
        let mut out = Vec::new();
        for o in &self.options {
            let Some((k, v)) = o.split_once('=') else {
                return Err(CliError::new(
                    ErrorCode::BadOption,
                    format!("--option {o:?}: write NAME=VALUE, e.g. --option hash=md5"),
                ));
            };
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        for (name, value) in [
            ("vnodes", self.vnodes),
            ("default_port", self.default_port),
            ("points_per_digest", self.points_per_digest),
        ] {
            if let Some(v) = value {
                out.push((name.to_string(), v.to_string()));
            }
        }
        Ok(out)
    }

    /// The engine, fleet profile or ring profile `name` over `nodes`, with the options.
    pub fn router_named(&self, name: &str, nodes: &[NodeSpec]) -> Result<Router, CliError> {
        let pairs = self.option_pairs()?;
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Router::build(name, nodes, &pairs).map_err(|e: EngineError| e.into())
    }

    /// [`router_named`](Self::router_named) for `--profile`.
    pub fn router(&self, nodes: &[NodeSpec]) -> Result<Router, CliError> {
        self.router_named(&self.profile, nodes)
    }
}
