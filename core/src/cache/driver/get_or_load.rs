//! [`GetOrLoad`]: one smart-cache read, from the first `HMGET` to the value, as a state
//! machine with no I/O.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem;

use super::counts::Counts;
use super::fill::{Fill, FillStep, Stored};
use super::heartbeat::Heartbeat;
use super::settings::CacheSettings;
use super::step::{Failure, Fault, LoadResult};
use crate::cache::call::Notify;
use crate::cache::error::InputError;
use crate::cache::peek::Peek;
use crate::cache::poll::{PollSchedule, MAX_FENCED_LOADS};
use crate::cache::reply::{GetReply, Guarded};
use crate::cache::session_id::SessionId;
use crate::script::Call;
use crate::script::Value;
use crate::util::ln;

/// What a [`GetOrLoad`] asks its executor to do next. Carry it out, report the result
/// with the method each variant names, then ask [`GetOrLoad::step`] again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// Send `HMGET key` followed by [`PEEK_FIELDS`](crate::cache::PEEK_FIELDS); report with
    /// [`GetOrLoad::peeked`] (`None` when it failed).
    Peek {
        /// The entry's key.
        key: &'a [u8],
    },
    /// Run this script call; report with [`GetOrLoad::replied`].
    Run(Call<'a>),
    /// Subscribe to the client's wake-up channel (`SUBSCRIBE`, or `SSUBSCRIBE` on the node
    /// that owns the entry's slot); report with [`GetOrLoad::subscribed`]. A subscription
    /// that could not be made is reported the same way: waits then only poll.
    Subscribe,
    /// Wait for a wake-up naming the entry, at most `ms`; report with
    /// [`GetOrLoad::woken`].
    Wait {
        /// The longest wait.
        ms: u64,
    },
    /// Sleep `ms`; report with [`GetOrLoad::slept`].
    Sleep {
        /// How long.
        ms: u64,
    },
    /// Run the loader under the lease, beating `heartbeat` while it runs; report with
    /// [`GetOrLoad::loaded`]. When `stale` is given this caller refreshes a stale value:
    /// serve it at once to the callers of this process waiting on this read.
    Load {
        /// The lease's heartbeat.
        heartbeat: Heartbeat,
        /// The value being refreshed.
        stale: Option<&'a [u8]>,
    },
    /// Finished: take the outcome with [`GetOrLoad::outcome`].
    Done,
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    /// Check the deadline, draw XFetch, then peek or ask `sc-get`.
    Ask,
    /// `sc-get` with the draw already made (after a peek that was not a hit).
    Get,
    Peeking,
    Getting,
    /// A wait reply: subscribe first, or wait.
    Waiting {
        remaining_ms: u64,
    },
    Subscribing,
    Woken,
    /// `sc-get` failed.
    Failed(Fault),
    /// A connection error while waiting: sleep, then ask again.
    Retrying,
    Sleeping,
    /// A fenced fill: pause, then ask again.
    Backoff,
    Filling {
        fill: Box<Fill>,
        stale: Option<Vec<u8>>,
    },
    Done(Result<Vec<u8>, Failure>),
    Taken,
}

/// One smart-cache read with no I/O (the sans-I/O style of quinn-proto and h11): the
/// value of an entry from Redis if it is there, else from the loader, called by one
/// caller across every instance while the others wait for its wake-up. Every runtime's
/// `get_or_load` (sync Rust, JavaScript, and those to come) only carries out its steps.
///
/// The rules it holds, once for all of them:
/// * a warm hit is served from one `HMGET` decided on this host's clock when
///   `fast_hits` ([`Peek`]); anything else asks `sc-get` on the server's clock;
/// * a waiter subscribes first, then asks again at once (a fill between the two is seen
///   by the second ask, one after it wakes the waiter), then waits for a wake-up or the
///   [`PollSchedule`], never past the lease or the deadline;
/// * a connection error while waiting is retried until the deadline (Redis may come
///   back), then reported; any other error is reported at once;
/// * a lease runs the loader under its fence ([`Fill`]); a fenced fill is asked again
///   after a pause (10 ms, doubling), at most [`MAX_FENCED_LOADS`] loads in all, and the
///   last fenced value is returned unstored;
/// * a refresh serves the stale value to this process's other callers at once, and the
///   stale value is the answer when the refresh fails or is fenced.
///
/// Times: `now_ms` is any monotonic clock in ms (the deadline is on the same clock);
/// `wall_ms` (for [`peeked`](Self::peeked)) is Unix time in ms; `u` is a uniform random
/// number in `(0, 1]` for the XFetch draw.
///
/// ```
/// use keyroute::cache::{CacheSettings, GetOrLoad, GetOrLoadStep as Step, LoadResult, Notify, Value};
/// let settings = CacheSettings { fast_hits: false, ..CacheSettings::DEFAULT };
/// let mut read = GetOrLoad::new(b"kr:{c:t}:e:k".to_vec(), b"front-1", &settings, Notify::Publish, 0, 5000);
/// match read.step(1, 0.5) {
///     Step::Run(call) => assert_eq!(call.script.name(), "sc-get"),
///     other => panic!("{other:?}"),
/// }
/// // Redis grants this caller the lease (fence 7): load.
/// read.replied(Ok(Value::Array(vec![Value::Int(4), Value::Int(7), Value::Int(0)])));
/// assert!(matches!(read.step(2, 0.5), Step::Load { stale: None, .. }));
/// read.loaded(LoadResult::Value(b"[]".to_vec()), 100);
/// match read.step(102, 0.5) {
///     Step::Run(call) => assert_eq!(call.script.name(), "sc-fill"),
///     other => panic!("{other:?}"),
/// }
/// read.replied(Ok(Value::Array(vec![Value::Int(1), Value::Int(1)])));
/// assert_eq!(read.step(103, 0.5), Step::Done);
/// assert_eq!(read.outcome(), Some(Ok(b"[]".to_vec())));
/// assert_eq!((read.counts().leases, read.counts().backend_calls), (1, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GetOrLoad {
    entry: Vec<u8>,
    owner: Vec<u8>,
    settings: CacheSettings,
    notify: Notify,
    deadline_ms: u64,
    state: State,
    xfetch_e: f64,
    peeked: bool,
    subscribed: bool,
    /// A connection error since the last reply: the answer if the deadline passes.
    io_failed: bool,
    poll: PollSchedule,
    backoff: PollSchedule,
    fenced: u32,
    counts: Counts,
    /// The session the first `sc-get` runs under (`sess-guard`), until it has, and the
    /// builder of that guarded call.
    session: Option<(SessionId, Guard)>,
}

/// Builds a call under a session: [`Call::in_session`], held as a pointer set by
/// [`GetOrLoad::in_session`], so that a runtime that never reads under a session (the
/// JavaScript .wasm) does not link `sess-guard`, whose text inlines ten scripts.
type Guard = for<'a> fn(&'a SessionId, Call<'a>, Option<u64>) -> Result<Call<'a>, InputError>;

fn guarded<'a>(
    sid: &'a SessionId,
    call: Call<'a>,
    now: Option<u64>,
) -> Result<Call<'a>, InputError> {
    Call::in_session(sid, call, now)
}

impl GetOrLoad {
    /// A read of `entry` (the key [`ClientKeys::entry`](crate::cache::ClientKeys::entry)
    /// names) by `owner` (this process's name in leases), ending at `deadline_ms` on the
    /// `now_ms` clock. `notify` is how the store wakes waiters.
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, GetOrLoadStep as Step, Notify};
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Notify::Publish, 0, 10);
    /// assert_eq!(read.step(0, 1.0), Step::Peek { key: b"e" });
    /// ```
    pub fn new(
        entry: Vec<u8>,
        owner: &[u8],
        settings: &CacheSettings,
        notify: Notify,
        now_ms: u64,
        deadline_ms: u64,
    ) -> Self {
        let _ = now_ms;
        GetOrLoad {
            entry,
            owner: owner.to_vec(),
            settings: *settings,
            notify,
            deadline_ms,
            state: State::Ask,
            xfetch_e: 0.0,
            peeked: !settings.fast_hits,
            subscribed: false,
            io_failed: false,
            poll: PollSchedule::new(),
            backoff: PollSchedule::new(),
            fenced: 0,
            counts: Counts::default(),
            session: None,
        }
    }

    /// The same read under the session `sid`: its first `sc-get` runs inside
    /// [`Call::in_session`] (no warm-hit peek first), so the session is checked and slid in
    /// the same atomic call as the read; when it is not live the read ends at once with
    /// [`Failure::SessionExpired`] and nothing is read, leased or loaded. A session of
    /// another client than the entry's ends it with [`Failure::Input`]
    /// (`SESSION_CLIENT_MISMATCH`) before anything is sent.
    ///
    /// ```
    /// use keyroute::cache::{ClientKeys, Failure, GetOrLoad, GetOrLoadStep as Step, SessionId, TokenKey, Value};
    /// let keys = ClientKeys::new(b"c1", &TokenKey::DEFAULT)?;
    /// let sid = SessionId::new(keys.token(), [1; 16]);
    /// let mut read = GetOrLoad::new(keys.entry(b"cards")?, b"me", &Default::default(), Default::default(), 0, 5000)
    ///     .in_session(sid);
    /// match read.step(1, 0.5) {
    ///     Step::Run(call) => assert_eq!((call.script.name(), &call.args[2][..]), ("sess-guard", &b"sc-get"[..])),
    ///     other => panic!("{other:?}"),
    /// }
    /// read.replied(Ok(Value::Array(vec![Value::Int(0)]))); // the session expired
    /// assert_eq!(read.step(2, 0.5), Step::Done);
    /// assert_eq!(read.outcome(), Some(Err(Failure::SessionExpired)));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    #[must_use]
    pub fn in_session(mut self, sid: SessionId) -> Self {
        self.session = Some((sid, guarded));
        self.peeked = true;
        self
    }

    /// The entry read.
    ///
    /// ```
    /// let read = keyroute::cache::GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// assert_eq!(read.entry(), b"e");
    /// ```
    pub fn entry(&self) -> &[u8] {
        &self.entry
    }

    /// What this read did so far (its loads included).
    ///
    /// ```
    /// let read = keyroute::cache::GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// assert_eq!(read.counts().hits, 0);
    /// ```
    pub fn counts(&self) -> Counts {
        let mut counts = self.counts;
        if let State::Filling { fill, .. } = &self.state {
            counts.add(&fill.counts());
        }
        counts
    }

    fn remaining(&self, now_ms: u64) -> u64 {
        self.deadline_ms.saturating_sub(now_ms)
    }

    fn finish(&mut self, outcome: Result<Vec<u8>, Failure>) -> Step<'_> {
        self.state = State::Done(outcome);
        Step::Done
    }

    /// The next thing to do, at `now_ms`, with `u` a fresh uniform random number in
    /// `(0, 1]` (used when the step asks Redis: the XFetch draw `β·(−ln u)`). Calling it
    /// again without reporting anything asks for the same thing again, but for a new
    /// `sc-get` draw.
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, GetOrLoadStep as Step, Failure};
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// assert_eq!(read.step(10, 1.0), Step::Done); // the deadline passed
    /// assert_eq!(read.outcome(), Some(Err(Failure::Timeout)));
    /// ```
    pub fn step(&mut self, now_ms: u64, u: f64) -> Step<'_> {
        loop {
            match &self.state {
                State::Ask => {
                    if now_ms >= self.deadline_ms {
                        let failure = if self.io_failed {
                            Failure::Io
                        } else {
                            Failure::Timeout
                        };
                        return self.finish(Err(failure));
                    }
                    self.xfetch_e = self.draw(u);
                    if !self.peeked {
                        self.peeked = true;
                        self.state = State::Peeking;
                        return Step::Peek { key: &self.entry };
                    }
                    self.state = State::Get;
                }
                State::Get | State::Getting => {
                    self.state = State::Getting;
                    let s = &self.settings;
                    let get = Call::get(
                        &self.entry,
                        s.lease_ms,
                        &self.owner,
                        self.xfetch_e,
                        s.serve_stale,
                        None,
                    );
                    let Some((sid, guard)) = &self.session else {
                        return Step::Run(get);
                    };
                    match guard(sid, get, None) {
                        Ok(call) => return Step::Run(call),
                        Err(e) => {
                            self.state = State::Done(Err(Failure::Input(e)));
                            return Step::Done;
                        }
                    }
                }
                State::Peeking => return Step::Peek { key: &self.entry },
                State::Waiting { remaining_ms } => {
                    if !self.subscribed {
                        self.state = State::Subscribing;
                        return Step::Subscribe;
                    }
                    let ms = self.poll.next_wait(*remaining_ms, self.remaining(now_ms));
                    self.state = State::Woken;
                    return Step::Wait { ms };
                }
                State::Subscribing => return Step::Subscribe,
                State::Woken => {
                    // Asked again without a report: wait the rest of the step.
                    let ms = self.poll.next_wait(u64::MAX, self.remaining(now_ms));
                    return Step::Wait { ms };
                }
                State::Failed(fault) => {
                    let fault = *fault;
                    if fault == Fault::Timeout && now_ms >= self.deadline_ms {
                        // Cut at the caller's deadline: the caller's timeout.
                        return self.finish(Err(Failure::Timeout));
                    }
                    if fault != Fault::Other && self.subscribed {
                        // Waiting already: Redis may come back before the deadline.
                        self.io_failed = true;
                        self.state = State::Retrying;
                    } else {
                        return self.finish(Err(Failure::Io));
                    }
                }
                State::Retrying => {
                    let ms = self.poll.next_wait(u64::MAX, self.remaining(now_ms));
                    self.state = State::Sleeping;
                    return Step::Sleep { ms };
                }
                State::Backoff => {
                    let ms = self.backoff.next_wait(u64::MAX, self.remaining(now_ms));
                    self.state = State::Sleeping;
                    return Step::Sleep { ms };
                }
                State::Sleeping => return Step::Sleep { ms: 0 },
                State::Filling { fill, .. } if fill.is_done() => self.filled(),
                State::Filling { .. } => return self.fill_step(),
                State::Done(_) | State::Taken => return Step::Done,
            }
        }
    }

    /// The step of the fill under way (not done).
    fn fill_step(&mut self) -> Step<'_> {
        let State::Filling { fill, stale } = &self.state else {
            return Step::Done;
        };
        match fill.step() {
            FillStep::Load => Step::Load {
                heartbeat: fill.heartbeat(),
                stale: stale.as_deref(),
            },
            FillStep::Run(call) => Step::Run(call),
            FillStep::Done => Step::Done,
        }
    }

    /// `β·(−ln u)`, 0 when β is 0 or `u` is not in `(0, 1]`.
    fn draw(&self, u: f64) -> f64 {
        let beta = self.settings.xfetch_beta;
        if beta > 0.0 && u > 0.0 && u <= 1.0 {
            beta * -ln(u)
        } else {
            0.0
        }
    }

    /// The fill ended: decide what the read does next.
    fn filled(&mut self) {
        let State::Filling { mut fill, stale } = mem::replace(&mut self.state, State::Taken) else {
            return;
        };
        self.counts.add(&fill.counts());
        let stored = fill.take_outcome().unwrap_or(Stored::Failed(Failure::Io));
        self.state = match (stored, stale) {
            // A panic goes on to the caller, refresh or not.
            (Stored::Failed(Failure::Panicked), _) => State::Done(Err(Failure::Panicked)),
            (Stored::Stored(v) | Stored::Unstored(v), _) => State::Done(Ok(v)),
            // Stale if error: the failure is cached for the others.
            (Stored::Fenced(_) | Stored::Failed(_), Some(stale)) => State::Done(Ok(stale)),
            (Stored::Failed(f), None) => State::Done(Err(f)),
            (Stored::Fenced(v), None) => {
                self.fenced += 1;
                if self.fenced >= MAX_FENCED_LOADS {
                    // Fenced every time: the last value, unstored.
                    State::Done(Ok(v))
                } else {
                    State::Backoff
                }
            }
        };
    }

    /// Reports the `HMGET` of [`Step::Peek`]: its reply, or `None` when it failed (any
    /// error: `sc-get` decides, and reports errors), with the Unix time `wall_ms`.
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, GetOrLoadStep as Step, Value};
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// read.step(0, 1.0);
    /// read.peeked(None, 1_700_000_000_000);
    /// assert!(matches!(read.step(1, 1.0), Step::Run(_)));
    /// ```
    pub fn peeked(&mut self, reply: Option<Value>, wall_ms: u64) {
        if !matches!(self.state, State::Peeking) {
            return;
        }
        if let Some(reply) = reply {
            if let Ok(Peek::Hit { value, .. }) = Peek::decode(reply, wall_ms, self.xfetch_e) {
                self.counts.hits += 1;
                self.state = State::Done(Ok(value));
                return;
            }
        }
        self.state = State::Get;
    }

    /// Reports the reply of a [`Step::Run`] call, or how it failed.
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, GetOrLoadStep as Step, Fault, Failure};
    /// let s = keyroute::cache::CacheSettings { fast_hits: false, ..Default::default() };
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &s, Default::default(), 0, 10);
    /// read.step(0, 1.0);
    /// read.replied(Err(Fault::Other));
    /// assert_eq!(read.step(1, 1.0), Step::Done);
    /// assert_eq!(read.outcome(), Some(Err(Failure::Io)));
    /// ```
    pub fn replied(&mut self, reply: Result<Value, Fault>) {
        match &mut self.state {
            State::Getting => self.got(reply),
            State::Filling { fill, .. } => fill.replied(reply),
            _ => {}
        }
    }

    fn got(&mut self, reply: Result<Value, Fault>) {
        let value = match reply {
            Ok(value) => value,
            Err(fault) => {
                // Decided by the next step, which knows the time.
                self.state = State::Failed(fault);
                return;
            }
        };
        self.io_failed = false;
        let value = if self.session.take().is_some() {
            match Guarded::decode(value) {
                Ok(Guarded::Live { reply, .. }) => reply,
                Ok(Guarded::Expired) => {
                    self.state = State::Done(Err(Failure::SessionExpired));
                    return;
                }
                Err(e) => {
                    self.state = State::Done(Err(Failure::Reply(e)));
                    return;
                }
            }
        } else {
            value
        };
        self.state = match GetReply::decode(value) {
            Err(e) => State::Done(Err(Failure::Reply(e))),
            Ok(GetReply::Hit { value, .. } | GetReply::Stale { value, .. }) => {
                self.counts.hits += 1;
                State::Done(Ok(value))
            }
            Ok(GetReply::Error { code, message, .. }) => {
                self.counts.cached_errors += 1;
                State::Done(Err(Failure::Backend {
                    code,
                    message,
                    cached: true,
                }))
            }
            Ok(GetReply::Refresh {
                value,
                fence,
                takeover,
                ..
            }) => {
                self.counts.refreshes += 1;
                self.count_lease(takeover);
                State::Filling {
                    fill: Box::new(Fill::new(
                        self.entry.clone(),
                        fence,
                        &self.settings,
                        self.notify,
                    )),
                    stale: Some(value),
                }
            }
            Ok(GetReply::Lease { fence, takeover }) => {
                self.count_lease(takeover);
                State::Filling {
                    fill: Box::new(Fill::new(
                        self.entry.clone(),
                        fence,
                        &self.settings,
                        self.notify,
                    )),
                    stale: None,
                }
            }
            Ok(GetReply::Wait { remaining_ms, .. }) => State::Waiting { remaining_ms },
        };
    }

    fn count_lease(&mut self, takeover: bool) {
        self.counts.leases += 1;
        if takeover {
            self.counts.takeovers += 1;
        }
    }

    /// Reports a [`Step::Subscribe`] done (or failed: waits then only poll).
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, GetOrLoadStep as Step, Value};
    /// let s = keyroute::cache::CacheSettings { fast_hits: false, ..Default::default() };
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &s, Default::default(), 0, 1000);
    /// read.step(0, 1.0);
    /// read.replied(Ok(Value::Array(vec![Value::Int(5), Value::Int(900), Value::Int(3)])));
    /// assert_eq!(read.step(1, 1.0), Step::Subscribe);
    /// read.subscribed();
    /// assert!(matches!(read.step(2, 1.0), Step::Run(_))); // ask again at once
    /// ```
    pub fn subscribed(&mut self) {
        if matches!(self.state, State::Subscribing) {
            self.subscribed = true;
            self.counts.waits += 1;
            self.state = State::Ask;
        }
    }

    /// Reports the end of a [`Step::Wait`]: whether a wake-up for the entry came (the
    /// poll schedule then starts again from its first step).
    ///
    /// ```
    /// use keyroute::cache::GetOrLoad;
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// read.woken(true); // ignored: nothing was waiting
    /// ```
    pub fn woken(&mut self, woken: bool) {
        if matches!(self.state, State::Woken) {
            if woken {
                self.poll.reset();
            }
            self.state = State::Ask;
        }
    }

    /// Reports the end of a [`Step::Sleep`].
    ///
    /// ```
    /// let mut read = keyroute::cache::GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// read.slept(); // ignored: nothing was sleeping
    /// ```
    pub fn slept(&mut self) {
        if matches!(self.state, State::Sleeping) {
            self.state = State::Ask;
        }
    }

    /// Reports what the loader of a [`Step::Load`] returned, and how long it ran in ms.
    ///
    /// ```
    /// use keyroute::cache::{GetOrLoad, LoadResult};
    /// let mut read = GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// read.loaded(LoadResult::Value(vec![]), 1); // ignored: nothing was loading
    /// ```
    pub fn loaded(&mut self, result: LoadResult, load_ms: u64) {
        if let State::Filling { fill, .. } = &mut self.state {
            fill.loaded(result, load_ms);
        }
    }

    /// The outcome, once [`step`](Self::step) says [`Step::Done`]: the value, or why there
    /// is none (`None` before, and after it was taken).
    ///
    /// ```
    /// let mut read = keyroute::cache::GetOrLoad::new(b"e".to_vec(), b"me", &Default::default(), Default::default(), 0, 10);
    /// assert_eq!(read.outcome(), None);
    /// ```
    pub fn outcome(&mut self) -> Option<Result<Vec<u8>, Failure>> {
        match mem::replace(&mut self.state, State::Taken) {
            State::Done(outcome) => Some(outcome),
            other => {
                self.state = other;
                None
            }
        }
    }
}
