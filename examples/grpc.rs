//! gRPC through tonic: `cargo run --example grpc --features tonic`.
//!
//! Two real tonic servers on 127.0.0.1, *north* and *south*, serve
//! `demo.Stock/Count` (unary) and `demo.Stock/Watch` (a server stream). One
//! client calls both through `breakerbox::tonic::CircuitBreakerLayer`, a
//! breaker per `:authority`. When north answers `UNAVAILABLE` (trailers-only,
//! as tonic answers a handler's error), its breaker opens after three calls and
//! the next calls are answered `UNAVAILABLE` by the layer, without reaching
//! north, with a pushback that tells gRPC retries not to retry; south is
//! served all along. A stream from south that fails in its trailers after two
//! messages counts as the failure it is. When north heals, one probe closes
//! its breaker. The process exits non-zero if any answer differs from what
//! the timeline expects.
//!
//! The messages are UTF-8 strings with a codec of the example's own: no
//! `.proto`, no protoc.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use breakerbox::tonic::{CircuitBreaker, CircuitBreakerLayer, REFUSED_HEADER};
use breakerbox::{registry, Config, State};
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::Channel;
use tonic::{Code, Request, Response, Status};
use tower::Layer;

/// Three failures open a server's breaker for one second.
const STOCK: Config = match Config::builder()
    .threshold(3)
    .open(Duration::from_secs(1))
    .build()
{
    Ok(config) => config,
    Err(_) => panic!("a valid config"),
};

// The codec: a message is its UTF-8 bytes.
#[path = "grpc/codec.rs"]
mod codec;
use codec::Utf8Codec as Utf8;

// ---------------------------------------------------------------------------
// The server: `Count` answers a number, or UNAVAILABLE while sick; `Watch`
// sends two messages, then fails with INTERNAL in its trailers.
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Stock {
    sick: Arc<AtomicBool>,
    counts: Arc<AtomicUsize>,
}

impl NamedService for Stock {
    const NAME: &'static str = "demo.Stock";
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Messages = Pin<Box<dyn futures_util::Stream<Item = Result<String, Status>> + Send>>;

/// `Count` as tonic's unary service.
struct Count(Stock);

impl tower::Service<Request<String>> for Count {
    type Response = Response<String>;
    type Error = Status;
    type Future = BoxFuture<Result<Response<String>, Status>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<String>) -> Self::Future {
        let stock = self.0.clone();
        Box::pin(async move {
            stock.counts.fetch_add(1, SeqCst);
            if stock.sick.load(SeqCst) {
                return Err(Status::unavailable("the warehouse database is down"));
            }
            Ok(Response::new(format!("{}: 12", request.into_inner())))
        })
    }
}

/// `Watch` as tonic's server-streaming service.
struct Watch;

impl tower::Service<Request<String>> for Watch {
    type Response = Response<Messages>;
    type Error = Status;
    type Future = BoxFuture<Result<Response<Messages>, Status>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<String>) -> Self::Future {
        let item = request.into_inner();
        let updates = vec![
            Ok(format!("{item}: 12")),
            Ok(format!("{item}: 11")),
            Err(Status::internal("the feed broke")),
        ];
        Box::pin(async move {
            let messages: Messages = Box::pin(futures_util::stream::iter(updates));
            Ok(Response::new(messages))
        })
    }
}

impl tower::Service<http::Request<Body>> for Stock {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let stock = self.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(Utf8);
            Ok(match request.uri().path() {
                "/demo.Stock/Count" => grpc.unary(Count(stock), request).await,
                "/demo.Stock/Watch" => grpc.server_streaming(Watch, request).await,
                _ => Status::unimplemented("no such method").into_http(),
            })
        })
    }
}

/// Serves `stock` on 127.0.0.1, on a free port.
fn serve(stock: Stock) -> SocketAddr {
    let incoming = tonic::transport::server::TcpIncoming::bind(([127, 0, 0, 1], 0).into())
        .expect("a free port on 127.0.0.1");
    let address = incoming.local_addr().expect("a bound address");
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(stock)
            .serve_with_incoming(incoming),
    );
    address
}

// ---------------------------------------------------------------------------
// The client: a channel per server, behind one per-authority layer.
// ---------------------------------------------------------------------------

type Client = tonic::client::Grpc<CircuitBreaker<Channel>>;

fn client(layer: &CircuitBreakerLayer, address: SocketAddr) -> Client {
    let origin: http::Uri = format!("http://{address}").parse().expect("an origin");
    let channel = tonic::transport::Endpoint::from(origin.clone()).connect_lazy();
    // `with_origin`: the requests carry the authority the layer keys by.
    tonic::client::Grpc::with_origin(layer.layer(channel), origin)
}

async fn count(client: &mut Client, item: &str) -> Result<String, Status> {
    client
        .ready()
        .await
        .map_err(|e| Status::unknown(e.to_string()))?;
    let path = http::uri::PathAndQuery::from_static("/demo.Stock/Count");
    let answer = client
        .unary(Request::new(item.to_owned()), path, Utf8)
        .await?;
    Ok(answer.into_inner())
}

async fn watch(client: &mut Client, item: &str) -> (Vec<String>, Result<(), Status>) {
    let mut seen = Vec::new();
    if let Err(e) = client.ready().await {
        return (seen, Err(Status::unknown(e.to_string())));
    }
    let path = http::uri::PathAndQuery::from_static("/demo.Stock/Watch");
    let mut stream = match client
        .server_streaming(Request::new(item.to_owned()), path, Utf8)
        .await
    {
        Ok(answer) => answer.into_inner(),
        Err(status) => return (seen, Err(status)),
    };
    loop {
        match stream.message().await {
            Ok(Some(message)) => seen.push(message),
            Ok(None) => return (seen, Ok(())),
            Err(status) => return (seen, Err(status)),
        }
    }
}

/// One line of the timeline: what happened, and whether it is what the story expects.
struct Timeline {
    wrong: usize,
}

impl Timeline {
    fn expect(&mut self, what: &str, holds: bool) {
        println!("  [{}] {what}", if holds { "ok" } else { "UNEXPECTED" });
        self.wrong += usize::from(!holds);
    }
}

fn describe(answer: &Result<String, Status>) -> String {
    match answer {
        Ok(value) => format!("OK {value:?}"),
        Err(status) => {
            let refused = status
                .metadata()
                .get(REFUSED_HEADER)
                .and_then(|reason| reason.to_str().ok())
                .map(|reason| format!(", refused by the breaker ({reason})"))
                .unwrap_or_default();
            format!("{:?} {:?}{refused}", status.code(), status.message())
        }
    }
}

fn refused(answer: &Result<String, Status>) -> bool {
    matches!(answer, Err(status) if status.code() == Code::Unavailable
        && status.metadata().get(REFUSED_HEADER).is_some()
        && status.metadata().get("grpc-retry-pushback-ms").is_some_and(|p| p == "-1"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (north, south) = (Stock::default(), Stock::default());
    let (north_at, south_at) = (serve(north.clone()), serve(south.clone()));
    let layer =
        CircuitBreakerLayer::per_authority("stock", &STOCK, 100).expect("a new keyed group");
    let (mut to_north, mut to_south) = (client(&layer, north_at), client(&layer, south_at));
    let keys = registry()
        .keyed::<String>("stock", &STOCK, 100)
        .expect("the layer's group");
    let state = |at: SocketAddr| keys.get(at.to_string().as_str()).map(|b| b.state());
    let mut timeline = Timeline { wrong: 0 };

    println!("north at {north_at}, south at {south_at}; a breaker per authority, 3 failures open it for 1 s");

    println!("\n1. Both servers are well.");
    let answer = count(&mut to_north, "bolts").await;
    timeline.expect(&format!("north: {}", describe(&answer)), answer.is_ok());
    let answer = count(&mut to_south, "nuts").await;
    timeline.expect(&format!("south: {}", describe(&answer)), answer.is_ok());

    println!("\n2. North answers UNAVAILABLE: a trailers-only answer, HTTP 200.");
    north.sick.store(true, SeqCst);
    for _ in 0..3 {
        let answer = count(&mut to_north, "bolts").await;
        let holds = matches!(&answer, Err(s) if s.code() == Code::Unavailable) && !refused(&answer);
        timeline.expect(&format!("north: {}", describe(&answer)), holds);
    }
    timeline.expect(
        &format!("north's breaker: {:?}", state(north_at)),
        state(north_at) == Some(State::Open),
    );

    println!("\n3. Open: the layer answers for north, which sees nothing.");
    let before = north.counts.load(SeqCst);
    for _ in 0..3 {
        let answer = count(&mut to_north, "bolts").await;
        timeline.expect(&format!("north: {}", describe(&answer)), refused(&answer));
    }
    let reached = north.counts.load(SeqCst) - before;
    timeline.expect(
        &format!("calls that reached north meanwhile: {reached}"),
        reached == 0,
    );
    let answer = count(&mut to_south, "nuts").await;
    timeline.expect(
        &format!("south, its own breaker: {}", describe(&answer)),
        answer.is_ok(),
    );

    println!("\n4. A stream from south fails in its trailers after two messages.");
    let (seen, end) = watch(&mut to_south, "nuts").await;
    let failures = keys
        .get(south_at.to_string().as_str())
        .map_or(0, |b| b.metrics().failures);
    timeline.expect(
        &format!(
            "south: {seen:?}, then {:?}",
            end.as_ref().map_err(Status::code)
        ),
        seen.len() == 2 && matches!(&end, Err(s) if s.code() == Code::Internal),
    );
    timeline.expect(
        &format!("south's recorded failures: {failures}"),
        failures == 1,
    );

    println!("\n5. North heals; after the open second, one probe closes its breaker.");
    north.sick.store(false, SeqCst);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let answer = count(&mut to_north, "bolts").await;
    timeline.expect(&format!("north: {}", describe(&answer)), answer.is_ok());
    timeline.expect(
        &format!("north's breaker: {:?}", state(north_at)),
        state(north_at) == Some(State::Closed),
    );

    if timeline.wrong == 0 {
        println!("\nEvery answer was as expected.");
        ExitCode::SUCCESS
    } else {
        println!("\n{} answers differed from the timeline.", timeline.wrong);
        ExitCode::FAILURE
    }
}
