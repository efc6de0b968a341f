//! The node-list grammar (`keyroute::ring::parse_nodes`, `parse_weights`, `parse_node`):
//! never panics, every refusal has a code, and what it accepts round-trips: the nodes
//! written back in the grammar's canonical form (`NAME=WEIGHT`, or twemproxy's
//! `host:port:weight alias` for an aliased entry) parse to the same nodes, and a ring
//! builds from them (or is refused with a code).
#![no_main]

use keyroute::ring::{parse_node, parse_nodes, parse_weights, NodeSpec, Profile, Ring};
use libfuzzer_sys::fuzz_target;

fn canonical(n: &NodeSpec) -> String {
    match &n.address {
        Some(addr) => format!("{addr}:{} {}", n.weight, n.name),
        None => format!("{}={}", n.name, n.weight),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let nodes = parse_nodes(&text);
    let weights = parse_weights(&text);
    match &nodes {
        Ok(nodes) => {
            assert!(!nodes.is_empty());
            for n in nodes {
                assert!(!n.name.is_empty() && n.weight > 0);
                assert!(
                    !n.name.contains([',', '#', '=']) && !n.name.contains(char::is_whitespace),
                    "{:?}",
                    n.name
                );
                let one = parse_node(&canonical(n)).expect("canonical entry parses");
                assert_eq!(&one, n);
            }
            let list: Vec<String> = nodes.iter().map(canonical).collect();
            assert_eq!(
                &parse_nodes(&list.join(",")).expect("canonical list"),
                nodes
            );
            assert_eq!(
                &parse_nodes(&list.join("\n")).expect("canonical file"),
                nodes
            );
            // parse_weights takes what parse_nodes takes, with the same names and weights.
            let w = weights.as_ref().expect("weights accept every node list");
            assert_eq!(w.len(), nodes.len());
            for (n, (name, weight)) in nodes.iter().zip(w) {
                assert_eq!((&n.name, n.weight), (name, *weight));
            }
            if nodes.len() <= 32 {
                let built = Ring::with_nodes(
                    Profile::libmemcached().with_vnodes(4).expect("vnodes"),
                    nodes.iter().map(|n| (n.name.as_str(), n.weight)),
                );
                if let Err(e) = built {
                    assert!(
                        matches!(e.code().as_str(), "DUPLICATE_NODE" | "TOO_MANY_POINTS"),
                        "{e}"
                    );
                }
            }
        }
        Err(e) => {
            assert!(!e.code().as_str().is_empty());
            let _ = e.to_string();
        }
    }
    if let Ok(w) = &weights {
        for (name, weight) in w {
            let again = parse_weights(&format!("{name}={weight}")).expect("canonical weight");
            assert_eq!(again, [(name.clone(), *weight)]);
        }
    } else if let Err(e) = &weights {
        let _ = e.to_string();
    }
});
