//! Our molecules in the text form of the RDKit reference fixtures, and the comparison
//! with them: used by the tests and by `cargo xtask parity`, so both judge agreement the
//! same way.
//!
//! Fixture format (written by `fixtures/gen/dataset_reference.py` and
//! `fixtures/gen/edge_cases.py`, RDKit 2026.09):
//! - atoms: `z.heavy_degree.total_hs.formal_charge.in_ring.aromatic` per atom, `;`-joined
//!   (RDKit `GetAtomicNum`, `GetDegree`, `GetTotalNumHs`, `GetFormalCharge`, `IsInRing`,
//!   `GetIsAromatic` after the MAT recipe's final `RemoveHs`);
//! - bonds: `i-j-type` per bond, type `1`, `2`, `3`, `a` (aromatic), `d` (dative), `x`;
//! - OGB rows: `ogb.utils.features.atom_to_feature_vector` / `bond_to_feature_vector`,
//!   values `.`-joined, rows `;`-joined.

use std::path::Path;

use serde::Deserialize;

use crate::graphormer::ogb_features;
use crate::molecule::{BondOrder, Molecule};

/// Per-atom reference fields of `mol` (see the module docs).
pub fn atom_fields(mol: &Molecule) -> String {
    mol.atoms()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            format!(
                "{}.{}.{}.{}.{}.{}",
                a.atomic_number,
                mol.degree(i),
                a.total_hydrogens,
                a.formal_charge,
                u8::from(a.is_in_ring),
                u8::from(a.is_aromatic)
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Bonds of `mol` as sorted `(i, j, type)` with `i < j` (see the module docs for types).
pub fn bond_fields(mol: &Molecule) -> Vec<(usize, usize, char)> {
    let mut bonds: Vec<(usize, usize, char)> = mol
        .bonds()
        .iter()
        .map(|b| {
            let code = match b.order {
                BondOrder::Single => '1',
                BondOrder::Double => '2',
                BondOrder::Triple => '3',
                BondOrder::Aromatic => 'a',
                BondOrder::Dative => 'd',
                BondOrder::Other => 'x',
            };
            (b.begin.min(b.end), b.begin.max(b.end), code)
        })
        .collect();
    bonds.sort();
    bonds
}

/// Where `ours` first differs from `reference` (both in the atom format above), naming
/// the atom and the field; `None` when equal.
pub fn atom_difference(ours: &str, reference: &str) -> Option<String> {
    if ours == reference {
        return None;
    }
    let (o, r): (Vec<&str>, Vec<&str>) =
        (ours.split(';').collect(), reference.split(';').collect());
    if o.len() != r.len() {
        return Some(format!("{} atoms vs RDKit {}", o.len(), r.len()));
    }
    const FIELDS: [&str; 6] = [
        "element",
        "heavy degree",
        "total H",
        "charge",
        "in ring",
        "aromatic",
    ];
    let i = (0..o.len()).find(|&i| o[i] != r[i]).unwrap_or(0);
    let (a, b): (Vec<&str>, Vec<&str>) = (o[i].split('.').collect(), r[i].split('.').collect());
    let k = (0..FIELDS.len())
        .find(|&k| a.get(k) != b.get(k))
        .unwrap_or(0);
    Some(format!(
        "atom {i}: {} {} vs RDKit {}",
        FIELDS[k],
        a.get(k).unwrap_or(&"-"),
        b.get(k).unwrap_or(&"-")
    ))
}

/// One case of `fixtures/edge_cases.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct EdgeCase {
    /// Family (`macrocycle`, `macrocycle-control`, `dative`, `explicit-h`).
    pub category: String,
    /// Input SMILES.
    pub smiles: String,
    /// `ok`, or `invalid` when RDKit rejects the SMILES.
    pub status: String,
    /// Reference atoms (module docs format); empty when invalid.
    #[serde(default)]
    pub atoms: String,
    /// Reference bonds (module docs format).
    #[serde(default)]
    pub bonds: String,
    /// Reference OGB atom rows.
    #[serde(default)]
    pub ogb_atoms: String,
    /// Reference OGB bond rows.
    #[serde(default)]
    pub ogb_bonds: String,
}

#[derive(Deserialize)]
struct EdgeCaseFile {
    cases: Vec<EdgeCase>,
}

/// Why a reference fixture could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixtureError {
    /// The file could not be read or is not the expected JSON.
    #[error("{path}: {reason}")]
    Read {
        /// The fixture.
        path: String,
        /// I/O or JSON message.
        reason: String,
    },
    /// A line of a tab-separated fixture does not have the expected fields.
    #[error("malformed line {0:?}")]
    Malformed(String),
}

/// Reads `fixtures/edge_cases.json`.
///
/// # Errors
/// [`FixtureError::Read`] naming the path.
pub fn read_edge_cases(path: &Path) -> Result<Vec<EdgeCase>, FixtureError> {
    let read = |reason: String| FixtureError::Read {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
    let file: EdgeCaseFile = serde_json::from_str(&text).map_err(|e| read(e.to_string()))?;
    Ok(file.cases)
}

fn parse_bonds(text: &str) -> Option<Vec<(usize, usize, char)>> {
    let mut out = Vec::new();
    for item in text.split(';').filter(|s| !s.is_empty()) {
        let mut parts = item.split('-');
        let (i, j): (usize, usize) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
        let code = parts.next()?.chars().next()?;
        out.push((i.min(j), i.max(j), code));
    }
    out.sort();
    Some(out)
}

fn ogb_rows<const K: usize>(rows: &[[u8; K]]) -> String {
    rows.iter()
        .map(|r| r.iter().map(u8::to_string).collect::<Vec<_>>().join("."))
        .collect::<Vec<_>>()
        .join(";")
}

impl EdgeCase {
    /// How our featurization of this case differs from RDKit's, or `None` when it agrees
    /// on every atom field, every bond and bond type, and every OGB atom and bond row.
    pub fn difference(&self) -> Option<String> {
        let mol = match Molecule::from_smiles(&self.smiles) {
            Ok(mol) if self.status == "invalid" => {
                return Some(format!(
                    "RDKit rejects it, we accept {} atoms",
                    mol.num_atoms()
                ));
            }
            Err(_) if self.status == "invalid" => return None,
            Err(e) => return Some(format!("we reject it: {e}")),
            Ok(mol) => mol,
        };
        if let Some(d) = atom_difference(&atom_fields(&mol), &self.atoms) {
            return Some(d);
        }
        let Some(reference_bonds) = parse_bonds(&self.bonds) else {
            return Some(format!("malformed reference bonds {:?}", self.bonds));
        };
        let ours = bond_fields(&mol);
        if ours != reference_bonds {
            let first = ours
                .iter()
                .zip(&reference_bonds)
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("{a:?} vs RDKit {b:?}"))
                .unwrap_or_else(|| {
                    format!("{} bonds vs RDKit {}", ours.len(), reference_bonds.len())
                });
            return Some(format!("bonds differ: {first}"));
        }
        let (atoms, bonds) = match ogb_features(&mol) {
            Ok(f) => f,
            Err(e) => return Some(format!("OGB features: {e}")),
        };
        let ogb_atoms = ogb_rows(&atoms);
        if ogb_atoms != self.ogb_atoms {
            let (o, r): (Vec<&str>, Vec<&str>) = (
                ogb_atoms.split(';').collect(),
                self.ogb_atoms.split(';').collect(),
            );
            let i = (0..o.len().min(r.len()))
                .find(|&i| o[i] != r[i])
                .unwrap_or(0);
            return Some(format!(
                "OGB atom {i}: {} vs RDKit {}",
                o.get(i).unwrap_or(&"-"),
                r.get(i).unwrap_or(&"-")
            ));
        }
        // OGB bond rows follow RDKit's bond order; ours follow `mol.bonds()`: compare
        // them keyed by atom pair.
        let mut ours_keyed: Vec<((usize, usize), String)> = mol
            .bonds()
            .iter()
            .zip(&bonds)
            .map(|(b, f)| ((b.begin.min(b.end), b.begin.max(b.end)), ogb_rows(&[*f])))
            .collect();
        ours_keyed.sort();
        let mut theirs_keyed: Vec<((usize, usize), String)> = self
            .bonds
            .split(';')
            .filter(|s| !s.is_empty())
            .zip(self.ogb_bonds.split(';'))
            .filter_map(|(b, f)| {
                let mut parts = b.split('-');
                let i: usize = parts.next()?.parse().ok()?;
                let j: usize = parts.next()?.parse().ok()?;
                Some(((i.min(j), i.max(j)), f.to_string()))
            })
            .collect();
        theirs_keyed.sort();
        ours_keyed
            .iter()
            .zip(&theirs_keyed)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("OGB bond {:?}: {} vs RDKit {}", a.0, a.1, b.1))
    }
}

/// One line of `fixtures/smiles_fuzz.tsv.gz` (`fixtures/gen/smiles_fuzz.py`): a mutated
/// SMILES, whether RDKit's `MolFromSmiles` accepts it, and for accepted ones
/// `z.charge.aromatic` per atom of RDKit's final graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzCase {
    /// The mutated SMILES.
    pub smiles: String,
    /// RDKit accepts it.
    pub accepted: bool,
    /// Reference atoms (empty when rejected).
    pub atoms: String,
}

/// Parses the text of `smiles_fuzz.tsv` (decompressed); the first line is a comment
/// (later lines may start with `#`: a mutated SMILES can).
///
/// # Errors
/// [`FixtureError::Malformed`] with the first malformed line.
pub fn parse_fuzz_cases(text: &str) -> Result<Vec<FuzzCase>, FixtureError> {
    text.lines()
        .skip(usize::from(text.starts_with('#')))
        .map(|line| {
            let mut f = line.split('\t');
            match (f.next(), f.next(), f.next()) {
                (Some(smiles), Some(verdict @ ("ok" | "invalid")), Some(atoms)) => Ok(FuzzCase {
                    smiles: smiles.to_string(),
                    accepted: verdict == "ok",
                    atoms: atoms.to_string(),
                }),
                _ => Err(FixtureError::Malformed(line.to_string())),
            }
        })
        .collect()
}

impl FuzzCase {
    /// How our reading of the string differs from RDKit's (verdict, atom count, formal
    /// charges, aromatic flags), or `None` when it agrees.
    pub fn difference(&self) -> Option<String> {
        match (Molecule::from_smiles(&self.smiles), self.accepted) {
            (Err(_), false) => None,
            (Err(e), true) => Some(format!("RDKit accepts, we reject: {e}")),
            (Ok(m), false) => Some(format!(
                "RDKit rejects, we accept ({} atoms)",
                m.num_atoms()
            )),
            (Ok(m), true) => {
                let ours = m
                    .atoms()
                    .iter()
                    .map(|a| {
                        format!(
                            "{}.{}.{}",
                            a.atomic_number,
                            a.formal_charge,
                            u8::from(a.is_aromatic)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(";");
                (ours != self.atoms).then(|| format!("atoms {ours} vs RDKit {}", self.atoms))
            }
        }
    }
}
