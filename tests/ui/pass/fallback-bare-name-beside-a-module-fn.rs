#![deny(warnings)]

use breakerbox::circuit_breaker;

struct Repo;

// A fn of the module with the name of a method's fallback, and another
// signature: the bare name is the associated fn, and nothing is refused.
fn cached(id: &str) -> u32 {
    id.len() as u32
}

impl Repo {
    #[circuit_breaker(group = "pass-bare-name-beside-a-module-fn", fallback = cached)]
    fn load(&self, id: u32) -> u32 {
        id
    }

    #[circuit_breaker(group = "pass-bare-name-beside-a-module-fn-async", fallback = cached_async)]
    async fn load_async(&self, id: u32) -> u32 {
        id
    }

    fn cached(&self, id: u32) -> u32 {
        id + 1
    }

    async fn cached_async(&self, id: u32) -> u32 {
        id + 1
    }
}

fn main() {
    assert_eq!(Repo.load(1), 1);
    assert_eq!(cached("ab"), 2);
}
