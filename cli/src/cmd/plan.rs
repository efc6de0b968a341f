//! `keyroute plan`: print the fewest slot moves that take a slot map to target weights.
//!
//! MAPFILE format (text, `-` for stdin): one line per master,
//!
//! ```text
//! # comment (also after a line's fields)
//! a 0-5460
//! b 5461-10922
//! c 10923-16383,17
//! d
//! ```
//!
//! `NAME` then the slots it owns: ranges `START-END` (inclusive) or single slots,
//! separated by commas and/or spaces. A name alone is a master with no slots yet. Slots
//! nobody lists are unassigned; the plan assigns them. `--weights` is a node list in the
//! core grammar (`keyroute::ring::parse_weights`: `a=1,b=1,c=2`; weight 0 drains a
//! master; a name alone has weight 1); names it has that the file does not list are new,
//! empty masters. Every master owning slots needs a weight.
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::path::PathBuf;

use keyroute::error::ErrorCode;
use keyroute::ring::parse_weights;
use keyroute::slot::{Address, NodeIndex, Plan, SlotMap, SLOT_COUNT};

use super::{CliError, Format};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "MAPFILE: one line per master, `NAME START-END[,START-END...]` \
    (single slots allowed, `#` starts a comment); a NAME alone is a master with no slots.\n\n\
    WEIGHTS: NAME=WEIGHT (or a bare NAME, weight 1), comma-separated; weight 0 drains a \
    master. `a:1` is refused as ambiguous (it could be the node a:1): write a=1.\n\n\
    --format json prints {\"nodes\": [names by node index], \"plan\": {\"moves\": \
    [{\"start\", \"end\", \"from\" (absent for unassigned slots), \"to\"}], \"targets\": \
    [{\"node\", \"weight\", \"ideal\", \"before\", \"after\"}]}, \"slots_moved\": N}; \
    \"plan\" reads back as keyroute::slot::Plan (feature serde).\n\n\
    Example:\n  \
    printf 'a 0-8191\\nb 8192-16383\\n' > map.txt\n  \
    keyroute plan --from map.txt --weights a=1,b=1,c=1"
)]
pub struct Args {
    /// Slot map file (`-` for stdin): one line per master, `NAME START-END[,START-END...]`.
    #[arg(long, value_name = "MAPFILE")]
    pub from: PathBuf,
    /// Target weights, `NAME=WEIGHT` separated by commas (`a=1,b=1,c=2`). A weight of 0
    /// drains a master; a name not in MAPFILE is a new, empty master.
    #[arg(long, value_name = "NAME=WEIGHT,...")]
    pub weights: String,
    /// Output: text for people, or json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let (label, text) = read_map_text(&args.from)?;
    let mut map = SlotMap::new();
    let mut names: HashMap<String, NodeIndex> = HashMap::new();
    parse_map(&label, &text, &mut map, &mut names)?;
    let weights = weights_of(&args.weights, &mut map, &mut names)?;
    let plan = Plan::new(&map, &weights)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Text => out.write_all(render(&map, &plan).as_bytes())?,
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Output<'a> {
                nodes: Vec<&'a str>,
                plan: &'a Plan,
                slots_moved: usize,
            }
            let output = Output {
                nodes: map.nodes().iter().map(|n| n.id()).collect(),
                plan: &plan,
                slots_moved: plan.slots_moved(),
            };
            super::json_line(&mut out, &output)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn read_map_text(path: &PathBuf) -> Result<(String, String), CliError> {
    let mut bytes = Vec::new();
    let label = if path.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
        String::from("<stdin>")
    } else {
        let label = path.display().to_string();
        bytes = std::fs::read(path)
            .map_err(|e| CliError::from(e).context(format!("cannot read MAPFILE {label}")))?;
        label
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::new(
            ErrorCode::BadUtf8,
            format!("MAPFILE {label} is not UTF-8 text"),
        )
    })?;
    Ok((label, text))
}

fn parse_slot(s: &str) -> Result<u16, CliError> {
    match s.parse::<u16>() {
        Ok(n) if n < SLOT_COUNT && !s.starts_with('+') => Ok(n),
        _ => Err(CliError::new(
            ErrorCode::BadSlot,
            format!("{s:?} is not a slot number in 0..=16383"),
        )),
    }
}

/// A MAPFILE master: its name is its id; its address is the name when that is
/// `host:port`, else a stand-in (a plan only needs names).
fn master_address(name: &str) -> Address {
    Address::parse(name).unwrap_or_else(|_| Address::new(name, 1))
}

fn parse_map(
    label: &str,
    text: &str,
    map: &mut SlotMap,
    names: &mut HashMap<String, NodeIndex>,
) -> Result<(), CliError> {
    // Owner name of every slot seen so far, to report overlaps clearly.
    let mut owner: Vec<Option<(usize, NodeIndex)>> = vec![None; usize::from(SLOT_COUNT)];
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let at = |e: CliError| e.context(format!("{label}:{line_no}"));
        let line = raw.split('#').next().unwrap_or("").trim();
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else { continue };
        if names.contains_key(name) {
            return Err(at(CliError::new(
                ErrorCode::DuplicateNode,
                format!("node {name:?} is listed twice; list each node once"),
            )));
        }
        let node = map
            .add_master(name, master_address(name))
            .map_err(|e| at(e.into()))?;
        names.insert(name.to_string(), node);
        for part in fields.flat_map(|f| f.split(',')).filter(|p| !p.is_empty()) {
            let (start, end) = match part.split_once('-') {
                Some((a, b)) => (parse_slot(a), parse_slot(b)),
                None => (parse_slot(part), parse_slot(part)),
            };
            let (start, end) = (start.map_err(at)?, end.map_err(at)?);
            if start > end {
                return Err(at(CliError::new(
                    ErrorCode::BadRange,
                    format!("range {part} is reversed; write START-END with START <= END"),
                )));
            }
            for slot in start..=end {
                if let Some((other_line, other)) = owner[usize::from(slot)] {
                    return Err(at(CliError::new(
                        ErrorCode::InconsistentTopology,
                        format!(
                            "slot {slot} is already given to {} on line {other_line}",
                            map[other].id()
                        ),
                    )));
                }
                owner[usize::from(slot)] = Some((line_no, node));
            }
            map.assign(start..=end, node).map_err(|e| at(e.into()))?;
        }
    }
    if names.is_empty() {
        return Err(CliError::new(
            ErrorCode::BadNodeSpec,
            format!("MAPFILE {label} lists no nodes; write one line per master: NAME START-END[,START-END...]"),
        ));
    }
    Ok(())
}

/// `--weights` through the core grammar; names not in the map become new, empty masters.
fn weights_of(
    spec: &str,
    map: &mut SlotMap,
    names: &mut HashMap<String, NodeIndex>,
) -> Result<Vec<(NodeIndex, u64)>, CliError> {
    let parsed = parse_weights(spec).map_err(|e| CliError::from(e).context("--weights"))?;
    let mut weights = Vec::with_capacity(parsed.len());
    for (name, weight) in parsed {
        let node = match names.get(&name) {
            Some(&n) => n,
            None => {
                // Not in MAPFILE: a new master with no slots yet.
                let n = map
                    .add_master(&name, master_address(&name))
                    .map_err(|e| CliError::from(e).context("--weights"))?;
                names.insert(name, n);
                n
            }
        };
        // A node weighted twice is refused by Plan::new (BAD_PLAN).
        weights.push((node, u64::from(weight)));
    }
    Ok(weights)
}

fn render(map: &SlotMap, plan: &Plan) -> String {
    let name = |n: NodeIndex| map[n].id().to_string();
    let mut out = String::new();
    for m in plan.moves() {
        let slots = if m.start == m.end {
            m.start.to_string()
        } else {
            format!("{}-{}", m.start, m.end)
        };
        let count = match m.len() {
            1 => "1 slot".to_string(),
            n => format!("{n} slots"),
        };
        let _ = match m.from {
            Some(from) => writeln!(
                out,
                "move {slots} from {} to {} ({count})",
                name(from),
                name(m.to)
            ),
            None => writeln!(
                out,
                "assign {slots} to {} ({count}, unassigned now)",
                name(m.to)
            ),
        };
    }
    let moved = plan.slots_moved();
    if plan.is_empty() {
        out.push_str("nothing to move: every node is already within one slot of its target\n");
    } else {
        let _ = writeln!(
            out,
            "\n{} move{}, {moved} of {SLOT_COUNT} slots change owner ({:.2}%)",
            plan.moves().len(),
            if plan.moves().len() == 1 { "" } else { "s" },
            moved as f64 * 100.0 / f64::from(SLOT_COUNT)
        );
    }
    let rows: Vec<[String; 5]> = plan
        .targets()
        .iter()
        .map(|t| {
            [
                name(t.node),
                t.weight.to_string(),
                t.before.to_string(),
                t.after.to_string(),
                format!("{:.2}", t.ideal),
            ]
        })
        .collect();
    let header = ["node", "weight", "before", "after", "ideal"].map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    out.push('\n');
    for row in std::iter::once(&header).chain(&rows) {
        let _ = writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {:>w4$}",
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(SlotMap, HashMap<String, NodeIndex>), CliError> {
        let mut map = SlotMap::new();
        let mut names = HashMap::new();
        parse_map("t", text, &mut map, &mut names)?;
        Ok((map, names))
    }

    #[test]
    fn map_format() {
        let (map, names) = parse("# x\na 0-9, 11 ,20-29 # c\n\nb 10\nc\n").expect("valid");
        assert_eq!(map.slot_count(names["a"]), 21);
        assert_eq!(map.slot_count(names["b"]), 1);
        assert_eq!(map.slot_count(names["c"]), 0);
        for bad in [
            "a 0-9\nb 5",
            "a 9-0",
            "a 16384",
            "a x",
            "a 1\na 2",
            "",
            "a -1",
            "a 1-",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn weights_add_new_nodes() {
        let (mut map, mut names) = parse("a 0-16383").expect("valid");
        let w = weights_of("a=1, d=3, e", &mut map, &mut names).expect("valid");
        assert_eq!(w, [(names["a"], 1), (names["d"], 3), (names["e"], 1)]);
        assert_eq!(map.nodes().len(), 3);
        for (bad, code) in [
            ("", ErrorCode::BadNodeSpec),
            ("a:1", ErrorCode::AmbiguousNodeSpec),
            ("a=x", ErrorCode::BadWeight),
            ("a=-1", ErrorCode::NegativeWeight),
            ("=1", ErrorCode::BadNodeSpec),
        ] {
            let err = weights_of(bad, &mut map, &mut names).expect_err(bad);
            assert_eq!(err.code(), Some(code), "{bad:?}: {err}");
        }
    }

    #[test]
    fn renders() {
        let (mut map, mut names) = parse("a 0-8191\nb 8192-16383").expect("valid");
        let w = weights_of("a=1,b=1,c=1,d=1", &mut map, &mut names).expect("valid");
        let plan = Plan::new(&map, &w).expect("plan");
        let text = render(&map, &plan);
        assert!(
            text.starts_with("move 4096-8191 from a to c (4096 slots)\n"),
            "{text}"
        );
        assert!(
            text.contains("2 moves, 8192 of 16384 slots change owner (50.00%)"),
            "{text}"
        );
    }
}
