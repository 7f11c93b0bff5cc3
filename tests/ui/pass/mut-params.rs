use breakerbox::circuit_breaker;

fn none(_v: Vec<u32>, _n: u32) -> Vec<u32> {
    Vec::new()
}

#[circuit_breaker(group = "pass-mut-params", fallback = none)]
fn push(mut v: Vec<u32>, mut n: u32) -> Vec<u32> {
    while n > 0 {
        v.push(n);
        n -= 1;
    }
    v
}

fn main() {
    assert_eq!(push(vec![], 2), [2, 1]);
}
