use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-async-fn")]
async fn fetch(id: u32) -> Result<u32, CallError<std::io::Error>> {
    Ok(id)
}

fn main() {
    let _future = fetch(1);
}
