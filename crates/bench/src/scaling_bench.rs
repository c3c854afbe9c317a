//! `cargo xtask bench --scaling`: MAT forward and training-step time and peak memory
//! against atoms per molecule (16 to 1024), both presets, ours on flex, one molecule per
//! batch (issue #12, item 4). Each point runs in its own process (`bench-row`), so its peak
//! RSS is its own. Writes bench/scaling.json and docs/images/scaling.png.
//!
//! Molecules are synthetic, so that every size exists: a carbon chain of N atoms (MAT
//! features of an sp3 carbon in row 0, a chain adjacency with self loops, distances
//! 1.5 Angstrom per bond along the chain). The work of the model depends only on N.

use std::path::Path;

use anyhow::Result;
use mol_featurize::MatBatchData;

use crate::compare_torch::spawn_row;
use crate::measure::cpu_model;
use crate::model_bench::{BenchMode, BenchModel, BenchRuntime, RowResult, write_batch};

/// Atoms per molecule of the sweep.
pub const ATOMS: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

/// One chain molecule of `n` atoms, padded to itself (no padding), `d_atom` 28.
fn chain(n: usize) -> MatBatchData {
    let d = 28;
    let mut node_features = vec![0.0f32; n * d];
    let mut adjacency = vec![0.0f32; n * n];
    let mut distances = vec![0.0f32; n * n];
    for i in 0..n {
        node_features[i * d + 1] = 1.0; // a carbon (one-hot atomic number)
        node_features[i * d + 12] = 1.0; // with some neighbours
        for j in 0..n {
            adjacency[i * n + j] = f32::from(u8::from(i.abs_diff(j) <= 1));
            distances[i * n + j] = 1.5 * i.abs_diff(j) as f32;
        }
    }
    MatBatchData {
        batch_size: 1,
        n_atoms: n,
        d_atom: d,
        node_features,
        adjacency,
        distances,
        key_padding_mask: vec![false; n],
        edge_features: None,
    }
}

/// Runs the sweep with `threads` threads and writes the JSON and the plot under `root`.
/// A point that fails (out of memory, a crash of its process) is reported in the table and
/// the JSON, and the sweep goes on.
///
/// # Errors
/// A batch file, the JSON or the plot cannot be written.
pub fn run(root: &Path, threads: usize) -> Result<()> {
    println!(
        "MAT scaling, 1 molecule per batch, flex, {threads} threads; {}",
        cpu_model()
    );
    println!(
        "{:<15} {:>6} {:>12} {:>12} {:>12} {:>12}",
        "model", "atoms", "forward ms", "fwd RSS MiB", "train ms", "train RSS MiB"
    );
    let mut points = Vec::new();
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for model in [BenchModel::MatSmall, BenchModel::MatPretrained] {
        let mut fwd = Vec::new();
        let mut train = Vec::new();
        for n in ATOMS {
            let path = std::env::temp_dir()
                .join(format!("molattn-scaling-{}-{n}.json", std::process::id()));
            write_batch(&chain(n), &path)?;
            let row = |mode| spawn_row(root, &path, model, mode, BenchRuntime::Flex, threads, 0.0);
            let (f, t): (Result<RowResult>, Result<RowResult>) =
                (row(BenchMode::Forward), row(BenchMode::Train));
            let _ = std::fs::remove_file(&path);
            let show = |r: &Result<RowResult>| match r {
                Ok(x) => (
                    format!("{:.1}", x.median_ms),
                    x.peak_rss_mb.map_or("-".into(), |m| format!("{m:.0}")),
                ),
                Err(e) => (format!("failed: {e:#}"), String::new()),
            };
            let ((fm, fr), (tm, tr)) = (show(&f), show(&t));
            println!(
                "{:<15} {n:>6} {fm:>12} {fr:>12} {tm:>12} {tr:>12}",
                format!("{model:?}")
            );
            if let Ok(x) = &f {
                fwd.push((n as f64, x.median_ms));
            }
            if let Ok(x) = &t {
                train.push((n as f64, x.median_ms));
            }
            points.push(serde_json::json!({
                "model": model, "atoms": n,
                "forward": f.as_ref().ok(), "train": t.as_ref().ok(),
                "error": f.as_ref().err().or(t.as_ref().err()).map(|e| format!("{e:#}")),
            }));
        }
        let name = match model {
            BenchModel::MatSmall => "MAT small",
            _ => "MAT pretrained size",
        };
        series.push((format!("{name}, forward"), fwd));
        series.push((format!("{name}, training step"), train));
    }
    let json = serde_json::json!({
        "command": format!("cargo xtask bench --scaling --threads {threads}"),
        "machine": {"cpu": cpu_model(), "threads": threads},
        "batch": "one synthetic chain molecule of N atoms per batch",
        "points": points,
    });
    let out = root.join("bench/scaling.json");
    std::fs::write(&out, serde_json::to_string_pretty(&json)? + "\n")?;
    let image = root.join("docs/images/scaling.png");
    let refs: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(l, v)| (l.as_str(), v.clone()))
        .collect();
    train::plot::log_log(
        &image,
        "MAT on flex: milliseconds per molecule against atoms",
        "atoms per molecule",
        "ms per call (batch of 1)",
        &refs,
    )?;
    println!("wrote {} and {}", out.display(), image.display());
    Ok(())
}
