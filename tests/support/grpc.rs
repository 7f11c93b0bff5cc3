//! A real tonic server and client on 127.0.0.1 for the `tonic_*` tests: the
//! service `test.Echo` with a codec of its own (a message is a UTF-8 string),
//! so that neither protoc nor prost is needed.
//!
//! - `/test.Echo/Unary` echoes its request, or answers the status its
//!   server's `unary_code` says (trailers-only, as tonic answers an `Err`);
//! - `/test.Echo/Stream` sends `stream_messages` messages, stalls
//!   `stream_stall_ms`, then ends with `stream_code` in its trailers;
//! - `/test.Echo/Slow` answers after `slow_ms`.
//!
//! Each handler counts its calls.

#![allow(dead_code)] // Each test file uses its part.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::uri::PathAndQuery;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::{Code, Request, Response, Status};

#[path = "../../examples/grpc/codec.rs"]
mod codec;
pub use codec::Utf8Codec;

/// What the server answers, and how often each handler ran.
#[derive(Default)]
pub struct Behaviour {
    /// The code `Unary` answers with (0: it echoes).
    pub unary_code: AtomicI32,
    /// The messages `Stream` sends before its trailers.
    pub stream_messages: AtomicUsize,
    /// The code in `Stream`'s trailers.
    pub stream_code: AtomicI32,
    /// How long `Stream` stalls after its messages, before its trailers.
    pub stream_stall_ms: AtomicU64,
    /// How long `Slow` takes.
    pub slow_ms: AtomicU64,
    pub unary_calls: AtomicUsize,
    pub stream_calls: AtomicUsize,
    pub slow_calls: AtomicUsize,
}

impl Behaviour {
    pub fn answer(&self, code: Code) {
        self.unary_code.store(code as i32, SeqCst);
    }

    pub fn unary_calls(&self) -> usize {
        self.unary_calls.load(SeqCst)
    }

    pub fn stream_calls(&self) -> usize {
        self.stream_calls.load(SeqCst)
    }
}

/// The `test.Echo` service.
#[derive(Clone, Default)]
pub struct Echo(pub Arc<Behaviour>);

impl NamedService for Echo {
    const NAME: &'static str = "test.Echo";
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type MessageStream = Pin<Box<dyn futures::Stream<Item = Result<String, Status>> + Send>>;

fn status(code: i32, what: &str) -> Result<(), Status> {
    match Code::from_i32(code) {
        Code::Ok => Ok(()),
        code => Err(Status::new(code, format!("{what} answers {code:?}"))),
    }
}

/// `Unary` and `Slow` as tonic's unary service.
#[derive(Clone)]
struct UnaryHandler(Arc<Behaviour>, bool);

impl tower::Service<Request<String>> for UnaryHandler {
    type Response = Response<String>;
    type Error = Status;
    type Future = BoxFuture<Result<Response<String>, Status>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<String>) -> Self::Future {
        let behaviour = self.0.clone();
        let slow = self.1;
        Box::pin(async move {
            if slow {
                behaviour.slow_calls.fetch_add(1, SeqCst);
                let ms = behaviour.slow_ms.load(SeqCst);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                return Ok(Response::new(request.into_inner()));
            }
            behaviour.unary_calls.fetch_add(1, SeqCst);
            status(behaviour.unary_code.load(SeqCst), "Unary")?;
            Ok(Response::new(request.into_inner()))
        })
    }
}

/// `Stream` as tonic's server-streaming service.
#[derive(Clone)]
struct StreamHandler(Arc<Behaviour>);

impl tower::Service<Request<String>> for StreamHandler {
    type Response = Response<MessageStream>;
    type Error = Status;
    type Future = BoxFuture<Result<Response<MessageStream>, Status>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<String>) -> Self::Future {
        let behaviour = self.0.clone();
        Box::pin(async move {
            behaviour.stream_calls.fetch_add(1, SeqCst);
            let count = behaviour.stream_messages.load(SeqCst);
            let last = status(behaviour.stream_code.load(SeqCst), "Stream");
            let word = request.into_inner();
            let messages = (0..count).map(move |i| Ok(format!("{word} {i}")));
            let end = last.err().map(Err);
            let stall = Duration::from_millis(behaviour.stream_stall_ms.load(SeqCst));
            let stalled = futures::stream::once(tokio::time::sleep(stall));
            let stalled = futures::StreamExt::filter_map(stalled, |()| async { None });
            let stream: MessageStream = Box::pin(futures::StreamExt::chain(
                futures::stream::iter(messages),
                futures::StreamExt::chain(stalled, futures::stream::iter(end)),
            ));
            Ok(Response::new(stream))
        })
    }
}

impl tower::Service<http::Request<Body>> for Echo {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let behaviour = self.0.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(Utf8Codec);
            Ok(match request.uri().path() {
                "/test.Echo/Unary" => grpc.unary(UnaryHandler(behaviour, false), request).await,
                "/test.Echo/Slow" => grpc.unary(UnaryHandler(behaviour, true), request).await,
                "/test.Echo/Stream" => {
                    grpc.server_streaming(StreamHandler(behaviour), request)
                        .await
                }
                _ => Status::unimplemented("no such method").into_http(),
            })
        })
    }
}

/// Serves `echo` on 127.0.0.1, on a free port.
pub async fn serve(echo: Echo) -> SocketAddr {
    let incoming = tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse().unwrap())
        .expect("a free port on 127.0.0.1");
    let address = incoming.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(echo)
            .serve_with_incoming(incoming),
    );
    address
}

/// The origin of a server at `address`.
pub fn origin(address: SocketAddr) -> http::Uri {
    format!("http://{address}").parse().unwrap()
}

/// A channel to `address`, connecting on first use.
pub fn channel(address: SocketAddr) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from(origin(address)).connect_lazy()
}

/// The client's error: a `Status`, or the service's error not made ready.
fn not_ready(error: impl Into<BoxError>) -> Status {
    Status::unknown(error.into().to_string())
}

/// One `Unary` call of `word`.
pub async fn unary<T>(client: &mut tonic::client::Grpc<T>, word: &str) -> Result<String, Status>
where
    T: tonic::client::GrpcService<Body>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    client.ready().await.map_err(not_ready)?;
    let path = PathAndQuery::from_static("/test.Echo/Unary");
    let answer = client
        .unary(Request::new(word.to_owned()), path, Utf8Codec)
        .await?;
    Ok(answer.into_inner())
}

/// One `Stream` call of `word`: the messages read, and how the stream ended
/// (its trailers' status, or the call's).
pub async fn stream<T>(
    client: &mut tonic::client::Grpc<T>,
    word: &str,
) -> (Vec<String>, Result<(), Status>)
where
    T: tonic::client::GrpcService<Body>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let mut messages = Vec::new();
    if let Err(e) = client.ready().await {
        return (messages, Err(not_ready(e)));
    }
    let path = PathAndQuery::from_static("/test.Echo/Stream");
    let mut stream = match client
        .server_streaming(Request::new(word.to_owned()), path, Utf8Codec)
        .await
    {
        Ok(answer) => answer.into_inner(),
        Err(status) => return (messages, Err(status)),
    };
    loop {
        match stream.message().await {
            Ok(Some(message)) => messages.push(message),
            Ok(None) => return (messages, Ok(())),
            Err(status) => return (messages, Err(status)),
        }
    }
}

/// One `Slow` call.
pub async fn slow<T>(
    client: &mut tonic::client::Grpc<T>,
    request: Request<String>,
) -> Result<String, Status>
where
    T: tonic::client::GrpcService<Body>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    client.ready().await.map_err(not_ready)?;
    let path = PathAndQuery::from_static("/test.Echo/Slow");
    Ok(client.unary(request, path, Utf8Codec).await?.into_inner())
}
