//! `MOVED`/`ASK` parsing (`Redirect::parse_bytes`), addresses (`split_host_port`,
//! `Address::parse`) and `SlotMap::apply_redirect`: never panics; what parses round-trips
//! through its canonical text; `MOVED` routes the slot to the target and changes no other
//! slot; `ASK` never changes the map.
#![no_main]

use keyroute::slot::{split_host_port, Address, Redirect, RedirectAction, RedirectKind, SlotMap};
use libfuzzer_sys::fuzz_target;

fn base_map() -> SlotMap {
    let mut map = SlotMap::new();
    let a = map
        .add_master("a", Address::new("10.0.0.1", 7000))
        .expect("a");
    let b = map.add_master("b", Address::new("::1", 7001)).expect("b");
    map.add_replica(a, "ra", Address::new("10.0.0.3", 7000))
        .expect("ra");
    map.assign(0..=8191, a).expect("assign a");
    map.assign(8192..=16000, b).expect("assign b");
    map
}

fuzz_target!(|data: &[u8]| {
    // Address forms.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok((host, port)) = split_host_port(text) {
            assert_eq!(split_host_port(&format!("{host}:{port}")), Ok((host, port)));
        }
        if let Ok(addr) = Address::parse(text) {
            let again = Address::parse(&addr.to_string()).expect("an address's text parses");
            assert_eq!(again, addr);
        }
    }

    let parsed = Redirect::parse_bytes(data);
    let r = match parsed {
        Ok(r) => r,
        Err(e) => {
            assert!(!e.code().as_str().is_empty());
            let _ = e.to_string();
            return;
        }
    };
    assert!(r.slot < 16384);
    let kind = match r.kind {
        RedirectKind::Moved => "MOVED",
        RedirectKind::Ask => "ASK",
    };
    let text = format!("{kind} {} {}:{}", r.slot, r.host, r.port);
    assert_eq!(Redirect::parse(&text), Ok(r), "{text:?}");
    assert_eq!(r.wants_refresh(), r.kind == RedirectKind::Moved);

    let mut map = base_map();
    let before = map.clone();
    let current = "10.0.0.9";
    match map.apply_redirect(&r, current) {
        Ok(RedirectAction::Moved { node, added }) => {
            assert_eq!(r.kind, RedirectKind::Moved);
            assert_eq!(map.owner(r.slot), Some(node));
            let addr = map[node].addr();
            assert_eq!(
                (addr.host.as_str(), addr.port),
                (r.host_or(current), r.port)
            );
            assert_eq!(added, map.nodes().len() == before.nodes().len() + 1);
            for s in (0..16384u16).filter(|&s| s != r.slot) {
                assert_eq!(map.owner(s), before.owner(s), "MOVED changed slot {s}");
            }
        }
        Ok(RedirectAction::Ask { addr, node }) => {
            assert_eq!(r.kind, RedirectKind::Ask);
            assert_eq!(
                (addr.host.as_str(), addr.port),
                (r.host_or(current), r.port)
            );
            assert_eq!(node, map.find_addr(&addr.host, addr.port));
            assert_eq!(map, before, "ASK changed the map");
        }
        Ok(other) => panic!("unexpected action {other:?}"),
        Err(e) => {
            // An address the map refuses (port 0, ...): nothing changed.
            assert!(!e.code().as_str().is_empty());
            assert_eq!(map, before);
        }
    }
});
