//! Property tests of the slot module: hashing against independent references and the
//! `crc16` crate, batch == single, redirects, grouping, and resharding plans.
use keyroute::slot::{
    crc16_xmodem, crc16_xmodem_update, group_by_slot, hash_tag, key_slot, key_slots, Address,
    Health, NodeIndex, Plan, Redirect, RedirectAction, RedirectKind, Role, Shard, ShardNode,
    SlotMap,
};
use proptest::prelude::*;

/// Bit-at-a-time CRC-16/XMODEM, straight from the definition.
fn crc_reference(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
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

/// The tag rule as docs/design.md states it, naively.
fn tag_reference(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// Keys with many braces, NULs and 0xff, of all short lengths and some long ones.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => short_key(),
        1 => (0usize..3000, any::<u64>()).prop_map(|(len, seed)| long_key(len, seed)),
    ]
}

/// Keys of 0..40 bytes, brace-heavy.
fn short_key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>().prop_map(bias), 0..40)
}

/// A quarter of all byte values become `{`, `}`, NUL or 0xff.
fn bias(b: u8) -> u8 {
    match b {
        0..=63 => [b'{', b'}', 0, 0xff][usize::from(b % 4)],
        _ => b,
    }
}

/// Long keys from a seed (xorshift), cheap to generate in bulk.
fn long_key(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Rarer braces in long keys, so tags sit anywhere in them.
            match (x >> 32) as u16 {
                0..=200 => b'{',
                201..=400 => b'}',
                _ => (x >> 48) as u8,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn slot_matches_references_and_peers(key in key()) {
        let slot = key_slot(&key);
        prop_assert_eq!(hash_tag(&key), tag_reference(&key));
        prop_assert_eq!(crc16_xmodem(&key), crc_reference(&key));
        prop_assert_eq!(slot, crc_reference(tag_reference(&key)) & 16383);
        prop_assert_eq!(crc16_xmodem(&key), crc16::State::<crc16::XMODEM>::calculate(&key));
    }

    #[test]
    fn crc_update_is_concatenation(a in key(), b in key()) {
        let mut ab = a.clone();
        ab.extend_from_slice(&b);
        prop_assert_eq!(crc16_xmodem_update(crc16_xmodem(&a), &b), crc16_xmodem(&ab));
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn batch_equals_single(keys in proptest::collection::vec(key(), 0..30), extra in 0usize..3) {
        let mut out = vec![0xAAAA_u16; keys.len() + extra];
        key_slots(&keys, &mut out).expect("long enough");
        for (k, &s) in keys.iter().zip(&out) {
            prop_assert_eq!(s, key_slot(k));
        }
        prop_assert!(out[keys.len()..].iter().all(|&s| s == 0xAAAA));
        if !keys.is_empty() {
            let mut short = vec![0u16; keys.len() - 1];
            prop_assert!(key_slots(&keys, &mut short).is_err());
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn grouping_partitions_keys(keys in proptest::collection::vec(short_key(), 0..300)) {
        let groups = group_by_slot(&keys);
        let mut seen = vec![false; keys.len()];
        let mut previous = None;
        for (slot, idx) in groups.iter() {
            prop_assert!(previous < Some(slot));
            previous = Some(slot);
            prop_assert!(idx.windows(2).all(|w| w[0] < w[1]));
            for &i in idx {
                prop_assert_eq!(key_slot(&keys[i]), slot);
                prop_assert!(!std::mem::replace(&mut seen[i], true));
            }
        }
        prop_assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn redirect_round_trips(
        moved in any::<bool>(),
        slot in 0u16..16384,
        host in prop_oneof![
            Just(String::new()),
            "[a-z][a-z0-9.-]{0,20}",
            any::<[u8; 4]>().prop_map(|o| format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])),
            any::<[u16; 8]>().prop_map(|g| std::net::Ipv6Addr::from(g).to_string()),
        ],
        port in 1u16..,
    ) {
        let word = if moved { "MOVED" } else { "ASK" };
        let text = format!("{word} {slot} {host}:{port}");
        let r = Redirect::parse(&text).expect("valid redirect");
        let kind = if moved { RedirectKind::Moved } else { RedirectKind::Ask };
        prop_assert_eq!((r.kind, r.slot, r.host, r.port), (kind, slot, host.as_str(), port));
    }
}

// ---------------------------------------------------------------- maps and plans

/// A random slot map: `masters` masters (some possibly without slots), runs of slots
/// given to random masters or left unassigned.
fn slot_map() -> impl Strategy<Value = SlotMap> {
    (1usize..8)
        .prop_flat_map(|masters| {
            let runs = proptest::collection::vec((1u16..4000, 0..=masters), 1..12);
            (Just(masters), runs)
        })
        .prop_map(|(masters, runs)| {
            let mut map = SlotMap::new();
            let nodes: Vec<NodeIndex> = (0..masters)
                .map(|i| {
                    map.add_master(
                        &format!("node{i}"),
                        Address::new("10.0.0.1", 7000 + i as u16),
                    )
                    .expect("add")
                })
                .collect();
            let mut start: u32 = 0;
            let mut cycle = runs.iter().cycle();
            while start < 16384 {
                let &(len, who) = cycle.next().expect("cycle");
                let end = (start + u32::from(len) - 1).min(16383);
                // `who == masters` leaves the run unassigned.
                if let Some(&n) = nodes.get(who) {
                    map.assign(start as u16..=end as u16, n).expect("assign");
                }
                start = end + 1;
            }
            map
        })
}

fn map_and_weights() -> impl Strategy<Value = (SlotMap, Vec<(NodeIndex, u64)>)> {
    slot_map().prop_flat_map(|map| {
        let n = map.nodes().len();
        let weights = proptest::collection::vec(
            prop_oneof![1 => Just(0u64), 4 => 1u64..20, 1 => 1u64..u64::MAX / 16],
            n,
        );
        (Just(map), weights).prop_filter_map("some weight", |(map, w)| {
            w.iter().any(|&x| x > 0).then(|| {
                let weights = map.iter().map(|(i, _)| i).zip(w).collect();
                (map, weights)
            })
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn plan_reaches_targets_with_fewest_moves((map, weights) in map_and_weights()) {
        let plan = Plan::new(&map, &weights).expect("plan");
        prop_assert_eq!(&Plan::new(&map, &weights).expect("plan"), &plan, "deterministic");

        // The fewest slots that can move: every unassigned slot, plus each master's
        // surplus over floor(ideal), minus the roundings-up that masters above
        // floor(ideal) can absorb. Computed here independently, in exact integers.
        let total: u128 = weights.iter().map(|&(_, w)| u128::from(w)).sum();
        let counts = map.slot_counts();
        let mut floors = 0u128;
        let mut surplus = 0usize;
        let mut absorbers = 0usize;
        for &(n, w) in &weights {
            let share = 16384 * u128::from(w);
            let floor = (share / total) as usize;
            floors += share / total;
            surplus += counts[n.get()].saturating_sub(floor);
            if share % total != 0 && counts[n.get()] > floor {
                absorbers += 1;
            }
        }
        let round_ups = (16384 - floors) as usize;
        let fewest = map.unassigned_count() + surplus - round_ups.min(absorbers);
        prop_assert_eq!(plan.slots_moved(), fewest);

        // Moves: in slot order, disjoint, each slot really changes owner.
        for w in plan.moves().windows(2) {
            prop_assert!(w[0].end < w[1].start);
        }
        for m in plan.moves() {
            prop_assert!(m.start <= m.end);
            prop_assert!(m.from != Some(m.to));
            for s in m.start..=m.end {
                prop_assert_eq!(map.owner(s), m.from);
            }
        }

        let mut after = map.clone();
        plan.apply(&mut after).expect("apply");
        prop_assert!(after.is_complete());
        let counts_after = after.slot_counts();
        for &(n, w) in &weights {
            // |after - 16384 w / W| < 1, in integers.
            let a = counts_after[n.get()] as u128 * total;
            let ideal = 16384 * u128::from(w);
            prop_assert!(a.abs_diff(ideal) < total, "node {} after {}", n, counts_after[n.get()]);
        }
        let changed = (0..16384u16).filter(|&s| map.owner(s) != after.owner(s)).count();
        prop_assert_eq!(changed, plan.slots_moved());
        for t in plan.targets() {
            prop_assert_eq!(t.after, counts_after[t.node.get()]);
            prop_assert_eq!(t.before, counts[t.node.get()]);
        }

        // Planning again changes nothing.
        prop_assert!(Plan::new(&after, &weights).expect("plan").is_empty());
    }
}

// ---------------------------------------------------------------- MOVED and refresh

fn shard_node(i: usize, role: Role) -> ShardNode {
    ShardNode {
        id: format!("{i:040x}"),
        port: Some(7000 + i as u16),
        tls_port: None,
        ip: "10.0.0.1".into(),
        endpoint: "10.0.0.1".into(),
        hostname: None,
        role,
        replication_offset: 0,
        health: Health::Online,
    }
}

/// A `CLUSTER SHARDS` reply: `n` shards, each with a master and `replicas` replicas,
/// slots split evenly.
fn shards_reply(n: usize, replicas: usize) -> Vec<Shard> {
    (0..n)
        .map(|s| {
            let start = (16384 * s / n) as u16;
            let end = (16384 * (s + 1) / n - 1) as u16;
            let mut nodes = vec![shard_node(s * 10, Role::Master)];
            nodes.extend((1..=replicas).map(|r| shard_node(s * 10 + r, Role::Replica)));
            Shard {
                slots: vec![(start, end)],
                nodes,
            }
        })
        .collect()
}

/// The reply after `slot` moved to shard `to` (split the ranges around it).
fn move_slot(reply: &[Shard], slot: u16, to: usize) -> Vec<Shard> {
    let mut out = reply.to_vec();
    for shard in &mut out {
        shard.slots = shard
            .slots
            .iter()
            .flat_map(|&(s, e)| {
                if (s..=e).contains(&slot) {
                    let mut parts = Vec::new();
                    if s < slot {
                        parts.push((s, slot - 1));
                    }
                    if slot < e {
                        parts.push((slot + 1, e));
                    }
                    parts
                } else {
                    vec![(s, e)]
                }
            })
            .collect();
    }
    out[to].slots.push((slot, slot));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn moved_then_refresh_gives_refreshed_map(
        shards in 1usize..6,
        replicas in 0usize..3,
        slot in 0u16..16384,
        to_seed in any::<usize>(),
        empty_host in any::<bool>(),
        to_new_node in any::<bool>(),
    ) {
        let reply = shards_reply(shards, replicas);
        let mut map = SlotMap::from_shards(&reply).expect("valid reply");
        let before = map.clone();

        let (fresh, target) = if to_new_node {
            // A master nobody knew: a new shard got the slot.
            let mut grown = reply.clone();
            grown.push(Shard { slots: vec![], nodes: vec![shard_node(999, Role::Master)] });
            (move_slot(&grown, slot, shards), shard_node(999, Role::Master))
        } else {
            let to = to_seed % shards;
            (move_slot(&reply, slot, to), shard_node(to * 10, Role::Master))
        };
        let host = if empty_host { "" } else { "10.0.0.1" };
        let text = format!("MOVED {slot} {host}:{}", target.port.expect("port"));
        let redirect = Redirect::parse(&text).expect("valid");
        let action = map.apply_redirect(&redirect, "10.0.0.1").expect("apply");
        prop_assert!(action.wants_refresh());
        let RedirectAction::Moved { node, added } = action else {
            return Err(TestCaseError::fail("MOVED gave another action"));
        };
        prop_assert_eq!(added, to_new_node);
        prop_assert_eq!(map[node].addr(), &Address::new("10.0.0.1", target.port.expect("port")));

        // Exactly that slot changed; the routing now agrees with the refreshed cluster.
        let refreshed = SlotMap::from_shards(&fresh).expect("valid reply");
        for s in 0..16384u16 {
            if s == slot {
                let via_map = map.node_for_slot(s).map(|n| n.addr().clone());
                let via_fresh = refreshed.node_for_slot(s).map(|n| n.addr().clone());
                prop_assert_eq!(via_map, via_fresh);
            } else {
                prop_assert_eq!(map.owner(s), before.owner(s));
            }
        }

        // ASK never changes the map.
        let ask_text = text.replacen("MOVED", "ASK", 1);
        let ask = Redirect::parse(&ask_text).expect("valid");
        let snapshot = map.clone();
        let action = map.apply_redirect(&ask, "10.0.0.1").expect("apply");
        prop_assert!(!action.wants_refresh());
        prop_assert_eq!(&map, &snapshot);
        // (The full refresh that follows a MOVED is the client's: keyroute-redis's
        // redis_cluster tests check it against a live cluster.)
    }
}
