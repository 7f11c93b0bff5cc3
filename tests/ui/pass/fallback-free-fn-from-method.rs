use breakerbox::circuit_breaker;

struct Repo {
    name: &'static str,
}

fn cached(repo: &Repo, id: u32) -> String {
    format!("{} cached {id}", repo.name)
}

impl Repo {
    // A path names the free fn; it still gets the receiver first.
    #[circuit_breaker(group = "pass-fallback-free-from-method", fallback = self::cached)]
    fn load(&self, id: u32) -> String {
        format!("{} live {id}", self.name)
    }
}

fn main() {
    assert_eq!(Repo { name: "r" }.load(1), "r live 1");
}
