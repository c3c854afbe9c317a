//! `cargo xtask parity`: every comparison against the reference fixtures, as a table.
//!
//! Fixtures are made by our own scripts under `fixtures/gen/` (PyTorch, RDKit) and
//! committed; nothing here needs Python.

mod biased_mha;
mod featurization;
mod fixture;
mod global_attention;
pub mod mat;
mod mat_variants;
mod moses;
#[cfg(feature = "onnx")]
mod onnx;
pub mod prng;
mod smiles;
pub mod transformer_m;
mod transformer_m_fragments;

use std::path::{Path, PathBuf};

/// One line of the parity table.
pub struct Row {
    /// What is compared.
    pub component: String,
    /// Reference fixture.
    pub fixture: String,
    /// Largest absolute difference.
    pub max_abs: f64,
    /// Largest relative difference (over reference entries with |value| > 1e-3).
    pub max_rel: f64,
    /// Pass threshold on `max_abs` (or on the stated quantity).
    pub tolerance: f64,
    /// Whether it passed.
    pub pass: bool,
    /// Explanation (looser bounds, counts, units).
    pub note: String,
}

impl Row {
    /// A row comparing `got` with `want` elementwise under an absolute tolerance.
    pub fn compare(
        component: &str,
        fixture: &str,
        got: &[f32],
        want: &[f32],
        tolerance: f64,
        note: &str,
    ) -> Row {
        let (max_abs, max_rel) = differences(got, want);
        let pass =
            got.len() == want.len() && max_abs <= tolerance && got.iter().all(|v| v.is_finite());
        let note = if got.len() == want.len() {
            note.to_string()
        } else {
            format!("length {} vs {}; {note}", got.len(), want.len())
        };
        Row {
            component: component.into(),
            fixture: fixture.into(),
            max_abs,
            max_rel,
            tolerance,
            pass,
            note,
        }
    }
}

/// Largest absolute and relative differences.
pub fn differences(got: &[f32], want: &[f32]) -> (f64, f64) {
    let mut max_abs: f64 = 0.0;
    let mut max_rel: f64 = 0.0;
    for (a, b) in got.iter().zip(want) {
        let d = (*a as f64 - *b as f64).abs();
        max_abs = max_abs.max(if d.is_nan() { f64::INFINITY } else { d });
        if b.abs() > 1e-3 {
            max_rel = max_rel.max(d / b.abs() as f64);
        }
    }
    (max_abs, max_rel)
}

/// Options of the parity run.
pub struct ParityOptions {
    /// Repository root (fixtures are read from `fixtures/`).
    pub root: PathBuf,
    /// Datasets folder for the featurization rows.
    pub datasets: PathBuf,
    /// Also compare 3D conformer geometry against RDKit over the datasets (minutes).
    pub conformers: bool,
    /// Write the table to this Markdown file.
    pub write_doc: Option<PathBuf>,
}

/// Runs every comparison, prints the table and returns whether all rows passed.
pub fn run(options: &ParityOptions) -> anyhow::Result<bool> {
    let fixtures = options.root.join("fixtures");
    let mut rows = Vec::new();
    rows.extend(featurization::rows(
        &fixtures,
        &options.datasets,
        options.conformers,
    )?);
    rows.extend(mat::rows(&fixtures)?);
    rows.extend(mat_variants::rows(&fixtures)?);
    rows.extend(global_attention::rows(&fixtures)?);
    rows.extend(biased_mha::rows(&fixtures)?);
    rows.extend(transformer_m::rows(&fixtures)?);
    rows.extend(transformer_m_fragments::rows(&fixtures)?);
    rows.extend(moses::rows(&fixtures)?);
    #[cfg(feature = "onnx")]
    rows.extend(transformer_m::onnx_rows(&fixtures)?);
    #[cfg(feature = "onnx")]
    rows.extend(onnx::smiles_gpt_rows());
    #[cfg(not(feature = "onnx"))]
    println!(
        "ONNX export rows not run: this build has no `onnx` feature (cargo xtask-full parity \
         runs them, as CI does)"
    );
    let table = render(&rows);
    println!("{table}");
    let all_pass = rows.iter().all(|r| r.pass);
    println!(
        "{} of {} rows pass",
        rows.iter().filter(|r| r.pass).count(),
        rows.len()
    );
    if let Some(path) = &options.write_doc {
        let (_, edge_cases) = smiles::edge_case_row(&fixtures)?;
        let (_, fuzz) = smiles::fuzz_row(&fixtures)?;
        write_doc(path, &table, &edge_cases, &fuzz)?;
        println!("wrote {}", path.display());
    }
    Ok(all_pass)
}

fn render(rows: &[Row]) -> String {
    let mut s = String::from(
        "| component | fixture | max abs err | max rel err | tolerance | result | note |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {:.2e} | {:.2e} | {:.0e} | {} | {} |\n",
            r.component,
            r.fixture,
            r.max_abs,
            r.max_rel,
            r.tolerance,
            if r.pass { "pass" } else { "FAIL" },
            r.note
        ));
    }
    s
}

fn write_doc(path: &Path, table: &str, edge_cases: &str, fuzz: &str) -> anyhow::Result<()> {
    let fixtures = path
        .parent()
        .unwrap_or(Path::new("."))
        .join("../fixtures/parity");
    let mut versions = String::new();
    for file in [
        "versions.json",
        "versions_global_attention.json",
        "versions_biased_mha.json",
        "versions_transformer_m.json",
    ] {
        let text = std::fs::read_to_string(fixtures.join(file)).unwrap_or_default();
        versions.push_str(&format!(
            "`fixtures/parity/{file}`:\n\n```json\n{}\n```\n\n",
            text.trim()
        ));
    }
    let text = format!(
        "# Parity with the reference implementations\n\n\
         Generated by `cargo xtask-full parity --conformers --write-doc docs/PARITY.md` on {date}.\n\
         References: the original ardigen/MAT code (`fixtures/gen/mat_original.py`; its\n\
         make_model options one at a time in `fixtures/gen/mat_variants_original.py`) and our\n\
         PyTorch MAT in its module tree (`fixtures/gen/mat_reference.py`, equal to the original\n\
         on every output), RDKit (`fixtures/gen/mat_features.py`, `fixtures/gen/dataset_reference.py`),\n\
         our JAX + dm-haiku AlphaFold global attention (`fixtures/gen/global_attention_reference.py`),\n\
         DGL 2.1.0's BiasedMHA (`fixtures/gen/biased_mha_reference.py`), the original\n\
         lsj2408/Transformer-M code (`fixtures/gen/transformer_m_original.py`) and the MOSES\n\
         metrics of the `moses` package, molsets 0.3.1 (`fixtures/gen/moses_metrics_reference.py`).\n\
         Parity runs use the featurizer's `reference_compat` option (reference quirks on).\n\
         Versions: molattn {molattn}, mol-featurize {featurize}, Burn 0.22.1, chematic 1.2.1 (chematic-3d ETKDG, chematic-ff UFF; both through the forks in vendor/, whose BFGS sums in another order than RDKit's) (Cargo.lock).\n\n\
         {table}\n\
         ## Edge cases vs RDKit, case by case\n\n\
         `fixtures/edge_cases.json` (`fixtures/gen/edge_cases.py`, RDKit's graph after the MAT\n\
         recipe's final `RemoveHs`); the rules behind them: docs/CHEMISTRY.md.\n\n\
         {edge_cases}\n\
         ## SMILES that RDKit and we read differently\n\n\
         Of the 5000 mutated SMILES of `fixtures/smiles_fuzz.tsv.gz` (`fixtures/gen/smiles_fuzz.py`),\n\
         these are all that differ; each is one of the two kinds we reject on purpose\n\
         (docs/CHEMISTRY.md, \"SMILES grammar\").\n\n\
         {fuzz}\n\
         Fixture versions:\n\n{versions}",
        date = today(),
        molattn = env!("CARGO_PKG_VERSION"),
        featurize = mol_featurize::VERSION,
    );
    std::fs::write(path, text)?;
    Ok(())
}

fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}
