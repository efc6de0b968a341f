//! A local Redis Cluster for tests (being written).
