//! The smart cache's orchestration as state machines with no I/O (the sans-I/O style of
//! quinn-proto and h11): the rules of a read, a load and a warm-up are written once, here,
//! and every runtime (sync Rust in `keyroute-redis`, JavaScript over node-redis, and those
//! to come) only carries out the steps they ask for.
//!
//! * [`GetOrLoad`]: one read, from the warm-hit `HMGET` to the value: peek, `sc-get`,
//!   subscribe and wait, load under a lease, fill, back off after a fenced fill.
//! * [`Fill`]: a load under a lease, then `sc-fill` (or `sc-abandon`), with its
//!   [`Heartbeat`].
//! * [`Warm`]: a warm-up: `warm-begin`, then a [`Fill`] per lease.
//! * [`CacheSettings`]: the settings in ms and their defaults, for every runtime.
//!
//! An executor's loop, in outline (`redis/src/cache/smart.rs` is the sync Rust one):
//!
//! ```
//! use keyroute::cache::{CacheSettings, GetOrLoad, GetOrLoadStep as Step, LoadResult, Notify, Value};
//! # fn run_on_redis(_: &keyroute::cache::Call<'_>) -> Value { Value::Array(vec![Value::Int(4), Value::Int(7), Value::Int(0)]) }
//! let mut read = GetOrLoad::new(b"kr:{c:t}:e:k".to_vec(), b"me", &CacheSettings::DEFAULT, Notify::Publish, 0, 5000);
//! let mut now = 0;
//! # let mut filled = false;
//! loop {
//!     now += 1;
//!     match read.step(now, 0.5) {
//!         Step::Peek { .. } => read.peeked(None, 1_700_000_000_000),
//!         Step::Run(call) => {
//!             # if call.script.name() == "sc-fill" { filled = true; }
//!             let reply = run_on_redis(&call);
//!             # let reply = if filled { Value::Array(vec![Value::Int(1), Value::Int(1)]) } else { reply };
//!             read.replied(Ok(reply));
//!         }
//!         Step::Subscribe => read.subscribed(),
//!         Step::Wait { ms } => read.woken(false),
//!         Step::Sleep { ms } => read.slept(),
//!         Step::Load { .. } => read.loaded(LoadResult::Value(b"[]".to_vec()), 10),
//!         Step::Done => break,
//!     }
//! }
//! assert_eq!(read.outcome(), Some(Ok(b"[]".to_vec())));
//! ```

mod counts;
mod fill;
mod get_or_load;
mod heartbeat;
mod settings;
mod step;
mod warm;

pub use counts::Counts;
pub use fill::{Fill, FillStep, Stored};
pub use get_or_load::{GetOrLoad, Step as GetOrLoadStep};
pub use heartbeat::Heartbeat;
pub use settings::CacheSettings;
pub use step::{Failure, Fault, LoadFailure, LoadResult};
pub use warm::{Warm, WarmPlan};
