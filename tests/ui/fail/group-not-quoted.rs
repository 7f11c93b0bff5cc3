use breakerbox::{circuit_breaker, CallError};

// One mistake, one error: the unquoted name is reported, and `group` is not
// then reported missing as well.
#[circuit_breaker(group = search, threshold = 3)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {}
