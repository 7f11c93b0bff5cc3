use breakerbox::{circuit_breaker, CallError};

// The error says to write `key = value`, with the value the user wrote.
#[circuit_breaker(group = "search", threshold: 3)]
fn numeric_key() -> Result<(), CallError<()>> {
    Ok(())
}

// And a `group` written with a colon is not then reported missing as well.
#[circuit_breaker(group: "search")]
fn group_key() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
