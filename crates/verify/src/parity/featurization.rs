//! Featurization parity rows: hand-checked MAT vectors, every molecule of the three
//! datasets against RDKit, and (optionally) 3D geometry against RDKit ETKDG + UFF.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use mol_featurize::conformer::{ConformerOptions, CoordinateMethod, coordinates};
use mol_featurize::reference::{atom_difference, atom_fields};
use mol_featurize::{MatFeaturizer, Molecule};
use rayon::prelude::*;

use super::Row;

/// One line of `dataset_reference.tsv.gz` (see `fixtures/gen/dataset_reference.py`).
struct Reference {
    dataset: String,
    row: usize,
    status: String,
    atoms: String,
    bonds: Vec<(usize, usize)>,
    bond_lengths: Vec<f64>,
    d13: Vec<(usize, usize, f64)>,
}

fn read_reference(path: &Path) -> Result<Vec<Reference>> {
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    for line in reader.lines() {
        let line = line?;
        if line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 7 {
            return Err(anyhow!("{}: malformed line {line:?}", path.display()));
        }
        let list = |s: &str| {
            s.split(';')
                .filter(|x| !x.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let pair = |s: &str| -> Result<(usize, usize)> {
            let (a, b) = s.split_once('-').ok_or_else(|| anyhow!("pair {s}"))?;
            Ok((a.parse()?, b.parse()?))
        };
        out.push(Reference {
            dataset: f[0].into(),
            row: f[1].parse()?,
            status: f[2].into(),
            atoms: f[3].into(),
            bonds: list(f[4]).iter().map(|p| pair(p)).collect::<Result<_>>()?,
            bond_lengths: list(f[5])
                .iter()
                .map(|v| v.parse())
                .collect::<Result<_, _>>()?,
            d13: list(f[6])
                .iter()
                .map(|p| {
                    let (ik, d) = p.split_once(':').ok_or_else(|| anyhow!("d13 {p}"))?;
                    let (i, k) = pair(ik)?;
                    Ok((i, k, d.parse()?))
                })
                .collect::<Result<_>>()?,
        });
    }
    Ok(out)
}

fn our_bonds(mol: &Molecule) -> Vec<(usize, usize)> {
    let mut b: Vec<(usize, usize)> = mol
        .bonds()
        .iter()
        .map(|b| (b.begin.min(b.end), b.begin.max(b.end)))
        .collect();
    b.sort();
    b
}

/// Why our molecule differs from RDKit's, or `None` if it agrees.
fn difference(mol: &Molecule, reference: &Reference) -> Option<String> {
    if reference.status == "invalid" {
        return Some("RDKit rejects it, we accept it".into());
    }
    if let Some(d) = atom_difference(&atom_fields(mol), &reference.atoms) {
        return Some(d);
    }
    let mut theirs: Vec<(usize, usize)> = reference
        .bonds
        .iter()
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    theirs.sort();
    (our_bonds(mol) != theirs).then(|| "bonds differ".into())
}

/// Hand-checked vectors, dataset-wide featurization and (optionally) geometry rows.
pub fn rows(fixtures: &Path, datasets: &Path, conformers: bool) -> Result<Vec<Row>> {
    let mut rows = Vec::new();

    // 1. Exact MAT vectors of the hand-checked molecules (reference_compat).
    let fx: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        fixtures.join("mat_features.json"),
    )?)?;
    let compat = MatFeaturizer {
        reference_compat: true,
        conformer: ConformerOptions {
            method: CoordinateMethod::Topological,
            ..Default::default()
        },
        ..Default::default()
    };
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let molecules = fx["molecules"]
        .as_array()
        .ok_or_else(|| anyhow!("mat_features.json"))?;
    for m in molecules {
        let f = compat.featurize_smiles(m["smiles"].as_str().unwrap_or_default())?;
        got.extend(f.node_features.iter().chain(&f.adjacency).copied());
        for key in ["node_features", "adjacency"] {
            for row in m[key].as_array().into_iter().flatten() {
                want.extend(
                    row.as_array()
                        .into_iter()
                        .flatten()
                        .map(|v| v.as_f64().unwrap_or(f64::NAN) as f32),
                );
            }
        }
    }
    rows.push(Row::compare(
        &format!(
            "MAT features + adjacency, {} hand-checked molecules",
            molecules.len()
        ),
        "mat_features.json",
        &got,
        &want,
        0.0,
        "exact; reference_compat",
    ));

    // 2. Every molecule of the three datasets against RDKit.
    let reference = read_reference(&fixtures.join("parity/dataset_reference.tsv.gz"))?;
    let mut smiles = std::collections::HashMap::new();
    for name in ["esol", "freesolv", "bbbp"] {
        let path = datasets.join(format!("{name}/{name}.csv"));
        let rows = train::data::read_smiles_csv(&path, "smiles")
            .with_context(|| path.display().to_string())?;
        smiles.insert(name.to_string(), rows);
    }
    let parsed: Vec<(usize, Result<Molecule, String>)> = reference
        .par_iter()
        .enumerate()
        .map(|(k, r)| {
            let s = smiles
                .get(&r.dataset)
                .and_then(|v| v.get(r.row))
                .cloned()
                .unwrap_or_default();
            (k, Molecule::from_smiles(&s).map_err(|e| e.to_string()))
        })
        .collect();
    let mut differing = Vec::new();
    for (k, mol) in &parsed {
        let r = &reference[*k];
        let why = match mol {
            Ok(m) => difference(m, r),
            Err(e) if r.status == "invalid" => {
                let _ = e; // both reject
                None
            }
            Err(e) => Some(format!("we reject it: {e}")),
        };
        if let Some(why) = why {
            differing.push(format!("{} row {}: {why}", r.dataset, r.row));
        }
    }
    let n = reference.len();
    let agree = (n - differing.len()) as f64 / n as f64;
    let mut note = format!(
        "{} of {n} molecules agree ({:.2}%)",
        n - differing.len(),
        100.0 * agree
    );
    if !differing.is_empty() {
        note.push_str(&format!("; differing: {}", differing.join("; ")));
    }
    rows.push(Row {
        component: "MAT atom fields + bonds vs RDKit, ESOL + FreeSolv + BBBP".into(),
        fixture: "dataset_reference.tsv.gz".into(),
        max_abs: 1.0 - agree,
        max_rel: 0.0,
        tolerance: 1e-3,
        pass: agree >= 0.999,
        note,
    });

    // 3-4. Chemistry edge cases from public bug reports (issue #14) and mutated SMILES
    // (issue #19).
    rows.push(super::smiles::edge_case_row(fixtures)?.0);
    rows.push(super::smiles::fuzz_row(fixtures)?.0);

    // 5. Geometry of our conformers against RDKit ETKDG + UFF.
    if conformers {
        let options = ConformerOptions::default();
        let stats: Vec<Option<(f64, f64)>> = parsed
            .par_iter()
            .map(|(k, mol)| {
                let r = &reference[*k];
                let m = mol.as_ref().ok()?;
                if r.status != "ok" || difference(m, r).is_some() || r.bonds.is_empty() {
                    return None;
                }
                let (xyz, method) = coordinates(m, &options)?;
                if method != CoordinateMethod::Embed3d {
                    return None;
                }
                let dist = |i: usize, j: usize| {
                    let (p, q) = (xyz[i], xyz[j]);
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
                };
                let bond = r
                    .bonds
                    .iter()
                    .zip(&r.bond_lengths)
                    .map(|(&(i, j), d)| (dist(i, j) - d).abs())
                    .sum::<f64>()
                    / r.bonds.len() as f64;
                let d13 = if r.d13.is_empty() {
                    0.0
                } else {
                    r.d13
                        .iter()
                        .map(|&(i, k, d)| (dist(i, k) - d).abs())
                        .sum::<f64>()
                        / r.d13.len() as f64
                };
                Some((bond, d13))
            })
            .collect();
        let ok: Vec<(f64, f64)> = stats.into_iter().flatten().collect();
        let summary = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
            let p95 = v
                .get(((v.len() as f64 * 0.95) as usize).min(v.len().saturating_sub(1)))
                .copied()
                .unwrap_or(f64::NAN);
            (mean, p95)
        };
        let (bond_mean, bond_p95) = summary(ok.iter().map(|s| s.0).collect());
        let (d13_mean, d13_p95) = summary(ok.iter().map(|s| s.1).collect());
        rows.push(Row {
            component: "3D bond lengths vs RDKit ETKDG+UFF (per-molecule MAE, Angstrom)".into(),
            fixture: "dataset_reference.tsv.gz".into(),
            max_abs: bond_mean,
            max_rel: 0.0,
            // Issue target 0.025; the RDKit ports give ~6e-4 (the fixture's 3 decimals).
            tolerance: 0.005,
            pass: bond_mean <= 0.005,
            note: format!(
                "mean {bond_mean:.4}, p95 {bond_p95:.4} over {} molecules embedded in 3D by both",
                ok.len()
            ),
        });
        rows.push(Row {
            component: "3D 1-3 distances vs RDKit ETKDG+UFF (per-molecule MAE, Angstrom)".into(),
            fixture: "dataset_reference.tsv.gz".into(),
            max_abs: d13_mean,
            max_rel: 0.0,
            tolerance: f64::INFINITY,
            pass: true,
            note: format!("mean {d13_mean:.4}, p95 {d13_p95:.4}; reported, no target"),
        });
    }
    Ok(rows)
}
