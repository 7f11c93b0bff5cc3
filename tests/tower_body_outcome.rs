//! The tower layer's `at_end_of_body` mode records a response the classifier
//! counts as a success when its body ends, through the `RecordedBody` the
//! reqwest middleware records through too: a success at the end, a failure
//! when reading fails, abandoned when dropped part-read (freeing a probe
//! slot), a success when dropped unread; a failing head at once; trailers
//! judged when a judge is given.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use breakerbox::tower::{CircuitBreakerLayer, RecordedBody, Verdict};
use breakerbox::{Breaker, Config, ManualClock, State};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tower::{service_fn, Layer, ServiceExt};

mod support;

use support::{poll_ready, Tally};

/// A body of the frames given, then its end; a `None` frame is a read error.
#[derive(Debug, Default)]
struct Frames(VecDeque<Option<Frame<&'static [u8]>>>);

impl Frames {
    fn data(chunks: &[&'static [u8]]) -> Self {
        Frames(chunks.iter().map(|c| Some(Frame::data(*c))).collect())
    }

    fn then_error(mut self) -> Self {
        self.0.push_back(None);
        self
    }

    fn then_trailers(mut self, status: &'static str) -> Self {
        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static(status));
        self.0.push_back(Some(Frame::trailers(trailers)));
        self
    }
}

impl Body for Frames {
    type Data = &'static [u8];
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Poll::Ready(
            self.0.pop_front().map(|frame| {
                frame.ok_or_else(|| std::io::Error::other("connection reset mid-body"))
            }),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}

fn breaker(group: &str, clock: &ManualClock) -> Breaker {
    let config = Config::builder()
        .threshold(1)
        .open(Duration::from_secs(10))
        .build()
        .unwrap();
    Breaker::with_clock(group, config, clock.clone())
}

/// One request through the layer in `at_end_of_body` mode to a service
/// answering `status` with `body`.
fn respond(breaker: &Breaker, status: u16, body: Frames) -> http::Response<RecordedBody<Frames>> {
    let layer = CircuitBreakerLayer::for_breaker(breaker).at_end_of_body();
    let mut body = Some(body);
    let service = service_fn(move |_: http::Request<()>| {
        let response = http::Response::builder()
            .status(status)
            .body(body.take().expect("one request"))
            .unwrap();
        std::future::ready(Ok::<_, Infallible>(response))
    });
    poll_ready(layer.layer(service).oneshot(http::Request::new(()))).unwrap()
}

#[test]
fn a_success_is_recorded_at_the_end_of_the_body_not_at_the_head() {
    let b = breaker("body-end", &ManualClock::new());
    let response = respond(&b, 200, Frames::data(&[b"a", b"b"]));
    assert_eq!(
        Tally::of(&b.metrics()),
        Tally::default(),
        "the head records nothing"
    );
    let bytes = poll_ready(response.into_body().collect())
        .unwrap()
        .to_bytes();
    assert_eq!(&bytes[..], b"ab");
    assert_eq!(Tally::of(&b.metrics()), Tally::calls(1).successes(1));
}

#[test]
fn an_error_while_reading_the_body_is_a_failure_and_trips() {
    let b = breaker("body-error", &ManualClock::new());
    let response = respond(&b, 200, Frames::data(&[b"a"]).then_error());
    assert!(poll_ready(response.into_body().collect()).is_err());
    assert_eq!(Tally::of(&b.metrics()), Tally::calls(1).failures(1));
    assert_eq!(b.state(), State::Open);
}

#[test]
fn a_body_dropped_part_read_is_abandoned_and_frees_the_probe_slot() {
    let clock = ManualClock::new();
    let b = breaker("body-dropped", &clock);
    b.try_acquire().unwrap().failure();
    clock.advance(Duration::from_secs(10));
    let mut body = respond(&b, 200, Frames::data(&[b"a", b"b"])).into_body();
    assert_eq!(b.state(), State::HalfOpen);
    assert!(b.try_acquire().is_err(), "the probe's body holds the slot");
    let first = poll_ready(body.frame()).unwrap().unwrap();
    assert_eq!(first.into_data().unwrap(), b"a");
    drop(body);
    assert_eq!(b.metrics().abandoned, 1);
    assert_eq!(b.metrics().successes, 0);
    b.try_acquire().expect("the slot is free again").success();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_body_dropped_unread_is_a_success_as_its_head_said() {
    let b = breaker("body-unread", &ManualClock::new());
    drop(respond(&b, 200, Frames::data(&[b"a"])));
    assert_eq!(Tally::of(&b.metrics()), Tally::calls(1).successes(1));
}

#[test]
fn a_failing_head_is_recorded_when_it_comes() {
    let b = breaker("body-head-fails", &ManualClock::new());
    let response = respond(&b, 503, Frames::data(&[b"busy"]));
    assert_eq!(Tally::of(&b.metrics()), Tally::calls(1).failures(1));
    assert!(response.body().is_recorded());
    drop(response);
    assert_eq!(Tally::of(&b.metrics()), Tally::calls(1).failures(1));
}

fn grpc_status(trailers: &http::HeaderMap) -> Verdict {
    match trailers.get("grpc-status").map(|s| s.as_bytes()) {
        Some(b"0") | None => Verdict::Success,
        Some(_) => Verdict::Failure,
    }
}

#[test]
fn trailers_judged_by_the_judge_decide_the_outcome() {
    let b = breaker("body-trailers", &ManualClock::new());
    for (status, failures) in [("0", 0), ("14", 1)] {
        let permit = b.try_acquire_owned().unwrap();
        let frames = Frames::data(&[b"message"]).then_trailers(status);
        let body = RecordedBody::new(frames, permit).judge_trailers(grpc_status);
        poll_ready(body.collect()).unwrap();
        assert_eq!(b.metrics().failures, failures, "grpc-status {status}");
    }
    assert_eq!(b.metrics().successes, 1);
}
