//! ONNX export rows: a model is exported by `crates/export`, checked by the ONNX checker,
//! then run in ONNX Runtime and tract on batches of different sizes (padded rows
//! included), and compared with the Burn model on the same inputs.

use std::path::PathBuf;

use export::{Case, verify};
use onnx_protobuf::ModelProto;

use super::Row;

/// Runtime tolerance on outputs (the export issue's bound).
pub const TOL: f64 = 1e-4;

/// Writes `model` to a temporary file and returns the checker, ONNX Runtime and tract
/// rows for `cases`.
pub fn rows(component: &str, model: &ModelProto, output: &str, cases: &[Case]) -> Vec<Row> {
    let slug: String = component
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    let file = format!("{slug}.onnx");
    let path: PathBuf = std::env::temp_dir().join(format!("molattn-{}-{file}", std::process::id()));
    let fixture = format!("exported {file}");
    let labels: Vec<&str> = cases.iter().map(|c| c.label.as_str()).collect();
    let fail = |runtime: &str, reason: String| Row {
        component: format!("ONNX {component}: {runtime}"),
        fixture: fixture.clone(),
        max_abs: f64::INFINITY,
        max_rel: f64::INFINITY,
        tolerance: TOL,
        pass: false,
        note: reason.replace('\n', " ").replace('|', "/"),
    };
    if let Err(e) = export::write_model(model, &path) {
        return vec![fail("write", e.to_string())];
    }
    let size_mib = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / (1 << 20) as f64;
    let mut rows = vec![match verify::onnx_checker(&path) {
        Ok(()) => Row {
            component: format!("ONNX {component}: onnx.checker (full_check)"),
            fixture: fixture.clone(),
            max_abs: 0.0,
            max_rel: 0.0,
            tolerance: 0.0,
            pass: true,
            note: format!("opset {}, {size_mib:.1} MiB", export::graph::OPSET),
        },
        Err(e) => fail("onnx.checker", e.to_string()),
    }];
    for agreement in verify::compare_in_runtimes(&path, output, cases) {
        let runtime = agreement.runtime;
        rows.push(match agreement.result {
            Err(e) => fail(runtime, e.to_string()),
            Ok((max_abs, max_rel)) => Row {
                component: format!("ONNX {component}: {runtime} vs Burn"),
                fixture: fixture.clone(),
                max_abs,
                max_rel,
                tolerance: TOL,
                pass: max_abs <= TOL,
                note: format!("batches {} (padded rows included)", labels.join(", ")),
            },
        });
    }
    let _ = std::fs::remove_file(&path);
    rows
}
