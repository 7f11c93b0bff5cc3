#![no_implicit_prelude]

extern crate breakerbox;
extern crate std;

#[::breakerbox::circuit_breaker(group = "pass-no-prelude")]
fn f() -> ::std::result::Result<(), ::breakerbox::CallError<()>> {
    ::std::result::Result::Ok(())
}

#[::breakerbox::circuit_breaker(group = "pass-no-prelude-async")]
async fn g() -> ::std::result::Result<(), ::breakerbox::CallError<()>> {
    ::std::result::Result::Ok(())
}

fn main() {
    f().unwrap();
    let _ = g();
}
