//! [`Fill`]: a load under a lease, then its store (or its release): what happens after
//! `sc-get` or `warm-begin` grants a lease, in every runtime.

use alloc::string::ToString;
use alloc::vec::Vec;
use core::mem;

use super::counts::Counts;
use super::heartbeat::Heartbeat;
use super::settings::CacheSettings;
use super::step::{Failure, Fault, LoadFailure, LoadResult};
use crate::cache::call::Notify;
use crate::cache::check::check_value_len;
use crate::cache::reply::FillReply;
use crate::script::Call;
use crate::script::Value;

/// What became of a [`Fill`].
///
/// ```
/// use keyroute::cache::Stored;
/// assert_eq!(Stored::Stored(b"v".to_vec()).value(), Some(&b"v"[..]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored (or already stored under this lease): the value.
    Stored(Vec<u8>),
    /// Loaded, but Redis could not be reached to store it: the value, served anyway.
    Unstored(Vec<u8>),
    /// Loaded, but the lease was fenced (invalidated or taken over while it loaded): not
    /// stored; the value, for a caller that gives up asking again.
    Fenced(Vec<u8>),
    /// The loader failed (its failure cached for the negative TTL unless it was
    /// uncached), panicked, or returned a value that was refused.
    Failed(Failure),
}

impl Stored {
    /// The value loaded, if any.
    ///
    /// ```
    /// use keyroute::cache::{Failure, Stored};
    /// assert_eq!(Stored::Failed(Failure::Timeout).value(), None);
    /// ```
    pub fn value(&self) -> Option<&[u8]> {
        match self {
            Stored::Stored(v) | Stored::Unstored(v) | Stored::Fenced(v) => Some(v),
            Stored::Failed(_) => None,
        }
    }
}

/// What a [`Fill`] asks its executor to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FillStep<'a> {
    /// Run the loader, beating the [`Heartbeat`], and report with [`Fill::loaded`].
    Load,
    /// Run this script call (`sc-fill` or `sc-abandon`) and report with [`Fill::replied`].
    Run(Call<'a>),
    /// Finished: take the outcome with [`Fill::take_outcome`].
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Loading,
    Storing { value: Vec<u8>, load_ms: u64 },
    Abandoning { failure: LoadFailure, then: Failure },
    Done(Stored),
    Taken,
}

/// A lease's load and store, with no I/O: the executor runs the loader (beating the
/// [`heartbeat`](Self::heartbeat) while it runs), reports what it returned, runs the
/// `sc-fill` (or `sc-abandon`) call the fill asks for, and reports the reply.
///
/// * A value is stored only under the lease's fence (`sc-fill`); a fenced fill is
///   [`Stored::Fenced`], and one Redis could not take is [`Stored::Unstored`].
/// * A value over `max_value_len` is not stored: the lease is released with
///   `VALUE_TOO_LARGE` cached, and the fill fails with that input error.
/// * A failure releases the lease (`sc-abandon`) with the failure cached for the negative
///   TTL (0 ms when [uncached](LoadFailure::uncached)).
///
/// ```
/// use keyroute::cache::{CacheSettings, Fill, FillStep, LoadResult, Notify, Stored, Value};
/// let mut fill = Fill::new(b"kr:{c:t}:e:k".to_vec(), 7, &CacheSettings::DEFAULT, Notify::Publish);
/// assert_eq!(fill.step(), FillStep::Load);
/// fill.loaded(LoadResult::Value(b"[]".to_vec()), 120);
/// match fill.step() {
///     FillStep::Run(call) => assert_eq!(call.script.name(), "sc-fill"),
///     other => panic!("{other:?}"),
/// }
/// fill.replied(Ok(Value::Array(vec![Value::Int(1), Value::Int(3)])));
/// assert_eq!(fill.step(), FillStep::Done);
/// assert_eq!(fill.take_outcome(), Some(Stored::Stored(b"[]".to_vec())));
/// assert_eq!(fill.counts().backend_calls, 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    entry: Vec<u8>,
    fence: u64,
    settings: CacheSettings,
    notify: Notify,
    state: State,
    counts: Counts,
}

impl Fill {
    /// The fill of the lease `fence` on `entry`.
    ///
    /// ```
    /// use keyroute::cache::{Fill, Notify};
    /// let fill = Fill::new(b"e".to_vec(), 7, &Default::default(), Notify::Publish);
    /// assert_eq!(fill.fence(), 7);
    /// ```
    pub fn new(entry: Vec<u8>, fence: u64, settings: &CacheSettings, notify: Notify) -> Self {
        Fill {
            entry,
            fence,
            settings: *settings,
            notify,
            state: State::Loading,
            counts: Counts::default(),
        }
    }

    /// The lease's fence.
    ///
    /// ```
    /// let fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.fence(), 3);
    /// ```
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// The entry.
    ///
    /// ```
    /// let fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.entry(), b"e");
    /// ```
    pub fn entry(&self) -> &[u8] {
        &self.entry
    }

    /// The heartbeat to run while the loader runs.
    ///
    /// ```
    /// let fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.heartbeat().every_ms(), 666);
    /// ```
    pub fn heartbeat(&self) -> Heartbeat {
        Heartbeat::new(self.entry.clone(), self.fence, &self.settings)
    }

    /// What this fill did (loader runs, failures, fenced fills).
    ///
    /// ```
    /// let fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.counts(), Default::default());
    /// ```
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Reports what the loader returned, and how long it ran (in ms: the script keeps it
    /// as the XFetch estimate). Ignored unless the fill is waiting for its load.
    ///
    /// ```
    /// use keyroute::cache::{Fill, FillStep, LoadFailure, LoadResult};
    /// let mut fill = Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// fill.loaded(LoadResult::Failed(LoadFailure::new("E_CORE", "down")), 5);
    /// match fill.step() {
    ///     FillStep::Run(call) => assert_eq!(call.script.name(), "sc-abandon"),
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    pub fn loaded(&mut self, result: LoadResult, load_ms: u64) {
        if !matches!(self.state, State::Loading) {
            return;
        }
        self.counts.backend_calls += 1;
        self.state = match result {
            LoadResult::Value(value) => {
                match check_value_len(value.len(), self.settings.max_value_len) {
                    Ok(()) => State::Storing { value, load_ms },
                    Err(e) => State::Abandoning {
                        failure: LoadFailure::new(e.code().as_str(), &e.to_string()),
                        then: Failure::Input(e),
                    },
                }
            }
            LoadResult::Failed(failure) => {
                self.counts.backend_errors += 1;
                let cached = failure.cached;
                let mut failure = LoadFailure::new(&failure.code, &failure.message);
                failure.cached = cached;
                let then = Failure::Backend {
                    code: failure.code.clone().into_bytes(),
                    message: failure.message.clone().into_bytes(),
                    cached: false,
                };
                State::Abandoning { failure, then }
            }
            LoadResult::Refused { code, message } => State::Abandoning {
                failure: LoadFailure::new(&code, &message),
                then: Failure::Refused,
            },
            LoadResult::Panicked => {
                self.counts.backend_errors += 1;
                State::Abandoning {
                    failure: LoadFailure::new("LOADER_PANIC", "the loader panicked"),
                    then: Failure::Panicked,
                }
            }
        };
    }

    /// Whether the fill has ended (its outcome is ready, or was taken).
    ///
    /// ```
    /// let fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert!(!fill.is_done());
    /// ```
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_) | State::Taken)
    }

    /// The next thing to do.
    ///
    /// ```
    /// use keyroute::cache::{Fill, FillStep};
    /// let mut fill = Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.step(), FillStep::Load);
    /// ```
    pub fn step(&self) -> FillStep<'_> {
        let s = &self.settings;
        match &self.state {
            State::Loading => FillStep::Load,
            State::Storing { value, load_ms } => FillStep::Run(Call::fill(
                &self.entry,
                self.fence,
                value,
                s.soft_ttl_ms,
                s.hard_ttl_ms,
                *load_ms,
                self.notify,
                None,
            )),
            State::Abandoning { failure, .. } => FillStep::Run(Call::abandon(
                &self.entry,
                self.fence,
                failure.code.as_bytes(),
                failure.message.as_bytes(),
                if failure.cached { s.neg_ttl_ms } else { 0 },
                self.notify,
                None,
            )),
            State::Done(_) | State::Taken => FillStep::Done,
        }
    }

    /// Reports the reply of the call [`step`](Self::step) asked for. An abandon's reply
    /// changes nothing (if Redis is unreachable the lease simply expires).
    ///
    /// ```
    /// use keyroute::cache::{Fault, Fill, LoadResult, Stored};
    /// let mut fill = Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// fill.loaded(LoadResult::Value(b"v".to_vec()), 5);
    /// fill.replied(Err(Fault::Connection));
    /// assert_eq!(fill.take_outcome(), Some(Stored::Unstored(b"v".to_vec())));
    /// ```
    pub fn replied(&mut self, reply: Result<Value, Fault>) {
        self.state = match mem::replace(&mut self.state, State::Taken) {
            State::Storing { value, .. } => match reply.map(FillReply::decode) {
                Ok(Ok(FillReply::Stored { .. } | FillReply::Duplicate { .. })) => {
                    State::Done(Stored::Stored(value))
                }
                Ok(Ok(FillReply::Fenced { .. })) => {
                    self.counts.fenced_fills += 1;
                    State::Done(Stored::Fenced(value))
                }
                Ok(Err(_)) | Err(_) => State::Done(Stored::Unstored(value)),
            },
            State::Abandoning { then, .. } => State::Done(Stored::Failed(then)),
            other => other,
        };
    }

    /// The outcome, once [`step`](Self::step) says [`FillStep::Done`] (`None` before, and
    /// after it was taken).
    ///
    /// ```
    /// let mut fill = keyroute::cache::Fill::new(b"e".to_vec(), 3, &Default::default(), Default::default());
    /// assert_eq!(fill.take_outcome(), None);
    /// ```
    pub fn take_outcome(&mut self) -> Option<Stored> {
        match mem::replace(&mut self.state, State::Taken) {
            State::Done(stored) => Some(stored),
            other => {
                self.state = other;
                None
            }
        }
    }
}
