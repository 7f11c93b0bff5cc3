use breakerbox::{circuit_breaker, CircuitOpen};

#[circuit_breaker(group = "track-caller")]
#[track_caller]
fn located() -> Result<u32, CircuitOpen> {
    Ok(std::panic::Location::caller().line())
}

fn main() {
    let _ = located();
}
