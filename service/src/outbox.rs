//! [`Outbox`]: the replies waiting for a client that does not read them, bounded in
//! bytes (`--client-buffer-bytes` per client, `--client-buffers-total-bytes` in all).
//!
//! ZeroMQ queues replies per peer by count (`ZMQ_SNDHWM`), whatever their size: with the
//! old 100,000-message mark, one socket that never read held a thousand 1 MiB replies
//! (1 GB) for about 60 KB of requests. The client socket now has a small mark
//! ([`CLIENT_SNDHWM`]) and `ZMQ_ROUTER_MANDATORY`, so a send to a full peer fails with
//! `EAGAIN` instead of growing; the reply then waits here, in order, and is retried with
//! a backoff. Past the bounds a reply is dropped and counted
//! (`keyroute_serve_replies_dropped_total{reason="client_buffer_full"}`); a peer that is
//! gone drops what waited for it (`reason="client_gone"`).
//!
//! What one client can hold is therefore at most `--client-buffer-bytes` here, plus
//! [`CLIENT_SNDHWM`] replies inside ZeroMQ, plus the kernel's socket buffer.
//!
//! This file has no ZeroMQ in it: the broker passes a `send` function.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The client socket's `ZMQ_SNDHWM`: the replies ZeroMQ itself queues for one peer.
pub(crate) const CLIENT_SNDHWM: i32 = 16;
/// Counted per frame on top of its bytes (the `Vec` and ZeroMQ's message header).
const FRAME_OVERHEAD: usize = 32;
/// The first retry of a peer that was full, doubled while it stays full.
const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// The longest wait between retries of a peer that stays full.
const MAX_BACKOFF: Duration = Duration::from_millis(64);
/// Retries at once after a peer took something, before backing off: ZeroMQ's I/O thread
/// drains a pipe in microseconds, far less than the 1 ms a poll can wait (backing off at
/// the first refusal held a pipelining client to 10,000 replies/s). The extra turns
/// are bounded by what the peer reads.
const SPINS: u32 = 64;

/// What a send to one peer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// ZeroMQ took it.
    Taken,
    /// The peer's queue is full (`EAGAIN`): try again later.
    Full,
    /// The peer is gone (`EHOSTUNREACH`) or the send failed otherwise.
    Gone,
}

/// What [`Outbox::flush`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flushed {
    /// Replies handed to ZeroMQ.
    pub sent: u64,
    /// Replies dropped because their peer is gone.
    pub gone: u64,
}

struct Backlog {
    replies: VecDeque<(Vec<Vec<u8>>, usize)>,
    bytes: usize,
    next_try: Instant,
    backoff: Duration,
    spins: u32,
}

/// The replies waiting for peers whose ZeroMQ queue is full, by peer identity (the
/// tests below show its rules).
pub(crate) struct Outbox {
    per_client: usize,
    total_max: usize,
    total: usize,
    peers: HashMap<Vec<Vec<u8>>, Backlog>,
}

/// The bytes a reply is counted for.
pub(crate) fn cost(identity: &[Vec<u8>], frames: &[Vec<u8>]) -> usize {
    identity
        .iter()
        .chain(frames)
        .map(|f| f.len() + FRAME_OVERHEAD)
        .sum()
}

impl Outbox {
    /// An empty outbox: at most `per_client` bytes for one peer, `total_max` in all.
    pub(crate) fn new(per_client: usize, total_max: usize) -> Outbox {
        Outbox {
            per_client,
            total_max,
            total: 0,
            peers: HashMap::new(),
        }
    }

    /// Whether replies already wait for this peer (a new one must go behind them).
    pub(crate) fn holds(&self, identity: &[Vec<u8>]) -> bool {
        self.peers.contains_key(identity)
    }

    /// Bytes waiting, in all.
    pub(crate) fn bytes(&self) -> usize {
        self.total
    }

    /// Peers with replies waiting.
    pub(crate) fn peers(&self) -> usize {
        self.peers.len()
    }

    /// Queues a reply behind the others of its peer. `false`: it did not fit (the peer's
    /// or the total bound) and was dropped; what waited before stays.
    pub(crate) fn queue(
        &mut self,
        identity: &[Vec<u8>],
        frames: Vec<Vec<u8>>,
        now: Instant,
    ) -> bool {
        let n = cost(identity, &frames);
        let held = self.peers.get(identity).map_or(0, |b| b.bytes);
        if held.saturating_add(n) > self.per_client || self.total.saturating_add(n) > self.total_max
        {
            return false;
        }
        let b = self
            .peers
            .entry(identity.to_vec())
            .or_insert_with(|| Backlog {
                replies: VecDeque::new(),
                bytes: 0,
                next_try: now,
                backoff: Duration::ZERO,
                spins: SPINS,
            });
        b.replies.push_back((frames, n));
        b.bytes += n;
        self.total += n;
        true
    }

    /// When the next peer is due for a retry.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.peers.values().map(|b| b.next_try).min()
    }

    /// Retries every peer that is due: its replies in order until one does not go. A peer
    /// is due at once, and again at once after it took something; one that stays full
    /// 64 turns backs off (1 ms, doubling up to 64 ms); a gone one loses what waited.
    pub(crate) fn flush(
        &mut self,
        now: Instant,
        mut send: impl FnMut(&[Vec<u8>], &[Vec<u8>]) -> Sent,
    ) -> Flushed {
        let mut done = Flushed::default();
        let mut total = self.total;
        self.peers.retain(|identity, b| {
            if b.next_try > now {
                return true;
            }
            let mut progressed = false;
            while let Some((frames, n)) = b.replies.front() {
                match send(identity, frames) {
                    Sent::Taken => {
                        b.bytes -= n;
                        total -= n;
                        b.replies.pop_front();
                        done.sent += 1;
                        progressed = true;
                    }
                    Sent::Full => break,
                    Sent::Gone => {
                        done.gone += b.replies.len() as u64;
                        total -= b.bytes;
                        return false;
                    }
                }
            }
            if b.replies.is_empty() {
                return false;
            }
            // A peer that took something is tried again at once, a few times (its reader
            // is draining); one that took nothing since waits, longer each time.
            if progressed {
                b.spins = SPINS;
                b.backoff = Duration::ZERO;
            } else if b.spins > 0 {
                b.spins -= 1;
            } else {
                b.backoff = (b.backoff * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF);
            }
            b.next_try = now + b.backoff;
            true
        });
        self.total = total;
        done
    }

    /// Drops every reply still waiting (the service stops): how many there were.
    pub(crate) fn drop_all(&mut self) -> u64 {
        let n = self.peers.values().map(|b| b.replies.len() as u64).sum();
        self.peers.clear();
        self.total = 0;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Vec<Vec<u8>> {
        vec![s.as_bytes().to_vec()]
    }

    #[test]
    fn bounds_per_peer_and_in_all() {
        let now = Instant::now();
        let one = cost(&id("a"), &[vec![0; 100]]);
        let mut o = Outbox::new(3 * one, 5 * one);
        for _ in 0..3 {
            assert!(o.queue(&id("a"), vec![vec![0; 100]], now));
        }
        assert!(
            !o.queue(&id("a"), vec![vec![0; 100]], now),
            "past the peer's bound"
        );
        assert!(o.queue(&id("b"), vec![vec![0; 100]], now));
        assert!(o.queue(&id("b"), vec![vec![0; 100]], now));
        assert!(
            !o.queue(&id("c"), vec![vec![0; 100]], now),
            "past the total bound"
        );
        assert_eq!((o.bytes(), o.peers()), (5 * one, 2));
    }

    #[test]
    fn flush_keeps_order_backs_off_and_forgets_gone_peers() {
        let t0 = Instant::now();
        let mut o = Outbox::new(1 << 20, 1 << 20);
        for i in 0..5u8 {
            assert!(o.queue(&id("a"), vec![vec![i]], t0));
            assert!(o.queue(&id("gone"), vec![vec![i]], t0));
        }
        // Due at once. Two go, then the peer is full again; the gone peer loses its five.
        let mut got = Vec::new();
        let t1 = t0;
        let f = o.flush(t1, |peer, frames| {
            if peer == id("gone").as_slice() {
                return Sent::Gone;
            }
            if got.len() == 2 {
                return Sent::Full;
            }
            got.push(frames[0][0]);
            Sent::Taken
        });
        assert_eq!(f, Flushed { sent: 2, gone: 5 });
        assert_eq!(got, [0, 1]);
        assert_eq!(o.peers(), 1);
        assert_eq!(o.bytes(), 3 * cost(&id("a"), &[vec![0]]));
        // It took something: due again at once, for 64 refusals. Then it backs off: not
        // tried before it is due, and the backoff doubles.
        let t2 = o.next_due().unwrap();
        assert_eq!(t2, t1);
        for _ in 0..SPINS {
            o.flush(t2, |_, _| Sent::Full);
            assert_eq!(o.next_due().unwrap(), t2);
        }
        o.flush(t2, |_, _| Sent::Full);
        assert_eq!(o.next_due().unwrap(), t2 + FIRST_BACKOFF);
        let f = o.flush(t2, |_, _| panic!("tried before it was due"));
        assert_eq!(f, Flushed::default());
        let t3 = o.next_due().unwrap();
        o.flush(t3, |_, _| Sent::Full);
        assert_eq!(o.next_due().unwrap(), t3 + 2 * FIRST_BACKOFF);
        // Then it reads: the rest goes, in order, and the peer is forgotten.
        let t4 = o.next_due().unwrap();
        o.flush(t4, |_, frames| {
            got.push(frames[0][0]);
            Sent::Taken
        });
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert_eq!((o.bytes(), o.peers(), o.next_due()), (0, 0, None));
    }

    #[test]
    fn backoff_is_capped() {
        let mut now = Instant::now();
        let mut o = Outbox::new(1 << 20, 1 << 20);
        assert!(o.queue(&id("a"), vec![vec![1]], now));
        for _ in 0..SPINS + 20 {
            now = o.next_due().unwrap();
            o.flush(now, |_, _| Sent::Full);
        }
        assert_eq!(o.next_due().unwrap() - now, MAX_BACKOFF);
    }
}
