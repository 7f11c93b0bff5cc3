use breakerbox::circuit_breaker;

mod fallbacks {
    pub fn zero(_id: u32) -> u32 {
        0
    }
}

struct Svc;

impl Svc {
    #[circuit_breaker(group = "pass-fallback-path", fallback = fallbacks::zero)]
    fn assoc(id: u32) -> u32 {
        id
    }

    #[circuit_breaker(group = "pass-fallback-self-path", fallback = Self::none)]
    fn method(&self, id: u32) -> Option<u32> {
        Some(id)
    }

    fn none(&self, _id: u32) -> Option<u32> {
        None
    }
}

fn main() {
    assert_eq!(Svc::assoc(4), 4);
    assert_eq!(Svc.method(4), Some(4));
}
