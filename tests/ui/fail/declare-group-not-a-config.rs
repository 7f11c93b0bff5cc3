// `declare_group!` takes a `const` `Config`: anything else is a type error at
// the name passed.
const UPSTREAM: u32 = 5;
breaker::declare_group!("upstream", UPSTREAM);

fn main() {}
