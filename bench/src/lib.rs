//! Benchmarks only: see `benches/` (`make bench`).
