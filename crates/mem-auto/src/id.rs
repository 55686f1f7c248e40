//! Entry ids: `M` + the first 8 lowercase hex digits of SHA-256 of the entry's normalised text
//! (SPEC "One memory, not three": every memory item has a stable id that round-trips exactly).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// Punctuation trimmed from the end of an entry before hashing (ASCII and full-width).
const TRAILING_PUNCTUATION: &[char] = &[
    '.', ',', ';', ':', '!', '?', '。', '，', '；', '：', '！', '？', '、', '…',
];

/// The normalised text an id is computed from: lowercased, whitespace runs collapsed to one
/// space, trimmed, trailing punctuation (and the spaces before it) removed.
///
/// `"Use  pnpm, not npm."` → `"use pnpm, not npm"`.
pub fn normalise(text: &str) -> String {
    let collapsed = text
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    collapsed
        .trim_end_matches(|c: char| TRAILING_PUNCTUATION.contains(&c) || c.is_whitespace())
        .to_owned()
}

/// The id of a `memories.md` entry: `M` + 8 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId([u8; 4]);

impl EntryId {
    /// The id of an entry whose text (without the leading `- `) is `text`.
    pub fn of(text: &str) -> EntryId {
        let digest = Sha256::digest(normalise(text).as_bytes());
        EntryId([digest[0], digest[1], digest[2], digest[3]])
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "M{:02x}{:02x}{:02x}{:02x}",
            self.0[0], self.0[1], self.0[2], self.0[3]
        )
    }
}

/// Why a string is not an entry id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{given:?} is not a memories.md entry id: expected `M` followed by 8 lowercase hex digits, e.g. M3f9a0c1e"
)]
pub struct IdError {
    /// What was given.
    pub given: String,
}

impl FromStr for EntryId {
    type Err = IdError;

    /// Accepts exactly `M` + 8 lowercase hex digits (case-sensitive prefix, no spaces).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || IdError {
            given: s.to_owned(),
        };
        let hex = s.strip_prefix('M').ok_or_else(err)?;
        if hex.len() != 8 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(err());
        }
        let mut out = [0u8; 4];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| err())?;
        }
        Ok(EntryId(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_case_space_and_trailing_punctuation() {
        assert_eq!(normalise("  Use  pnpm,\tnot npm. "), "use pnpm, not npm");
        assert_eq!(normalise("以后提交信息用英文。"), "以后提交信息用英文");
        assert_eq!(normalise("v1.2 is fine!?"), "v1.2 is fine");
    }

    #[test]
    fn same_normalised_text_same_id_and_round_trip() {
        let a = EntryId::of("Use pnpm, not npm.");
        let b = EntryId::of("use   pnpm, NOT npm");
        assert_eq!(a, b);
        let shown = a.to_string();
        assert_eq!(shown.len(), 9);
        assert!(shown.starts_with('M'));
        assert_eq!(shown.parse::<EntryId>().unwrap(), a);
        assert_ne!(EntryId::of("use npm"), a);
    }

    #[test]
    fn parser_accepts_exactly_the_form() {
        assert!("M3f9a0c1e".parse::<EntryId>().is_ok());
        for bad in [
            "m3f9a0c1e",
            "M3F9A0C1E",
            "M3f9a0c1",
            "M3f9a0c1e0",
            " M3f9a0c1e",
            "L42",
            "M3f9a0c1g",
            "",
            "N:project/x.md",
        ] {
            let err = bad.parse::<EntryId>().unwrap_err();
            assert_eq!(err.given, bad);
        }
    }
}
