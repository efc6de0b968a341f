//! Lookups allocate nothing: a counting global allocator proves it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use keyroute::ring::{Profile, ProfileName, Ring};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn lookups_do_not_allocate() {
    let keys: Vec<Vec<u8>> = (0..1000).map(|i| format!("key-{i}").into_bytes()).collect();
    // Once per process the MD5 batch path is chosen, reading KEYROUTE_MD5 (an allocation
    // when it is set): not per lookup.
    let _ = keyroute::ring::Md5Path::selected();
    for name in ProfileName::ALL {
        let nodes: Vec<(String, u32)> =
            (0..100).map(|i| (format!("node-{i}"), 1 + i % 3)).collect();
        let ring = Ring::with_nodes(Profile::from_name(name), nodes).expect("ring");
        let mut out = Vec::with_capacity(keys.len());
        let mut reps = Vec::with_capacity(8);
        let before = ALLOCS.load(Ordering::SeqCst);
        let mut hits = 0usize;
        for k in &keys {
            hits += ring.get(k).map_or(0, str::len);
            ring.get_n_into(k, 3, &mut reps);
        }
        ring.get_many_into(&keys, &mut out);
        let after = ALLOCS.load(Ordering::SeqCst);
        assert!(hits > 0);
        assert_eq!(after - before, 0, "{name}: lookups allocated");
        assert_eq!(out.len(), keys.len());
    }
}
