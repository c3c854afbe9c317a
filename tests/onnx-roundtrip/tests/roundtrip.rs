//! The burn-onnx import of our exported MAT reproduces the Burn model that was exported
//! (`model/expected.json`, written by `cargo xtask-onnx onnx-roundtrip`) within 1e-4.

use burn::prelude::*;
use onnx_roundtrip::mat_small::Model;

fn tensor<const D: usize>(case: &serde_json::Value, name: &str, dev: &Device) -> Tensor<D> {
    let shape: Vec<usize> = serde_json::from_value(case[name]["shape"].clone()).unwrap();
    let values: Vec<f32> = serde_json::from_value(case[name]["values"].clone()).unwrap();
    Tensor::from_data(TensorData::new(values, shape), dev)
}

/// This crate's directory at run time (set by `cargo test`), so that a test binary reused
/// from the shared build directory reads this checkout's files.
fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
}

#[test]
fn imported_mat_matches_the_exported_burn_model() {
    let text = std::fs::read_to_string(manifest_dir().join("model/expected.json"))
        .expect("run `cargo xtask-onnx onnx-roundtrip`");
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let dev = Device::flex();
    // The weights burn-onnx wrote next to the generated code, on the CPU backend.
    let model = Model::from_file(manifest_dir().join("model/generated/mat_small.bpk"), &dev);
    for case in &cases {
        let mask: Tensor<2> = tensor(case, "key_padding_mask", &dev);
        let out = model.forward(
            tensor(case, "node_features", &dev),
            mask.greater_elem(0.5),
            tensor(case, "adjacency", &dev),
            tensor(case, "distances", &dev),
        );
        let got: Vec<f32> = out.try_into_vec_as().unwrap();
        let want: Vec<f32> = serde_json::from_value(case["prediction"].clone()).unwrap();
        assert_eq!(got.len(), want.len());
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        println!(
            "{}: burn-onnx import vs Burn max abs {worst:.2e}",
            case["label"]
        );
        assert!(worst <= 1e-4, "{}: max abs {worst}", case["label"]);
    }
}
