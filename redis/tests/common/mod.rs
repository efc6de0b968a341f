//! Test harness: real `redis-server` processes on free 127.0.0.1 ports, started and
//! stopped by the tests (Debian's redis-server; `make test` installs it).
#![allow(dead_code)]

pub mod cluster;
pub mod secure;
pub mod standalone;
