//! Learning curves drawn with plotters.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::error::TrainError;

/// Registers the bundled DejaVu Sans (the `dejavu` crate) as plotters' sans-serif once;
/// `false` if plotters refuses it (the plot is then drawn without text). Bundled rather
/// than looked up in system folders: the pictures are the same on every machine, and a
/// machine without fonts still labels its axes.
fn font_available() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok()
    })
}

/// Draws training and validation loss per epoch of a `model` run into a PNG (caption
/// "<model> training: <loss_name> per epoch").
///
/// # Errors
/// [`TrainError::Invalid`] if plotters cannot draw or write the file.
pub fn loss_curves(
    path: &Path,
    train: &[f64],
    valid: &[f64],
    (model, loss_name): (&str, &str),
) -> Result<(), TrainError> {
    curves(
        path,
        &format!("{model} training: {loss_name} per epoch"),
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

/// Draws a square matrix as a heat map into a PNG (`size x size` pixels plus margins),
/// white (0) to dark blue (the largest value), each cell's row and column labelled with
/// `labels` (row = query, column = key, as in attention matrices).
///
/// # Errors
/// [`TrainError::Invalid`] if `matrix` is not `labels.len()^2` values or plotters cannot
/// draw or write the file.
pub fn heat_map(
    path: &Path,
    caption: &str,
    labels: &[String],
    matrix: &[f32],
) -> Result<(), TrainError> {
    let err = |e: String| TrainError::Invalid(format!("plot {}: {e}", path.display()));
    let n = labels.len();
    if matrix.len() != n * n || n == 0 {
        return Err(err(format!("{} values for {n} labels", matrix.len())));
    }
    let max = matrix.iter().copied().fold(f32::MIN, f32::max).max(1e-12);
    let with_text = font_available();
    let cell = (720 / n).clamp(12, 48) as i32;
    let margin = 70;
    let width = (cell * n as i32 + margin + 20) as u32;
    let height = (40 + cell * n as i32 + 10) as u32;
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    if with_text {
        root.draw(&Text::new(caption.to_string(), (10, 2), ("sans-serif", 15)))
            .map_err(|e| err(e.to_string()))?;
    }
    let top = 40 + margin;
    for (i, row) in matrix.chunks(n).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let t = (v / max).clamp(0.0, 1.0) as f64;
            let shade = |full: f64| (255.0 - (255.0 - full) * t) as u8;
            let colour = RGBColor(shade(20.0), shade(60.0), shade(160.0));
            let (x0, y0) = (margin + j as i32 * cell, top + i as i32 * cell - margin);
            root.draw(&Rectangle::new(
                [(x0, y0), (x0 + cell, y0 + cell)],
                colour.filled(),
            ))
            .map_err(|e| err(e.to_string()))?;
        }
    }
    if with_text {
        let size = (cell as f64 * 0.45).clamp(9.0, 16.0);
        let font = ("sans-serif", size);
        // Column labels sit side by side: label every `step`-th token so that each
        // has room for its text (about 0.6 em a character), rows likewise for height.
        let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
        let step = heat_map_label_step(widest * size * 0.6 + 2.0, cell);
        for (k, label) in labels.iter().enumerate().filter(|(k, _)| k % step == 0) {
            let offset = k as i32 * cell + cell / 4;
            root.draw(&Text::new(label.clone(), (4, 40 + offset), font))
                .map_err(|e| err(e.to_string()))?;
            root.draw(&Text::new(label.clone(), (margin + offset, 24), font))
                .map_err(|e| err(e.to_string()))?;
        }
    }
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Every how many tokens a heat map labels its axes, for labels `width` pixels wide on
/// cells of `cell` pixels: 1 when they fit, more on large matrices (above ~60 tokens the
/// labels overlapped).
pub fn heat_map_label_step(width: f64, cell: i32) -> usize {
    (width / f64::from(cell.max(1))).ceil().max(1.0) as usize
}

/// Rasterises an SVG (a depiction) into a PNG with resvg, text set in the bundled
/// DejaVu Sans.
///
/// # Errors
/// [`TrainError::Invalid`] for an unparsable SVG, an empty image or a write failure.
pub fn svg_to_png(svg: &str, path: &Path) -> Result<(), TrainError> {
    use resvg::{tiny_skia, usvg};
    static FONTS: OnceLock<std::sync::Arc<usvg::fontdb::Database>> = OnceLock::new();
    let err = |e: String| TrainError::Invalid(format!("{}: {e}", path.display()));
    let fonts = FONTS.get_or_init(|| {
        // The bundled DejaVu Sans, as for the plots: the same pictures on every machine.
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        std::sync::Arc::new(db)
    });
    let options = usvg::Options {
        fontdb: fonts.clone(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| err(e.to_string()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| err("empty image".into()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.save_png(path).map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #37 item 11: labels of 4 characters at 9 px on 12 px cells (a 60-token
    /// matrix) overlapped; every second label now fits, and small matrices label all.
    #[test]
    fn heat_map_labels_do_not_overlap() {
        let width = 4.0 * 9.0 * 0.6 + 2.0;
        assert_eq!(heat_map_label_step(width, 12), 2);
        assert!(heat_map_label_step(width, 12) as f64 * 12.0 >= width);
        assert_eq!(heat_map_label_step(3.0 * 16.0 * 0.6 + 2.0, 48), 1);
    }
}
