//! The expansion compiles and behaves beside user names it could collide with:
//! locals named like its own (`permit`, `breaker`, `__guard`, `__permit`, ...),
//! a local `type Result`, items named `Config`/`CallSite`/`registry`, a module
//! without the prelude, and a re-exported crate path given with `crate = ...`.

mod support;

use breakerbox::circuit_breaker;
use support::{metrics, AppError, REG};

#[allow(dead_code)]
struct Config;
#[allow(dead_code)]
struct CallSite;
#[allow(dead_code)]
fn registry() {}

type Result<T> = std::result::Result<T, AppError>;

#[circuit_breaker(group = "hygiene-locals", registry = &REG, threshold = 2)]
fn shadows_everything(permit: u32, breaker: u32, __permit: u32, __breaker: u32) -> Result<u32> {
    let __guard = permit + breaker;
    let __result = __guard + __permit + __breaker;
    let __open = __result;
    let __registry = __open;
    Ok(__registry)
}

#[test]
fn user_names_never_meet_generated_ones() {
    assert_eq!(shadows_everything(1, 2, 3, 4), Ok(10));
    assert_eq!(metrics("hygiene-locals").successes, 1);
}

mod reexport {
    pub use ::breakerbox as inner;
}

#[circuit_breaker(group = "hygiene-crate", registry = &REG, crate = crate::reexport::inner)]
fn through_a_reexport() -> Result<()> {
    Ok(())
}

#[test]
fn crate_names_the_path_generated_code_goes_through() {
    through_a_reexport().unwrap();
    assert_eq!(metrics("hygiene-crate").successes, 1);
}

mod no_prelude {
    #![no_implicit_prelude]

    #[::breakerbox::circuit_breaker(group = "hygiene-prelude", registry = &super::REG)]
    pub(super) fn bare() -> ::std::result::Result<u8, super::AppError> {
        ::std::result::Result::Ok(1)
    }

    #[::breakerbox::circuit_breaker(group = "hygiene-prelude-async", registry = &super::REG)]
    pub(super) async fn bare_async() -> ::std::result::Result<u8, super::AppError> {
        ::std::result::Result::Ok(2)
    }
}

#[tokio::test]
async fn generated_code_needs_no_prelude() {
    assert_eq!(no_prelude::bare(), Ok(1));
    assert_eq!(no_prelude::bare_async().await, Ok(2));
}
