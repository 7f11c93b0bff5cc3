use std::fmt::Display;

use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail")]
fn show() -> impl Display {
    1
}

fn main() {}
