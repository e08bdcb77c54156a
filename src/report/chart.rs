//! Charts as SVG strings (plotters): a metric against thread count on a log2 axis, one line
//! per series.

use plotters::prelude::*;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Draws `lines` (x = u32, y = f64) on `x_range` with markers and a legend; empty when there
/// is nothing to draw.
fn plot<X>(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[(String, Vec<(u32, f64)>)],
    x_range: impl Fn(u32) -> X,
) -> String
where
    X: plotters::coord::ranged1d::AsRangedCoord<Value = u32>,
    <X as plotters::coord::ranged1d::AsRangedCoord>::CoordDescType:
        plotters::coord::ranged1d::ValueFormatter<u32>,
{
    let all: Vec<&(u32, f64)> = lines.iter().flat_map(|l| l.1.iter()).collect();
    if all.is_empty() {
        return String::new();
    }
    let max_x = all.iter().map(|p| p.0).max().unwrap_or(1).max(2);
    let max_y = all.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 380)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range(max_x), 0f64..max_y)
        else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .draw();
        for (i, (name, pts)) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            if let Ok(series) =
                chart.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            {
                series.label(name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            }
            let _ = chart.draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            );
        }
        let _ = chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .position(SeriesLabelPosition::UpperLeft)
            .draw();
        let _ = root.present();
    }
    out
}

/// A metric against thread count (log2 axis), one line per series.
pub fn svg(title: &str, y_label: &str, lines: &[(String, Vec<(u32, f64)>)]) -> String {
    plot(title, "threads", y_label, lines, |max| {
        (1u32..max).log_scale().base(2.0)
    })
}

/// Peak throughput per run (x = run number, oldest first), one line per workload.
pub fn trend_svg(title: &str, lines: &[(String, Vec<(u32, f64)>)]) -> String {
    plot(
        title,
        "run (oldest first)",
        "peak transactions/s",
        lines,
        |max| 1u32..max,
    )
}
