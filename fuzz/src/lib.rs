//! Helpers shared by keyroute's fuzz targets: bitwise references, reply trees built from
//! fuzz input, and a fake Redis connection answering with fuzzed replies.
//!
//! Everything here is test scaffolding; nothing of it ships.

use arbitrary::{Result, Unstructured};

/// CRC-16/XMODEM, one bit at a time (poly 0x1021, init 0, no reflection): the reference
/// the slice-by-16 implementation in core is checked against.
pub fn crc16_bitwise(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The Redis hash tag rule, written the plain way (cluster spec, `keyHashSlot`): the
/// bytes between the first `{` and the first `}` after it, when that is not empty.
pub fn hash_tag_reference(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(0) | None => key,
        Some(len) => &key[open + 1..open + 1 + len],
    }
}

/// `CRC16(tag) mod 16384`, from the two references.
pub fn key_slot_reference(key: &[u8]) -> u16 {
    crc16_bitwise(hash_tag_reference(key)) % 16384
}

/// Words the reply parsers look for, so that fuzzed trees reach past the first check.
pub const WORDS: &[&str] = &[
    "slots",
    "nodes",
    "id",
    "port",
    "tls-port",
    "ip",
    "endpoint",
    "hostname",
    "role",
    "replication-offset",
    "health",
    "master",
    "replica",
    "slave",
    "online",
    "failed",
    "loading",
    "127.0.0.1",
    "::1",
    "?",
    "",
    "0",
    "1",
    "16383",
    "16384",
    "7000",
    "65535",
    "65536",
    "-1",
];

/// Integers at the edges, and a few the decoders give meaning to.
pub const INTS: &[i64] = &[
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    -1,
    16383,
    16384,
    65535,
    65536,
    i32::MAX as i64,
    i32::MIN as i64,
    1 << 32,
    1 << 53,
    (1 << 53) + 1,
    i64::MAX,
    i64::MIN,
];

/// Error replies (RESP `-` lines) the clients give meaning to.
pub const ERRORS: &[&str] = &[
    "NOSCRIPT No matching script. Please use EVAL.",
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "ERR something",
    "MOVED 3999 127.0.0.1:6381",
    "ASK 3999 127.0.0.1:6381",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "CROSSSLOT Keys in request don't hash to the same slot",
    "CLUSTERDOWN The cluster is down",
    "BUSY Redis is busy running a script",
    "NOPERM this user has no permissions",
    "READONLY You can't write against a read only replica.",
    "LOADING Redis is loading the dataset in memory",
    "MASTERDOWN Link with MASTER is down",
    "x",
];

/// An integer: from [`INTS`] or raw.
pub fn int(u: &mut Unstructured<'_>) -> Result<i64> {
    if u.ratio(1, 2)? {
        Ok(*u.choose(INTS)?)
    } else {
        u.arbitrary()
    }
}

/// Bytes: a word of [`WORDS`], a decimal integer, or raw bytes (up to 64).
pub fn bytes(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 | 1 => u.choose(WORDS)?.as_bytes().to_vec(),
        2 => int(u)?.to_string().into_bytes(),
        _ => {
            let n = u.int_in_range(0usize..=64)?;
            u.bytes(n)?.to_vec()
        }
    })
}

/// Text (lossy UTF-8 of [`bytes`]).
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(String::from_utf8_lossy(&bytes(u)?).into_owned())
}

/// The largest tree a fuzz input builds (nodes), so that one input stays fast.
pub const MAX_TREE: usize = 2048;

/// A `redis::Value` tree (every variant the sync client can hand over, errors included),
/// at most `depth` levels deep and `budget` nodes large.
pub fn redis_value(
    u: &mut Unstructured<'_>,
    depth: u32,
    budget: &mut usize,
) -> Result<redis::Value> {
    use redis::Value as V;
    if *budget == 0 {
        return Ok(V::Nil);
    }
    *budget -= 1;
    let nested = depth > 0;
    let tag = u.int_in_range(0u8..=15)?;
    Ok(match tag {
        0 => V::Nil,
        1 | 2 => V::Int(int(u)?),
        3 | 4 => V::BulkString(bytes(u)?),
        5 | 6 if nested => V::Array(list(u, depth, budget)?),
        7 => V::SimpleString(text(u)?),
        8 => V::Okay,
        9 if nested => {
            let n = u.int_in_range(0usize..=12)?;
            let mut pairs = Vec::new();
            for _ in 0..n {
                if *budget == 0 {
                    break;
                }
                let k = redis_value(u, depth - 1, budget)?;
                let v = redis_value(u, depth - 1, budget)?;
                pairs.push((k, v));
            }
            V::Map(pairs)
        }
        10 if nested => V::Set(list(u, depth, budget)?),
        11 => V::Double(u.arbitrary()?),
        12 => V::Boolean(u.arbitrary()?),
        13 => V::VerbatimString {
            format: if u.arbitrary()? {
                redis::VerbatimFormat::Text
            } else {
                redis::VerbatimFormat::Markdown
            },
            text: text(u)?,
        },
        14 => server_error(u)?,
        15 if nested => V::Attribute {
            data: Box::new(redis_value(u, depth - 1, budget)?),
            attributes: Vec::new(),
        },
        _ => V::BigNumber(Default::default()),
    })
}

fn list(u: &mut Unstructured<'_>, depth: u32, budget: &mut usize) -> Result<Vec<redis::Value>> {
    let n = u.int_in_range(0usize..=16)?;
    let mut out = Vec::new();
    for _ in 0..n {
        if *budget == 0 {
            break;
        }
        out.push(redis_value(u, depth - 1, budget)?);
    }
    Ok(out)
}

/// A `redis::Value::ServerError`, made the way the client makes one: by parsing a RESP
/// error line.
pub fn server_error(u: &mut Unstructured<'_>) -> Result<redis::Value> {
    let line = if u.ratio(3, 4)? {
        (*u.choose(ERRORS)?).to_string()
    } else {
        text(u)?.replace(['\r', '\n'], " ")
    };
    Ok(redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap_or(redis::Value::Nil))
}

/// A `keyroute::cache::Value` tree (what a binding hands the script reply decoders).
pub fn cache_value(
    u: &mut Unstructured<'_>,
    depth: u32,
    budget: &mut usize,
) -> Result<keyroute::cache::Value> {
    use keyroute::cache::Value as V;
    if *budget == 0 {
        return Ok(V::Nil);
    }
    *budget -= 1;
    Ok(match u.int_in_range(0u8..=5)? {
        0 => V::Nil,
        1 | 2 => V::Int(int(u)?),
        3 => V::Bytes(bytes(u)?),
        _ if depth > 0 => {
            let n = u.int_in_range(0usize..=8)?;
            let mut items = Vec::new();
            for _ in 0..n {
                if *budget == 0 {
                    break;
                }
                items.push(cache_value(u, depth - 1, budget)?);
            }
            V::Array(items)
        }
        _ => V::Int(int(u)?),
    })
}

/// A connection that answers every command with the next fuzzed reply, and with an I/O
/// error once the input is used up (so every client loop ends).
#[derive(Debug)]
pub struct FakeConnection {
    replies: std::collections::VecDeque<redis::RedisResult<redis::Value>>,
    /// Commands sent so far (each pipelined command counts).
    pub sent: usize,
    /// `supports_pipelining()`: `false` makes the clients use their cluster paths.
    pub pipelining: bool,
}

impl FakeConnection {
    /// Replies drawn from `u` (at most 64, each a tree of at most [`MAX_TREE`] nodes in
    /// all).
    pub fn new(u: &mut Unstructured<'_>) -> Result<Self> {
        let n = u.int_in_range(0usize..=64)?;
        let mut budget = MAX_TREE;
        let mut replies = std::collections::VecDeque::new();
        for _ in 0..n {
            let reply = if u.ratio(1, 16)? {
                Err(redis::RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "fuzz: connection reset",
                )))
            } else {
                Ok(redis_value(u, 3, &mut budget)?)
            };
            replies.push_back(reply);
        }
        Ok(FakeConnection {
            replies,
            sent: 0,
            pipelining: u.arbitrary()?,
        })
    }

    fn next(&mut self) -> redis::RedisResult<redis::Value> {
        self.sent += 1;
        self.replies.pop_front().unwrap_or_else(|| {
            Err(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "fuzz: no more replies",
            )))
        })
    }
}

/// The script text of a packed `SCRIPT LOAD <text>` command.
fn script_load_text(cmd: &[u8]) -> Option<&[u8]> {
    let rest = cmd.strip_prefix(b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$")?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    let len: usize = std::str::from_utf8(&rest[..end]).ok()?.parse().ok()?;
    rest.get(end + 2..end + 2 + len)
}

impl redis::ConnectionLike for FakeConnection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> redis::RedisResult<redis::Value> {
        let reply = self.next();
        match (script_load_text(cmd), reply) {
            // A server answers SCRIPT LOAD with the text's SHA1 or an error, nothing else
            // (the redis crate debug-asserts the SHA1; see fuzz/README.md).
            (Some(text), Ok(v)) if !matches!(v, redis::Value::ServerError(_)) => {
                Ok(redis::Value::BulkString(
                    sha1_smol::Sha1::from(text)
                        .digest()
                        .to_string()
                        .into_bytes(),
                ))
            }
            (_, reply) => reply,
        }
    }

    fn req_packed_commands(
        &mut self,
        _cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> redis::RedisResult<Vec<redis::Value>> {
        // As a real connection: `offset` replies are read and dropped, then `count` kept;
        // an error reply is data here (a Value::ServerError), an I/O error ends the call.
        let mut out = Vec::with_capacity(count.min(1024));
        for i in 0..offset + count {
            let v = self.next()?;
            if i >= offset {
                out.push(v);
            }
        }
        Ok(out)
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn supports_pipelining(&self) -> bool {
        self.pipelining
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_agree_with_redis() {
        assert_eq!(crc16_bitwise(b"123456789"), 0x31C3);
        assert_eq!(key_slot_reference(b"foo"), 12182);
        assert_eq!(key_slot_reference(b"foo{}{bar}"), 8363);
        assert_eq!(key_slot_reference(b"{{a}}"), 10276);
    }
}

/// Invariants of any slot map: every owner is a known master, `ranges()` tiles
/// `0..=16383` in order, the counts add up, and the per-slot accessors agree.
pub fn check_map(map: &keyroute::slot::SlotMap) {
    use keyroute::slot::Role;
    let mut next = 0u32;
    let mut counted = vec![0usize; map.nodes().len()];
    let mut unassigned = 0usize;
    for r in map.ranges() {
        assert_eq!(u32::from(r.start), next, "ranges tile the slots");
        assert!(r.start <= r.end);
        next = u32::from(r.end) + 1;
        match r.owner {
            Some(o) => {
                let node = map.node(o).expect("an owner is a node of the map");
                assert_eq!(node.role(), Role::Master, "an owner is a master");
                counted[o.get()] += r.len();
            }
            None => unassigned += r.len(),
        }
        for s in [r.start, r.end] {
            assert_eq!(map.owner(s), r.owner);
            assert_eq!(map.node_for_slot(s).is_some(), r.owner.is_some());
        }
    }
    assert_eq!(next, 16384);
    assert_eq!(map.slot_counts(), counted);
    assert_eq!(map.unassigned_count(), unassigned);
    assert_eq!(map.is_complete(), unassigned == 0);
    for (i, (idx, node)) in map.iter().enumerate() {
        assert_eq!(idx.get(), i);
        assert_eq!(map.node_index(i), Some(idx));
        match node.role() {
            Role::Master => {
                assert!(node.master().is_none());
                for &r in node.replicas() {
                    assert_eq!(map[r].master(), Some(idx), "replica lists agree");
                }
            }
            Role::Replica => {
                let m = node.master().expect("a replica has a master");
                assert!(map[m].replicas().contains(&idx));
                assert_eq!(counted[i], 0, "a replica owns no slot");
            }
        }
        if !node.id().is_empty() {
            assert_eq!(map.find_id(node.id()), Some(idx));
        }
    }
}

/// Plans `map` towards `weights` and checks the plan: targets within one slot of the
/// ideal and summing to 16384, the fewest slots moved, `apply` reaching the targets, a
/// second `apply` refused as stale and leaving the map as it was.
pub fn check_plan(map: &keyroute::slot::SlotMap, weights: &[(keyroute::slot::NodeIndex, u64)]) {
    use keyroute::slot::Plan;
    let plan = match Plan::new(map, weights) {
        Ok(plan) => plan,
        Err(e) => {
            assert!(!e.code().as_str().is_empty());
            let _ = e.to_string();
            return;
        }
    };
    let targets = plan.targets();
    assert_eq!(targets.iter().map(|t| t.after).sum::<usize>(), 16384);
    let mut gain = 0usize;
    for t in targets {
        assert!((t.after as f64 - t.ideal).abs() < 1.0 + 1e-9, "{t:?}");
        assert_eq!(t.before, map.slot_count(t.node));
        gain += t.after.saturating_sub(t.before);
    }
    assert_eq!(plan.slots_moved(), gain, "only the deficit moves");
    assert!(
        plan.moves().windows(2).all(|w| w[0].end < w[1].start),
        "moves in slot order"
    );
    let mut after = map.clone();
    plan.apply(&mut after).expect("a fresh plan applies");
    check_map(&after);
    assert!(after.is_complete());
    for t in targets {
        assert_eq!(after.slot_count(t.node), t.after);
    }
    if !plan.is_empty() {
        let mut again = after.clone();
        let e = plan.apply(&mut again).expect_err("applying twice is stale");
        assert_eq!(e.code().as_str(), "STALE_PLAN");
        assert_eq!(again, after, "a refused plan changes nothing");
    }
    // Planning again from the result moves nothing.
    let replan = Plan::new(&after, weights).expect("plans again");
    assert!(replan.is_empty(), "a plan's result needs no further moves");
}

/// A service message from fuzz input, `[header length byte][header][body][0xFF payload?]`
/// (the service_request and worker_message targets): the header as decoded (or a ping
/// carrying the request id it salvaged), the types to read it as (its own, or every type
/// when it has none), the body and the payload. `None` for empty input.
pub fn service_message(
    data: &[u8],
) -> Option<(
    keyroute::frame::Header<'_>,
    Vec<keyroute::frame::MsgType>,
    &[u8],
    Option<Vec<u8>>,
)> {
    use keyroute::frame::{Header, MsgType};
    let (&hlen, rest) = data.split_first()?;
    let hlen = usize::from(hlen).min(rest.len());
    let (head, rest) = rest.split_at(hlen);
    let (body, payload) = match rest.iter().position(|&b| b == 0xFF) {
        Some(i) => (&rest[..i], Some(rest[i + 1..].to_vec())),
        None => (rest, None),
    };
    let header = match Header::decode(head) {
        Ok(h) => h,
        Err(_) => Header::request(MsgType::Ping, Header::salvage_request_id(head)),
    };
    let types = match header.kind() {
        Some(t) => vec![t],
        None => MsgType::ALL.to_vec(),
    };
    Some((header, types, body, payload))
}
