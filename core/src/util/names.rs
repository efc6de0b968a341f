//! Names in messages: lists joined at compile time, and the spelling rule names are looked
//! up by.

/// The length of `names` joined by `", "`.
pub(crate) const fn joined_len(names: &[&str]) -> usize {
    let mut len = 0;
    let mut i = 0;
    while i < names.len() {
        len += names[i].len() + if i == 0 { 0 } else { 2 };
        i += 1;
    }
    len
}

/// `names` joined by `", "` at compile time (`N` is [`joined_len`]): lists of names in
/// messages cost no code.
pub(crate) const fn join<const N: usize>(names: &[&str]) -> [u8; N] {
    let mut out = [0u8; N];
    let (mut at, mut i) = (0, 0);
    while i < names.len() {
        if i > 0 {
            out[at] = b',';
            out[at + 1] = b' ';
            at += 2;
        }
        let name = names[i].as_bytes();
        let mut k = 0;
        while k < name.len() {
            out[at] = name[k];
            at += 1;
            k += 1;
        }
        i += 1;
    }
    out
}

/// `bytes` as text, at compile time.
pub(crate) const fn utf8(bytes: &[u8]) -> &str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("names are UTF-8"),
    }
}

/// Whether `given` spells `name`: `_` and `-` are interchangeable, case is ignored.
pub(crate) fn same_name(name: &str, given: &str) -> bool {
    let norm = |c: u8| match c {
        b'_' => b'-',
        c => c.to_ascii_lowercase(),
    };
    name.len() == given.len()
        && name
            .bytes()
            .zip(given.bytes())
            .all(|(a, b)| norm(a) == norm(b))
}
