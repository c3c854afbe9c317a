//! Integration tests of `models`, gathered into one test binary: each test binary is its
//! own compile and link step (for the crates above mol-featurize, a link of all of
//! Burn), so one per crate instead of one per file (docs/BUILD.md).

mod mat_forward;
mod msa_global_attention;
mod reference_weights;
