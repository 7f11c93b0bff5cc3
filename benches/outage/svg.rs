//! The picture of one scenario, as a self-contained SVG: above, the requests
//! per second the server received; below, the share of callers that got a
//! success; one line per contender, the outage shaded.

use std::fmt::Write;

use crate::harness::Run;

const WIDTH: f64 = 860.0;
const PANEL: f64 = 200.0;
const LEFT: f64 = 60.0;
const PLOT: f64 = 560.0;
const TOP: f64 = 40.0;
const GAP: f64 = 50.0;

/// Line colours, one per contender in table order (the Okabe-Ito palette and
/// two greys, told apart by colour-blind readers).
const COLOURS: [&str; 10] = [
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7", "#F0E442",
    "#999999", "#666666",
];

/// The SVG of `runs` (one per contender, all of one scenario and scale).
pub fn picture(title: &str, runs: &[(&str, &Run)]) -> String {
    let Some((_, first)) = runs.first() else {
        return String::new();
    };
    let scale = first.scale;
    let end = scale.end();
    let series: Vec<_> = runs.iter().map(|(_, run)| run.series()).collect();
    let top_rate = series
        .iter()
        .flatten()
        .map(|(_, rate, _)| *rate)
        .fold(f64::from(scale.rate), f64::max);
    let top_rate = nice_ceiling(top_rate);
    let height = TOP + 2.0 * PANEL + GAP + 40.0;
    let x = |t: f64| LEFT + PLOT * t / end;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{}</text>
"##,
        escape(title)
    );
    let panels = [
        (TOP, "requests received per second", top_rate),
        (
            TOP + PANEL + GAP,
            "callers answered with a success (%)",
            100.0,
        ),
    ];
    for (i, (y0, label, top)) in panels.into_iter().enumerate() {
        let y = |v: f64| y0 + PANEL * (1.0 - v / top);
        let _ = writeln!(
            svg,
            r##"<rect x="{:.1}" y="{y0}" width="{:.1}" height="{PANEL}" fill="#f3e0e0"/>"##,
            x(scale.outage_start()),
            x(scale.heal()) - x(scale.outage_start()),
        );
        let _ = writeln!(
            svg,
            r##"<rect x="{LEFT}" y="{y0}" width="{PLOT}" height="{PANEL}" fill="none" stroke="#888"/>"##
        );
        let _ = writeln!(
            svg,
            r#"<text x="{LEFT}" y="{:.1}">{label}</text>"#,
            y0 - 6.0
        );
        for k in 0..=4 {
            let v = top * f64::from(k) / 4.0;
            let _ = writeln!(
                svg,
                r##"<line x1="{LEFT}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v:.0}</text>"##,
                LEFT + PLOT,
                y(v),
                y(v),
                LEFT - 4.0,
                y(v) + 4.0
            );
        }
        for (n, points) in series.iter().enumerate() {
            let mut path = String::new();
            let mut pen_down = false;
            for (t, rate, share) in points {
                let value = if i == 0 { Some(*rate) } else { *share };
                match value {
                    Some(v) => {
                        let _ = write!(
                            path,
                            "{}{:.1},{:.1} ",
                            if pen_down { "L" } else { "M" },
                            x(t + crate::harness::BIN / 2.0),
                            y(v.min(top))
                        );
                        pen_down = true;
                    }
                    None => pen_down = false,
                }
            }
            let _ = writeln!(
                svg,
                r#"<path d="{}" fill="none" stroke="{}" stroke-width="1.5" stroke-linejoin="round"/>"#,
                path.trim_end(),
                COLOURS[n % COLOURS.len()]
            );
        }
    }
    let axis_y = TOP + 2.0 * PANEL + GAP;
    let whole = end.floor() as u32;
    for s in 0..=whole {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{s}</text>"#,
            x(f64::from(s)),
            axis_y + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds (shaded: the outage)</text>"#,
        LEFT + PLOT / 2.0,
        axis_y + 32.0
    );
    for (n, (name, _)) in runs.iter().enumerate() {
        let y = TOP + 14.0 + 18.0 * n as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT + PLOT + 14.0,
            LEFT + PLOT + 34.0,
            y - 4.0,
            y - 4.0,
            COLOURS[n % COLOURS.len()],
            LEFT + PLOT + 40.0,
            y,
            escape(name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The least of 1, 2 or 5 times a power of ten at or above `v`.
fn nice_ceiling(v: f64) -> f64 {
    let power = 10f64.powf(v.max(1.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * power)
}

/// `text` as SVG text: markup escaped, Markdown's code quotes dropped.
fn escape(text: &str) -> String {
    text.replace('`', "")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
