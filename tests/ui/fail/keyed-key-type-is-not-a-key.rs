use breakerbox::{circuit_breaker, CallError};

struct Request {
    host: String,
}

#[circuit_breaker(group = "hosts", key = request, threshold = 3)]
fn fetch(request: &Request) -> Result<(), CallError<()>> {
    let _ = &request.host;
    Ok(())
}

#[circuit_breaker(group = "hosts-f64", key = weight * 2.0)]
fn weighed(weight: f64) -> Result<(), CallError<()>> {
    let _ = weight;
    Ok(())
}

fn main() {}
