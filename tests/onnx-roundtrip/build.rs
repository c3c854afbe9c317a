//! Imports the exported MAT with burn-onnx's `ModelGen` (Burn code + Burnpack weights).
use burn_onnx::ModelGen;

fn main() {
    let onnx = "model/mat_small.onnx";
    println!("cargo:rerun-if-changed={onnx}");
    if !std::path::Path::new(onnx).exists() {
        panic!("{onnx} is missing: run `cargo xtask onnx-roundtrip`, which exports it first");
    }
    ModelGen::new()
        .input(onnx)
        .out_dir("model/")
        .run_from_script();
}
