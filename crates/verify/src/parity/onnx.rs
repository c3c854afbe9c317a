//! ONNX export rows: a model is exported by `crates/export`, checked by the ONNX checker,
//! then run in ONNX Runtime and tract on batches of different sizes (padded rows
//! included), and compared with the Burn model on the same inputs.

use std::path::PathBuf;

use export::{Case, verify};
use onnx_protobuf::ModelProto;

use super::Row;

/// Runtime tolerance on outputs (the export issue's bound).
pub const TOL: f64 = 1e-4;

/// The ONNX checker's row for the file at `path` (`note_tail` after the opset).
fn checker_row(path: &std::path::Path, component: &str, fixture: &str, note_tail: &str) -> Row {
    let (pass, note) = match verify::onnx_checker(path) {
        Ok(()) => (true, format!("opset {}{note_tail}", export::graph::OPSET)),
        Err(e) => (false, e.to_string().replace('\n', " ").replace('|', "/")),
    };
    Row {
        component: format!("{component}: onnx.checker (full_check)"),
        fixture: fixture.to_string(),
        max_abs: if pass { 0.0 } else { f64::INFINITY },
        max_rel: if pass { 0.0 } else { f64::INFINITY },
        tolerance: 0.0,
        pass,
        note,
    }
}

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
    let mut rows = vec![checker_row(
        &path,
        &format!("ONNX {component}"),
        &fixture,
        &format!(", {size_mib:.1} MiB"),
    )];
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

/// The SMILES generator's decoder step exported (dense causal, and local attention with a
/// window of 4 and 2 global tokens), checked, then 100 prompts decoded greedily through it
/// in ONNX Runtime against Burn's KV-cached decoding: identical tokens and logits within
/// [`TOL`]. The models are seeded random ones with a sharpened head (so that greedy choices
/// are not near-ties) that rarely ends a sequence.
pub fn smiles_gpt_rows() -> Vec<Row> {
    use attn_core::AttentionPattern;
    use burn::module::Param;
    use burn::prelude::*;
    use models::SmilesGptConfig;
    let device = Device::flex();
    let mut rows = Vec::new();
    for (label, pattern) in [
        ("dense causal", AttentionPattern::causal()),
        ("window 4 + 2 global tokens", AttentionPattern::local(4, 2)),
    ] {
        device.seed(36);
        let mut model = SmilesGptConfig::small(28)
            .with_max_len(48)
            .with_dropout(0.0)
            .with_pattern(pattern)
            .init(&device);
        // A sharpened head whose `<eos>` column is 0: every other token's logit is large,
        // so sequences run to `max_len` through the window.
        let eos = mol_featurize::smiles_tokenizer::EOS as usize;
        let head = model.head.weight.val() * 40.0;
        let [d, _] = head.dims();
        let head = head.slice_assign([0..d, eos..eos + 1], Tensor::zeros([d, 1], &device));
        model.head.weight = Param::from_tensor(head);
        // MolGPT starts position embeddings at 0: random ones make a wrong offset visible.
        model.pos_emb = Param::from_tensor(Tensor::random(
            model.pos_emb.dims(),
            burn::tensor::Distribution::Normal(0.0, 0.5),
            &device,
        ));
        let component = format!("ONNX SMILES GPT decoder step ({label})");
        let fixture = "exported smiles_gpt_step.onnx, 100 prompts".to_string();
        let fail = |what: &str, reason: String| Row {
            component: format!("{component}: {what}"),
            fixture: fixture.clone(),
            max_abs: f64::INFINITY,
            max_rel: f64::INFINITY,
            tolerance: TOL,
            pass: false,
            note: reason.replace('\n', " ").replace('|', "/"),
        };
        let path = std::env::temp_dir().join(format!(
            "molattn-{}-smiles_gpt_step.onnx",
            std::process::id()
        ));
        let onnx = export::smiles_gpt_step_to_onnx(&model, &[]);
        if let Err(e) = export::write_model(&onnx, &path) {
            rows.push(fail("write", e.to_string()));
            continue;
        }
        rows.push(checker_row(&path, &component, &fixture, ""));
        let result = export::smiles_gpt::sampled_prompts(&model, 100, 7, &device)
            .map_err(|e| e.to_string())
            .and_then(|prompts| {
                export::smiles_gpt::verify_greedy(&model, &path, &prompts, &device)
                    .map_err(|e| e.to_string())
            });
        rows.push(match result {
            Err(e) => fail("ONNX Runtime greedy decoding", e),
            Ok(a) => Row {
                component: format!("{component}: ONNX Runtime greedy decoding vs Burn"),
                fixture: fixture.clone(),
                max_abs: a.max_abs,
                max_rel: a.max_rel,
                tolerance: TOL,
                pass: a.max_abs <= TOL && a.identical == a.prompts,
                note: format!(
                    "{} of {} prompts decode to identical tokens ({} tokens); logits of every fed position{}",
                    a.identical,
                    a.prompts,
                    a.tokens,
                    a.first_difference
                        .map(|d| format!("; {}", d.replace('|', "/")))
                        .unwrap_or_default()
                ),
            },
        });
        let _ = std::fs::remove_file(&path);
    }
    rows
}
