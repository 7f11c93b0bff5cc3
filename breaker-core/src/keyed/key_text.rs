//! A key's text, as the registry's subscribers are told it
//! (`KeyedTransition::key`).

use std::fmt;
use std::sync::Arc;

/// The most bytes of a key's text kept for events; a longer one is cut
/// there, on a character boundary, and `…` is added.
const MAX_KEY_TEXT: usize = 256;

/// A key's text for events: a `String` key (what `&str`, `Box<str>` and
/// `Arc<str>` keys are kept as) as it is, unquoted, escaped by
/// `str::escape_debug`; any other key as its `Debug` writes it. Cut at
/// [`MAX_KEY_TEXT`] bytes, then `…`, however long the key.
pub(crate) fn key_text<K: fmt::Debug + 'static>(key: &K) -> Arc<str> {
    use std::fmt::Write;
    let mut text = Bounded {
        text: String::new(),
        cut: false,
    };
    // An error is the cut (or the key's own `Debug` failing): what was
    // written before it stands.
    let _ = match (key as &dyn std::any::Any).downcast_ref::<String>() {
        Some(string) => write!(text, "{}", string.escape_debug()),
        None => write!(text, "{key:?}"),
    };
    if text.cut {
        text.text.push('…');
    }
    text.text.into()
}

/// A `String` that takes at most [`MAX_KEY_TEXT`] bytes, then refuses every
/// write (so a huge key's `Debug` stops early, and one that goes on after a
/// refusal adds nothing).
struct Bounded {
    text: String,
    cut: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Err(fmt::Error);
        }
        let room = MAX_KEY_TEXT - self.text.len();
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&s[..end]);
        self.cut = true;
        Err(fmt::Error)
    }
}
