//! A prediction's rows as the flat arrays `Run.predict` turns into NumPy arrays.

use train::predict_rows::PredictedRow;

/// A prediction's arrays before they become NumPy arrays.
pub(crate) struct Predicted {
    pub(crate) smiles: Vec<String>,
    pub(crate) ids: Vec<Option<String>>,
    pub(crate) mean: Vec<f32>,
    pub(crate) std: Option<Vec<f32>>,
    pub(crate) each: Option<Vec<f32>>,
    pub(crate) outputs: usize,
    pub(crate) errors: Vec<Option<String>>,
}

/// `rows`' values ([`PredictedRow::values`]: per task the mean, with several `outputs`
/// the std, with `each` every output) as row-major `[n, tasks]` means, std and
/// `[n, tasks, outputs]` outputs, NaN where a row was skipped.
pub(crate) fn split_values(
    rows: Vec<PredictedRow>,
    tasks: usize,
    outputs: usize,
    each: bool,
) -> Predicted {
    let several = outputs > 1;
    let each = each && several;
    let stride = 1 + usize::from(several) + if each { outputs } else { 0 };
    let n = rows.len();
    let mut p = Predicted {
        smiles: Vec::with_capacity(n),
        ids: Vec::with_capacity(n),
        mean: Vec::with_capacity(n * tasks),
        std: several.then(|| Vec::with_capacity(n * tasks)),
        each: each.then(|| Vec::with_capacity(n * tasks * outputs)),
        outputs,
        errors: Vec::with_capacity(n),
    };
    for row in rows {
        let values = row.values.unwrap_or_else(|| vec![f32::NAN; tasks * stride]);
        for t in 0..tasks {
            let v = &values[t * stride..(t + 1) * stride];
            p.mean.push(v[0]);
            if let Some(std) = &mut p.std {
                std.push(v[1]);
            }
            if let Some(all) = &mut p.each {
                all.extend_from_slice(&v[2..]);
            }
        }
        p.smiles.push(row.smiles);
        p.ids.push(row.id);
        p.errors.push(row.error.map(|(_, reason)| reason));
    }
    p
}
