#![no_implicit_prelude]

extern crate breaker;
extern crate std;

#[::breaker::circuit_breaker(group = "pass-no-prelude")]
fn f() -> ::std::result::Result<(), ::breaker::CallError<()>> {
    ::std::result::Result::Ok(())
}

#[::breaker::circuit_breaker(group = "pass-no-prelude-async")]
async fn g() -> ::std::result::Result<(), ::breaker::CallError<()>> {
    ::std::result::Result::Ok(())
}

fn main() {
    f().unwrap();
    let _ = g();
}
