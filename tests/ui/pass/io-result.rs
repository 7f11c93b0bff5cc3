use std::io;

use breakerbox::circuit_breaker;

// `io::Error: From<CircuitOpen>`, so an `io::Result` fn needs no fallback.
#[circuit_breaker(group = "pass-io-result")]
fn read_config(path: &str) -> io::Result<String> {
    if path.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "empty path"));
    }
    Ok(path.to_owned())
}

fn main() {
    assert_eq!(read_config("a.toml").unwrap(), "a.toml");
}
