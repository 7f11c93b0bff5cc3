mod my_framework {
    pub mod resilience {
        pub use ::breakerbox;
    }
}

use breakerbox::{circuit_breaker, CallError};

#[circuit_breaker(group = "pass-crate", abandoned = "ignore",
    crate = crate::my_framework::resilience::breakerbox)]
fn through_reexport() -> Result<(), CallError<()>> {
    Ok(())
}

fn main() {
    through_reexport().unwrap();
}
