use breakerbox::{circuit_breaker, CallError};

// A key whose value (or name) cannot be read gets its own error and nothing
// more: no other key is judged as if it were absent.

// Not "missing `group`" as well.
#[circuit_breaker(grop = "search")]
fn misspelt_group() -> Result<(), CallError<()>> {
    Ok(())
}

// Not "`failure_rate` needs a window" as well.
#[circuit_breaker(group = "a", window_ms = "10s", failure_rate = 0.5)]
fn unreadable_window() -> Result<(), CallError<()>> {
    Ok(())
}

// Not "`max_open_ms` must be at least `open_ms`" (against the default) as well.
#[circuit_breaker(group = "a", open_ms = 500ms, max_open_ms = 1_000)]
fn unreadable_open_ms() -> Result<(), CallError<()>> {
    Ok(())
}

// Not "without `fallback`, ... not `impl Trait`" as well.
#[circuit_breaker(group = "a", fallback = "cached")]
fn unreadable_fallback() -> impl std::fmt::Display {
    1
}

fn main() {}
