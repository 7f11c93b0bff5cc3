//! `cargo run --example replay --features testing`: replays the shipped sample
//! trace (`examples/replay/checkout.jsonl`, recorded under
//! `examples/replay/current.toml`) against that config and a candidate
//! (`examples/replay/candidate.toml`), prints what each did side by side and
//! draws both timelines into `target/replay.svg`:
//!
//! ```text
//! cargo run --example replay --features testing -- [TRACE CONFIG_A CONFIG_B SVG]
//! ```
//!
//! `-- record` writes the sample trace again: synthetic traffic of the
//! `checkout` group (an outage, then a slow recovery) through a plain
//! `#[circuit_breaker]` fn under a `TestKit`, with the current config.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use breakerbox::config_file::{Patch, Settings};
use breakerbox::testing::trace::{Outcome, Trace};
use breakerbox::testing::{replay, TestKit, Timeline};
use breakerbox::{circuit_breaker, CircuitOpen, Config};

const GROUP: &str = "checkout";

fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("replay")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("record") {
        let config = load(&sample_dir().join("current.toml"))?;
        let trace = record(config);
        let out = sample_dir().join("checkout.jsonl");
        trace.write_jsonl(std::io::BufWriter::new(std::fs::File::create(&out)?))?;
        println!("wrote {} calls to {}", trace.samples.len(), out.display());
        return Ok(());
    }
    let path = |n: usize, default: PathBuf| args.get(n).map(PathBuf::from).unwrap_or(default);
    let dir = sample_dir();
    let trace = path(0, dir.join("checkout.jsonl"));
    let a = path(1, dir.join("current.toml"));
    let b = path(2, dir.join("candidate.toml"));
    let svg = path(
        3,
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/replay.svg"),
    );
    print!("{}", run(&trace, &a, &b, &svg)?);
    println!("timelines drawn in {}", svg.display());
    Ok(())
}

/// Replays `trace` under the configs of `a` and `b`, writes the SVG to `svg`
/// and returns the table.
pub fn run(
    trace: &Path,
    a: &Path,
    b: &Path,
    svg: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let trace = Trace::read_jsonl(std::io::BufReader::new(std::fs::File::open(trace)?))?;
    let (config_a, config_b) = (load(a)?, load(b)?);
    let (ta, tb) = (replay(&trace, &config_a), replay(&trace, &config_b));
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let (na, nb) = (name(a), name(b));
    std::fs::write(svg, draw(&[(&na, &ta), (&nb, &tb)]))?;
    Ok(table(&trace, &[(&na, &ta), (&nb, &tb)]))
}

fn load(path: &Path) -> Result<Config, Box<dyn std::error::Error>> {
    Ok(Settings::from_file(path)?
        .resolve(GROUP, &Patch::new())?
        .config)
}

/// One cell of the table, from a timeline.
type Cell<'a> = &'a dyn Fn(&Timeline) -> String;

fn table(trace: &Trace, runs: &[(&str, &Timeline)]) -> String {
    let trips = |t: &Timeline| {
        t.changes
            .iter()
            .filter(|c| c.step.contains("-> open"))
            .count()
    };
    let first = |t: &Timeline| {
        t.changes.first().map_or_else(
            || "never".to_owned(),
            |c| format!("{:.1}s", c.at.as_secs_f64()),
        )
    };
    let rows: [(&str, Cell); 5] = [
        ("transitions", &|t| t.changes.len().to_string()),
        ("times opened", &|t| trips(t).to_string()),
        ("calls refused", &|t| {
            format!("{} of {}", t.refused, t.calls)
        }),
        ("time open", &|t| {
            format!("{:.1}s", t.time_open.as_secs_f64())
        }),
        ("first transition", &|t| first(t)),
    ];
    let mut out = format!(
        "group `{}`, {} calls over {:.0}s\n",
        trace.group,
        trace.samples.len(),
        runs[0].1.end.as_secs_f64()
    );
    let _ = writeln!(out, "{:<18} {:>16} {:>16}", "", runs[0].0, runs[1].0);
    for (label, cell) in rows {
        let _ = writeln!(
            out,
            "{label:<18} {:>16} {:>16}",
            cell(runs[0].1),
            cell(runs[1].1)
        );
    }
    out
}

/// The state a change enters: `to` of `from -> to (reason)`.
fn entered(step: &str) -> &str {
    step.split(" -> ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or("closed")
}

fn colour(state: &str) -> &'static str {
    match state {
        "open" | "forced_open" => "#d62728",
        "half_open" => "#ff9f1c",
        _ => "#2ca02c",
    }
}

/// Each timeline as a band of coloured spans (closed green, half-open
/// amber, open red) over a shared time axis.
fn draw(runs: &[(&str, &Timeline)]) -> String {
    let (width, left, band, gap) = (960.0_f64, 140.0_f64, 36.0_f64, 24.0_f64);
    let end = runs
        .iter()
        .map(|(_, t)| t.end)
        .max()
        .unwrap_or_default()
        .as_secs_f64()
        .max(1.0);
    let x = |at: Duration| left + (width - left - 20.0) * at.as_secs_f64() / end;
    let height = gap + runs.len() as f64 * (band + gap) + 30.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"13\">\n"
    );
    for (i, (name, timeline)) in runs.iter().enumerate() {
        let y = gap + i as f64 * (band + gap);
        let _ = writeln!(
            svg,
            "<text x=\"8\" y=\"{}\">{name}</text>",
            y + band / 2.0 + 4.0
        );
        let (mut since, mut state) = (Duration::ZERO, "closed");
        let spans = timeline
            .changes
            .iter()
            .map(|c| (c.at, entered(&c.step)))
            .chain([(timeline.end, "closed")]);
        for (at, next) in spans {
            let (x0, x1) = (x(since), x(at));
            if x1 > x0 {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{x0:.2}\" y=\"{y}\" width=\"{:.2}\" height=\"{band}\" fill=\"{}\"><title>{state} from {:.1}s</title></rect>",
                    x1 - x0,
                    colour(state),
                    since.as_secs_f64()
                );
            }
            (since, state) = (at, next);
        }
    }
    let axis = gap + runs.len() as f64 * (band + gap);
    for tick in 0..=10 {
        let at = Duration::from_secs_f64(end * f64::from(tick) / 10.0);
        let _ = writeln!(
            svg,
            "<text x=\"{:.2}\" y=\"{axis}\" text-anchor=\"middle\">{:.0}s</text>",
            x(at),
            at.as_secs_f64()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[derive(Debug)]
enum CheckoutError {
    Down,
    Open,
}

impl From<CircuitOpen> for CheckoutError {
    fn from(_: CircuitOpen) -> Self {
        CheckoutError::Open
    }
}

/// The guarded call, as production writes it; the test's fake dependency
/// takes `latency` on the kit's clock.
#[circuit_breaker(group = "checkout", threshold = 5, open_ms = 5000)]
fn checkout(kit: &TestKit, latency: Duration, up: bool) -> Result<(), CheckoutError> {
    kit.advance(latency);
    if up {
        Ok(())
    } else {
        Err(CheckoutError::Down)
    }
}

/// Five minutes of traffic, four calls a second: 2% failures, an outage from
/// 60 s to 100 s, and a slow recovery (30% failures) to 160 s.
fn record(config: Config) -> Trace {
    let kit = TestKit::new();
    kit.registry()
        .configure(GROUP, config)
        .expect("a fresh registry");
    let recorder = kit.recorder(GROUP, 100_000);
    let _installed = kit.install();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut draw = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % 1000
    };
    for n in 0..1200u64 {
        let now = Duration::from_millis(n * 250);
        kit.advance(now.saturating_sub(recorder.elapsed()));
        let at = recorder.elapsed();
        let failing = match at.as_secs() {
            60..=99 => 900,
            100..=159 => 300,
            _ => 20,
        };
        let up = draw() >= failing;
        let latency = Duration::from_millis(20 + draw() % 60);
        match checkout(&kit, latency, up) {
            Err(CheckoutError::Open) => recorder.sample(at, Outcome::Refused, Duration::ZERO, None),
            Ok(()) => recorder.sample(at, Outcome::Success, latency, None),
            Err(CheckoutError::Down) => recorder.sample(at, Outcome::Failure, latency, None),
        }
    }
    recorder.trace()
}
