use std::fmt::Display;

use breakerbox::circuit_breaker;

fn placeholder<T: Display, O: Default>(_item: T) -> O {
    O::default()
}

#[circuit_breaker(group = "pass-fallback-generic", fallback = placeholder)]
fn render<T: Display>(item: T) -> String {
    item.to_string()
}

#[circuit_breaker(group = "pass-fallback-turbofish", fallback = placeholder::<T, Vec<u8>>)]
fn bytes<T: Display>(item: T) -> Vec<u8> {
    item.to_string().into_bytes()
}

fn main() {
    assert_eq!(render(5), "5");
    assert_eq!(bytes('a'), b"a");
}
