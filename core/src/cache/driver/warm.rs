//! [`Warm`]: a warm-up's lease of every cold kind in one call, then one [`Fill`] per
//! lease granted.

use alloc::vec::Vec;

use super::counts::Counts;
use super::fill::Fill;
use super::settings::CacheSettings;
use super::step::Failure;
use crate::cache::call::Notify;
use crate::cache::reply::decode_warm;
use crate::script::Call;
use crate::script::Value;

/// What `warm-begin` granted: a [`Fill`] for each cold entry (its index among the
/// entries given), to run concurrently, and the indexes skipped (fresh, being loaded by
/// someone else, or with a cached error).
#[derive(Clone, Debug, PartialEq)]
pub struct WarmPlan {
    /// The leases granted, each with the index of its entry.
    pub fills: Vec<(usize, Fill)>,
    /// The entries skipped.
    pub skipped: Vec<usize>,
    /// The leases counted.
    pub counts: Counts,
}

/// A warm-up with no I/O: run [`call`](Self::call) (`warm-begin`, one call for every
/// entry), give its reply to [`plan`](Self::plan), then run each [`Fill`] of the plan
/// (concurrently: each loads one kind). A fill that ends in
/// [`Stored::Failed`](super::Stored::Failed) is a failed kind; every other one was
/// granted.
///
/// ```
/// use keyroute::cache::{CacheSettings, Notify, Value, Warm};
/// let warm = Warm::new(vec![b"kr:{c:t}:e:a".to_vec(), b"kr:{c:t}:e:b".to_vec()], b"me", &CacheSettings::DEFAULT, Notify::Publish);
/// assert_eq!(warm.call().script.name(), "warm-begin");
/// let plan = warm.plan(Value::Array(vec![Value::Int(7), Value::Int(0)]))?;
/// assert_eq!(plan.fills.len(), 1);
/// assert_eq!((plan.fills[0].0, plan.fills[0].1.fence()), (0, 7));
/// assert_eq!(plan.skipped, [1]);
/// # Ok::<(), keyroute::cache::Failure>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Warm {
    entries: Vec<Vec<u8>>,
    owner: Vec<u8>,
    settings: CacheSettings,
    notify: Notify,
}

impl Warm {
    /// A warm-up of `entries` by `owner`.
    ///
    /// ```
    /// let warm = keyroute::cache::Warm::new(vec![], b"me", &Default::default(), Default::default());
    /// assert!(warm.entries().is_empty());
    /// ```
    pub fn new(
        entries: Vec<Vec<u8>>,
        owner: &[u8],
        settings: &CacheSettings,
        notify: Notify,
    ) -> Self {
        Warm {
            entries,
            owner: owner.to_vec(),
            settings: *settings,
            notify,
        }
    }

    /// The entries.
    ///
    /// ```
    /// let warm = keyroute::cache::Warm::new(vec![b"e".to_vec()], b"me", &Default::default(), Default::default());
    /// assert_eq!(warm.entries(), [b"e".to_vec()]);
    /// ```
    pub fn entries(&self) -> &[Vec<u8>] {
        &self.entries
    }

    /// The `warm-begin` call.
    ///
    /// ```
    /// let warm = keyroute::cache::Warm::new(vec![b"e".to_vec()], b"me", &Default::default(), Default::default());
    /// assert_eq!(warm.call().keys.len(), 1);
    /// ```
    pub fn call(&self) -> Call<'_> {
        Call::warm_begin(&self.entries, self.settings.lease_ms, &self.owner, None)
    }

    /// The plan from `warm-begin`'s reply.
    ///
    /// # Errors
    /// [`Failure::Reply`] for a reply of another shape.
    ///
    /// ```
    /// use keyroute::cache::Value;
    /// let warm = keyroute::cache::Warm::new(vec![b"e".to_vec()], b"me", &Default::default(), Default::default());
    /// assert!(warm.plan(Value::Int(3)).is_err());
    /// ```
    pub fn plan(&self, reply: Value) -> Result<WarmPlan, Failure> {
        let fences = decode_warm(reply).map_err(Failure::Reply)?;
        let mut plan = WarmPlan {
            fills: Vec::new(),
            skipped: Vec::new(),
            counts: Counts::default(),
        };
        for (i, entry) in self.entries.iter().enumerate() {
            match fences.get(i).copied().flatten() {
                Some(fence) => {
                    plan.counts.leases += 1;
                    plan.fills.push((
                        i,
                        Fill::new(entry.clone(), fence, &self.settings, self.notify),
                    ));
                }
                None => plan.skipped.push(i),
            }
        }
        Ok(plan)
    }
}
