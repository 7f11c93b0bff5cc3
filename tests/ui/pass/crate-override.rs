mod my_framework {
    pub mod resilience {
        pub use ::breaker;
    }
}

use breaker::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-crate", crate = crate::my_framework::resilience::breaker)]
fn through_reexport() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    through_reexport().unwrap();
}
