//! Line and speedup charts rendered to SVG with plotters, for the benchmark commands.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// One named line.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws the series on linear axes that start at 0 and writes `path` (an SVG file).
pub fn line_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<()> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let x_max = all.clone().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let y_max = all.map(|p| p.1).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let fail = |e: &dyn std::fmt::Display| anyhow!("{}: cannot draw the chart: {e}", path.display());
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| fail(&e))?;
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().map_err(|e| fail(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled()))).map_err(|e| fail(&e))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// Speedups as grouped bars: one group per category, one bar per series
/// (`values[s][c]`; NaN draws none). The axis is logarithmic and each bar grows from
/// 1x, up for a speedup and down for a slowdown, so that 0.02x and 15x both read.
/// 800 px wide at any number of groups: callers keep a chart to a page's worth.
pub fn speedup_chart(path: &Path, title: &str, y_label: &str, categories: &[String], series: &[(String, Vec<f64>)]) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| anyhow!("{}: cannot draw the chart: {e}", path.display());
    let finite = || series.iter().flat_map(|s| s.1.iter().copied()).filter(|v| v.is_finite() && *v > 0.0);
    // At least 0.1x to 4x (0.1x labelled), so that every chart's axis reads alike.
    let y_min = (finite().fold(1.0f64, f64::min) / 1.5).min(0.08);
    let top = (finite().fold(1.0f64, f64::max) * 1.3).max(4.0);
    // Room above the bars for the legend: a share `f` of the plot's height (480 px less
    // the caption and labels), which on a log axis puts its top at
    // exp((ln top - f ln y_min) / (1 - f)).
    let f = ((series.len() as f64 + 1.0) * 22.0 / 380.0).min(0.6);
    let y_max = ((top.ln() - f * y_min.ln()) / (1.0 - f)).exp();
    let groups = categories.len().max(1);
    let width = 1.0 / (series.len() + 1) as f64;
    let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..groups as f64, (y_min..y_max).log_scale())
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.26 && i < categories.len() {
                categories[i].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 16))
        .y_labels(12)
        .y_label_style(("sans-serif", 15))
        .y_label_formatter(&|y| if *y >= 1.0 { format!("{y:.0}x") } else { format!("{y:.2}x") })
        .y_desc(y_label)
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, (name, values)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite() && **v > 0.0).map(|(c, &v)| {
            let x0 = c as f64 + width * (i as f64 + 0.5);
            Rectangle::new([(x0, 1.0), (x0 + width, v)], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| fail(&e))?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart.draw_series(DashedLineSeries::new(vec![(0.0, 1.0), (groups as f64, 1.0)], 6, 4, BLACK.stroke_width(1))).map_err(|e| fail(&e))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
