//! Reading proxy configurations: nginx, twemproxy and HAProxy with 20,000 and 200,000
//! servers (issue 34: reading must be linear, at most 1 s for 200k servers), and real
//! `nginx -t` on the same 200k-server file when nginx is installed, in alternating rounds.
//!
//! `cargo bench -p keyroute-bench --bench config` (`-- --test`: one small round, nothing
//! written). Rows go to `build/bench/rust-config.json`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use keyroute::config::read_config;
use keyroute_bench::report::{Measure, Row, Suite};

/// One reader's configuration text for `n` servers, whole enough for its proxy.
struct Form {
    name: &'static str,
    what: &'static str,
    make: fn(usize) -> String,
}

fn address(i: usize) -> String {
    format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255)
}

fn nginx(n: usize) -> String {
    let mut t = String::from("events {}\nhttp {\nupstream u {\n hash $request_uri consistent;\n");
    for i in 0..n {
        t += &format!(" server {}:80;\n", address(i));
    }
    t + "}\n}\n"
}

fn twemproxy(n: usize) -> String {
    let mut t = String::from(
        "alpha:\n  listen: 127.0.0.1:22121\n  hash: md5\n  distribution: ketama\n  servers:\n",
    );
    for i in 0..n {
        t += &format!("   - {}:11211:1\n", address(i));
    }
    t
}

fn haproxy(n: usize) -> String {
    let mut t = String::from("backend b\n balance uri\n hash-type consistent\n");
    for i in 0..n {
        t += &format!(" server s{i} {}:80\n", address(i));
    }
    t
}

const FORMS: [Form; 3] = [
    Form {
        name: "nginx",
        what: "nginx hash $request_uri consistent (160 points a server: 32M points at 200k)",
        make: nginx,
    },
    Form {
        name: "twemproxy",
        what: "twemproxy md5 ketama (160 points a server)",
        make: twemproxy,
    },
    Form {
        name: "haproxy",
        what: "HAProxy balance uri, hash-type consistent",
        make: haproxy,
    },
];

fn keyroute_read(text: &str) -> f64 {
    let t = Instant::now();
    let cfg = read_config(text, "big.conf", None, &mut |_| None).expect("read");
    std::hint::black_box(&cfg);
    drop(cfg);
    t.elapsed().as_secs_f64()
}

/// `nginx -t` on `conf` (its own prefix, log on stderr), in seconds; `None` when nginx is
/// not installed or refuses the file.
fn nginx_t(nginx: &Path, dir: &Path, conf: &Path) -> Option<f64> {
    let t = Instant::now();
    let ok = Command::new(nginx)
        .args(["-q", "-t", "-e", "stderr", "-p"])
        .arg(dir)
        .arg("-c")
        .arg(conf)
        .args(["-g", "pid nginx.pid;"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?
        .success();
    ok.then(|| t.elapsed().as_secs_f64())
}

fn find_nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let (small, large, rounds) = if smoke {
        (2_000, 20_000, 1)
    } else {
        (20_000, 200_000, 5)
    };
    let dir = std::env::temp_dir().join(format!("keyroute-bench-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let nginx_bin = find_nginx();
    let mut suite = Suite::new(
        "rust-config",
        "bench/benches/config.rs",
        "median of alternating rounds: keyroute read_config (build of the engine included) on the small and the large text, then nginx -t on the large one",
    );
    for form in &FORMS {
        let (a, b) = ((form.make)(small), (form.make)(large));
        let conf = dir.join(format!("{}.conf", form.name));
        let peer = (form.name == "nginx").then_some(()).and(nginx_bin.as_ref());
        if peer.is_some() {
            std::fs::write(&conf, &b).expect("write the config");
        }
        let (mut ta, mut tb, mut tp) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            ta.push(keyroute_read(&a));
            tb.push(keyroute_read(&b));
            if let Some(n) = peer {
                if let Some(s) = nginx_t(n, &dir, &conf) {
                    tp.push(s);
                }
            }
        }
        let (ma, mb) = (median(&mut ta), median(&mut tb));
        let growth = mb / ma / (large / small) as f64;
        println!(
            "config/{}: {small} servers {ma:.3} s, {large} servers {mb:.3} s (x{:.2} the time for x{} the servers)",
            form.name,
            mb / ma,
            large / small
        );
        let mut row = Row::new(
            format!("config/{}-{}k", form.name, large / 1000),
            "Config readers",
            format!("Rust read_config, {}, {large} servers", form.what),
            Measure::Wall,
            "s",
            mb,
        )
        .note(format!(
            "issue 34: at most 1 s for 200k servers, linear; {small} servers {ma:.3} s, growth per server x{growth:.2} of linear"
        ));
        if !tp.is_empty() {
            let mp = median(&mut tp);
            println!(
                "config/{}: nginx -t on {large} servers {mp:.3} s",
                form.name
            );
            row = row
                .peer("nginx -t", nginx_version(nginx_bin.as_deref()), mp)
                .like_for_like(true);
        }
        suite.push(row);
    }
    let _ = std::fs::remove_dir_all(&dir);
    if smoke {
        println!("bench report: --test run; nothing written");
        return;
    }
    match suite.write() {
        Ok(p) => println!("bench report: {}", p.display()),
        Err(e) => println!("bench report: not written: {e}"),
    }
}

fn nginx_version(bin: Option<&Path>) -> Option<String> {
    let out = Command::new(bin?).arg("-v").output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.trim().rsplit('/').next().map(str::to_string)
}
