//! [`Curve`]: ZeroMQ CURVE on both of the service's sockets, and the allow-lists of
//! public keys that its ZAP handler admits (<https://rfc.zeromq.org/spec/27/>).
//!
//! * `--curve-secret-key FILE`: the service's key pair. Either a ZeroMQ certificate as
//!   pyzmq's `zmq.auth.create_certificates` writes it (the `.key_secret` file, with
//!   `public-key = "…"` and `secret-key = "…"`), or one line holding the 40-character
//!   Z85 secret key. Turns CURVE on for `--bind` and `--workers-bind`: a peer without
//!   CURVE, or without the service's public key, cannot connect.
//! * `--curve-worker-keys PATH`: the workers admitted (required with CURVE: an encrypted
//!   socket anyone may join as a worker would still let anyone serve forged data).
//! * `--curve-client-keys PATH`: the clients admitted; without it any client key is (the
//!   traffic is still encrypted).
//!
//! An allow-list is a file, or a directory whose `*.key` files are read (pyzmq's
//! public certificates). Each line is a 40-character Z85 public key or a certificate's
//! `public-key = "…"`; `#` comments, blank lines and certificate metadata are skipped. A
//! file holding a `secret-key` is refused: a secret has no place on a list that others
//! read. Files are bounded ([`MAX_FILE`], [`MAX_FILES`], [`MAX_KEYS`]).
//!
//! A secret key is never printed: errors name the file, never its text.
//!
//! ```
//! use keyroute_serve::curve::{parse_keys, is_loopback};
//! let keys = parse_keys("workers.keys", "# the loaders\nrq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\n")?;
//! assert_eq!(keys.len(), 1);
//! assert!(parse_keys("w", "secret-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"").is_err());
//! assert!(is_loopback("tcp://127.0.0.1:5555") && !is_loopback("tcp://0.0.0.0:5555"));
//! # Ok::<(), keyroute_serve::ServeError>(())
//! ```

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::ServeError;

/// The largest key file read.
pub const MAX_FILE: u64 = 1 << 20;
/// The most `*.key` files read from an allow-list directory.
pub const MAX_FILES: usize = 10_000;
/// The most keys on one allow-list.
pub const MAX_KEYS: usize = 100_000;

/// A CURVE key: 32 bytes.
pub type Key = [u8; 32];

/// CURVE for the service: its secret key and who may connect.
#[derive(Clone)]
pub struct Curve {
    /// The service's secret key.
    pub secret: Key,
    /// The service's public key, when the file gave it (printed at start: it is public).
    pub public: Option<String>,
    /// Worker public keys admitted.
    pub workers: HashSet<Key>,
    /// Client public keys admitted; `None`: any.
    pub clients: Option<HashSet<Key>>,
}

impl std::fmt::Debug for Curve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Curve")
            .field("secret", &"<redacted>")
            .field("public", &self.public)
            .field("workers", &self.workers.len())
            .field("clients", &self.clients.as_ref().map(HashSet::len))
            .finish()
    }
}

fn bad(path: &str, why: &str) -> ServeError {
    ServeError::KeyFile(format!("{path}: {why}"))
}

/// Reads at most [`MAX_FILE`] bytes of a file (a device such as `/dev/zero` included).
fn read_bounded(path: &Path) -> Result<String, ServeError> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| bad(&shown, &format!("cannot open: {e}")))?;
    let mut text = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut text)
        .map_err(|e| bad(&shown, &format!("cannot read: {e}")))?;
    if text.len() as u64 > MAX_FILE {
        return Err(bad(&shown, &format!("longer than {MAX_FILE} bytes")));
    }
    String::from_utf8(text).map_err(|_| bad(&shown, "not UTF-8 text"))
}

fn z85_key(text: &str) -> Option<Key> {
    if text.len() != 40 {
        return None;
    }
    zmq::z85_decode(text).ok()?.try_into().ok()
}

/// `name = "value"` (a certificate's line), trimmed.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once('=')?;
    let value = value.trim();
    let value = value.strip_prefix('"')?.strip_suffix('"')?;
    Some((name.trim(), value))
}

/// The public keys in an allow-list's text; `path` names it in errors.
pub fn parse_keys(path: &str, text: &str) -> Result<Vec<Key>, ServeError> {
    let mut keys = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line == "metadata" || line == "curve" {
            continue;
        }
        let key = match assignment(line) {
            Some(("secret-key", _)) => {
                return Err(bad(
                    path,
                    &format!("line {} holds a secret key: list public keys only", n + 1),
                ))
            }
            Some(("public-key", v)) => v,
            Some(_) => continue,
            None => line,
        };
        let k = z85_key(key).ok_or_else(|| {
            bad(
                path,
                &format!("line {} is not a 40-character Z85 public key", n + 1),
            )
        })?;
        keys.push(k);
    }
    Ok(keys)
}

/// An allow-list: a file, or the `*.key` files of a directory.
pub fn read_allow_list(path: &Path) -> Result<HashSet<Key>, ServeError> {
    let shown = path.display().to_string();
    let mut files: Vec<PathBuf> = Vec::new();
    if path.is_dir() {
        let entries =
            std::fs::read_dir(path).map_err(|e| bad(&shown, &format!("cannot list: {e}")))?;
        for entry in entries {
            let p = entry
                .map_err(|e| bad(&shown, &format!("cannot list: {e}")))?
                .path();
            if p.extension().is_some_and(|e| e == "key") {
                if files.len() == MAX_FILES {
                    return Err(bad(&shown, &format!("more than {MAX_FILES} *.key files")));
                }
                files.push(p);
            }
        }
        files.sort();
    } else {
        files.push(path.to_path_buf());
    }
    let mut keys = HashSet::new();
    for f in &files {
        let f_shown = f.display().to_string();
        for k in parse_keys(&f_shown, &read_bounded(f)?)? {
            keys.insert(k);
            if keys.len() > MAX_KEYS {
                return Err(bad(&shown, &format!("more than {MAX_KEYS} keys")));
            }
        }
    }
    if keys.is_empty() {
        return Err(bad(&shown, "lists no public key"));
    }
    Ok(keys)
}

/// The service's key pair from its file (see the module's text for the forms).
pub fn read_secret(path: &Path) -> Result<(Key, Option<String>), ServeError> {
    let shown = path.display().to_string();
    let text = read_bounded(path)?;
    let (mut secret, mut public) = (None, None);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for line in &lines {
        match assignment(line) {
            Some(("secret-key", v)) => secret = Some(v),
            Some(("public-key", v)) => public = Some(v),
            _ => {}
        }
    }
    if secret.is_none() && lines.len() == 1 {
        secret = Some(lines[0]);
    }
    let why = "holds no CURVE secret key (a ZeroMQ certificate's secret-key = \"…\", or one line with the 40-character Z85 key)";
    let key = secret.and_then(z85_key).ok_or_else(|| bad(&shown, why))?;
    let public = match public {
        Some(p) if z85_key(p).is_some() => Some(p.to_string()),
        Some(_) => return Err(bad(&shown, "its public-key is not a 40-character Z85 key")),
        None => None,
    };
    Ok((key, public))
}

/// The CURVE keys of a peer that connects to the service (a [`LoaderWorker`] or a
/// client): the service's public key and the peer's own key pair.
///
/// [`LoaderWorker`]: crate::LoaderWorker
#[derive(Clone)]
pub struct PeerKeys {
    /// The service's public key.
    pub server: Key,
    /// This peer's public key (the one on the service's allow-list).
    pub public: Key,
    /// This peer's secret key.
    pub secret: Key,
}

impl std::fmt::Debug for PeerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerKeys")
            .field("server", &zmq::z85_encode(&self.server).unwrap_or_default())
            .field("public", &zmq::z85_encode(&self.public).unwrap_or_default())
            .field("secret", &"<redacted>")
            .finish()
    }
}

impl PeerKeys {
    /// The service's public key (40 Z85 characters) and this peer's certificate, as
    /// pyzmq writes it (the `.key_secret` file, which holds both of its keys).
    ///
    /// # Errors
    /// [`ServeError::KeyFile`] when the key or the file is not one.
    pub fn from_file(server_public: &str, own_secret: &Path) -> Result<PeerKeys, ServeError> {
        let server = z85_key(server_public.trim())
            .ok_or_else(|| bad("the service's public key", "is not 40 Z85 characters"))?;
        let (secret, public) = read_secret(own_secret)?;
        let shown = own_secret.display().to_string();
        let public = public.as_deref().and_then(z85_key).ok_or_else(|| {
            bad(
                &shown,
                "holds no public-key = \"…\" line (a certificate's .key_secret has one)",
            )
        })?;
        Ok(PeerKeys {
            server,
            public,
            secret,
        })
    }

    /// Sets a socket's CURVE options (before it connects).
    pub(crate) fn apply(&self, socket: &zmq::Socket) -> Result<(), zmq::Error> {
        socket.set_curve_serverkey(&self.server)?;
        socket.set_curve_publickey(&self.public)?;
        socket.set_curve_secretkey(&self.secret)
    }
}

impl Curve {
    /// Reads the service's key and its allow-lists.
    pub fn from_files(
        secret: &Path,
        workers: Option<&Path>,
        clients: Option<&Path>,
    ) -> Result<Curve, ServeError> {
        let (secret, public) = read_secret(secret)?;
        let workers = workers.ok_or_else(|| {
            ServeError::Config(
                "--curve-secret-key needs --curve-worker-keys: without an allow-list any key could register as a worker".into(),
            )
        })?;
        Ok(Curve {
            secret,
            public,
            workers: read_allow_list(workers)?,
            clients: clients.map(read_allow_list).transpose()?,
        })
    }
}

/// Whether an endpoint is reachable only from this host: `ipc://`, `inproc://`, or tcp on
/// 127.0.0.0/8, `localhost` or `[::1]`.
pub fn is_loopback(endpoint: &str) -> bool {
    if endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://") {
        return true;
    }
    let Some(rest) = endpoint.strip_prefix("tcp://") else {
        return false;
    };
    let host = match rest.rsplit_once(':') {
        Some((h, _)) => h,
        None => rest,
    };
    host == "localhost"
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUB: &str = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";

    #[test]
    fn reads_a_pyzmq_certificate_and_a_bare_key() {
        let cert = format!(
            "#   ****  Generated by pyzmq  ****\nmetadata\ncurve\n    public-key = \"{PUB}\"\n"
        );
        assert_eq!(parse_keys("c", &cert).unwrap().len(), 1);
        assert_eq!(parse_keys("c", PUB).unwrap().len(), 1);
        let e = parse_keys("w.keys", "short").unwrap_err().to_string();
        assert!(e.contains("w.keys") && e.contains("line 1"), "{e}");
    }

    #[test]
    fn a_secret_is_never_in_an_error() {
        let dir = std::env::temp_dir().join(format!("kr-curve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.key_secret");
        std::fs::write(&f, "secret-key = \"not-a-key-but-a-secret-0123456789\"\n").unwrap();
        let e = read_secret(&f).unwrap_err().to_string();
        assert!(
            !e.contains("not-a-key") && e.contains("bad.key_secret"),
            "{e}"
        );
        let e = read_allow_list(&f).unwrap_err().to_string();
        assert!(!e.contains("not-a-key") && e.contains("secret key"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_is_read_only_up_to_the_bound() {
        let e = read_secret(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("longer than"), "{e}");
    }

    #[test]
    fn loopback_endpoints() {
        for e in [
            "tcp://127.0.0.1:1",
            "tcp://127.9.9.9:1",
            "tcp://localhost:1",
            "tcp://[::1]:1",
            "ipc:///tmp/x",
        ] {
            assert!(is_loopback(e), "{e}");
        }
        for e in [
            "tcp://0.0.0.0:1",
            "tcp://*:1",
            "tcp://10.0.0.1:1",
            "tcp://[::]:1",
        ] {
            assert!(!is_loopback(e), "{e}");
        }
    }
}
