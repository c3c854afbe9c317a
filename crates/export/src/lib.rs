//! ONNX export of molattn models.
//!
//! Not implemented yet: the plan (own graph builder on `onnx-protobuf`, one lowering per
//! model, verification in ONNX Runtime and tract) is tracked in the project's export
//! issue. The crate exists so that the workspace layering
//! (`models` <- `export` <- `xtask`) is in place.

#![warn(missing_docs)]
