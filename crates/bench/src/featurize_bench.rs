//! `cargo xtask bench --featurize` (stage profile) and `--compare-rdkit` (our 3D and
//! graph-only featurization against RDKit's pipeline, same molecules and cores).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use mol_featurize::profile::{
    BUCKETS, MoleculeProfile, ProfileRun, bucket, profile_run, summarize,
};
use mol_featurize::{CoordinateMethod, MatFeaturizer, featurize_all};

/// The first `per_dataset` SMILES of ESOL and of BBBP.
pub fn benchmark_smiles(datasets: &Path, per_dataset: usize) -> Result<Vec<String>> {
    let mut smiles = Vec::new();
    for file in ["esol/esol.csv", "bbbp/bbbp.csv"] {
        let rows = train::data::read_smiles_csv(&datasets.join(file), "smiles")?;
        smiles.extend(rows.into_iter().take(per_dataset));
    }
    Ok(smiles)
}

fn threads_all() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn print_summary(label: &str, molecules: &[&MoleculeProfile]) {
    println!("  {label} ({} molecules)", molecules.len());
    println!(
        "    {:<18} {:>10} {:>10} {:>10} {:>7}",
        "stage", "median ms", "p95 ms", "max ms", "share"
    );
    for s in summarize(molecules) {
        println!(
            "    {:<18} {:>10.3} {:>10.3} {:>10.1} {:>6.1}%",
            s.stage,
            s.median_ms,
            s.p95_ms,
            s.max_ms,
            100.0 * s.share
        );
    }
}

/// Stage profile with 1 thread and all threads, overall and per heavy-atom bucket.
pub fn stage_profile(smiles: &[String], featurizer: &MatFeaturizer) -> Result<Vec<ProfileRun>> {
    let mut runs = Vec::new();
    let mut counts = [1, threads_all()].to_vec();
    counts.dedup();
    for threads in counts {
        let run = profile_run(smiles, featurizer, threads).map_err(anyhow::Error::msg)?;
        println!(
            "featurization stage profile, {} molecules (ESOL + BBBP), {threads} thread(s): \
             {:.1} molecules/s",
            smiles.len(),
            run.throughput(smiles.len())
        );
        let all: Vec<&MoleculeProfile> = run.molecules.iter().collect();
        print_summary("all", &all);
        for (b, name) in BUCKETS.iter().enumerate() {
            let part: Vec<&MoleculeProfile> = all
                .iter()
                .copied()
                .filter(|m| bucket(m.heavy_atoms) == b)
                .collect();
            if !part.is_empty() {
                print_summary(&format!("heavy atoms {name}"), &part);
            }
        }
        let fallbacks = all
            .iter()
            .filter(|m| m.method != CoordinateMethod::Embed3d)
            .count();
        println!("  not embedded in 3D (fell back): {fallbacks}");
        runs.push(run);
    }
    Ok(runs)
}

/// One row of the RDKit comparison.
#[derive(Debug)]
pub struct CompareRow {
    /// `3d` or `graph-only`.
    pub pipeline: String,
    /// Threads (ours) = processes (RDKit).
    pub cores: usize,
    /// Our molecules per second.
    pub ours: f64,
    /// RDKit's molecules per second.
    pub rdkit: f64,
}

fn rdkit_throughput(
    script: &Path,
    smiles_file: &Path,
    processes: usize,
    graph_only: bool,
) -> Result<(f64, String)> {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(script).arg(smiles_file).arg(processes.to_string());
    if graph_only {
        cmd.arg("--graph-only");
    }
    let out = cmd.output().context("running python3")?;
    anyhow::ensure!(
        out.status.success(),
        "{}: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok((
        v["molecules_per_second"]
            .as_f64()
            .context("no molecules_per_second")?,
        v["rdkit"].as_str().unwrap_or("?").to_string(),
    ))
}

fn our_throughput(smiles: &[String], featurizer: &MatFeaturizer, threads: usize) -> Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let t0 = Instant::now();
    let (_, report) = pool.install(|| featurize_all(smiles, featurizer, false));
    let secs = t0.elapsed().as_secs_f64();
    Ok(report.n_total as f64 / secs)
}

/// Ours against RDKit (bench/rdkit_featurize.py) on `smiles`, 1 and all cores; `None`
/// when `python3 -c "import rdkit"` fails.
pub fn compare_rdkit(
    root: &Path,
    smiles: &[String],
    featurizer_3d: &MatFeaturizer,
    featurizer_graph: &MatFeaturizer,
) -> Result<Option<Vec<CompareRow>>> {
    let has_rdkit = std::process::Command::new("python3")
        .args(["-c", "import rdkit, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_rdkit {
        println!(
            "RDKit comparison skipped: `python3 -c \"import rdkit, numpy\"` fails (pip install rdkit numpy)"
        );
        return Ok(None);
    }
    let script = root.join("bench/rdkit_featurize.py");
    let file: PathBuf =
        std::env::temp_dir().join(format!("molattn-bench-{}.smi", std::process::id()));
    std::fs::write(&file, smiles.join("\n"))?;
    let mut rows = Vec::new();
    let mut version = String::new();
    let mut counts = [1, threads_all()].to_vec();
    counts.dedup();
    for (pipeline, featurizer, graph_only) in [
        ("3d", featurizer_3d, false),
        ("graph-only", featurizer_graph, true),
    ] {
        for &cores in &counts {
            let ours = our_throughput(smiles, featurizer, cores)?;
            let (rdkit, v) = rdkit_throughput(&script, &file, cores, graph_only)?;
            version = v;
            rows.push(CompareRow {
                pipeline: pipeline.to_string(),
                cores,
                ours,
                rdkit,
            });
        }
    }
    let _ = std::fs::remove_file(&file);
    println!(
        "featurization vs RDKit {version} (MAT reference recipe), {} molecules (ESOL + BBBP):",
        smiles.len()
    );
    println!(
        "  {:<11} {:>5} {:>12} {:>12} {:>7}",
        "pipeline", "cores", "ours mol/s", "RDKit mol/s", "ratio"
    );
    for r in &rows {
        println!(
            "  {:<11} {:>5} {:>12.1} {:>12.1} {:>6.2}x",
            r.pipeline,
            r.cores,
            r.ours,
            r.rdkit,
            r.ours / r.rdkit
        );
    }
    Ok(Some(rows))
}
