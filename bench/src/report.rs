//! The benchmark report's common row shape (`bench/README.md`), written by every Rust
//! benchmark to `build/bench/<suite>.json` for `make bench-report`.
//!
//! A criterion benchmark runs its groups, then reads this run's figures back from
//! criterion's own output (`<target>/criterion/**/new/estimates.json`, see
//! [`CriterionRun`]) and pairs keyroute with its peer here, next to the code that measured
//! them and checked their answers. A hand-timed benchmark (`redis_pick`) builds its rows
//! from its own figures.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Map, Value};

/// The version of the JSON shape; `bench/report/report.py` refuses others.
pub const SCHEMA: u32 = 1;

/// What a figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Elapsed (wall-clock) time, or a rate computed from it.
    Wall,
    /// CPU time of the measuring thread or process.
    Cpu,
    /// Instructions retired (callgrind or perf counters).
    Instructions,
    /// A size (bytes of a file or of memory), not a time.
    Size,
}

impl Measure {
    /// The name written to JSON: `"wall"`, `"cpu"` or `"instructions"`.
    ///
    /// ```
    /// assert_eq!(keyroute_bench::report::Measure::Cpu.as_str(), "cpu");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Measure::Wall => "wall",
            Measure::Size => "size",
            Measure::Cpu => "cpu",
            Measure::Instructions => "instructions",
        }
    }
}

/// Whether a smaller (a time) or a larger (a rate) figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Times, sizes, instruction counts: the ratio is peer / keyroute.
    Lower,
    /// Rates (operations per second): the ratio is keyroute / peer.
    Higher,
}

/// The other side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Peer {
    /// What it is, e.g. `hashring crate` or `redis-benchmark EVALSHA`.
    pub name: String,
    /// Its version, when known (see [`crate_version`]).
    pub version: Option<String>,
    /// Its figure, in the row's unit.
    pub value: f64,
}

/// One figure of keyroute, alone or against a peer.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Unique within its suite, stable between runs (`make bench-check` matches on it).
    pub id: String,
    /// The operation group: one table (and one chart) per group in the report.
    pub group: String,
    /// What is measured, for a reader.
    pub what: String,
    /// Wall time, CPU time or instructions.
    pub measure: Measure,
    /// The unit of both figures, e.g. `ns/call`, `ns/key`, `ops/s`.
    pub unit: String,
    /// Whether lower or higher figures are better.
    pub better: Better,
    /// keyroute's figure.
    pub keyroute: f64,
    /// The peer, if there is one.
    pub peer: Option<Peer>,
    /// A ratio measured directly (e.g. the median of paired rounds) instead of the one
    /// computed from the two figures.
    pub ratio: Option<f64>,
    /// Did both sides give the same answers on the benchmark's inputs (checked)?
    /// `None`: not checked or not applicable.
    pub same_answers: Option<bool>,
    /// Do both sides do the same work with the same answers (the rows reported first)?
    pub like_for_like: bool,
    /// Shown in the README's performance section.
    pub headline: bool,
    /// Anything a reader must know to read the figure.
    pub note: String,
}

impl Row {
    /// A figure of keyroute alone (add a peer with [`Row::peer`]).
    ///
    /// ```
    /// use keyroute_bench::report::{Measure, Row};
    /// let row = Row::new("ring/get", "Ring lookup", "Ring::get", Measure::Cpu, "ns/key", 20.0)
    ///     .peer("hashring crate", Some("0.3.6".into()), 50.0)
    ///     .like_for_like(false)
    ///     .note("another hash");
    /// assert_eq!(row.ratio_value(), Some(2.5));
    /// ```
    pub fn new(
        id: impl Into<String>,
        group: impl Into<String>,
        what: impl Into<String>,
        measure: Measure,
        unit: impl Into<String>,
        keyroute: f64,
    ) -> Self {
        Self {
            id: id.into(),
            group: group.into(),
            what: what.into(),
            measure,
            unit: unit.into(),
            better: Better::Lower,
            keyroute,
            peer: None,
            ratio: None,
            same_answers: None,
            like_for_like: false,
            headline: false,
            note: String::new(),
        }
    }

    /// Sets the peer and its figure.
    pub fn peer(mut self, name: impl Into<String>, version: Option<String>, value: f64) -> Self {
        self.peer = Some(Peer {
            name: name.into(),
            version,
            value,
        });
        self
    }

    /// Higher figures are better (rates).
    pub fn higher_is_better(mut self) -> Self {
        self.better = Better::Higher;
        self
    }

    /// Uses a ratio measured directly rather than computed from the two figures.
    pub fn ratio(mut self, ratio: f64) -> Self {
        self.ratio = Some(ratio);
        self
    }

    /// Records whether both sides gave the same answers.
    pub fn same_answers(mut self, same: bool) -> Self {
        self.same_answers = Some(same);
        self
    }

    /// Marks the comparison as like for like (or not).
    pub fn like_for_like(mut self, yes: bool) -> Self {
        self.like_for_like = yes;
        self
    }

    /// Shows the row in the README's performance section.
    pub fn headline(mut self) -> Self {
        self.headline = true;
        self
    }

    /// Sets the note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    /// How many times better keyroute is than the peer (> 1: keyroute is faster or
    /// smaller); `None` without a peer.
    pub fn ratio_value(&self) -> Option<f64> {
        let peer = self.peer.as_ref()?;
        self.ratio.or(match self.better {
            Better::Lower => Some(peer.value / self.keyroute),
            Better::Higher => Some(self.keyroute / peer.value),
        })
    }

    /// The row as JSON (the shape of `bench/README.md`).
    pub fn to_json(&self) -> Value {
        let peer = self.peer.as_ref();
        json!({
            "id": self.id,
            "group": self.group,
            "what": self.what,
            "measure": self.measure.as_str(),
            "unit": self.unit,
            "better": match self.better { Better::Lower => "lower", Better::Higher => "higher" },
            "keyroute": finite(self.keyroute),
            "peer": peer.map(|p| p.name.clone()),
            "peer_version": peer.and_then(|p| p.version.clone()),
            "peer_value": peer.and_then(|p| finite(p.value)),
            "ratio": self.ratio_value().and_then(finite),
            "same_answers": self.same_answers,
            "like_for_like": self.like_for_like,
            "headline": self.headline,
            "note": self.note,
        })
    }
}

fn finite(x: f64) -> Option<f64> {
    // Four significant digits are more than any of these figures carries.
    x.is_finite().then(|| {
        if x == 0.0 {
            return 0.0;
        }
        let digits = 4 - 1 - x.abs().log10().floor() as i32;
        let scale = 10f64.powi(digits);
        (x * scale).round() / scale
    })
}

/// One benchmark program's rows, written to `build/bench/<name>.json`.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The file name and the suite's name in the report, e.g. `rust-ring`.
    pub name: String,
    /// The program, e.g. `bench/benches/ring.rs`.
    pub source: String,
    /// How the figures were taken (sampling, best of how many rounds...).
    pub method: String,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Suite {
    /// An empty suite.
    ///
    /// ```
    /// use keyroute_bench::report::{Measure, Row, Suite};
    /// let mut suite = Suite::new("rust-demo", "bench/benches/demo.rs", "criterion median");
    /// suite.push(Row::new("a", "Demo", "demo", Measure::Wall, "ns/call", 1.0));
    /// let doc = suite.to_json();
    /// assert_eq!(doc["suite"], "rust-demo");
    /// assert_eq!(doc["rows"][0]["measure"], "wall");
    /// ```
    pub fn new(
        name: impl Into<String>,
        source: impl Into<String>,
        method: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            source: source.into(),
            method: method.into(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// The suite as JSON, with the load average and the time it was written.
    pub fn to_json(&self) -> Value {
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut doc = Map::new();
        doc.insert("schema".into(), json!(SCHEMA));
        doc.insert("suite".into(), json!(self.name));
        doc.insert("source".into(), json!(self.source));
        doc.insert("method".into(), json!(self.method));
        doc.insert("unix_time".into(), json!(secs));
        doc.insert("load_average".into(), json!(load_average()));
        doc.insert(
            "rows".into(),
            Value::Array(self.rows.iter().map(Row::to_json).collect()),
        );
        Value::Object(doc)
    }

    /// Writes `<dir>/<name>.json` ([`out_dir`] by default) and prints where.
    pub fn write(&self) -> io::Result<PathBuf> {
        self.write_to(&out_dir())
    }

    /// Writes `<dir>/<name>.json`.
    pub fn write_to(&self, dir: &Path) -> io::Result<PathBuf> {
        fs::create_dir_all(dir)?;
        let path = dir.join(format!("{}.json", self.name));
        let text = serde_json::to_string_pretty(&self.to_json()).map_err(io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        fs::write(&tmp, text + "\n")?;
        fs::rename(&tmp, &path)?;
        println!(
            "bench report: {} rows written to {}",
            self.rows.len(),
            path.display()
        );
        Ok(path)
    }
}

/// The workspace root (this crate's parent directory).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Where suites are written: `$KEYROUTE_BENCH_DIR`, else `<workspace>/build/bench`.
///
/// ```
/// let dir = keyroute_bench::report::out_dir();
/// assert!(std::env::var_os("KEYROUTE_BENCH_DIR").is_some() || dir.ends_with("build/bench"));
/// ```
pub fn out_dir() -> PathBuf {
    std::env::var_os("KEYROUTE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("build").join("bench"))
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), if readable.
///
/// ```
/// if let Some([one, five, fifteen]) = keyroute_bench::report::load_average() {
///     assert!(one >= 0.0 && five >= 0.0 && fifteen >= 0.0);
/// }
/// ```
pub fn load_average() -> Option<[f64; 3]> {
    let text = fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The version of a crate in the workspace's `Cargo.lock` (the first one listed when
/// several versions are locked), e.g. `crate_version("hashring")`.
///
/// ```
/// assert!(keyroute_bench::report::crate_version("criterion").is_some());
/// assert!(keyroute_bench::report::crate_version("no-such-crate-here").is_none());
/// ```
pub fn crate_version(name: &str) -> Option<String> {
    let lock = fs::read_to_string(workspace_root().join("Cargo.lock")).ok()?;
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == wanted {
            let version = lines.next()?.trim();
            return version
                .strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

/// The figures criterion saved during this run: for each benchmark's full id
/// (`group/function[/value]`), the median time per iteration in the measurement's unit
/// (nanoseconds for wall and CPU time).
///
/// The median of the samples, rather than criterion's mean or slope, so that a sample a
/// neighbour's process slowed down moves it least. Only `estimates.json` files written
/// after `since` count, so figures of an earlier run (or of a benchmark this run
/// filtered out) are never reported as this run's.
///
/// ```
/// use keyroute_bench::report::CriterionRun;
/// let run = CriterionRun::read(std::path::Path::new("/nonexistent"), std::time::SystemTime::now());
/// assert!(run.is_empty() && run.median("group/bench").is_none());
/// ```
#[derive(Debug, Default)]
pub struct CriterionRun {
    medians: BTreeMap<String, f64>,
}

impl CriterionRun {
    /// Reads criterion's output directory (`$CRITERION_HOME`, else
    /// `$CARGO_TARGET_DIR/criterion`, else `<workspace>/target/criterion`, as criterion
    /// chooses it).
    pub fn since(since: SystemTime) -> Self {
        let dir = std::env::var_os("CRITERION_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("criterion"))
            })
            .unwrap_or_else(|| workspace_root().join("target").join("criterion"));
        Self::read(&dir, since)
    }

    /// Reads the given criterion output directory.
    pub fn read(dir: &Path, since: SystemTime) -> Self {
        let mut run = Self::default();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = fs::read_dir(&d) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    if path.file_name().is_some_and(|n| n == "new") {
                        run.read_new(&path, since);
                    } else if path.file_name().is_none_or(|n| n != "base") {
                        stack.push(path);
                    }
                }
            }
        }
        run
    }

    fn read_new(&mut self, new: &Path, since: SystemTime) {
        let estimates = new.join("estimates.json");
        let fresh = fs::metadata(&estimates)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since);
        if !fresh {
            return;
        }
        let read =
            |p: &Path| -> Option<Value> { serde_json::from_str(&fs::read_to_string(p).ok()?).ok() };
        let (Some(id), Some(est)) = (read(&new.join("benchmark.json")), read(&estimates)) else {
            return;
        };
        let full_id = match (
            id["group_id"].as_str(),
            id["function_id"].as_str(),
            id["value_str"].as_str(),
        ) {
            (Some(g), Some(f), Some(v)) => format!("{g}/{f}/{v}"),
            (Some(g), Some(f), None) | (Some(g), None, Some(f)) => format!("{g}/{f}"),
            (Some(g), None, None) => g.to_owned(),
            _ => return,
        };
        if let Some(median) = est["median"]["point_estimate"].as_f64() {
            self.medians.insert(full_id, median);
        }
    }

    /// The median of a benchmark of this run, by its full id.
    pub fn median(&self, full_id: &str) -> Option<f64> {
        self.medians.get(full_id).copied()
    }

    /// How many benchmarks of this run were found.
    pub fn len(&self) -> usize {
        self.medians.len()
    }

    /// Whether none was found.
    pub fn is_empty(&self) -> bool {
        self.medians.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_follow_the_direction() {
        let t = Row::new("a", "g", "w", Measure::Wall, "ns/call", 10.0).peer("p", None, 25.0);
        assert_eq!(t.ratio_value(), Some(2.5));
        let r = Row::new("b", "g", "w", Measure::Wall, "ops/s", 30.0)
            .higher_is_better()
            .peer("p", None, 20.0);
        assert_eq!(r.ratio_value(), Some(1.5));
        let m = r.clone().ratio(1.2);
        assert_eq!(m.ratio_value(), Some(1.2));
        assert_eq!(
            Row::new("c", "g", "w", Measure::Cpu, "ns", 1.0).ratio_value(),
            None
        );
    }

    #[test]
    fn json_has_every_field() {
        let row = Row::new(
            "a",
            "g",
            "w",
            Measure::Instructions,
            "instr/call",
            123.456_7,
        )
        .peer("p", Some("1.0".into()), 246.9)
        .same_answers(true)
        .like_for_like(true)
        .headline()
        .note("n")
        .to_json();
        for key in [
            "id",
            "group",
            "what",
            "measure",
            "unit",
            "better",
            "keyroute",
            "peer",
            "peer_version",
            "peer_value",
            "ratio",
            "same_answers",
            "like_for_like",
            "headline",
            "note",
        ] {
            assert!(row.get(key).is_some(), "{key} missing");
        }
        assert_eq!(row["keyroute"], 123.5);
        assert_eq!(row["measure"], "instructions");
        assert_eq!(row["ratio"], 2.0);
        let none = Row::new("b", "g", "w", Measure::Wall, "ns", f64::NAN).to_json();
        assert!(none["keyroute"].is_null() && none["peer"].is_null() && none["ratio"].is_null());
    }

    #[test]
    fn criterion_figures_of_this_run_only() {
        let dir = std::env::temp_dir().join(format!("keyroute-bench-test-{}", std::process::id()));
        let new = dir.join("grp").join("fn").join("16").join("new");
        fs::create_dir_all(&new).unwrap();
        fs::write(
            new.join("benchmark.json"),
            r#"{"group_id":"grp","function_id":"fn","value_str":"16"}"#,
        )
        .unwrap();
        fs::write(
            new.join("estimates.json"),
            r#"{"median":{"point_estimate":12.5},"mean":{"point_estimate":99.0}}"#,
        )
        .unwrap();
        let before = SystemTime::now() - std::time::Duration::from_secs(60);
        let run = CriterionRun::read(&dir, before);
        assert_eq!(run.median("grp/fn/16"), Some(12.5));
        let later = SystemTime::now() + std::time::Duration::from_secs(60);
        assert!(CriterionRun::read(&dir, later).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
