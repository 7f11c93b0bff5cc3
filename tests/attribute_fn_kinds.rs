//! Every kind of fn the attribute guards keeps its signature and behaviour, and
//! each call is recorded once: methods with every receiver, associated fns,
//! generics with where-clauses, `impl Trait`, `unsafe fn`, recursion, fns that
//! return a future through a trailing `async move {}` or `Box::pin(async move {})`,
//! and methods under `#[async_trait]`.

mod support;

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use breakerbox::circuit_breaker;
use support::{metrics, tally, AppError, Tally, REG};

#[derive(Clone, Debug, Default)]
struct Counter {
    n: u32,
}

impl Counter {
    #[circuit_breaker(group = "kinds-ref", registry = &REG)]
    fn by_ref(&self) -> Result<u32, AppError> {
        Ok(self.n)
    }

    #[circuit_breaker(group = "kinds-mut", registry = &REG)]
    fn by_mut(&mut self, by: u32) -> Result<u32, AppError> {
        self.n += by;
        Ok(self.n)
    }

    #[circuit_breaker(group = "kinds-value", registry = &REG)]
    fn by_value(self) -> Result<u32, AppError> {
        Ok(self.n)
    }

    #[circuit_breaker(group = "kinds-arc", registry = &REG)]
    fn by_arc(self: Arc<Self>) -> Result<usize, AppError> {
        Ok(Arc::strong_count(&self))
    }

    #[circuit_breaker(group = "kinds-pin", registry = &REG)]
    fn by_pin(mut self: Pin<&mut Self>) -> Result<u32, AppError> {
        self.n += 1;
        Ok(self.n)
    }

    #[circuit_breaker(group = "kinds-assoc", registry = &REG)]
    fn make(n: u32) -> Result<Self, AppError> {
        Ok(Counter { n })
    }

    #[circuit_breaker(group = "kinds-async-mut", registry = &REG)]
    async fn async_mut(&mut self) -> Result<u32, AppError> {
        tokio::task::yield_now().await;
        self.n *= 10;
        Ok(self.n)
    }
}

#[test]
fn methods_with_every_receiver_kind_run_and_record_once() {
    let mut c = Counter::make(1).unwrap();
    assert_eq!(c.by_ref(), Ok(1));
    assert_eq!(c.by_mut(2), Ok(3));
    assert_eq!(Pin::new(&mut c).by_pin(), Ok(4));
    assert_eq!(Arc::new(c.clone()).by_arc(), Ok(1));
    assert_eq!(c.by_value(), Ok(4));
    for group in [
        "kinds-ref",
        "kinds-mut",
        "kinds-value",
        "kinds-arc",
        "kinds-pin",
        "kinds-assoc",
    ] {
        assert_eq!(tally(group), Tally::calls(1).successes(1), "{group}");
    }
}

#[tokio::test]
async fn an_async_method_with_mut_self_keeps_its_borrow() {
    let mut c = Counter { n: 2 };
    assert_eq!(c.async_mut().await, Ok(20));
    assert_eq!(c.n, 20);
    assert_eq!(tally("kinds-async-mut"), Tally::calls(1).successes(1));
}

#[circuit_breaker(group = "kinds-generic", registry = &REG)]
fn describe<T, U>(items: &[T], sep: U) -> Result<String, AppError>
where
    T: Display,
    U: AsRef<str>,
{
    Ok(items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(sep.as_ref()))
}

#[test]
fn generic_fns_with_where_clauses_share_one_breaker_across_instantiations() {
    assert_eq!(describe(&[1, 2], ",").unwrap(), "1,2");
    assert_eq!(describe(&["a", "b"], String::from("-")).unwrap(), "a-b");
    assert_eq!(tally("kinds-generic"), Tally::calls(2).successes(2));
}

#[circuit_breaker(group = "kinds-impl", registry = &REG)]
fn impl_trait(items: impl IntoIterator<Item = u32>) -> Result<impl Display, AppError> {
    Ok(items.into_iter().sum::<u32>())
}

#[test]
fn impl_trait_in_argument_and_return_position_is_kept() {
    assert_eq!(impl_trait(vec![1, 2, 3]).unwrap().to_string(), "6");
    assert_eq!(tally("kinds-impl"), Tally::calls(1).successes(1));
}

/// # Safety
/// `p` must point to a live `u32`.
#[circuit_breaker(group = "kinds-unsafe", registry = &REG)]
unsafe fn read(p: *const u32) -> Result<u32, AppError> {
    Ok(unsafe { *p })
}

#[test]
fn an_unsafe_fn_stays_unsafe_and_runs() {
    let x = 5u32;
    assert_eq!(unsafe { read(&x) }, Ok(5));
    assert_eq!(tally("kinds-unsafe"), Tally::calls(1).successes(1));
}

#[circuit_breaker(group = "kinds-recursive", registry = &REG, threshold = 100)]
fn factorial(n: u64) -> Result<u64, AppError> {
    if n <= 1 {
        return Ok(1);
    }
    Ok(n * factorial(n - 1)?)
}

#[test]
fn a_recursive_fn_records_one_outcome_per_level() {
    assert_eq!(factorial(5), Ok(120));
    assert_eq!(tally("kinds-recursive"), Tally::calls(5).successes(5));
}

#[circuit_breaker(group = "kinds-tail", registry = &REG)]
#[allow(clippy::manual_async_fn)] // this shape is what the test is about
fn tail_future(x: u32) -> impl Future<Output = Result<u32, AppError>> {
    async move {
        tokio::task::yield_now().await;
        if x == 0 {
            Err(AppError::Down)
        } else {
            Ok(x)
        }
    }
}

#[circuit_breaker(group = "kinds-boxed", registry = &REG)]
fn boxed_future(x: u32) -> Pin<Box<dyn Future<Output = Result<u32, AppError>> + Send>> {
    Box::pin(async move {
        tokio::task::yield_now().await;
        Ok(x + 1)
    })
}

#[tokio::test]
async fn future_returning_fns_claim_when_polled_not_when_created() {
    let created = tail_future(1);
    let boxed = boxed_future(1);
    assert!(REG.get("kinds-tail").is_none());
    assert!(REG.get("kinds-boxed").is_none());
    assert_eq!(created.await, Ok(1));
    assert_eq!(tail_future(0).await, Err(AppError::Down));
    assert_eq!(tokio::spawn(boxed).await.unwrap(), Ok(2));
    assert_eq!(
        tally("kinds-tail"),
        Tally::calls(2).successes(1).failures(1)
    );
    assert_eq!(tally("kinds-boxed"), Tally::calls(1).successes(1));
}

fn send<F: Future + Send>(f: F) -> F {
    f
}

#[async_trait::async_trait]
trait Search {
    async fn search(&self, q: String) -> Result<String, AppError>;
    async fn cached(&self, q: String) -> Result<String, AppError>;
}

struct Backend;

#[async_trait::async_trait]
impl Search for Backend {
    #[circuit_breaker(group = "kinds-async-trait", registry = &REG, threshold = 1, fallback = cached)]
    async fn search(&self, q: String) -> Result<String, AppError> {
        tokio::task::yield_now().await;
        if q == "fail" {
            Err(AppError::Down)
        } else {
            Ok(format!("live {q}"))
        }
    }

    async fn cached(&self, q: String) -> Result<String, AppError> {
        Ok(format!("cached {q}"))
    }
}

#[tokio::test]
async fn a_method_under_async_trait_is_guarded_with_its_fallback() {
    let backend: Arc<dyn Search + Send + Sync> = Arc::new(Backend);
    assert_eq!(backend.search("a".into()).await.unwrap(), "live a");
    let _ = backend.search("fail".into()).await;
    let fut = backend.search("b".into());
    assert_eq!(send(fut).await.unwrap(), "cached b");
    let m = metrics("kinds-async-trait");
    assert_eq!(m.calls, 2);
    assert_eq!(m.successes, 1);
    assert_eq!(m.failures, 1);
    assert_eq!(m.rejected, 1);
}
