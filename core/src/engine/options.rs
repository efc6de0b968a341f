//! [`Options`]: an engine's or profile's options as `name=value` text, checked once here.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::error::EngineError;

/// Options given to [`Router::build`](super::Router::build) as `(name, value)` text, as the
/// CLI's `--option name=value` and the bindings pass them. Each engine takes the options
/// it knows; one it does not know, or a value it cannot use, is [`EngineError::BadOption`].
///
/// ```
/// use keyroute::engine::Options;
/// let mut o = Options::new("maglev", &[("table_size", "101")]);
/// assert_eq!(o.int("table_size", 1, 1 << 24)?, Some(101));
/// o.finish()?;
/// let mut bad = Options::new("maglev", &[("colour", "red")]);
/// assert_eq!(bad.finish().unwrap_err().code().as_str(), "BAD_OPTION");
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    engine: &'static str,
    items: Vec<(String, String, bool)>,
    /// Every option name a build asked for, given or not (the registry's test checks them
    /// against each entry's documented options).
    #[cfg(test)]
    asked: Vec<String>,
}

impl Options {
    /// The options of `engine`.
    pub fn new<N: AsRef<str>, V: AsRef<str>>(engine: &'static str, items: &[(N, V)]) -> Options {
        Options {
            engine,
            items: items
                .iter()
                .map(|(n, v)| (n.as_ref().replace('-', "_"), v.as_ref().into(), false))
                .collect(),
            #[cfg(test)]
            asked: Vec::new(),
        }
    }

    /// The option names asked for, in order.
    #[cfg(test)]
    pub(crate) fn asked(&self) -> impl Iterator<Item = String> + '_ {
        self.asked.iter().cloned()
    }

    fn take(&mut self, name: &str) -> Option<String> {
        #[cfg(test)]
        self.asked.push(name.into());
        let mut found = None;
        for item in self.items.iter_mut().filter(|i| i.0 == name) {
            item.2 = true;
            found = Some(item.1.clone());
        }
        found
    }

    fn bad(&self, option: &str, reason: String) -> EngineError {
        EngineError::BadOption {
            engine: self.engine,
            option: option.into(),
            reason,
        }
    }

    /// An integer option within `min..=max`.
    ///
    /// # Errors
    /// [`EngineError::BadOption`] for a value that is not such an integer.
    pub fn int(&mut self, name: &str, min: u64, max: u64) -> Result<Option<u64>, EngineError> {
        let Some(v) = self.take(name) else {
            return Ok(None);
        };
        match v.trim().parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.bad(name, format!("{v:?} is not an integer from {min} to {max}"))),
        }
    }

    /// An integer of any size an `i128` holds, for a check (and its own error code) made
    /// elsewhere: the ring profiles' options, which [`Profile::from_options`] checks.
    ///
    /// [`Profile::from_options`]: crate::ring::Profile::from_options
    ///
    /// ```
    /// use keyroute::engine::Options;
    /// let mut o = Options::new("native", &[("vnodes", "-3"), ("default_port", "x")]);
    /// assert_eq!(o.wide("vnodes")?, Some(-3));
    /// assert_eq!(o.wide("default_port").unwrap_err().code().as_str(), "BAD_OPTION");
    /// # Ok::<(), keyroute::engine::EngineError>(())
    /// ```
    ///
    /// # Errors
    /// [`EngineError::BadOption`] for a value that is not an integer of 128 bits.
    pub fn wide(&mut self, name: &str) -> Result<Option<i128>, EngineError> {
        let Some(v) = self.take(name) else {
            return Ok(None);
        };
        match parse_i128(v.trim().as_bytes()) {
            Some(n) => Ok(Some(n)),
            None => Err(self.bad(name, format!("{v:?} is not an integer"))),
        }
    }

    /// One of `choices`.
    ///
    /// # Errors
    /// [`EngineError::BadOption`] for another value.
    pub fn choice(
        &mut self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, EngineError> {
        let Some(v) = self.take(name) else {
            return Ok(None);
        };
        let norm = v.trim().to_ascii_lowercase().replace('-', "_");
        match choices.iter().find(|c| c.replace('-', "_") == norm) {
            Some(c) => Ok(Some(c)),
            None => Err(self.bad(name, format!("{v:?} is not one of {}", choices.join(", ")))),
        }
    }

    /// A yes/no option (`true`/`false`, `yes`/`no`, `1`/`0`, `on`/`off`).
    ///
    /// # Errors
    /// [`EngineError::BadOption`] for another value.
    pub fn flag(&mut self, name: &str) -> Result<Option<bool>, EngineError> {
        let Some(v) = self.take(name) else {
            return Ok(None);
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Ok(Some(true)),
            "false" | "no" | "0" | "off" => Ok(Some(false)),
            _ => Err(self.bad(name, format!("{v:?} is not true or false"))),
        }
    }

    /// Free text.
    pub fn text(&mut self, name: &str) -> Option<String> {
        self.take(name)
    }

    /// Refuses options nobody took, saying which ones the engine takes (from its
    /// [`EngineEntry`](super::EngineEntry)).
    ///
    /// # Errors
    /// [`EngineError::BadOption`] naming the first unknown option.
    pub fn finish(&mut self) -> Result<(), EngineError> {
        let Some(i) = self.items.iter().find(|i| !i.2) else {
            return Ok(());
        };
        let mut reason = String::from("this engine does not take it; ");
        match super::EngineEntry::named(self.engine).map(|e| e.option_names()) {
            Ok([]) => reason.push_str("it takes no options"),
            Ok(taken) => {
                reason.push_str("it takes ");
                for (k, o) in taken.iter().enumerate() {
                    if k > 0 {
                        reason.push_str(", ");
                    }
                    reason.push_str(o);
                }
            }
            Err(_) => reason.push_str("see `keyroute route --help` for each engine's options"),
        }
        Err(self.bad(&i.0.to_string(), reason))
    }
}

/// `text` as an integer of 128 bits (a `-` or `+` first, then digits), as `i128::from_str`
/// reads it, without its overflow-checked 128-bit multiply (a 1.3 KB libcall in the
/// fleet's .wasm): times ten is two shifts.
fn parse_i128(text: &[u8]) -> Option<i128> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: u128 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 || n > (u128::MAX - 9) / 10 {
            return None;
        }
        n = (n << 3) + (n << 1) + u128::from(d);
    }
    if negative {
        // -2^127 is the one value whose magnitude is no i128.
        (n <= 1 << 127).then(|| (n as i128).wrapping_neg())
    } else {
        i128::try_from(n).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::parse_i128;
    use alloc::format;

    #[test]
    fn parse_i128_reads_what_from_str_reads() {
        let mut cases = alloc::vec![
            "",
            "-",
            "+",
            "0",
            "-0",
            "+7",
            "12a",
            " 1",
            "1 ",
            "--1",
            "99999999999999999999",
        ];
        let edges = [
            format!("{}", i128::MAX),
            format!("{}", i128::MIN),
            format!("{}0", i128::MAX),
            format!("{}", i128::MAX.unsigned_abs() + 1),
            format!("-{}", i128::MIN.unsigned_abs() + 1),
            format!("{}", u128::MAX),
            format!("{}9", u128::MAX),
        ];
        cases.extend(edges.iter().map(|s| s.as_str()));
        for c in cases {
            assert_eq!(parse_i128(c.as_bytes()), c.parse::<i128>().ok(), "{c:?}");
        }
    }
}
