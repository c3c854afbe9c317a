//! `cargo xtask onnx-roundtrip`: the burn-onnx round trip of `verify::onnx_roundtrip`.

use anyhow::Result;

/// Runs `onnx-roundtrip`.
///
/// # Errors
/// A build without the `onnx` feature, or a round trip that differs.
pub fn run() -> Result<()> {
    #[cfg(not(feature = "onnx"))]
    {
        Err(super::common::missing_feature(
            "onnx",
            "cargo xtask onnx-roundtrip",
        ))
    }
    #[cfg(feature = "onnx")]
    verify::onnx_roundtrip::onnx_roundtrip(&super::common::repo_root())
}
