//! `CLUSTER SHARDS` / `CLUSTER SLOTS` replies (keyroute-redis
//! `cluster::topology::parse_shards` / `parse_slots`) on arbitrary `redis::Value` trees,
//! then `SlotMap::from_shards` / `from_slots` and a resharding plan on what they accept:
//! never panics; an accepted map holds the slot map's invariants; plans reach their
//! targets with the fewest moves.
#![no_main]

use arbitrary::Unstructured;
use keyroute::slot::SlotMap;
use keyroute_fuzz::{check_map, check_plan, redis_value, MAX_TREE};
use keyroute_redis::cluster::topology::{parse_shards, parse_slots};
use libfuzzer_sys::fuzz_target;

fn weights(u: &mut Unstructured<'_>, map: &SlotMap) -> Vec<(keyroute::slot::NodeIndex, u64)> {
    let mut w = Vec::new();
    for (idx, _) in map.masters() {
        let weight = u.int_in_range(0u64..=4).unwrap_or(1);
        w.push((idx, weight));
    }
    w
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut budget = MAX_TREE;
    let Ok(reply) = redis_value(&mut u, 5, &mut budget) else {
        return;
    };
    match parse_shards(&reply) {
        Ok(shards) => match SlotMap::from_shards(&shards) {
            Ok(map) => {
                check_map(&map);
                let w = weights(&mut u, &map);
                check_plan(&map, &w);
            }
            Err(e) => assert!(!e.code().as_str().is_empty()),
        },
        Err(e) => assert_eq!(e.code().as_str(), "REDIS_PROTOCOL", "{e}"),
    }
    match parse_slots(&reply) {
        Ok(entries) => match SlotMap::from_slots(&entries) {
            Ok(map) => {
                check_map(&map);
                let w = weights(&mut u, &map);
                check_plan(&map, &w);
            }
            Err(e) => assert!(!e.code().as_str().is_empty()),
        },
        Err(e) => assert_eq!(e.code().as_str(), "REDIS_PROTOCOL", "{e}"),
    }
});
