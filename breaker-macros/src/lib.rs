//! The `#[circuit_breaker]` attribute of the `breaker` crate.
