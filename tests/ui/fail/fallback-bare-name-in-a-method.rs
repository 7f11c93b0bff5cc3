use breakerbox::circuit_breaker;

struct Repo;

fn cached(_repo: &Repo, id: u32) -> u32 {
    id
}

fn stale(_repo: &Repo, id: u32) -> u32 {
    id
}

async fn cached_async(_repo: &Repo, id: u32) -> u32 {
    id
}

impl Repo {
    // A bare name in a method is `Self::cached`; the module's fn is `self::cached`.
    #[circuit_breaker(group = "fail", fallback = cached)]
    fn load(&self, id: u32) -> u32 {
        id
    }

    #[circuit_breaker(group = "fail", fallback = cached_async)]
    async fn load_async(&self, id: u32) -> u32 {
        id
    }

    // Both an associated fn and the module's fn: the name says neither.
    #[circuit_breaker(group = "fail", fallback = stale)]
    fn refresh(&self, id: u32) -> u32 {
        id
    }

    fn stale(&self, id: u32) -> u32 {
        id
    }

    // An associated fn without a receiver calls a bare name as the module's:
    // rustc offers `Self::` for the associated one.
    #[circuit_breaker(group = "fail", fallback = fresh)]
    fn create(id: u32) -> u32 {
        id
    }

    fn fresh(id: u32) -> u32 {
        id
    }
}

fn main() {}
