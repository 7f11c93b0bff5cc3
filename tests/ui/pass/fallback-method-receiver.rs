use breakerbox::circuit_breaker;

struct Api {
    cache: Vec<u8>,
}

impl Api {
    #[circuit_breaker(group = "pass-fallback-method", fallback = cached)]
    fn bytes(&self, n: usize) -> Vec<u8> {
        vec![0; n]
    }

    fn cached(&self, n: usize) -> Vec<u8> {
        self.cache.iter().copied().take(n).collect()
    }
}

fn main() {
    let api = Api { cache: vec![1, 2] };
    assert_eq!(api.bytes(3).len(), 3);
}
