//! The demo's status page: the admin router (read-only, with an event ring)
//! served on 127.0.0.1 while the story runs, kept up afterwards for
//! `DEMO_HOLD_SECS` seconds so that a person can open it.

use std::time::Duration;

use breakerbox::admin::Admin;

/// The variable that keeps the page up after the story, in seconds (default 0:
/// the demo ends as soon as its story does).
pub const HOLD_VAR: &str = "DEMO_HOLD_SECS";

/// The admin router of the process-wide registry, served on a free port.
pub struct StatusPage {
    url: String,
}

impl StatusPage {
    /// Builds the router (no token: it cannot change anything) and serves it.
    pub async fn start() -> Result<StatusPage, String> {
        let admin = Admin::global()
            .read_only()
            .events(256)
            .build()
            .map_err(|e| format!("could not build the admin router: {e}"))?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("could not bind the status page: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("no address for the status page: {e}"))?;
        let app = admin.router();
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("the status page stopped: {e}");
            }
        });
        Ok(StatusPage {
            url: format!("http://{addr}"),
        })
    }

    /// The page's address (`/` is the page; `/breakers`, `/events` beside it).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How long to keep the page up after the story: `DEMO_HOLD_SECS`, or
    /// none. A value that is not a whole number of seconds is an error.
    pub fn hold() -> Result<Duration, String> {
        match std::env::var(HOLD_VAR) {
            Err(_) => Ok(Duration::ZERO),
            Ok(text) => text
                .trim()
                .parse::<u64>()
                .map(Duration::from_secs)
                .map_err(|_| format!("{HOLD_VAR}={text:?} is not a whole number of seconds")),
        }
    }
}
