//! The data readers of the core's `serde` feature (a ring as a spec, a slot map, a
//! resharding plan, read from JSON): never panic, refuse with the library's code in the
//! message, and what they accept writes back to JSON that reads back the same (a ring
//! answering every key as before). Config readers (issue 16) join here when they land.
#![no_main]

use keyroute::ring::Ring;
use keyroute::slot::{Plan, SlotMap};
use keyroute_fuzz::check_map;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match serde_json::from_str::<Ring>(text) {
        Ok(ring) => {
            let json = serde_json::to_string(&ring).expect("a ring writes");
            let back: Ring = serde_json::from_str(&json).expect("a written ring reads back");
            assert_eq!(back.positions(), ring.positions());
            assert_eq!(back.owners(), ring.owners());
            assert_eq!(back.nodes(), ring.nodes());
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match serde_json::from_str::<SlotMap>(text) {
        Ok(map) => {
            check_map(&map);
            let json = serde_json::to_string(&map).expect("a map writes");
            let back: SlotMap = serde_json::from_str(&json).expect("a written map reads back");
            assert_eq!(back, map);
            if let Ok(plan) = serde_json::from_str::<Plan>(text) {
                let mut m = map.clone();
                if plan.apply(&mut m).is_err() {
                    assert_eq!(m, map, "a refused plan changes nothing");
                } else {
                    check_map(&m);
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Ok(plan) = serde_json::from_str::<Plan>(text) {
        let json = serde_json::to_string(&plan).expect("a plan writes");
        let back: Plan = serde_json::from_str(&json).expect("a written plan reads back");
        assert_eq!(back.moves(), plan.moves());
    }
});
