//! Line and grouped-bar charts rendered to SVG with plotters, for the benchmark commands.

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

/// Grouped bars: one group per category, one bar per series (`values[s][c]`), with a
/// dashed line at `reference` (e.g. 1.0 for speedups).
pub fn bar_chart(
    path: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    reference: Option<f64>,
) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| anyhow!("{}: cannot draw the chart: {e}", path.display());
    let y_max =
        series.iter().flat_map(|s| s.1.iter().copied()).chain(reference).filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let groups = categories.len().max(1);
    let width = 1.0 / (series.len() + 1) as f64;
    let root = SVGBackend::new(path, ((130 * groups as u32).clamp(800, 3000), 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..groups as f64, 0.0..y_max)
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
        .x_label_style(("sans-serif", 12))
        .y_desc(y_label)
        .draw()
        .map_err(|e| fail(&e))?;
    for (i, (name, values)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(c, &v)| {
            let x0 = c as f64 + width * (i as f64 + 0.5);
            Rectangle::new([(x0, 0.0), (x0 + width, v)], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| fail(&e))?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    if let Some(r) = reference {
        chart.draw_series(DashedLineSeries::new(vec![(0.0, r), (groups as f64, r)], 6, 4, BLACK.stroke_width(1))).map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
