use breakerbox::{circuit_breaker, CallError};

trait Store {
    // A declaration has no body to guard: put the attribute on the impl's method.
    #[circuit_breaker(group = "fail")]
    fn get(&self) -> Result<(), CallError<()>>;
}

fn main() {}
