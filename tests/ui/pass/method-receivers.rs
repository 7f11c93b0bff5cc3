use std::pin::Pin;
use std::sync::Arc;

use breakerbox::{circuit_breaker, CallError};

type R<T> = Result<T, CallError<()>>;

struct S(u32);

impl S {
    #[circuit_breaker(group = "pass-ref")]
    fn by_ref(&self) -> R<u32> {
        Ok(self.0)
    }

    #[circuit_breaker(group = "pass-mut")]
    fn by_mut(&mut self) -> R<()> {
        self.0 += 1;
        Ok(())
    }

    #[circuit_breaker(group = "pass-value")]
    fn by_value(self) -> R<u32> {
        Ok(self.0)
    }

    #[circuit_breaker(group = "pass-arc")]
    fn by_arc(self: Arc<Self>) -> R<u32> {
        Ok(self.0)
    }

    #[circuit_breaker(group = "pass-pin")]
    fn by_pin(self: Pin<&mut Self>) -> R<u32> {
        Ok(self.0)
    }
}

fn main() {
    let mut s = S(1);
    s.by_mut().unwrap();
    Pin::new(&mut s).by_pin().unwrap();
    Arc::new(S(s.by_ref().unwrap())).by_arc().unwrap();
    s.by_value().unwrap();
}
