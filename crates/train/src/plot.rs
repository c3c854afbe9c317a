//! Learning curves drawn with plotters.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::error::TrainError;

/// Font files tried, in order, for the axis labels (Debian `fonts-dejavu-core`).
const FONT_CANDIDATES: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Registers a system sans-serif font once; `false` if none is installed (the plot is
/// then drawn without text).
fn font_available() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        FONT_CANDIDATES.iter().any(|path| {
            std::fs::read(path)
                .ok()
                .map(|bytes| {
                    register_font(
                        "sans-serif",
                        FontStyle::Normal,
                        Box::leak(bytes.into_boxed_slice()),
                    )
                    .is_ok()
                })
                .unwrap_or(false)
        })
    })
}

/// Draws training and validation loss per epoch into a PNG (`width x height` pixels).
///
/// # Errors
/// [`TrainError::Invalid`] if plotters cannot draw or write the file.
pub fn loss_curves(
    path: &Path,
    train: &[f64],
    valid: &[f64],
    loss_name: &str,
) -> Result<(), TrainError> {
    curves(
        path,
        &format!("MAT training: {loss_name} per epoch"),
        "epoch",
        &[(train, "train"), (valid, "valid")],
        loss_name,
    )
}

/// Draws one or two series (blue, red) against 1-based steps into a PNG with a caption
/// and axis labels.
///
/// # Errors
/// [`TrainError::Invalid`] if plotters cannot draw or write the file.
pub fn curves(
    path: &Path,
    caption: &str,
    x_label: &str,
    series: &[(&[f64], &str)],
    loss_name: &str,
) -> Result<(), TrainError> {
    let empty: &[f64] = &[];
    let train = series.first().map(|s| s.0).unwrap_or(empty);
    let valid = series.get(1).map(|s| s.0).unwrap_or(empty);
    let labels = [
        series.first().map(|s| s.1).unwrap_or(""),
        series.get(1).map(|s| s.1).unwrap_or(""),
    ];
    let err = |e: String| TrainError::Invalid(format!("plot {}: {e}", path.display()));
    let with_text = font_available();
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let n = train.len().max(valid.len()).max(1);
    let finite = train.iter().chain(valid).copied().filter(|v| v.is_finite());
    let y_max = finite.clone().fold(f64::MIN, f64::max).max(1e-6) * 1.05;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if with_text {
        builder
            .caption(caption, ("sans-serif", 24))
            .x_label_area_size(45)
            .y_label_area_size(70);
    }
    let mut chart = builder
        .build_cartesian_2d(1f64..n as f64, 0f64..y_max)
        .map_err(|e| err(e.to_string()))?;
    if with_text {
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(loss_name)
            .draw()
            .map_err(|e| err(e.to_string()))?;
    }
    for (values, color, label) in [(train, &BLUE, labels[0]), (valid, &RED, labels[1])] {
        if values.is_empty() {
            continue;
        }
        let series = chart
            .draw_series(LineSeries::new(
                values.iter().enumerate().map(|(i, v)| ((i + 1) as f64, *v)),
                color,
            ))
            .map_err(|e| err(e.to_string()))?;
        if with_text {
            series
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
    }
    if with_text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(e.to_string()))?;
    }
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Draws series of `(x, y)` points on log-log axes into a PNG (900 x 560), one colour per
/// series (up to 4), with a caption, axis labels and a legend: e.g. seconds per batch
/// against atoms per molecule (`cargo xtask bench --scaling`). Non-positive values are
/// left out (a log axis cannot show them).
///
/// # Errors
/// [`TrainError::Invalid`] if there is nothing positive to draw, or plotters cannot draw
/// or write the file.
pub fn log_log(
    path: &Path,
    caption: &str,
    x_label: &str,
    y_label: &str,
    series: &[(&str, Vec<(f64, f64)>)],
) -> Result<(), TrainError> {
    let err = |e: String| TrainError::Invalid(format!("plot {}: {e}", path.display()));
    let points = || {
        series
            .iter()
            .flat_map(|s| s.1.iter())
            .filter(|(x, y)| *x > 0.0 && *y > 0.0)
    };
    let (x_lo, x_hi) = points().fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (y_lo, y_hi) = points().fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    if x_lo > x_hi {
        return Err(err("no positive point to draw".into()));
    }
    let with_text = font_available();
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if with_text {
        builder
            .caption(caption, ("sans-serif", 24))
            .x_label_area_size(45)
            .y_label_area_size(70);
    }
    let mut chart = builder
        .build_cartesian_2d(
            (x_lo / 1.2..x_hi * 1.2).log_scale(),
            (y_lo / 1.5..y_hi * 1.5).log_scale(),
        )
        .map_err(|e| err(e.to_string()))?;
    if with_text {
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(|e| err(e.to_string()))?;
    }
    const COLOURS: [RGBColor; 4] = [BLUE, RED, GREEN, MAGENTA];
    for ((label, values), colour) in series.iter().zip(COLOURS.iter().cycle()) {
        let pts: Vec<(f64, f64)> = values
            .iter()
            .copied()
            .filter(|(x, y)| *x > 0.0 && *y > 0.0)
            .collect();
        let drawn = chart
            .draw_series(LineSeries::new(pts, colour))
            .map_err(|e| err(e.to_string()))?;
        if with_text {
            let label = label.to_string();
            drawn
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        }
    }
    if with_text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(e.to_string()))?;
    }
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
