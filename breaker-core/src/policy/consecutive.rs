//! The consecutive policy: trips on the `threshold`-th failure in a row. Its count
//! lives in the closed state word ([`crate::state`]), so counting a failure and
//! tripping on it read and swap one word; `breaker::transition` applies these
//! rules to the word of the right generation.

use crate::state::Word;

/// The closed `word` after one more failure, and whether it reaches `threshold`.
/// The count saturates at [`crate::state::MAX_FAILURES`].
#[inline(always)]
pub(crate) fn after_failure(word: Word, threshold: u32) -> (Word, bool) {
    let failures = word.failures().saturating_add(1);
    (word.with_failures(failures), failures >= threshold)
}

/// The closed `word` after a success: its count reset, or `None` when there is
/// nothing to reset (the success then writes nothing).
#[inline(always)]
pub(crate) fn after_success(word: Word) -> Option<Word> {
    (word.failures() != 0).then(|| word.with_failures(0))
}
