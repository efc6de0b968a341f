//! Benchmarks only: see `benches/` (`make bench`, `make bench-report`).
//!
//! The library holds what the benchmarks share: [`report`], the common row shape every
//! benchmark writes to `build/bench/<suite>.json` (described in `bench/README.md`).

pub mod report;
