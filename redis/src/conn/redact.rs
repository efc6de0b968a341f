//! [`redact`]: a Redis URL with every secret replaced by `***`, in every form the
//! [grammar](super::endpoint) takes: `user:password@`, and the `pass=`, `password=` and
//! `sentinel_password=` options.

/// The options whose values are secrets.
const SECRET_OPTIONS: [&str; 3] = ["pass", "password", "sentinel_password"];

/// `url` with the password (and a user name given with it) replaced by `***`, and the
/// values of `pass=`, `password=` and `sentinel_password=` too.
///
/// ```
/// use keyroute_redis::redact;
/// assert_eq!(redact("redis://:s3cret@10.0.0.1:6379/0"), "redis://:***@10.0.0.1:6379/0");
/// assert_eq!(redact("redis://app:s3cret@h:6379"), "redis://app:***@h:6379");
/// assert_eq!(redact("redis://h:6379"), "redis://h:6379");
/// assert_eq!(redact("redis+unix:///run/r.sock?db=1&pass=s3cret"), "redis+unix:///run/r.sock?db=1&pass=***");
/// assert_eq!(
///     redact("redis+sentinel://h:26379/m?sentinel_password=s3cret&password=s3cret"),
///     "redis+sentinel://h:26379/m?sentinel_password=***&password=***"
/// );
/// ```
pub fn redact(url: &str) -> String {
    let scheme_end = match url.find("://") {
        Some(i) => i + 3,
        // `user:password@host:port` without a scheme (a seed).
        None if !url.contains(char::is_whitespace) => 0,
        None => return url.to_string(),
    };
    let rest = &url[scheme_end..];
    // The credentials end at the last '@': a password that was not percent-encoded may
    // hold '/', '?', '#' or '@', and is then hidden whole.
    let (head, tail) = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            let hidden = match userinfo.split_once(':') {
                Some((user, _)) if !user.contains(['/', '?', '#']) => format!("{user}:***"),
                _ => "***".to_string(),
            };
            (format!("{}{hidden}", &url[..scheme_end]), &rest[at..])
        }
        None => (url[..scheme_end].to_string(), rest),
    };
    format!("{head}{}", hide_options(tail))
}

/// The query of `s` with the values of the secret options hidden.
fn hide_options(s: &str) -> String {
    let Some(q) = s.find('?') else {
        return s.to_string();
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..=q]);
    for (i, pair) in s[q + 1..].split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((k, _)) if SECRET_OPTIONS.contains(&k) => {
                out.push_str(k);
                out.push_str("=***");
            }
            _ => out.push_str(pair),
        }
    }
    out
}
