//! Charts as SVG strings (plotters): a metric against thread count on a log2 axis, one line
//! per series with the spread of its repeats as a band and its peak marked; and history
//! trends against run dates.

use plotters::prelude::*;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub name: String,
    pub points: Vec<(u32, f64)>,
    /// (x, low, high): the spread drawn as a band behind the line (min–max of repeats).
    pub band: Vec<(u32, f64, f64)>,
    /// A point to mark and label, e.g. the peak.
    pub mark: Option<(u32, f64, String)>,
    /// A model's curve over the points (the USL fit), drawn thin and dashed.
    pub fit: Vec<(u32, f64)>,
    /// A second labelled point, drawn as a square (the fitted curve's knee).
    pub knee: Option<(u32, f64, String)>,
}

impl Line {
    pub fn plain(name: &str, points: Vec<(u32, f64)>) -> Line {
        Line {
            name: name.to_string(),
            points,
            ..Line::default()
        }
    }
}

/// The frame every chart shares: a caption and room for the axes' labels.
fn frame<'a, 'b, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, plotters::coord::Shift>,
    title: &'b str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64);
    b
}

/// The legend every chart shares, at `at`.
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) where
    DB::ErrorType: 'static,
{
    let _ = chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .position(at)
        .draw();
}

/// Draws `lines` on `x_range` with markers, bands, marks and a legend; empty when there is
/// nothing to draw. `x_label` formats the x axis' ticks (at most 10 of them).
fn plot<X>(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    x_range: impl Fn(u32) -> X,
    x_label: &dyn Fn(&u32) -> String,
    legend: SeriesLabelPosition,
) -> String
where
    X: plotters::coord::ranged1d::AsRangedCoord<Value = u32>,
    <X as plotters::coord::ranged1d::AsRangedCoord>::CoordDescType:
        plotters::coord::ranged1d::ValueFormatter<u32>,
{
    let all: Vec<&(u32, f64)> = lines.iter().flat_map(|l| l.points.iter()).collect();
    if all.is_empty() {
        return String::new();
    }
    let max_x = all.iter().map(|p| p.0).max().unwrap_or(1).max(2);
    let max_y = all
        .iter()
        .map(|p| p.1)
        .chain(lines.iter().flat_map(|l| l.band.iter().map(|b| b.2)))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.12;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 380)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(mut chart) = frame(&root, title).build_cartesian_2d(x_range(max_x), 0f64..max_y)
        else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(x_label)
            .x_labels(10)
            .light_line_style(WHITE.mix(0.0))
            .draw();
        for (i, line) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            if line.band.len() > 1 {
                let outline: Vec<(u32, f64)> = line
                    .band
                    .iter()
                    .map(|b| (b.0, b.2))
                    .chain(line.band.iter().rev().map(|b| (b.0, b.1)))
                    .collect();
                let _ = chart.draw_series(std::iter::once(Polygon::new(
                    outline,
                    color.mix(0.15).filled(),
                )));
            }
            if let Ok(series) = chart.draw_series(LineSeries::new(
                line.points.iter().copied(),
                color.stroke_width(2),
            )) {
                series.label(line.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            }
            let _ = chart.draw_series(
                line.points
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            );
            if line.fit.len() > 1 {
                let _ = chart.draw_series(DashedLineSeries::new(
                    line.fit.iter().copied(),
                    6,
                    4,
                    color.mix(0.8).stroke_width(1),
                ));
            }
            if let Some((x, y, label)) = &line.knee {
                let _ = chart.draw_series(std::iter::once(
                    EmptyElement::at((*x, *y))
                        + Rectangle::new([(-5, -5), (5, 5)], color.stroke_width(2))
                        + Text::new(
                            label.clone(),
                            (8, 6),
                            ("sans-serif", 12).into_font().color(&color),
                        ),
                ));
            }
            if let Some((x, y, label)) = &line.mark {
                let _ = chart.draw_series(std::iter::once(Circle::new(
                    (*x, *y),
                    7,
                    color.stroke_width(2),
                )));
                // Left of and above the point, so a peak at the last thread count stays
                // inside the chart.
                let _ = chart.draw_series(std::iter::once(
                    EmptyElement::at((*x, *y))
                        + Text::new(
                            label.clone(),
                            (-52, -20),
                            ("sans-serif", 12).into_font().color(&color),
                        ),
                ));
            }
        }
        draw_legend(&mut chart, legend);
        let _ = root.present();
    }
    out
}

/// A metric against thread count (log2 axis), one line per series.
pub fn svg(title: &str, y_label: &str, lines: &[Line]) -> String {
    plot(
        title,
        "threads",
        y_label,
        lines,
        |max| (1u32..max).log_scale().base(2.0),
        &|x| x.to_string(),
        SeriesLabelPosition::UpperLeft,
    )
}

/// A figure per run (x = the runs' dates, oldest first), one line per thread count.
pub fn trend_svg(title: &str, y_label: &str, dates: &[String], lines: &[Line]) -> String {
    plot(
        title,
        "run",
        y_label,
        lines,
        |max| 0u32..max,
        &|x| dates.get(*x as usize).cloned().unwrap_or_default(),
        // The lines run near 100 %: keep the legend below them.
        SeriesLabelPosition::LowerLeft,
    )
}

/// One line of an x–y chart with real axes.
#[derive(Debug, Clone, Default)]
pub struct XyLine {
    pub name: String,
    /// (x, y, label) in drawing order; the label (e.g. the thread count) is printed beside
    /// the point.
    pub points: Vec<(f64, f64, String)>,
    /// A point to circle and label (the knee).
    pub mark: Option<(f64, f64, String)>,
}

/// Latency against throughput (the "hockey stick"): one line per series through its thread
/// counts, each point labelled with its thread count.
pub fn xy_svg(title: &str, x_desc: &str, y_desc: &str, lines: &[XyLine]) -> String {
    let all: Vec<&(f64, f64, String)> = lines.iter().flat_map(|l| l.points.iter()).collect();
    if all.is_empty() {
        return String::new();
    }
    let max_x = all.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-9) * 1.08;
    let max_y = all.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.12;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 380)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(mut chart) = frame(&root, title).build_cartesian_2d(0f64..max_x, 0f64..max_y) else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_labels(8)
            .light_line_style(WHITE.mix(0.0))
            .draw();
        for (i, line) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            if let Ok(series) = chart.draw_series(LineSeries::new(
                line.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            )) {
                series.label(line.name.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            }
            let _ = chart.draw_series(line.points.iter().map(|(x, y, label)| {
                EmptyElement::at((*x, *y))
                    + Circle::new((0, 0), 3, color.filled())
                    + Text::new(
                        label.clone(),
                        (4, -14),
                        ("sans-serif", 10).into_font().color(&color),
                    )
            }));
            if let Some((x, y, label)) = &line.mark {
                let _ = chart.draw_series(std::iter::once(
                    EmptyElement::at((*x, *y))
                        + Circle::new((0, 0), 8, color.stroke_width(2))
                        + Text::new(
                            label.clone(),
                            (-60, -24),
                            ("sans-serif", 12).into_font().color(&color),
                        ),
                ));
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft);
        let _ = root.present();
    }
    out
}

/// p99 (p95 where a series has no p99) against throughput, one line per series through its
/// thread counts, the latency knee circled.
pub fn hockey(
    workload: &str,
    rows: &[super::Row],
    series: &[String],
    models: &[crate::pipeline::judge::scaling::Scaling],
) -> String {
    let lines: Vec<XyLine> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let points: Vec<(f64, f64, String)> = rows
                .iter()
                .filter_map(|r| {
                    let c = r.cells[i].as_ref()?;
                    Some((
                        c.tps,
                        c.p99_ms.unwrap_or(c.p95_ms),
                        format!("{}", r.threads),
                    ))
                })
                .collect();
            let knee = models
                .iter()
                .find(|m| m.series == *s)
                .and_then(|m| m.latency_knee_threads);
            let mark = knee.and_then(|k| {
                let r = rows.iter().find(|r| r.threads == k)?;
                let c = r.cells[i].as_ref()?;
                Some((c.tps, c.p99_ms.unwrap_or(c.p95_ms), format!("knee {k}")))
            });
            XyLine {
                name: s.clone(),
                points,
                mark,
            }
        })
        .collect();
    xy_svg(
        &format!("{workload}: p99 latency against throughput (labels: threads)"),
        "transactions/s",
        "p99 latency (ms)",
        &lines,
    )
}

/// Throughput over time: one line per series, made of its windows one after another (no line
/// across a window's end, a faint rule where the next begins), and a dot on every second
/// `stalled` marks in its window.
pub fn over_time_svg(
    title: &str,
    lines: &[(String, Vec<Vec<f64>>)],
    stalled: fn(&[f64]) -> Vec<bool>,
) -> String {
    let total = |w: &Vec<Vec<f64>>| w.iter().map(Vec::len).sum::<usize>();
    let longest = lines.iter().map(|(_, w)| total(w)).max().unwrap_or(0);
    let top = lines
        .iter()
        .flat_map(|(_, w)| w.iter().flatten().copied())
        .fold(0.0, f64::max);
    if longest == 0 || top <= 0.0 {
        return String::new();
    }
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 260)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(mut chart) =
            frame(&root, title).build_cartesian_2d(0f64..longest as f64, 0f64..top * 1.35)
        else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .x_desc("second")
            .y_desc("tps")
            .x_labels(10)
            .light_line_style(WHITE.mix(0.0))
            .draw();
        if let Some((_, first)) = lines.first() {
            let ends = first.iter().scan(0, |at, w| {
                *at += w.len();
                Some(*at as f64)
            });
            let ends: Vec<f64> = ends.take(first.len().saturating_sub(1)).collect();
            let _ = chart.draw_series(
                ends.into_iter()
                    .map(|x| PathElement::new(vec![(x, 0.0), (x, top * 1.35)], BLACK.mix(0.15))),
            );
        }
        for (i, (name, windows)) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let mut at = 0usize;
            for (k, v) in windows.iter().enumerate() {
                let x0 = at as f64;
                if let Ok(series) = chart.draw_series(LineSeries::new(
                    v.iter().enumerate().map(|(s, y)| (x0 + s as f64 + 0.5, *y)),
                    color.stroke_width(1),
                )) {
                    if k == 0 {
                        series.label(name.as_str()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                        });
                    }
                }
                let low = stalled(v);
                let _ = chart.draw_series(
                    v.iter()
                        .enumerate()
                        .filter(|(s, _)| low[*s])
                        .map(|(s, y)| Circle::new((x0 + s as f64 + 0.5, *y), 3, color.filled())),
                );
                at += v.len();
            }
        }
        // Room above the highest second keeps the legend off the lines and the stalls.
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight);
        let _ = root.present();
    }
    out
}
