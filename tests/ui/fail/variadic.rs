use breakerbox::circuit_breaker;

#[circuit_breaker(group = "fail")]
unsafe extern "C" fn log(fmt: *const u8, mut args: ...) -> i32 {
    let _ = (fmt, &mut args);
    0
}

fn main() {}
