//! Starting a real `redis-server` for a test, or saying loudly why not.

use std::io::Write;

use breaker_fleet::RedisServer;

/// A fresh server for `test`, or `None` (after a loud message) when
/// `redis-server` is not installed. With `BREAKER_REQUIRE_REDIS=1` (CI) a
/// missing server fails the test instead.
pub fn redis_or_skip(test: &str) -> Option<RedisServer> {
    if RedisServer::available() {
        return Some(RedisServer::start().expect("starting redis-server"));
    }
    let required = std::env::var("BREAKER_REQUIRE_REDIS").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "{test}: redis-server is not on PATH and BREAKER_REQUIRE_REDIS=1 \
         (install it: apt-get install -y redis-server)"
    );
    // Straight to the process's stderr: the test harness captures `eprintln!`
    // of passing tests, and this must be seen.
    let _ = writeln!(
        std::io::stderr(),
        "\n************************************************************\n\
         SKIPPED {test}: redis-server is not on PATH.\n\
         Install it (apt-get install -y redis-server) to run this test;\n\
         set BREAKER_REQUIRE_REDIS=1 to make a missing server a failure.\n\
         ************************************************************\n"
    );
    None
}
