//! MSA column global attention's graph, verified on a synthetic ragged MSA of two sizes.

use std::path::Path;

use burn::prelude::*;
use models::{MsaColumnGlobalAttention, MsaColumnGlobalAttentionConfig};

use super::{Export, invalid, json};
use crate::{Case, ExportError, Feed};

/// The MSA block, with a synthetic ragged MSA of two sizes as inputs.
pub(super) fn msa_block(
    params: Option<&Path>,
    scope: &str,
    config: Option<&Path>,
    device: &Device,
) -> Result<Export, ExportError> {
    let config: MsaColumnGlobalAttentionConfig = match config {
        Some(path) => serde_json::from_str(
            &std::fs::read_to_string(path)
                .map_err(|e| invalid(format!("{}: {e}", path.display())))?,
        )
        .map_err(|e| {
            invalid(format!(
                "{}: not an MSA column global attention config: {e}",
                path.display()
            ))
        })?,
        None => MsaColumnGlobalAttentionConfig::new(),
    };
    let mut block: MsaColumnGlobalAttention = config.init(device);
    if let Some(path) = params {
        block = block.load_alphafold_params(path, scope).map_err(invalid)?;
    }
    device.seed(7);
    let mut cases = Vec::new();
    for (n_seq, n_res) in [(16, 12), (5, 3)] {
        let act = Tensor::<3>::random(
            [n_seq, n_res, config.c_m],
            burn::tensor::Distribution::Normal(0.0, 1.0),
            device,
        );
        // Ragged columns; the last column fully masked.
        let mask: Vec<bool> = (0..n_seq * n_res)
            .map(|i| {
                let (s, r) = (i / n_res, i % n_res);
                r == n_res - 1 || s >= n_seq - r % n_seq
            })
            .collect();
        let padding =
            Tensor::<2, Bool>::from_data(TensorData::new(mask.clone(), [n_seq, n_res]), device);
        let want: Vec<f32> = block
            .forward(act.clone(), padding)
            .try_into_vec_as()
            .map_err(invalid)?;
        cases.push(Case {
            label: format!("{n_seq} x {n_res}"),
            feeds: vec![
                Feed::f32(
                    "msa_act",
                    &[n_seq, n_res, config.c_m],
                    act.try_into_vec_as().map_err(invalid)?,
                ),
                Feed::bool("msa_padding_mask", &[n_seq, n_res], mask),
            ],
            want,
        });
    }
    let metadata = vec![
        (
            "molattn.model".to_string(),
            "msa_column_global_attention".to_string(),
        ),
        ("molattn.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("molattn.model_config".into(), json(&config)?),
        (
            "molattn.params".into(),
            params.map_or("fresh AlphaFold initialisation".into(), |p| {
                format!("{} [{scope}]", p.display())
            }),
        ),
    ];
    Ok((
        crate::msa_global_attention_to_onnx(&block, &metadata),
        "msa_update",
        cases,
    ))
}
