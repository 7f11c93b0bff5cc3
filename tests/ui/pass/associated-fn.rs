use breakerbox::{circuit_breaker, CallError};

struct Conn;

impl Conn {
    #[circuit_breaker(group = "pass-assoc")]
    fn open(addr: &str) -> Result<Self, CallError<String>> {
        if addr.is_empty() {
            return Err(CallError::Inner("empty".into()));
        }
        Ok(Conn)
    }
}

fn main() {
    let _ = Conn::open("db:5432");
}
