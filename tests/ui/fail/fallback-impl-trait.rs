use std::fmt::Display;

use breakerbox::circuit_breaker;

fn cached() -> impl Display {
    0
}

#[circuit_breaker(group = "fail", fallback = cached)]
fn show() -> impl Display {
    1
}

async fn cached_later() -> impl Display {
    0
}

#[circuit_breaker(group = "fail", fallback = cached_later)]
async fn show_later() -> impl Display {
    1
}

fn main() {}
