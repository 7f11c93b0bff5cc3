//! [`RedisServer`]: a throwaway `redis-server` child process on a free loopback
//! port, persistence off, for tests and the lag report.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` this process started; killed when dropped.
///
/// ```no_run
/// use breaker_fleet::RedisServer;
///
/// let mut server = RedisServer::start().expect("redis-server on PATH");
/// println!("{}", server.url());
/// server.kill();        // Redis gone: agents fail local
/// server.restart()?;    // back on the same port, empty
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Whether a `redis-server` binary can be run here.
    pub fn available() -> bool {
        Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Starts one on a free port of 127.0.0.1, waiting (at most 10 s) until it
    /// accepts connections.
    pub fn start() -> std::io::Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut server = RedisServer { port, child: None };
        server.restart()?;
        Ok(server)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (SIGKILL) and waits for it to be gone. Its data is lost.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server without closing its connections (SIGSTOP): Redis
    /// becomes *slow*, every call waits until its timeout. [`resume`](Self::resume)
    /// undoes it.
    pub fn pause(&self) -> std::io::Result<()> {
        self.signal("-STOP")
    }

    /// Lets a paused server go on (SIGCONT).
    pub fn resume(&self) -> std::io::Result<()> {
        self.signal("-CONT")
    }

    fn signal(&self, signal: &str) -> std::io::Result<()> {
        let Some(child) = &self.child else {
            return Err(std::io::Error::other("redis-server is not running"));
        };
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("kill {signal} failed")))
        }
    }

    /// Starts it again on the same port (after [`kill`](Self::kill)), empty.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.kill();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if Instant::now() > deadline {
                self.kill();
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "redis-server did not listen within 10 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
