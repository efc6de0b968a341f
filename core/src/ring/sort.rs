//! The sort of ring builds. By default a bucket sort by the keys' top bits (hashed points
//! are spread evenly: linear time; 2-4x faster than `sort_unstable` on a native build); with the
//! `small-sort` feature a least-significant-digit radix sort, far less code (the
//! JavaScript package's .wasm is 3.3 KB gzipped smaller, and its builds 10-25% faster in
//! WebAssembly), slower natively. Both give the same order: the items' own order, which
//! for native entries is by point, then node index.

use alloc::vec::Vec;

/// Sorts a build's entries by their own order (see the module docs).
#[inline]
#[allow(clippy::ptr_arg)] // the radix sort swaps the Vec with its scratch copy
pub(crate) fn sort_points<T: RadixKey + Ord>(v: &mut Vec<T>) {
    #[cfg(feature = "small-sort")]
    radix_sort(v);
    #[cfg(not(feature = "small-sort"))]
    bucket_sort(v);
}

/// Sorts `v` by its own order, fast for keys spread evenly over their top bits, as hashed
/// ring points are: one counting pass scatters the items into about `v.len()` buckets by
/// their key's top bits, then each bucket (a couple of items on average) is sorted by the
/// items' full order. Linear on such input; a bucket that holds many items (keys bunched
/// together) is sorted by `sort_unstable`, so no input is worse than a comparison sort
/// by much. One scratch copy of `v` and a count per bucket (4 bytes each).
#[cfg_attr(all(feature = "small-sort", not(test)), allow(dead_code))]
pub(crate) fn bucket_sort<T: RadixKey + Ord>(v: &mut Vec<T>) {
    let n = v.len();
    if n < 64 {
        v.sort_unstable();
        return;
    }
    if n >= 1 << 22 {
        bucket_sort_two_level(v);
        return;
    }
    // About one bucket per two items.
    let bits = usize::BITS - 1 - (n - 1).leading_zeros();
    let mut out: Vec<T> = alloc::vec![v[0]; n];
    let mut ends = Vec::new();
    scatter_sort(v, &mut out, 0, bits, &mut ends);
    *v = out;
}

/// [`bucket_sort`] for 4M items or more (where one pass's counts, 8 MiB, leave the cache),
/// in two passes that each stay in cache. Pass 1 scatters the items by their key's top
/// bits ([`top_bits_for`]: runs of about 32k items, 1,024 runs for 200k nginx servers' 32M
/// points) into a copy, each run written in order; pass 2 gathers each run into a scratch
/// copy (in the cache) and sorts it by the next bits back into `v`. With `std` (off
/// WebAssembly) the cores share both passes: in pass 1 each scatters a part of `v` into a
/// copy of its own, in pass 2 each sorts a stretch of the runs, gathering a run from every
/// part. One pass by all the bits wrote each item to a random place in the whole array:
/// sorting 32M (point, order, owner) entries took 43% of a 5 s build (`perf`). 200k nginx
/// servers a build (32M 8-byte keys), side by side: 256 runs on one core 1.58-1.63 s,
/// 1,024 1.55-1.58 s; in place (an American flag sort, no copy) 1.53-1.72 s, each move
/// waiting on the one before; pass 2 on 2 cores 1.06-1.07 s, both passes 1.01-1.04 s.
#[allow(clippy::ptr_arg)] // a Vec like `bucket_sort`'s
fn bucket_sort_two_level<T: RadixKey + Ord>(v: &mut Vec<T>) {
    let n = v.len();
    let top_bits = top_bits_for(n);
    let runs = 1usize << top_bits;
    let top_shift = 64 - top_bits;
    let cores = cores();
    // Pass 1: each part scattered into a copy of its own, `starts[h]..starts[h + 1]` its
    // run h.
    let parts: Vec<(Vec<T>, Vec<u32>)> =
        on_each_core(v.chunks(n.div_ceil(cores).max(1)).collect(), |part| {
            let mut starts = alloc::vec![0u32; runs + 1];
            for x in part {
                starts[(x.key() >> top_shift) as usize + 1] += 1;
            }
            for h in 1..starts.len() {
                starts[h] += starts[h - 1];
            }
            // Zeroed: fresh pages from the kernel, faulted in as the scatter reaches them.
            let mut out: Vec<T> = alloc::vec![T::ZERO; part.len()];
            let mut at = starts.clone();
            for x in part {
                let h = (x.key() >> top_shift) as usize;
                out[at[h] as usize] = *x;
                at[h] += 1;
            }
            (out, starts)
        });
    // Where each run goes in `v`.
    let mut starts = alloc::vec![0u32; runs + 1];
    for h in 0..runs {
        let len: u32 = parts.iter().map(|(_, s)| s[h + 1] - s[h]).sum();
        starts[h + 1] = starts[h] + len;
    }
    // Pass 2: the runs cut into `cores` stretches of about as many items.
    let mut stretches = Vec::with_capacity(cores);
    let (mut rest, mut h, mut done) = (&mut v[..], 0, 0usize);
    for c in 1..=cores {
        let goal = n * c / cores;
        let first = h;
        while h < runs && (starts[h + 1] as usize) <= goal {
            h += 1;
        }
        let upto = starts[h] as usize;
        let (mine, after) = rest.split_at_mut(upto - done);
        rest = after;
        stretches.push((first..h, mine));
        done = upto;
    }
    debug_assert!(rest.is_empty() && h == runs);
    let (parts, starts) = (&parts, &starts);
    on_each_core(stretches, |(stretch, dst)| {
        let base = starts[stretch.start] as usize;
        let mut scratch: Vec<T> = Vec::new();
        let mut ends = Vec::new();
        for h in stretch {
            let (from, to) = (starts[h] as usize - base, starts[h + 1] as usize - base);
            scratch.clear();
            for (part, s) in parts {
                scratch.extend_from_slice(&part[s[h] as usize..s[h + 1] as usize]);
            }
            match to - from {
                0 => {}
                1 => dst[from] = scratch[0],
                len => {
                    let bits = (usize::BITS - 1 - (len - 1).leading_zeros()).max(1);
                    scatter_sort(&scratch, &mut dst[from..to], top_bits, bits, &mut ends);
                }
            }
        }
    });
}

/// From this many items a build shares a pass among the cores (below it a thread costs
/// more than it saves, and small rings never start one). The fleet's engines use it.
#[cfg(feature = "fleet")]
pub(crate) const PARALLEL_FROM: usize = 1 << 20;

/// How many cores a pass over `n` items shares its work among: [`cores`] from
/// [`PARALLEL_FROM`] items, else 1.
#[cfg(feature = "fleet")]
pub(crate) fn cores_for(n: usize) -> usize {
    if n >= PARALLEL_FROM {
        cores()
    } else {
        1
    }
}

/// How many cores a large sort or build shares its work among: 1 without `std` or on
/// WebAssembly, else those the machine offers (at most 8).
pub(crate) fn cores() -> usize {
    #[cfg(all(feature = "std", not(target_family = "wasm")))]
    return std::thread::available_parallelism().map_or(1, |c| c.get().min(8));
    #[cfg(not(all(feature = "std", not(target_family = "wasm"))))]
    1
}

/// `work` on each of `items`, each on a thread of its own (the last on this one) with
/// `std` off WebAssembly, else one after the other; the answers in order.
pub(crate) fn on_each_core<I: Send, R: Send>(
    items: Vec<I>,
    work: impl Fn(I) -> R + Sync,
) -> Vec<R> {
    #[cfg(all(feature = "std", not(target_family = "wasm")))]
    if items.len() > 1 {
        return std::thread::scope(|s| {
            let mut items = items;
            let last = items.pop();
            let work = &work;
            let handles: Vec<_> = items
                .into_iter()
                .map(|i| s.spawn(move || work(i)))
                .collect();
            let mine = last.map(work);
            let mut out: Vec<R> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect();
            out.extend(mine);
            out
        });
    }
    items.into_iter().map(work).collect()
}

/// Sorts `src` into `dst` (as long), all of whose keys share their top `skip` bits: scatters
/// them by the next `bits` bits (at most 23), then sorts within the buckets. Linear for
/// spread keys; a bucket that holds many items (keys bunched together) is sorted by
/// `sort_unstable`, so no input is worse than a comparison sort by much. `ends` is scratch.
fn scatter_sort<T: RadixKey + Ord>(
    src: &[T],
    dst: &mut [T],
    skip: u32,
    bits: u32,
    ends: &mut Vec<u32>,
) {
    let bits = bits.min(23).min(64 - skip);
    let shift = 64 - bits;
    let bucket = |x: &T| ((x.key() << skip) >> shift) as usize;
    // ends[b + 1]: counts, then where bucket b starts; after the scatter, where it ends.
    ends.clear();
    ends.resize((1usize << bits) + 1, 0);
    for x in src {
        ends[bucket(x) + 1] += 1;
    }
    let (mut fullest, mut sum) = (0, 0);
    for e in ends.iter_mut().skip(1) {
        fullest = fullest.max(*e);
        sum += *e;
        *e = sum;
    }
    for x in src {
        let b = bucket(x);
        dst[ends[b] as usize] = *x;
        ends[b] += 1;
    }
    if fullest <= 32 {
        // Every item is already in its bucket and every bucket holds at most 32: one
        // insertion sort over the whole array moves each item within its bucket only
        // (linear, and no loop over the buckets).
        insertion_sort(dst);
    } else {
        let mut from = 0;
        for &end in &ends[..ends.len() - 1] {
            let bucket = &mut dst[from..end as usize];
            match bucket.len() {
                0 | 1 => {}
                2..=16 => insertion_sort(bucket),
                _ => bucket.sort_unstable(),
            }
            from = end as usize;
        }
    }
}

/// Sorts a build's entries by their own order and splits each into its (point, owner)
/// pair: the two arrays a circle keeps. With the bucket sort the items are scattered
/// straight into those two arrays (no sorted copy of the entries, no second pass to split
/// it), by the top bits of their key. The circle's index (`index::layout`: the top `log`
/// of the points' `bits` bits) comes back as the third value (`table[b]`: the first item
/// of bucket `b`; `2^log + 1` entries): for MD5 points the bucket ends the sort counted,
/// for native points one pass over the sorted points (see below). `split` must keep the
/// order (the pairs compare as the entries do). A native 1000 x 160 build
/// (`bench/benches/ring.rs`, side by side on a loaded machine): 6.1 ms with a sorted
/// copy, a split pass and an index pass, 4.8 ms without them.
pub(crate) fn sort_split<T: RadixKey + Ord>(
    mut v: Vec<T>,
    split: impl Fn(T) -> (u64, u32),
    log: u32,
    bits: u32,
) -> (Vec<u64>, Vec<u32>, Option<Vec<u32>>) {
    let n = v.len();
    if cfg!(feature = "small-sort") || n < 64 || log == 0 || log > 30 {
        sort_points(&mut v);
        let (mut points, mut owners) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for x in v {
            let (p, o) = split(x);
            points.push(p);
            owners.push(o);
        }
        return (points, owners, None);
    }
    // Native points (64 bits) are scattered by the index's buckets (about 2.5 items per
    // bucket at most load: `index::layout`): the counts stay in cache, where a count per
    // point (a MiB for a 160k-point ring) missed it on every item. Native 1000 x 160, side
    // by side: 5.3 -> 4.5 ms. The MD5 profiles' builds measured slower that way (6.9 ->
    // 9.0 ms, of which their MD5 is half), so they scatter by 2 bits more (a bucket per
    // 0.5-1 item) and the index takes every fourth bucket end. Larger rings take two
    // passes (`sort_split_two_level`), both profiles by 3 bits more than the index.
    if (log + 2).min(bits) >= TOP_BITS + 4 {
        return sort_split_two_level(v, split, log, (log + 3).min(bits), bits);
    }
    let sort_log = if bits == 64 { log } else { (log + 2).min(bits) };
    let shift = 64 - sort_log;
    let sort_buckets = 1usize << sort_log;
    // ends[b + 1]: counts, then where bucket b starts; after the scatter, where it ends.
    let mut ends = alloc::vec![0u32; sort_buckets + 1];
    for x in v.iter() {
        ends[(x.key() >> shift) as usize + 1] += 1;
    }
    let mut fullest = 0;
    for b in 1..ends.len() {
        fullest = fullest.max(ends[b]);
        ends[b] += ends[b - 1];
    }
    // Filled in order first (not `vec![0; n]`, whose fresh zero pages would then fault in
    // the scatter's random order).
    let mut points: Vec<u64> = Vec::with_capacity(n);
    points.resize(n, 1);
    let mut owners: Vec<u32> = Vec::with_capacity(n);
    owners.resize(n, 1);
    for &x in v.iter() {
        let b = (x.key() >> shift) as usize;
        let at = ends[b] as usize;
        (points[at], owners[at]) = split(x);
        ends[b] += 1;
    }
    drop(v);
    if fullest <= 32 {
        insertion_sort_pairs(&mut points, &mut owners);
    } else {
        let mut from = 0;
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        for &end in &ends[..sort_buckets] {
            let end = end as usize;
            match end - from {
                0 | 1 => {}
                2..=16 => insertion_sort_pairs(&mut points[from..end], &mut owners[from..end]),
                _ => {
                    pairs.clear();
                    pairs.extend(
                        points[from..end]
                            .iter()
                            .copied()
                            .zip(owners[from..end].iter().copied()),
                    );
                    pairs.sort_unstable();
                    for (i, (p, o)) in pairs.iter().enumerate() {
                        points[from + i] = *p;
                        owners[from + i] = *o;
                    }
                }
            }
            from = end;
        }
    }
    // ends[b] is now where bucket b ends, i.e. where b + 1 starts: table[b] = where index
    // bucket b starts (2^log + 1 entries, the last n), every 2^(sort_log - log)-th.
    let step = 1usize << (sort_log - log);
    let buckets = 1usize << log;
    let mut table: Vec<u32> = Vec::with_capacity(buckets + 1);
    table.push(0);
    table.extend((1..=buckets).map(|b| ends[b * step - 1]));
    (points, owners, Some(table))
}

/// The fewest top bits the first pass of a two-pass sort scatters by.
const TOP_BITS: u32 = 8;

/// How many top bits the first pass of a two-pass sort of `n` items scatters by: runs of
/// about 32k items (a run and its scratch copy stay in the cache), from [`TOP_BITS`] to 12.
/// 200k nginx servers (32M points, a build, side by side): 256 runs 1.58-1.63 s, 1,024
/// 1.55-1.58 s, 4,096 1.57-1.61 s.
fn top_bits_for(n: usize) -> u32 {
    (usize::BITS - 1 - n.max(1).leading_zeros())
        .saturating_sub(15)
        .clamp(TOP_BITS, 12)
}

/// [`sort_split`] for rings of about 1,500 points or more, in two passes that each stay in cache.
/// Pass 1 scatters the items by their key's top [`top_bits_for`] bits straight into the two arrays (256 or more
/// runs, each written in order). Pass 2 copies each run out (a few hundred items: in L1), scatters
/// it back by its next bits and insertion-sorts it there. In all it buckets by `sort_log` bits
/// (0.2-0.4 item a bucket), so the insertion sort rarely moves an item. The one-pass scatter in
/// [`sort_split`] wrote each item to a random place in two arrays of a few MiB, with buckets of
/// 1.5-3 items. Native 1000 x 160 (`bench/benches/ring.rs`, side by side, four runs alternating):
/// 2.96-3.29 ms -> 2.60-2.76 ms. Bucketing by one bit less measured slower (2.99-3.18 ms): the
/// insertion sort then moves more; a first pass into a scratch copy of the entries instead of the
/// two arrays measured 4.6-5.3 ms (the copy's fresh pages faulted in on every build). Once
/// pass 2 summed its counts in a register (2.94-3.17 -> 2.57-2.62 ms), one bit more than the
/// index's two measured as fast natively and 3-5% faster for MD5 (libketama 1000 nodes
/// 6.04-6.13 -> 5.82-5.88 ms; 300,000 nodes to the point limit 35.6-37.7 -> 34.0-36.0 ms).
fn sort_split_two_level<T: RadixKey + Ord>(
    v: Vec<T>,
    split: impl Fn(T) -> (u64, u32),
    log: u32,
    sort_log: u32,
    bits: u32,
) -> (Vec<u64>, Vec<u32>, Option<Vec<u32>>) {
    let n = v.len();
    debug_assert!(sort_log >= TOP_BITS + 2 && sort_log > log && n > 0);
    // Pass 1: by the top bits into `mid`, run `h` at starts[h]..starts[h + 1].
    let top_bits = top_bits_for(n).min(sort_log - 4);
    let top_shift = 64 - top_bits;
    let mut starts = alloc::vec![0u32; (1 << top_bits) + 1];
    for x in v.iter() {
        starts[(x.key() >> top_shift) as usize + 1] += 1;
    }
    for h in 1..starts.len() {
        starts[h] += starts[h - 1];
    }
    // Filled in order first (fresh zero pages would fault in the scatter's order).
    let mut points: Vec<u64> = Vec::with_capacity(n);
    points.resize(n, 1);
    let mut owners: Vec<u32> = Vec::with_capacity(n);
    owners.resize(n, 1);
    let mut at = starts.clone();
    for &x in v.iter() {
        let h = (x.key() >> top_shift) as usize;
        let i = at[h] as usize;
        (points[i], owners[i]) = split(x);
        at[h] += 1;
    }
    drop(v);
    // Pass 2: each run, copied out, by its next `low_bits` bits back into its stretch.
    let low_bits = sort_log - top_bits;
    let low_shift = 64 - sort_log;
    let low_mask = (1u64 << low_bits) - 1;
    // The pairs' keys: the points' top bits sit at the top of a native point, and at bit
    // 31 of an MD5 one (`bits` 32).
    let point_shift = if bits == 64 { 0 } else { 32 };
    let bucket_of = |p: u64| (((p << point_shift) >> low_shift) & low_mask) as usize;
    // Index bucket b = sort bucket b * step: table[b] is where the sort bucket starts.
    let step_log = sort_log - log;
    let buckets = 1usize << log;
    let mut table: Vec<u32> = alloc::vec![0; buckets + 1];
    table[buckets] = n as u32;
    let mut ends = alloc::vec![0u32; 1usize << low_bits];
    let mut run: Vec<(u64, u32)> = Vec::new();
    for h in 0..1usize << top_bits {
        let (from, to) = (starts[h] as usize, starts[h + 1] as usize);
        let (ps, os) = (&mut points[from..to], &mut owners[from..to]);
        run.clear();
        run.extend(ps.iter().copied().zip(os.iter().copied()));
        ends.fill(0);
        for &(p, _) in &run {
            ends[bucket_of(p)] += 1;
        }
        // Counts to starts, the running sum in a register (a sum through memory, each
        // bucket's start read back from the one before, was a ninth of the build).
        let (mut fullest, mut sum) = (0, 0);
        for e in ends.iter_mut() {
            let count = *e;
            fullest = fullest.max(count);
            *e = sum;
            sum += count;
        }
        // ends[b] is where sort bucket b of this run starts (relative to `from`).
        let first_bucket = h << (low_bits - step_log);
        for (i, t) in table[first_bucket..first_bucket + (1 << (low_bits - step_log))]
            .iter_mut()
            .enumerate()
        {
            *t = (from + ends[i << step_log] as usize) as u32;
        }
        for &(p, o) in &run {
            let b = bucket_of(p);
            let i = ends[b] as usize;
            (ps[i], os[i]) = (p, o);
            ends[b] += 1;
        }
        if fullest <= 32 {
            insertion_sort_pairs(ps, os);
        } else {
            let mut start = 0;
            for &end in &ends {
                let end = end as usize;
                match end - start {
                    0 | 1 => {}
                    2..=16 => insertion_sort_pairs(&mut ps[start..end], &mut os[start..end]),
                    _ => {
                        run.clear();
                        run.extend(
                            ps[start..end]
                                .iter()
                                .copied()
                                .zip(os[start..end].iter().copied()),
                        );
                        run.sort_unstable();
                        for (i, (p, o)) in run.iter().enumerate() {
                            ps[start + i] = *p;
                            os[start + i] = *o;
                        }
                    }
                }
                start = end;
            }
        }
    }
    (points, owners, Some(table))
}

/// Sorts two parallel slices by (point, owner), for short runs out of place.
#[inline]
fn insertion_sort_pairs(points: &mut [u64], owners: &mut [u32]) {
    for i in 1..points.len() {
        let (p, o) = (points[i], owners[i]);
        let mut j = i;
        while j > 0 && (points[j - 1], owners[j - 1]) > (p, o) {
            points[j] = points[j - 1];
            owners[j] = owners[j - 1];
            j -= 1;
        }
        points[j] = p;
        owners[j] = o;
    }
}

/// Sorts a short slice.
#[inline]
fn insertion_sort<T: Copy + Ord>(s: &mut [T]) {
    for i in 1..s.len() {
        let x = s[i];
        let mut j = i;
        while j > 0 && s[j - 1] > x {
            s[j] = s[j - 1];
            j -= 1;
        }
        s[j] = x;
    }
}

/// Sorts `v` by `less`: the standard library's `sort_unstable_by`, or with `small-sort` a
/// heap sort (a few hundred bytes of WebAssembly instead of several kilobytes; fine for
/// the node name index it sorts).
pub(crate) fn sort_by_less<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    #[cfg(not(feature = "small-sort"))]
    v.sort_unstable_by(|a, b| {
        if less(a, b) {
            core::cmp::Ordering::Less
        } else if less(b, a) {
            core::cmp::Ordering::Greater
        } else {
            core::cmp::Ordering::Equal
        }
    });
    #[cfg(feature = "small-sort")]
    {
        let n = v.len();
        let sift = |v: &mut [T], mut i: usize, end: usize| loop {
            let mut c = 2 * i + 1;
            if c >= end {
                break;
            }
            if c + 1 < end && less(&v[c], &v[c + 1]) {
                c += 1;
            }
            if !less(&v[i], &v[c]) {
                break;
            }
            v.swap(i, c);
            i = c;
        };
        for i in (0..n / 2).rev() {
            sift(v, i, n);
        }
        for end in (1..n).rev() {
            v.swap(0, end);
            sift(v, 0, end);
        }
    }
}

/// An item sorted by a 64-bit key.
pub(crate) trait RadixKey: Copy + Send + Sync {
    /// An item of all zeros (a fresh array of them is the kernel's zero pages).
    const ZERO: Self;
    /// The key.
    #[cfg_attr(not(any(feature = "small-sort", test)), allow(dead_code))]
    fn key(&self) -> u64;
}

/// MD5 entries: the 32-bit point above, the node index below.
impl RadixKey for u64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn key(&self) -> u64 {
        *self
    }
}

/// Native entries: (point, node index), by point (and by index after the sort, which is
/// stable: a build pushes them in index order).
impl RadixKey for (u64, u32) {
    const ZERO: Self = (0, 0);
    #[inline(always)]
    fn key(&self) -> u64 {
        self.0
    }
}

/// A fleet ring's 64-bit entries: (point, order put, node index), by point then order.
impl RadixKey for (u64, u32, u32) {
    const ZERO: Self = (0, 0, 0);
    #[inline(always)]
    fn key(&self) -> u64 {
        self.0
    }
}

/// Sorts `v` by key, stable (equal keys keep their order): a byte at a time from the
/// lowest, skipping the bytes every key shares. Linear in the length (a build's millions
/// of points sort several times faster than by comparisons), with one scratch copy of
/// `v` (freed on return), and little code: one copy per item type.
#[cfg(any(feature = "small-sort", test))]
#[inline(never)]
pub(crate) fn radix_sort<T: RadixKey>(v: &mut Vec<T>) {
    let n = v.len();
    if n < 2 {
        return;
    }
    // counts[d][b]: how many keys have byte value b at byte d.
    let mut counts = [[0usize; 256]; 8];
    for x in v.iter() {
        let k = x.key();
        for (d, c) in counts.iter_mut().enumerate() {
            c[(k >> (8 * d)) as usize & 0xff] += 1;
        }
    }
    let first = v[0].key();
    let mut scratch: Vec<T> = Vec::new();
    for (d, c) in counts.iter_mut().enumerate() {
        if c[(first >> (8 * d)) as usize & 0xff] == n {
            continue; // every key has this byte
        }
        // Where each byte value's run starts.
        let mut start = 0;
        for m in c.iter_mut() {
            let count = *m;
            *m = start;
            start += count;
        }
        if scratch.is_empty() {
            scratch.extend_from_slice(v);
        }
        for x in v.iter() {
            let b = (x.key() >> (8 * d)) as usize & 0xff;
            scratch[c[b]] = *x;
            c[b] += 1;
        }
        core::mem::swap(v, &mut scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_a_stable_sort_does() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [0usize, 1, 2, 3, 17, 255, 256, 1000, 5000] {
            for spread in [u64::MAX, 0xffff_ffff, 0xff, 3, 0] {
                let keys: Vec<u64> = (0..n).map(|_| next() & spread).collect();
                let mut a: Vec<u64> = keys.clone();
                let mut want = a.clone();
                want.sort_unstable();
                let mut b = a.clone();
                radix_sort(&mut a);
                assert_eq!(a, want, "n {n} spread {spread:x}");
                bucket_sort(&mut b);
                assert_eq!(b, want, "bucket n {n} spread {spread:x}");
                // Pairs: by point, equal points in their order before (the index).
                let mut p: Vec<(u64, u32)> = keys
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (k, i as u32))
                    .collect();
                let mut want = p.clone();
                want.sort_by_key(|e| e.0);
                let mut q = p.clone();
                radix_sort(&mut p);
                assert_eq!(p, want, "n {n} spread {spread:x}");
                bucket_sort(&mut q);
                assert_eq!(q, want, "bucket n {n} spread {spread:x}");
                // Keys differing only in the high bytes.
                let mut h: Vec<u64> = keys.iter().map(|k| k << 40).collect();
                let mut want = h.clone();
                want.sort_unstable();
                let mut g = h.clone();
                radix_sort(&mut h);
                assert_eq!(h, want);
                bucket_sort(&mut g);
                assert_eq!(g, want);
            }
        }
    }

    #[test]
    fn sort_split_gives_sorted_pairs_and_their_index() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [64usize, 65, 100, 1000, 5000, 40_000] {
            // Spread keys, and keys bunched into a few index buckets (past the insertion
            // sort's limit).
            for spread in [u64::MAX, 0xffff_ffff_ffff, u64::MAX << 58] {
                let log = crate::ring::leaf::log_buckets(n, 64);
                // Native: 64-bit points with their owners.
                let wide: Vec<(u64, u32)> = (0..n).map(|i| (next() & spread, i as u32)).collect();
                let mut want = wide.clone();
                want.sort_unstable();
                let (points, owners, table) = sort_split(wide, |e| e, log, 64);
                let got: Vec<(u64, u32)> = points.iter().copied().zip(owners).collect();
                assert_eq!(got, want, "native n {n}");
                check_table(&points, table.as_deref(), log, 64);
                // MD5: 32-bit points above their owners in one u64.
                let log = crate::ring::leaf::log_buckets(n, 32);
                let entries: Vec<u64> = (0..n)
                    .map(|i| ((next() & spread) >> 32 << 32) | i as u64)
                    .collect();
                let mut want = entries.clone();
                want.sort_unstable();
                let (points, owners, table) = sort_split(entries, |e| (e >> 32, e as u32), log, 32);
                let got: Vec<u64> = points
                    .iter()
                    .zip(owners)
                    .map(|(p, o)| p << 32 | u64::from(o))
                    .collect();
                assert_eq!(got, want, "md5 n {n}");
                check_table(&points, table.as_deref(), log, 32);
            }
        }
    }

    /// The two-pass sort (from 4M items; here called on fewer), shared among the cores:
    /// the same order as a comparison sort, for spread keys, keys in a few runs and keys
    /// all in one.
    #[test]
    fn large_sorts_agree_with_a_comparison_sort() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [0, 1, 2, 1000, 200_000] {
            for spread in [u64::MAX, 0xffff_ffff, u64::MAX << 60 | 0xffff] {
                let mut keys: Vec<u64> = (0..n).map(|_| next() & spread).collect();
                let mut want = keys.clone();
                want.sort_unstable();
                bucket_sort_two_level(&mut keys);
                assert!(keys == want, "n {n} spread {spread:x}");
            }
            let mut pairs: Vec<(u64, u32)> =
                (0..n as u32).map(|i| (next() >> 40 << 40, i)).collect();
            let mut want = pairs.clone();
            want.sort_unstable();
            bucket_sort_two_level(&mut pairs);
            assert!(pairs == want, "n {n} pairs");
        }
    }

    /// `table[b]` is the first point in index bucket `b` (or past it), for every bucket.
    fn check_table(points: &[u64], table: Option<&[u32]>, log: u32, bits: u32) {
        let Some(table) = table else {
            return;
        };
        assert_eq!(table.len(), (1 << log) + 1);
        for (b, &start) in table.iter().enumerate() {
            let want = points.partition_point(|&p| (p >> (bits - log)) < b as u64);
            assert_eq!(start as usize, want, "bucket {b} of 2^{log}");
        }
    }
}
