use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail")]
struct Client;

struct Api;

#[circuit_breaker(group = "fail")]
impl Api {
    fn call(&self) {}
}

fn main() {
    let _ = Client;
    Api.call();
}
