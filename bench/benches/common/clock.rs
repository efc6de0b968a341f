//! The clock of the criterion benchmarks (`ring`, `slot`): wall time by default, or with
//! `KEYROUTE_BENCH_CLOCK=cpu` (also `SLOT_BENCH_CLOCK=cpu`, its older name) this thread's
//! CPU time (`CLOCK_THREAD_CPUTIME_ID`, Unix only). Both in nanoseconds, so criterion's
//! time formatting applies to either.
//!
//! On a busy shared machine wall-clock figures include the time the benchmark spent
//! waiting for a CPU; CPU time is what the code costs when it runs. The report labels
//! every figure with the clock that took it ([`Clock::measure`]).
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use keyroute_bench::report::Measure;

/// Wall or thread CPU time, chosen from the environment.
pub struct Clock {
    cpu: bool,
    wall: WallTime,
}

impl Clock {
    /// `KEYROUTE_BENCH_CLOCK` (or `SLOT_BENCH_CLOCK`) `=cpu`: CPU time; else wall time.
    pub fn from_env() -> Self {
        let wants_cpu = |var: &str| std::env::var(var).is_ok_and(|v| v == "cpu");
        let cpu = wants_cpu("KEYROUTE_BENCH_CLOCK") || wants_cpu("SLOT_BENCH_CLOCK");
        if cpu && !cfg!(unix) {
            eprintln!("KEYROUTE_BENCH_CLOCK=cpu needs a Unix system; using wall time");
        }
        Self {
            cpu: cpu && cfg!(unix),
            wall: WallTime,
        }
    }

    /// What this clock measures, for the report.
    pub fn measure(&self) -> Measure {
        if self.cpu {
            Measure::Cpu
        } else {
            Measure::Wall
        }
    }

    fn now_ns(&self) -> u64 {
        if self.cpu {
            thread_cpu_ns()
        } else {
            0
        }
    }
}

#[cfg(unix)]
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> u64 {
    0
}

impl Measurement for Clock {
    type Intermediate = (std::time::Instant, u64);
    type Value = u64;

    fn start(&self) -> Self::Intermediate {
        (std::time::Instant::now(), self.now_ns())
    }

    fn end(&self, (wall, cpu): Self::Intermediate) -> u64 {
        if self.cpu {
            self.now_ns() - cpu
        } else {
            wall.elapsed().as_nanos() as u64
        }
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}
