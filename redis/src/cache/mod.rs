//! The smart cache on Redis (see [`keyroute::cache`] for the storage model and scripts).

mod exec;

pub use exec::{eval, evalsha};
