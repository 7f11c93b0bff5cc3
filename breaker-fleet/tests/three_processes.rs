//! The "done when": three instances as separate OS processes on one
//! `redis-server`. One trips, the others refuse; a probe in one closes all;
//! killing Redis leaves every instance serving on its local breaker; restarting
//! it re-synchronises them.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Node {
    name: &'static str,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Node {
    fn start(name: &'static str, url: &str) -> Node {
        let mut child = Command::new(env!("CARGO_BIN_EXE_breaker-fleet-node"))
            .args([
                "--redis",
                url,
                "--name",
                name,
                "--open-ms",
                "3000",
                "--poll-ms",
                "100",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting breaker-fleet-node");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut node = Node {
            name,
            child,
            stdin,
            stdout,
        };
        assert_eq!(node.read(), "ready");
        node
    }

    fn read(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("node output");
        assert!(!line.is_empty(), "node {} exited", self.name);
        line.trim().to_owned()
    }

    fn ask(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").expect("node input");
        self.stdin.flush().unwrap();
        self.read()
    }

    /// Waits (inside the node, spinning on `would_admit`) until it refuses;
    /// the time it took, in µs.
    fn wait_refuse(&mut self) -> u64 {
        self.wait("wait-refuse")
    }

    fn wait_admit(&mut self) -> u64 {
        self.wait("wait-admit")
    }

    fn wait(&mut self, what: &str) -> u64 {
        let reply = self.ask(&format!("{what} 10000"));
        let us = reply.strip_prefix(what).and_then(|r| r.trim().parse().ok());
        us.unwrap_or_else(|| panic!("node {}: {what} got {reply:?}", self.name))
    }

    fn stat(&mut self, key: &str) -> String {
        let stats = self.ask("stats");
        stats
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {key} in {stats:?}"))
            .to_owned()
    }

    /// Polls `stats` until `key` reads `want` (bounded).
    fn await_stat(&mut self, key: &str, want: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let value = self.stat(key);
            if want(&value) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "node {}: {key}={value}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn one_trip_protects_three_processes_and_redis_going_away_breaks_nothing() {
    let Some(mut server) = support::redis_or_skip("one_trip_protects_three_processes") else {
        return;
    };
    let url = server.url();
    let mut nodes = [
        Node::start("a", &url),
        Node::start("b", &url),
        Node::start("c", &url),
    ];
    for node in &mut nodes {
        node.await_stat("connected", |v| v == "true");
        node.await_stat("subscribed", |v| v == "true");
        assert_eq!(node.ask("ok"), "admitted");
    }

    // 1. `a` trips; `b` and `c` refuse within the measured lag.
    for _ in 0..3 {
        assert_eq!(nodes[0].ask("fail"), "admitted");
    }
    assert_eq!(nodes[0].ask("ok"), "refused open");
    for node in &mut nodes[1..] {
        let lag = node.wait_refuse();
        eprintln!("trip reached {} after {lag} µs", node.name);
        assert_eq!(node.ask("ok"), "refused fleet_open", "the fleet's reason");
    }

    // 2. After open-ms one instance wins the fleet probe; its success closes all.
    let deadline = Instant::now() + Duration::from_secs(15);
    let prober = 'probe: loop {
        for (k, node) in nodes.iter_mut().enumerate() {
            match node.ask("ok").as_str() {
                "admitted" => break 'probe k,
                "refused open" | "refused fleet_open" => {}
                other => panic!("node {}: {other}", node.name),
            }
        }
        assert!(Instant::now() < deadline, "no instance ever probed");
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("{} probed", nodes[prober].name);
    for node in &mut nodes {
        node.wait_admit();
        assert_eq!(node.ask("ok"), "admitted");
    }

    // 3. Redis dies: every instance keeps serving on its own breaker.
    server.kill();
    for node in &mut nodes {
        node.await_stat("connected", |v| v == "false");
        let reply = node.ask("ok");
        if reply != "admitted" {
            let st = node.ask("state");
            let ss = node.ask("stats");
            eprintln!("{} {st} {ss}", node.name);
        }
        assert_eq!(reply, "admitted", "node {} still serves", node.name);
    }
    for _ in 0..3 {
        assert_eq!(nodes[1].ask("fail"), "admitted");
    }
    assert_eq!(
        nodes[1].ask("ok"),
        "refused open",
        "the local breaker still trips alone"
    );
    assert_eq!(
        nodes[0].ask("ok"),
        "admitted",
        "no fleet: `a` decides alone"
    );
    assert_eq!(nodes[2].ask("ok"), "admitted");
    for node in &mut nodes {
        let errors: u64 = node.stat("errors").parse().unwrap();
        assert!(errors > 0, "node {} counted its store errors", node.name);
    }

    // 4. Redis returns (empty): the trip `b` made meanwhile reaches the others.
    server.restart().unwrap();
    for node in [0, 2] {
        let lag = nodes[node].wait_refuse();
        eprintln!(
            "after the restart, {} refused after {lag} µs",
            nodes[node].name
        );
    }
    for node in &mut nodes {
        node.await_stat("connected", |v| v == "true");
        node.await_stat("rejoins", |v| v != "0");
    }
}
