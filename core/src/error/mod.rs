//! Error codes: one stable name (and number) per kind of failure, the same in every
//! language.
//!
//! Every public error type of keyroute has a `code()` method returning an [`ErrorCode`].
//! Its [`as_str`](ErrorCode::as_str) is what every binding shows: Python exceptions carry it
//! as `.code`, JavaScript errors as `.code`, the C library returns the status whose number
//! is [`number`](ErrorCode::number) (`KEYROUTE_` + the name) and keeps the message for
//! `keyroute_last_error_message()`. Names and numbers never change meaning; new codes are
//! only added.
//!
//! ```
//! use keyroute::error::ErrorCode;
//! use keyroute::ring::RingError;
//!
//! let err = RingError::ZeroWeight("cache-a".into());
//! assert_eq!(err.code(), ErrorCode::ZeroWeight);
//! assert_eq!(err.code().as_str(), "ZERO_WEIGHT");
//! assert_eq!(ErrorCode::from_name("ZERO_WEIGHT"), Some(ErrorCode::ZeroWeight));
//! ```

mod code;

pub use code::ErrorCode;
