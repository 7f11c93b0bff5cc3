// A key type of the user's own must be `Debug`: its text names the key in
// keyed transitions (`Event::KeyedTransition`, the `tracing` events). The
// error points at the key type.
use breakerbox::{circuit_breaker, AsKey};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard(u16);

impl AsKey for Shard {
    type Owned = Shard;
    type Lookup = Shard;
    fn lookup(&self) -> &Shard {
        self
    }
    fn to_owned_key(&self) -> Shard {
        *self
    }
}

#[circuit_breaker(group = "shards", key = shard)]
fn read(shard: Shard) -> Result<u16, std::io::Error> {
    Ok(shard.0)
}

fn main() {
    let _ = read(Shard(1));
}
