//! Executing a core resharding [`Plan`] on a live Redis Cluster, slot by slot, the way
//! `redis-cli --cluster reshard` does, while clients keep working:
//!
//! 1. `CLUSTER SETSLOT s IMPORTING <source-id>` on the target;
//! 2. `CLUSTER SETSLOT s MIGRATING <target-id>` on the source;
//! 3. `CLUSTER GETKEYSINSLOT s <batch>` + `MIGRATE host port "" 0 <timeout> [AUTH2 user
//!    password | AUTH password] KEYS ...` on the source until the slot is empty (the
//!    credentials of [`ReshardOptions::credentials`]: the source logs in to the target
//!    with them; on a cluster with `tls-cluster yes` Redis makes that connection over TLS);
//! 4. `CLUSTER SETSLOT s NODE <target-id>` on the target, then the source, then every
//!    other master.
//!
//! During steps 1–3 the source still serves the keys it has and answers `ASK` for the
//! others, so a new key written meanwhile lands on the target (after `ASKING`) and never
//! in the part of the source still to be scanned: no key is lost. `MIGRATE` is atomic
//! per batch (the source deletes a key only once the target has it), so no key is
//! duplicated. `MIGRATE` runs without `REPLACE` by default: under this protocol the
//! target cannot hold a key of the slot before it is migrated, so a `BUSYKEY` error
//! means someone wrote there outside the protocol, and we stop rather than overwrite.
//!
//! Unassigned slots in the plan (`from: None`) are given with `CLUSTER ADDSLOTS`.
use std::collections::HashMap;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::slot::{Health, Move, NodeIndex, Plan, SlotMap};
use redis::{Connection, Value};

use crate::conn::{Endpoint, Timeouts};
use crate::error::Error;

/// Knobs of [`execute_plan`].
#[derive(Debug, Clone)]
pub struct ReshardOptions {
    /// Keys per `GETKEYSINSLOT` / `MIGRATE` batch. Default 100.
    pub batch: usize,
    /// `MIGRATE` timeout in milliseconds. Default 10 000.
    pub migrate_timeout_ms: u64,
    /// Add `REPLACE` to `MIGRATE` (overwrite keys already on the target). Default `false`.
    pub replace: bool,
    /// Connect timeout per node. Default 2 s.
    pub connect_timeout: Duration,
    /// Read/write timeout per command; must exceed the `MIGRATE` timeout. Default 15 s.
    pub io_timeout: Duration,
    /// Retries of one `MIGRATE` batch that failed transiently (the target answered
    /// `CLUSTERDOWN`/`TRYAGAIN`/`LOADING`, e.g. a node that just joined and has not
    /// learned every slot yet, or `IOERR`), with a back-off doubling from 20 ms to 1 s.
    /// Default 40 (about 30 s).
    pub migrate_retries: u32,
    /// Before the first move, how long to wait for every master to report
    /// `cluster_state:ok` (a master that just joined with `CLUSTER MEET` needs a moment).
    /// Default 10 s.
    pub ready_timeout: Duration,
    /// Whose credentials and TLS settings open every master, and log the source in to
    /// the target in `MIGRATE` (`AUTH2 user password`, or `AUTH password`): a URL of the
    /// [grammar](Endpoint), usually the seed the map was fetched from (its host is not
    /// used). The user needs `MIGRATE` and `CLUSTER` (both `@dangerous`). Default none:
    /// plain TCP, no `AUTH`.
    pub credentials: Option<Endpoint>,
}

impl Default for ReshardOptions {
    fn default() -> Self {
        Self {
            batch: 100,
            migrate_timeout_ms: 10_000,
            replace: false,
            connect_timeout: Duration::from_secs(2),
            io_timeout: Duration::from_secs(15),
            migrate_retries: 40,
            ready_timeout: Duration::from_secs(10),
            credentials: None,
        }
    }
}

/// Where a running [`execute_plan`] is, passed to its callback after every slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The slot just finished.
    pub slot: u16,
    /// Index of the current move in [`Plan::moves`].
    pub move_index: usize,
    /// Slots finished so far.
    pub slots_done: usize,
    /// Slots in the plan.
    pub slots_total: usize,
    /// Keys migrated so far.
    pub keys_moved: u64,
}

/// What [`execute_plan`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReshardReport {
    /// Slots that changed owner.
    pub slots_moved: usize,
    /// Keys migrated.
    pub keys_moved: u64,
}

struct Masters {
    conns: HashMap<NodeIndex, Connection>,
}

fn check(v: Value, what: &str) -> Result<Value, Error> {
    match v {
        Value::ServerError(e) => Err(Error::from_redis(what, &e.into(), None)),
        v => Ok(v),
    }
}

impl Masters {
    fn con(&mut self, n: NodeIndex) -> Result<&mut Connection, Error> {
        self.conns
            .get_mut(&n)
            .ok_or_else(|| Error::UnknownNode(format!("{n}")))
    }

    fn run(&mut self, n: NodeIndex, cmd: &redis::Cmd, what: &str) -> Result<Value, Error> {
        let v = redis::ConnectionLike::req_command(self.con(n)?, cmd)
            .map_err(|e| Error::from_redis(what, &e, None))?;
        check(v, what)
    }
}

/// Executes `plan` (made from `map`, which must come from the live cluster so that node
/// ids are known) on the cluster, calling `progress` after every slot.
///
/// Stops at the first error; slots finished before it stay moved, and the slot in flight
/// is left `MIGRATING`/`IMPORTING` exactly like an interrupted `redis-cli --cluster
/// reshard` (`redis-cli --cluster fix` or re-running the plan from a fresh map finishes
/// it: every step is idempotent).
///
/// # Errors
/// A node without an id in `map`, a connection error, or an error reply (e.g.
/// `BUSYKEY` from `MIGRATE`, see the module docs).
pub fn execute_plan(
    map: &SlotMap,
    plan: &Plan,
    options: &ReshardOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<ReshardReport, Error> {
    let mut masters = Masters {
        conns: HashMap::new(),
    };
    for (i, node) in map.masters() {
        if node.health() == Health::Failed && map.slot_count(i) == 0 {
            // A master that failed and was replaced (listed until it is forgotten).
            continue;
        }
        if node.id().is_empty() {
            return Err(Error::protocol(
                "resharding",
                format!(
                    "master {} has no node id; fetch the map with CLUSTER SHARDS",
                    node.addr()
                ),
            ));
        }
        let timeouts = Timeouts {
            connect: options.connect_timeout,
            io: options.io_timeout,
        };
        let con = match &options.credentials {
            Some(e) => e.open_node_raw(node.addr(), timeouts)?,
            None => Endpoint::plain(node.addr()).open_node_raw(node.addr(), timeouts)?,
        };
        masters.conns.insert(i, con);
    }
    wait_ready(&mut masters, options.ready_timeout)?;
    let slots_total = plan.slots_moved();
    let mut report = ReshardReport::default();
    for (move_index, mv) in plan.moves().iter().enumerate() {
        match mv.from {
            None => {
                let mut cmd = redis::cmd("CLUSTER");
                cmd.arg("ADDSLOTS");
                for s in mv.start..=mv.end {
                    cmd.arg(s);
                }
                masters.run(mv.to, &cmd, "CLUSTER ADDSLOTS")?;
                for slot in mv.start..=mv.end {
                    report.slots_moved += 1;
                    progress(&Progress {
                        slot,
                        move_index,
                        slots_done: report.slots_moved,
                        slots_total,
                        keys_moved: report.keys_moved,
                    });
                }
            }
            Some(from) => {
                for slot in mv.start..=mv.end {
                    report.keys_moved += migrate_slot(map, &mut masters, mv, from, slot, options)?;
                    report.slots_moved += 1;
                    progress(&Progress {
                        slot,
                        move_index,
                        slots_done: report.slots_moved,
                        slots_total,
                        keys_moved: report.keys_moved,
                    });
                }
            }
        }
    }
    Ok(report)
}

/// Waits until every master says `cluster_state:ok`.
fn wait_ready(masters: &mut Masters, timeout: Duration) -> Result<(), Error> {
    let start = Instant::now();
    let mut nodes: Vec<NodeIndex> = masters.conns.keys().copied().collect();
    nodes.sort_unstable();
    for n in nodes {
        loop {
            let info = masters.run(n, redis::cmd("CLUSTER").arg("INFO"), "CLUSTER INFO")?;
            let info: String = redis::from_redis_value(info)
                .map_err(|e| Error::protocol("CLUSTER INFO", e.to_string()))?;
            if info.contains("cluster_state:ok") {
                break;
            }
            if start.elapsed() >= timeout {
                return Err(Error::Busy(
                    "a master does not report cluster_state:ok; not resharding",
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// Whether a `MIGRATE` error is worth retrying.
fn is_transient(message: &str) -> bool {
    ["CLUSTERDOWN", "TRYAGAIN", "LOADING", "IOERR", "MASTERDOWN"]
        .iter()
        .any(|code| message.contains(code))
}

fn migrate_slot(
    map: &SlotMap,
    masters: &mut Masters,
    mv: &Move,
    from: NodeIndex,
    slot: u16,
    options: &ReshardOptions,
) -> Result<u64, Error> {
    let src = &map[from];
    let dst = &map[mv.to];
    masters.run(
        mv.to,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("IMPORTING")
            .arg(src.id()),
        "CLUSTER SETSLOT IMPORTING",
    )?;
    masters.run(
        from,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("MIGRATING")
            .arg(dst.id()),
        "CLUSTER SETSLOT MIGRATING",
    )?;
    let mut moved = 0u64;
    let mut retries = 0u32;
    loop {
        let keys = masters.run(
            from,
            redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(options.batch.max(1)),
            "CLUSTER GETKEYSINSLOT",
        )?;
        let keys: Vec<Vec<u8>> = redis::from_redis_value(keys)
            .map_err(|e| Error::protocol("CLUSTER GETKEYSINSLOT", e.to_string()))?;
        if keys.is_empty() {
            break;
        }
        let mut cmd = redis::cmd("MIGRATE");
        cmd.arg(&dst.addr().host)
            .arg(dst.addr().port)
            .arg("")
            .arg(0)
            .arg(options.migrate_timeout_ms);
        if options.replace {
            cmd.arg("REPLACE");
        }
        if let Some(e) = &options.credentials {
            e.migrate_auth(&mut cmd);
        }
        cmd.arg("KEYS").arg(&keys);
        match masters.run(from, &cmd, "MIGRATE") {
            Ok(_) => moved += keys.len() as u64,
            // The target's reply comes wrapped: "ERR Target instance replied with
            // error: CLUSTERDOWN ...".
            Err(Error::Server { code, detail, .. })
                if is_transient(&format!("{code} {detail}"))
                    && retries < options.migrate_retries =>
            {
                // The batch stays on the source (MIGRATE deletes a key only once the
                // target has it): wait and fetch the remaining keys again.
                thread::sleep(
                    Duration::from_millis(20u64 << retries.min(6)).min(Duration::from_secs(1)),
                );
                retries += 1;
            }
            Err(e) => return Err(e),
        }
    }
    let node = |c: &mut redis::Cmd| {
        c.arg("SETSLOT").arg(slot).arg("NODE").arg(dst.id());
    };
    let mut order = Vec::with_capacity(masters.conns.len());
    order.push(mv.to);
    order.push(from);
    let mut others: Vec<NodeIndex> = masters
        .conns
        .keys()
        .copied()
        .filter(|n| *n != mv.to && *n != from)
        .collect();
    others.sort_unstable();
    order.extend(others);
    for (i, n) in order.into_iter().enumerate() {
        let mut cmd = redis::cmd("CLUSTER");
        node(&mut cmd);
        match masters.run(n, &cmd, "CLUSTER SETSLOT NODE") {
            Ok(_) => {}
            // The other masters learn the new owner by gossip anyway (the target bumped
            // its epoch); telling them is a shortcut, so one that died or is failing
            // over does not stop the plan.
            Err(e) if i >= 2 && e.is_connection_error() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(moved)
}
