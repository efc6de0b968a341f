//! The smart cache on a real 3-master Redis Cluster: every script runs in one slot (no
//! CROSSSLOT, multi-key scripts included), and a client's slot is resharded mid-test, with
//! keyroute's `execute_plan`, while a reader keeps using its session and entries: nothing
//! is lost, no entry is loaded twice.

#[path = "common/cluster.rs"]
#[allow(dead_code)]
mod cluster;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::cache::{ClientKeys, TokenKey, Touch};
use keyroute::slot::{key_slot, Plan};
use keyroute_redis::cache::{
    CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Store,
};
use keyroute_redis::cluster::reshard::{execute_plan, ReshardOptions};
use keyroute_redis::cluster::topology::fetch_topology;
use keyroute_redis::cluster::ClusterConfig;

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[test]
fn a_clients_slot_moves_mid_test_without_losing_a_session_or_an_entry() {
    let cluster = cluster::Cluster::start(3);
    let store = Store::cluster(&[&cluster.url()], ClusterConfig::default()).expect("store");
    assert!(store.is_cluster());
    let cache = Arc::new(SmartCache::new(store.clone(), CacheConfig::default()).expect("cache"));
    let sessions =
        Arc::new(Sessions::new(store.clone(), SessionConfig::default()).expect("sessions"));
    let devices = Devices::new(store);

    // A plan that moves exactly one slot, and a client living in it.
    let (map, _) = fetch_topology(&mut cluster::connect(cluster.ports[0])).expect("topology");
    let mut weights: Vec<_> = map
        .masters()
        .map(|(i, _)| (i, map.slot_count(i) as u64))
        .collect();
    weights[0].1 -= 1;
    weights[2].1 += 1;
    let plan = Plan::new(&map, &weights).expect("plan");
    assert_eq!(plan.slots_moved(), 1, "{plan:?}");
    let slot = plan.moves()[0].start;
    let client = (0..)
        .map(|n| format!("client-{n}"))
        .find(|c| {
            let keys = ClientKeys::new(c.as_bytes(), &TokenKey::DEFAULT).expect("keys");
            key_slot(&keys.session_index()) == slot
        })
        .expect("a client in the slot");

    // Every kind of call, multi-key scripts included: no CROSSSLOT.
    let sid = sessions
        .create(&client, "v1", b"session data")
        .expect("create")
        .id;
    for kind in ["accounts", "cards"] {
        let v = cache
            .get_or_load(&client, kind, soon(), || {
                Ok::<_, LoadError>(format!("{kind} of {client}").into_bytes())
            })
            .expect("load");
        assert_eq!(v, format!("{kind} of {client}").into_bytes());
    }
    devices
        .bind("device-1", &client, Duration::from_secs(60))
        .expect("bind");
    let report = cache
        .warm(
            "device-1",
            &["accounts", "cards", "deposits", "loans"],
            |_, kind| Ok(kind.to_vec()),
        )
        .expect("warm");
    assert_eq!(report.granted.len(), 2, "{report:?}");
    assert_eq!(sessions.list(&client).expect("list").len(), 1);

    // A reader keeps using the client while its slot moves.
    let stop = Arc::new(AtomicBool::new(false));
    let reloads = Arc::new(AtomicU64::new(0));
    let reader = {
        let (cache, sessions, stop, reloads, client) = (
            Arc::clone(&cache),
            Arc::clone(&sessions),
            Arc::clone(&stop),
            Arc::clone(&reloads),
            client.clone(),
        );
        thread::spawn(move || {
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) || rounds < 20 {
                match sessions
                    .touch(sid.as_str(), Some("v1"))
                    .expect("touch during the move")
                {
                    Touch::Live { data, .. } => assert_eq!(data, b"session data"),
                    other => panic!("session lost during the move: {other:?}"),
                }
                for kind in ["accounts", "deposits"] {
                    let v = cache
                        .get_or_load(&client, kind, soon(), || {
                            reloads.fetch_add(1, Ordering::SeqCst);
                            Ok::<_, LoadError>(b"reloaded".to_vec())
                        })
                        .expect("get during the move");
                    assert_ne!(v, b"reloaded");
                }
                rounds += 1;
            }
            rounds
        })
    };
    thread::sleep(Duration::from_millis(100));
    let report = execute_plan(&map, &plan, &ReshardOptions::default(), |_| {}).expect("reshard");
    assert!(report.keys_moved >= 5, "{report:?}");
    thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let rounds = reader.join().expect("reader");
    assert!(rounds >= 20);
    assert_eq!(
        reloads.load(Ordering::SeqCst),
        0,
        "an entry was lost and loaded again"
    );

    // The slot lives elsewhere now, and everything is still there.
    let (after, _) = fetch_topology(&mut cluster::connect(cluster.ports[0])).expect("topology");
    assert_ne!(
        after.node_for_slot(slot).map(|n| n.addr().clone()),
        map.node_for_slot(slot).map(|n| n.addr().clone())
    );
    assert!(matches!(
        sessions.touch(sid.as_str(), None).expect("touch"),
        Touch::Live { .. }
    ));
    let fail = || Err::<Vec<u8>, _>(LoadError::new("NO", "must not load"));
    for kind in ["accounts", "cards", "deposits", "loans"] {
        cache
            .get_or_load(&client, kind, soon(), fail)
            .expect("still cached");
    }
    // Waiting works on the new owner too: a wake-up through SSUBSCRIBE there.
    cache.invalidate(&client, "cards").expect("invalidate");
    let other = SmartCache::new(
        Store::cluster(&[&cluster.url()], ClusterConfig::default()).expect("store"),
        CacheConfig::default(),
    )
    .expect("cache");
    let filled_at = Arc::new(std::sync::Mutex::new(None));
    let loading = {
        let (cache, client, filled_at) =
            (Arc::clone(&cache), client.clone(), Arc::clone(&filled_at));
        thread::spawn(move || {
            cache.get_or_load(&client, "cards", soon(), || {
                // Long enough that polling alone (10 ms doubling to 200 ms) would be
                // ~160 ms late.
                thread::sleep(Duration::from_millis(600));
                *filled_at.lock().expect("lock") = Some(Instant::now());
                Ok::<_, LoadError>(b"new cards".to_vec())
            })
        })
    };
    thread::sleep(Duration::from_millis(50));
    let v = other
        .get_or_load(&client, "cards", soon(), fail)
        .expect("waited");
    let served = Instant::now();
    assert_eq!(v, b"new cards");
    let filled = filled_at.lock().expect("lock").expect("loaded");
    let late = served.duration_since(filled);
    assert!(
        late < Duration::from_millis(50),
        "served {late:?} after the load: no wake-up?"
    );
    assert_eq!(other.stats().waits, 1);
    loading.join().expect("thread").expect("loaded");
}
