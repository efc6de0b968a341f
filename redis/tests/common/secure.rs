//! Production-shaped Redis for tests: certificates made now with the `openssl` command
//! (a CA, a server certificate for 127.0.0.1, a client certificate, and a second CA that
//! signed nothing of these), TLS servers, ACL users, and Sentinel. Every process is
//! killed on drop.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

#[allow(unused_imports)]
pub use super::cluster::free_port;

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A fresh temporary directory.
pub fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "keyroute-{what}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Certificates made at test time.
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    pub fn make() -> Certs {
        let dir = temp_dir("certs");
        for ca in ["ca", "other-ca"] {
            openssl(
                &dir,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-keyout",
                    &format!("{ca}.key"),
                    "-out",
                    &format!("{ca}.crt"),
                    "-subj",
                    &format!("/CN=keyroute test {ca}"),
                ],
            );
        }
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .unwrap();
        std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
        for (name, ext) in [("server", "server.ext"), ("client", "client.ext")] {
            openssl(
                &dir,
                &[
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    &format!("{name}.key"),
                    "-out",
                    &format!("{name}.csr"),
                    "-subj",
                    &format!("/CN={name}"),
                ],
            );
            openssl(
                &dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &format!("{name}.csr"),
                    "-CA",
                    "ca.crt",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-out",
                    &format!("{name}.crt"),
                    "-extfile",
                    ext,
                ],
            );
        }
        Certs { dir }
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The server-side TLS arguments of redis-server.
    pub fn server_args(&self, auth_clients: bool) -> Vec<String> {
        [
            "--tls-cert-file".to_string(),
            self.path("server.crt"),
            "--tls-key-file".to_string(),
            self.path("server.key"),
            "--tls-ca-cert-file".to_string(),
            self.path("ca.crt"),
            "--tls-auth-clients".to_string(),
            if auth_clients { "yes" } else { "no" }.to_string(),
        ]
        .to_vec()
    }

    /// `?ssl_ca_certs=...` (and the client certificate with `client`).
    pub fn query(&self, client: bool) -> String {
        let mut q = format!("ssl_ca_certs={}", self.path("ca.crt"));
        if client {
            q.push_str(&format!(
                "&ssl_certfile={}&ssl_keyfile={}",
                self.path("client.crt"),
                self.path("client.key")
            ));
        }
        q
    }
}

/// A process killed (and reaped) on drop.
pub struct Proc {
    pub port: u16,
    child: Option<Child>,
}

impl Proc {
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `redis-server` with `args` (after `--bind 127.0.0.1 --save '' ...`), listening
/// on `port`, in `dir`; ready once the port accepts connections.
pub fn redis_server(dir: &Path, port: u16, args: &[String]) -> Proc {
    let log = dir.join(format!("{port}.log"));
    let child = Command::new("redis-server")
        .args(args)
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--daemonize", "no", "--protected-mode", "no"])
        .arg("--dir")
        .arg(dir)
        .arg("--logfile")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    let mut p = Proc {
        port,
        child: Some(child),
    };
    let start = Instant::now();
    // Ready once it says so in its log and the port answers: a connect alone can succeed
    // before the server listens (a client's ephemeral port equal to the target connects
    // to itself).
    let said_ready = || {
        std::fs::read_to_string(&log).is_ok_and(|t| {
            t.contains("Ready to accept connections") || t.contains("Sentinel ID is")
        })
    };
    while !said_ready() || TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(c) = p.child.as_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                panic!(
                    "redis-server on {port} exited ({status}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "redis-server on {port} not up"
        );
        sleep(Duration::from_millis(20));
    }
    p
}

/// `redis-cli` with `args`, its stdout; panics on failure.
pub fn cli(args: &[String]) -> String {
    let out = Command::new("redis-cli")
        .args(args)
        .output()
        .expect("redis-cli");
    assert!(
        out.status.success(),
        "redis-cli {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Retries `f` until it returns `Some` or `within` passes.
pub fn eventually<T>(within: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < within, "not within {within:?}");
        sleep(Duration::from_millis(50));
    }
}
