use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail")]
fn serve() -> ! {
    loop {}
}

fn main() {}
