//! [`AdminService`]: the admin router as a plain tower service.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::routing::future::RouteFuture;
use axum::Router;
use http::{Request, Response};

/// The admin router as a tower `Service` of `http::Request`s, for apps that
/// serve tower services without axum ([`Admin::into_service`](super::Admin::into_service)).
///
/// ```
/// use breakerbox::admin::Admin;
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut service = Admin::global().read_only().build().unwrap().into_service();
/// let request = http::Request::get("/health").body(axum::body::Body::empty()).unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct AdminService(Router);

impl AdminService {
    pub(super) fn new(router: Router) -> Self {
        AdminService(router)
    }
}

impl<B> tower_service::Service<Request<B>> for AdminService
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = RouteFuture<Infallible>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        tower_service::Service::<Request<B>>::poll_ready(&mut self.0, cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        tower_service::Service::call(&mut self.0, request)
    }
}
