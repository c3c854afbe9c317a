//! Rebuilds when the generated model changes; the generation itself is done beforehand by
//! the `onnx-roundtrip-codegen` package (run by `cargo xtask-onnx onnx-roundtrip`), so that this
//! crate has no burn-onnx build-dependency and reuses the main workspace's Burn build.

fn main() {
    let generated = "model/generated/mat_small.rs";
    println!("cargo:rerun-if-changed={generated}");
    println!("cargo:rerun-if-changed=model/generated/mat_small.bpk");
    if !std::path::Path::new(generated).exists() {
        panic!("{generated} is missing: run `cargo xtask-onnx onnx-roundtrip`, which generates it");
    }
}
