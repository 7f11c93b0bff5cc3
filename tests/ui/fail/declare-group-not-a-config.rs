// `declare_group!` takes a `const` `Config`: anything else is a type error,
// reported at the macro call.
const UPSTREAM: u32 = 5;
breakerbox::declare_group!("upstream", UPSTREAM);

fn main() {}
