use breakerbox::{circuit_breaker, CallError};

fn by_value(_e: CallError<u8>) -> bool {
    true
}

#[circuit_breaker(group = "fail", is_failure = by_value)]
fn f() -> Result<(), CallError<u8>> {
    Ok(())
}

fn main() {}
