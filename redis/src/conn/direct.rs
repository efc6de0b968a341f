//! A deadline per call, never per reply: [`exchange`] sends a request (one command, a
//! pipeline or a transaction) and reads its replies with every wait cut to end by the
//! call's deadline, and [`Direct`] is the connection [`connect`](super::connect) opens,
//! on which every call has one.
//!
//! The `redis` crate's sync connection bounds each socket read by its read timeout, and
//! its own pipeline read waits for every reply even after one timed out: a stalled server
//! cost one timeout per command of a pipeline (10 picks, 10 timeouts), and a server that
//! answered each command just within the timeout let a pipeline run for many. Here the
//! socket's timeouts are set to the time left before each reply (only when they are off
//! by more than [`SLACK`], so a call that is answered in time makes no system call), and
//! the first transport error ends the call.

use std::io;
use std::time::{Duration, Instant};

use redis::{Connection, ConnectionLike, RedisResult, Value};

use crate::error::{is_broken, DEADLINE_OF};

/// How far a socket timeout may be from the time left before it is set again: a call
/// ends at most this much past its deadline (the one wait it has outstanding excepted:
/// see [`exchange`]).
const SLACK: Duration = Duration::from_millis(2);

/// The read and write timeouts last set on a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Armed {
    read: Duration,
    write: Duration,
}

impl Armed {
    /// Both set to `io` (as [`open`](super::open) leaves a connection).
    pub(crate) fn at(io: Duration) -> Armed {
        Armed {
            read: io,
            write: io,
        }
    }
}

/// Whether a socket timeout of `set` may stand for a wanted `want`.
fn close_enough(set: Duration, want: Duration) -> bool {
    set <= want + SLACK && set + SLACK >= want
}

/// The wait allowed now: `io`, cut to what is left before `until` (at least 1 ms, which a
/// socket needs); `None` once `until` has passed.
fn wait_now(io: Duration, until: Instant) -> Option<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return None;
    }
    Some(io.min(left).max(Duration::from_millis(1)))
}

/// The error of a call whose deadline passed: a timeout (`REDIS_TIMEOUT` once this crate
/// reads it).
fn late(budget: Duration, got: usize, want: usize) -> redis::RedisError {
    let budget =
        Duration::from_millis(u64::try_from(budget.as_micros().div_ceil(1000)).unwrap_or(u64::MAX));
    let detail = if want > 1 {
        format!(
            "no reply within {DEADLINE_OF}{} ms ({got} of {want} replies read)",
            budget.as_millis()
        )
    } else {
        format!("no reply within {DEADLINE_OF}{} ms", budget.as_millis())
    };
    io::Error::new(io::ErrorKind::TimedOut, detail).into()
}

/// Sends `packed` on `con` and reads its `offset + count` replies, returning the last
/// `count` (a transaction's `MULTI` and `QUEUED` replies are the first `offset`; a server
/// error among them fails the call, as in the `redis` crate). Every wait ends by `until`
/// and lasts at most `io`; `armed` is what `con`'s timeouts are set to, kept up to date.
///
/// A socket timeout bounds one read: a reply a server trickles out in pieces, each just
/// within the time left when the reply was begun, can still outlast the deadline. A
/// server that stops answering cannot.
///
/// On an error the connection may hold late replies: the caller must not use it again.
/// RESP3 push data between replies is not a reply. Server error replies are values.
pub(crate) fn exchange(
    con: &mut Connection,
    armed: &mut Armed,
    packed: &[u8],
    offset: usize,
    count: usize,
    io: Duration,
    until: Instant,
) -> RedisResult<Vec<Value>> {
    let budget = until.saturating_duration_since(Instant::now());
    let want = offset + count;
    let Some(wait) = wait_now(io, until) else {
        return Err(late(budget, 0, want));
    };
    if !close_enough(armed.write, wait) {
        con.set_write_timeout(Some(wait))?;
        armed.write = wait;
    }
    con.send_packed_command(packed)?;
    let mut replies = Vec::with_capacity(count);
    let mut aborted = None;
    let mut got = 0;
    while got < want {
        let Some(wait) = wait_now(io, until) else {
            return Err(late(budget, got, want));
        };
        if !close_enough(armed.read, wait) {
            con.set_read_timeout(Some(wait))?;
            armed.read = wait;
        }
        match con.recv_response() {
            Ok(Value::Push { .. }) => {}
            Ok(reply) => {
                if got >= offset {
                    replies.push(reply);
                } else if let Value::ServerError(e) = reply {
                    aborted.get_or_insert(e);
                }
                got += 1;
            }
            Err(e) if e.is_timeout() => return Err(late(budget, got, want)),
            Err(e) => return Err(e),
        }
    }
    match aborted {
        Some(e) => Err(e.into()),
        None => Ok(replies),
    }
}

/// A connection to one server, as [`connect`](super::connect),
/// [`Endpoint::open`](super::Endpoint::open) and [`open_addr`](super::open_addr) open it:
/// every call on it (a command, a script, a pipeline, a transaction) ends within one
/// deadline, its I/O timeout from the start of the call, however many replies it waits
/// for, and a call past it fails with [`Error::Timeout`](crate::Error::Timeout)
/// (`REDIS_TIMEOUT`).
///
/// It is never reopened: after a transport error or a timeout it is closed (a late reply
/// could otherwise be taken for the answer to a later command), and every later call
/// fails at once with [`Error::ConnectionLost`](crate::Error::ConnectionLost). Use
/// [`Reconnecting`](super::Reconnecting) to reopen on the next call.
///
/// ```
/// use keyroute_redis::{connect, Timeouts};
/// let err = connect("redis://127.0.0.1:1", Timeouts::default()).unwrap_err();
/// assert_eq!(err.code().as_str(), "REDIS_CONNECT");
/// ```
pub struct Direct {
    con: Connection,
    io: Duration,
    armed: Armed,
    closed: bool,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct")
            .field("timeout", &self.io)
            .field("open", &self.is_open())
            .finish()
    }
}

impl Direct {
    /// `con`, whose read and write timeouts are `io` (as [`open`](super::open) leaves
    /// them).
    pub(crate) fn new(con: Connection, io: Duration) -> Direct {
        Direct {
            con,
            io,
            armed: Armed::at(io),
            closed: false,
        }
    }

    /// The deadline of each call (the I/O timeout it was opened with).
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.io
    }

    /// A call whose replies are all read by `until`, each wait at most the I/O timeout.
    pub(crate) fn call_until(
        &mut self,
        packed: &[u8],
        offset: usize,
        count: usize,
        until: Instant,
    ) -> RedisResult<Vec<Value>> {
        if self.closed {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection was closed after an I/O error or a timeout (a late reply could be taken for a later answer): open a new one, or use Reconnecting",
            )
            .into());
        }
        let result = exchange(
            &mut self.con,
            &mut self.armed,
            packed,
            offset,
            count,
            self.io,
            until,
        );
        if matches!(&result, Err(e) if is_broken(e)) || !self.con.is_open() {
            self.closed = true;
        }
        result
    }

    fn call(&mut self, packed: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        let until = Instant::now() + self.io;
        self.call_until(packed, offset, count, until)
    }
}

impl ConnectionLike for Direct {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let mut replies = self.call(cmd, 0, 1)?;
        Ok(replies.pop().unwrap_or(Value::Nil))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.call(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.con.get_db()
    }

    fn check_connection(&mut self) -> bool {
        matches!(
            self.req_command(&redis::cmd("PING")),
            Ok(Value::SimpleString(_) | Value::Okay)
        )
    }

    fn is_open(&self) -> bool {
        !self.closed && self.con.is_open()
    }
}
