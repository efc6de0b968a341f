//! A standalone redis-server for tests (being written).
