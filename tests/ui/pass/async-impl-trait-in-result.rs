use std::error::Error;
use std::fmt::Display;

use breakerbox::circuit_breaker;

// The fake return edge keeps `?` working: the error type is known from the
// signature even though the `Ok` type is an `impl Trait`.
#[circuit_breaker(group = "pass-async-impl-result")]
async fn parsed(s: &str) -> Result<impl Display, Box<dyn Error + Send + Sync>> {
    let n: u32 = s.parse()?;
    Ok(n * 2)
}

fn main() {
    drop(parsed("2"));
}
