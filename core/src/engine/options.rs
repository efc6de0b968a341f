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
        }
    }

    fn take(&mut self, name: &str) -> Option<String> {
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

    /// Refuses options nobody took.
    ///
    /// # Errors
    /// [`EngineError::BadOption`] naming the first unknown option.
    pub fn finish(&mut self) -> Result<(), EngineError> {
        match self.items.iter().find(|i| !i.2) {
            Some(i) => Err(self.bad(
                &i.0.to_string(),
                "this engine does not take it (see `keyroute route --help` for each engine's options)".into(),
            )),
            None => Ok(()),
        }
    }
}
