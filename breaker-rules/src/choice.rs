//! The keys whose value is one of a few words ([`Ty::Choice`](crate::Ty::Choice)):
//! [`Abandoned`].

use std::fmt;
use std::str::FromStr;

/// What a call dropped before its verdict counts as (key `abandoned`): a call
/// whose future was dropped (a caller's own `tokio::time::timeout`, a hedge
/// that lost, a cancelled request) or whose permit was dropped without
/// `success`, `failure` or `ignore`. A permit dropped while its thread panics
/// is a failure whatever this says.
///
/// The default is [`Ignore`](Abandoned::Ignore): a caller that gives up says
/// nothing certain about the dependency (a short deadline of one caller, a
/// hedge that another attempt won, a user who closed the page), and counting
/// it as a failure would open the circuit for the callers that wait.
/// [`Failure`](Abandoned::Failure) is for a group whose callers keep their own
/// deadlines: a dependency that hangs while every caller times out by itself
/// then trips the breaker, where under `Ignore` it never would.
///
/// ```
/// use breaker_rules::Abandoned;
///
/// assert_eq!("failure".parse(), Ok(Abandoned::Failure));
/// assert_eq!(Abandoned::default().to_string(), "ignore");
/// assert!("fail".parse::<Abandoned>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Abandoned {
    /// Neither success nor failure: counted in `abandoned`, and a probe's slot
    /// is given back for another probe.
    #[default]
    Ignore,
    /// A failure: counted in `failures` (not in `abandoned`) and against the
    /// failure policy in the closed state; an abandoned probe is a failed
    /// probe and reopens.
    Failure,
}

impl Abandoned {
    /// The words the key takes, in the order of the variants.
    pub const WORDS: &'static [&'static str] = &["ignore", "failure"];

    /// The word of the variant, as the attribute, the file and the variables
    /// write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Abandoned::Ignore => "ignore",
            Abandoned::Failure => "failure",
        }
    }

    /// The variant `word` names, `None` for any other word.
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "ignore" => Some(Abandoned::Ignore),
            "failure" => Some(Abandoned::Failure),
            _ => None,
        }
    }
}

impl fmt::Display for Abandoned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not one of [`Abandoned::WORDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownWord;

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("expected `ignore` or `failure`")
    }
}

impl std::error::Error for UnknownWord {}

impl FromStr for Abandoned {
    type Err = UnknownWord;

    fn from_str(word: &str) -> Result<Self, Self::Err> {
        Abandoned::from_word(word).ok_or(UnknownWord)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back_as_its_variant() {
        for word in Abandoned::WORDS {
            assert_eq!(Abandoned::from_word(word).unwrap().as_str(), *word);
        }
        assert_eq!(Abandoned::from_word("Failure"), None);
    }
}
