use breakerbox::circuit_breaker;

#[circuit_breaker(treshold = 3, open_ms = "soon", backoff = 2, backoff = 3, fallback = "cached")]
const fn f() -> ! {
    loop {}
}

fn main() {}
