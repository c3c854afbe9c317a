//! The burn-onnx round trip (`cargo xtask-onnx onnx-roundtrip`): the small reference MAT
//! exported to ONNX and imported back with burn-onnx (its own workspace under
//! `tests/onnx-roundtrip`), outputs compared within 1e-4.

use std::path::Path;

use anyhow::{Result, bail};
use burn::prelude::*;

/// Exports the small reference MAT into
/// `tests/onnx-roundtrip/model/`, with the Burn outputs on two batches, generates Burn code
/// from it with burn-onnx's `ModelGen` (the `onnx-roundtrip-codegen` package), then builds
/// and tests the `onnx-roundtrip` crate, which compiles that code.
///
/// # Errors
/// Missing fixtures, a failed code generation or build, or outputs that differ.
pub fn onnx_roundtrip(root: &Path) -> Result<()> {
    let (model, batches) = crate::parity::mat::small_model_and_batches(&root.join("fixtures"))?;
    let dir = root.join("tests/onnx-roundtrip/model");
    std::fs::create_dir_all(&dir)?;
    let onnx = dir.join("mat_small.onnx");
    export::write_model(
        &export::mat_to_onnx(&model, &[("molattn.model".into(), "mat".into())]),
        &onnx,
    )?;
    let mut cases = Vec::new();
    for batch in &batches {
        let [b, n, d] = batch.node_features.dims();
        let tensor = |t: Tensor<3>, shape: [usize; 3]| -> Result<serde_json::Value> {
            Ok(serde_json::json!({ "shape": shape, "values": t.try_into_vec_as::<f32>()? }))
        };
        cases.push(serde_json::json!({
            "label": format!("{b} x {n} atoms"),
            "node_features": tensor(batch.node_features.clone(), [b, n, d])?,
            "key_padding_mask": {
                "shape": [b, n],
                "values": batch.key_padding_mask.clone().float().try_into_vec_as::<f32>()?,
            },
            "adjacency": tensor(batch.adjacency.clone(), [b, n, n])?,
            "distances": tensor(batch.distances.clone(), [b, n, n])?,
            "prediction": model.forward(batch).try_into_vec_as::<f32>()?,
        }));
    }
    std::fs::write(dir.join("expected.json"), serde_json::to_vec(&cases)?)?;
    println!(
        "wrote {} and expected.json; generating Burn code with burn-onnx",
        onnx.display()
    );
    let manifest = root.join("tests/onnx-roundtrip/Cargo.toml");
    // The main workspace's build directory, so that the test crate can reuse its Burn
    // (docs/BUILD.md): `$CARGO_TARGET_DIR` when set (as in .ci/run), else `<root>/target`.
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), std::path::PathBuf::from);
    let cargo = || {
        let mut c = std::process::Command::new(env!("CARGO"));
        c.env("CARGO_TARGET_DIR", &target_dir);
        c
    };
    let status = cargo()
        .args(["run", "--quiet", "--profile", "codegen"])
        .args(["-p", "onnx-roundtrip-codegen", "--manifest-path"])
        .arg(&manifest)
        .arg("--")
        .arg(&onnx)
        .arg(dir.join("generated"))
        .status()?;
    if !status.success() {
        bail!("burn-onnx code generation failed ({status}); see docs/ONNX.md");
    }
    // Cargo's progress lines, streamed through, tell whether the test crate reused the
    // main build's Burn.
    let mut child = cargo()
        .args([
            "test",
            "--color",
            "never",
            "-p",
            "onnx-roundtrip",
            "--manifest-path",
        ])
        .arg(&manifest)
        .args(["--", "--nocapture"])
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let mut compiled_burn = false;
    if let Some(stderr) = child.stderr.take() {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line?;
            compiled_burn |= line.trim_start().starts_with("Compiling burn-flex");
            eprintln!("{line}");
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("burn-onnx round trip failed ({status}); see docs/ONNX.md");
    }
    if compiled_burn {
        println!(
            "note: the round trip compiled its own Burn instead of reusing this build's \
             (expected unless this is `cargo xtask-full`; otherwise the feature mirror in \
             tests/onnx-roundtrip/Cargo.toml has drifted: python3 \
             tests/onnx-roundtrip/check_reuse.py names what differs, docs/BUILD.md)"
        );
    }
    println!("burn-onnx round trip: imported MAT matches Burn within 1e-4");
    Ok(())
}
