use std::fmt::Display;

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-impl-trait")]
fn joined(parts: impl IntoIterator<Item = impl Display>) -> Result<impl Display, CallError<()>> {
    Ok(parts.into_iter().map(|p| p.to_string()).collect::<String>())
}

fn main() {
    assert_eq!(joined([1, 2]).unwrap().to_string(), "12");
}
