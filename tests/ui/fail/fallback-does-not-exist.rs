use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail", fallback = cahced)]
fn lookup(id: u32) -> Option<u32> {
    Some(id)
}

struct S;

impl S {
    #[circuit_breaker(group = "fail", fallback = missing)]
    fn method(&self) -> Option<u32> {
        None
    }
}

fn main() {}
