use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(threshold = 3)]
fn f() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    // The fn is still emitted: calling it adds no error of its own.
    let _ = f();
}
