//! The molecular graph every featurizer reads, independent of the parsing toolkit.
//!
//! Parsing and RDKit-compatible perception come from `chematic` (pinned), wrapped here
//! so that the toolkit can be swapped without touching the featurizers.

use std::panic::{AssertUnwindSafe, catch_unwind};

use chematic::core::{AtomIdx, Molecule as ChemMolecule, MoleculeBuilder};
use chematic::smiles::{RdkitSanitizedModel, RdkitSmilesError, parse, rdkit_sanitized_model};

use crate::error::FeaturizeError;
pub use crate::molecular_graph::{Atom, Bond, BondOrder};
use crate::rdkit_rules::{macrocycle_bridge_donors, stereo_hydrogens_to_fold, with_pyrrole_donors};
use crate::smiles_syntax::{check as check_syntax, smiles_part};

/// A sanitised molecule without hydrogen atoms as nodes (as RDKit's `MolFromSmiles`
/// followed by `RemoveHs`). Atom order follows the input SMILES.
#[derive(Clone)]
pub struct Molecule {
    smiles: String,
    atoms: Vec<Atom>,
    bonds: Vec<Bond>,
    neighbours: Vec<Vec<usize>>,
    /// For each bond of `bonds`, whether it is in a ring (RDKit `Bond.IsInRing`).
    bonds_in_ring: Vec<bool>,
    /// For each atom, its index in `parsed` (hydrogen nodes removed shift the rest).
    source_atoms: Vec<usize>,
    /// The toolkit's molecule read from the SMILES (hydrogen nodes included).
    pub(crate) parsed: ChemMolecule,
    /// The toolkit's hydrogen-suppressed molecule, atoms in the order of `atoms`.
    pub(crate) heavy: ChemMolecule,
    /// Atoms of `parsed` perceived as `[nH]` for RDKit's macrocycle rule
    /// ([`crate::rdkit_rules`], 1); empty when no correction applied.
    pub(crate) pyrrole_donors: Vec<AtomIdx>,
    /// Hydrogen atoms of `parsed` that `MolFromSmiles` keeps and the recipe's second
    /// `RemoveHs` folds into their neighbour ([`crate::rdkit_rules`], 2).
    pub(crate) folded_hydrogens: Vec<usize>,
}

impl std::fmt::Debug for Molecule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Molecule")
            .field("smiles", &self.smiles)
            .field("atoms", &self.atoms)
            .field("bonds", &self.bonds)
            .finish_non_exhaustive()
    }
}

impl Molecule {
    /// Parses and sanitises a SMILES string.
    ///
    /// Leading and trailing whitespace is trimmed; as in RDKit, the SMILES ends at the
    /// first inner space or tab and the rest is a name (`CCO ethanol`). Strings RDKit's
    /// grammar rejects are rejected with the reason ([`crate::smiles_syntax`]).
    /// Hydrogen atoms written as `[H]` are folded into their heavy atom's hydrogen count
    /// (RDKit `RemoveHs`; rules in [`crate::rdkit_rules`]). A dummy atom `*` has atomic
    /// number 0.
    ///
    /// # Errors
    /// [`FeaturizeError::Parse`] for bad syntax (`C1CC`, `CC()C`),
    /// [`FeaturizeError::Sanitize`] for chemically invalid input (pentavalent carbon),
    /// [`FeaturizeError::Unsupported`], [`FeaturizeError::Empty`], and
    /// [`FeaturizeError::Internal`] if the toolkit panics.
    pub fn from_smiles(smiles: &str) -> Result<Self, FeaturizeError> {
        let smiles = smiles.trim();
        guard(smiles, || Self::from_trimmed(smiles, true))
    }

    /// [`Molecule::from_smiles`] for a SMILES the toolkit wrote itself (an SDF record's
    /// graph): RDKit's grammar check for typed SMILES does not apply (a MOL query bond is
    /// written `~` and rejected by sanitisation with its own reason).
    pub(crate) fn from_written_smiles(smiles: &str) -> Result<Self, FeaturizeError> {
        let smiles = smiles.trim();
        guard(smiles, || Self::from_trimmed(smiles, false))
    }

    fn from_trimmed(text: &str, check_grammar: bool) -> Result<Self, FeaturizeError> {
        let err = |reason: String| FeaturizeError::Parse {
            smiles: text.to_string(),
            reason,
        };
        if text.is_empty() {
            return Err(FeaturizeError::Empty {
                smiles: text.to_string(),
            });
        }
        let smiles = smiles_part(text);
        if check_grammar {
            check_syntax(smiles).map_err(err)?;
        }
        let parsed = parse(smiles).map_err(|e| err(e.to_string()))?;
        Self::from_parsed(parsed, text)
    }

    /// Sanitises a molecule read by `chematic` (from SMILES or a MOL block); `name` is
    /// what errors and [`Molecule::smiles`] report (the SMILES, or a file record's label).
    ///
    /// The graph is the MAT reference recipe's final one (RDKit 2026.09 `MolFromSmiles`,
    /// `AddHs`, embedding, `RemoveHs`), with the corrections of [`crate::rdkit_rules`].
    pub(crate) fn from_parsed(parsed: ChemMolecule, name: &str) -> Result<Self, FeaturizeError> {
        let smiles = name;
        let mut model = rdkit_sanitized_model(&parsed).map_err(|e| match e {
            RdkitSmilesError::Sanitization(reason) => FeaturizeError::Sanitize {
                smiles: smiles.to_string(),
                reason,
            },
            RdkitSmilesError::Unsupported(reason) => FeaturizeError::Unsupported {
                smiles: smiles.to_string(),
                reason,
            },
        })?;
        // Aromaticity of 5-ring donors bridged inside macrocycles (rdkit_rules, 1).
        let mut applied_donors = Vec::new();
        let donors = macrocycle_bridge_donors(&parsed);
        if !donors.is_empty()
            && let Ok(swapped) = rdkit_sanitized_model(&with_pyrrole_donors(&parsed, &donors))
            && same_entries(&swapped.atoms, &model.atoms)
            && same_entries(&swapped.bonds, &model.bonds)
        {
            applied_donors = donors;
            for (ours, theirs) in model.atoms.iter_mut().zip(&swapped.atoms) {
                if let (Some(ours), Some(theirs)) = (ours, theirs) {
                    ours.0 = theirs.0;
                }
            }
            model.bonds = swapped.bonds;
        }
        let mut first = Self::assemble(parsed, &model, smiles)?;
        first.pyrrole_donors = applied_donors;
        // Hydrogen atoms the recipe's second RemoveHs drops (rdkit_rules, 2).
        let isotopes: Vec<bool> = first
            .source_atoms
            .iter()
            .map(|&old| first.parsed.atom(AtomIdx(old as u32)).isotope.is_some())
            .collect();
        let folds = stereo_hydrogens_to_fold(&first.atoms, &first.bonds, &isotopes, &first.heavy);
        if folds.is_empty() {
            return Ok(first);
        }
        let mut folded_hydrogens = Vec::with_capacity(folds.len());
        for (h, x) in folds {
            let (h, x) = (first.source_atoms[h], first.source_atoms[x]);
            folded_hydrogens.push(h);
            model.atoms[h] = None;
            model.removed_h_neighbors[x] += 1;
            if let Some(fields) = model.atoms[x].as_mut() {
                fields.2 += 1;
            }
        }
        let mut mol = Self::assemble(first.parsed, &model, smiles)?;
        mol.pyrrole_donors = first.pyrrole_donors;
        folded_hydrogens.sort_unstable();
        mol.folded_hydrogens = folded_hydrogens;
        Ok(mol)
    }

    /// The molecule of the atoms and bonds `model` keeps (`None` entries are dropped).
    fn assemble(
        parsed: ChemMolecule,
        model: &RdkitSanitizedModel,
        smiles: &str,
    ) -> Result<Self, FeaturizeError> {
        let err = |reason: String| FeaturizeError::Parse {
            smiles: smiles.to_string(),
            reason,
        };
        let mut new_index = vec![usize::MAX; parsed.atom_count()];
        let mut atoms = Vec::new();
        let mut source_atoms = Vec::new();
        for (old, perceived) in model.atoms.iter().enumerate() {
            if let Some((is_aromatic, formal_charge, total_hydrogens)) = *perceived {
                new_index[old] = atoms.len();
                source_atoms.push(old);
                let source = parsed.atom(AtomIdx(old as u32));
                atoms.push(Atom {
                    // A dummy atom `*` is atomic number 0, as in RDKit.
                    atomic_number: if source.wildcard {
                        0
                    } else {
                        source.element.atomic_number()
                    },
                    formal_charge,
                    total_hydrogens,
                    is_aromatic,
                    is_in_ring: false,
                });
            }
        }
        if atoms.is_empty() {
            return Err(FeaturizeError::Empty {
                smiles: smiles.to_string(),
            });
        }

        let mut builder = MoleculeBuilder::with_capacity(atoms.len(), parsed.bond_count());
        for (old, &new) in new_index.iter().enumerate() {
            if new == usize::MAX {
                continue;
            }
            let mut atom = parsed.atom(AtomIdx(old as u32)).clone();
            if model.removed_h_neighbors[old] > 0 {
                // Neighbour order changed: the written stereo tag no longer applies.
                atom.chirality = Default::default();
                if atom.hydrogen_count.is_some() {
                    atom.hydrogen_count = Some(atoms[new].total_hydrogens);
                }
            }
            builder.add_atom(atom);
        }
        let mut bonds = Vec::new();
        let mut closes_rings = Vec::new();
        for (b, entry) in parsed.bonds() {
            let (u, v) = (
                new_index[entry.atom1.0 as usize],
                new_index[entry.atom2.0 as usize],
            );
            let Some(order) = model.bonds[b.0 as usize] else {
                continue;
            };
            if u == usize::MAX || v == usize::MAX {
                continue;
            }
            use chematic::core::BondOrder as C;
            let order = match order {
                C::Single | C::Up | C::Down => BondOrder::Single,
                C::Double => BondOrder::Double,
                C::Triple => BondOrder::Triple,
                C::Aromatic => BondOrder::Aromatic,
                C::Dative => BondOrder::Dative,
                _ => BondOrder::Other,
            };
            builder
                .add_bond(AtomIdx(u as u32), AtomIdx(v as u32), entry.order)
                .map_err(|e| err(format!("bond {u}-{v}: {e:?}")))?;
            // RDKit's ring finding skips dative and zero-order bonds (findSSSR).
            closes_rings.push(!matches!(order, BondOrder::Dative) && entry.order != C::Zero);
            bonds.push(Bond {
                begin: u,
                end: v,
                order,
            });
        }
        let heavy = builder.build();

        let mut neighbours = vec![Vec::new(); atoms.len()];
        for b in &bonds {
            neighbours[b.begin].push(b.end);
            neighbours[b.end].push(b.begin);
        }
        let mut mol = Molecule {
            smiles: smiles.to_string(),
            atoms,
            bonds_in_ring: Vec::new(),
            bonds,
            neighbours,
            source_atoms,
            parsed,
            heavy,
            pyrrole_donors: Vec::new(),
            folded_hydrogens: Vec::new(),
        };
        mol.bonds_in_ring = mol.bond_ring_membership(&closes_rings);
        for (k, bond) in mol.bonds.iter().enumerate() {
            if mol.bonds_in_ring[k] {
                mol.atoms[bond.begin].is_in_ring = true;
                mol.atoms[bond.end].is_in_ring = true;
            }
        }
        Ok(mol)
    }

    /// The text this molecule was read from, trimmed (a name after the SMILES included),
    /// or an SDF record's label.
    pub fn smiles(&self) -> &str {
        &self.smiles
    }

    /// For each bond of [`Molecule::bonds`], whether it is in a ring (RDKit
    /// `Bond.IsInRing`; a biphenyl's link is not, a decalin's fused bond is).
    pub fn bonds_in_ring(&self) -> &[bool] {
        &self.bonds_in_ring
    }

    /// Atoms, hydrogen-suppressed, in input order.
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms
    }

    /// Bonds between [`Molecule::atoms`].
    pub fn bonds(&self) -> &[Bond] {
        &self.bonds
    }

    /// For each atom, its index in the parsed input (SMILES atom order or MOL block atom
    /// table), which differs once explicit hydrogen atoms were folded away.
    pub fn source_atoms(&self) -> &[usize] {
        &self.source_atoms
    }

    /// Number of atoms (hydrogen-suppressed).
    pub fn num_atoms(&self) -> usize {
        self.atoms.len()
    }

    /// Indices of the atoms bonded to atom `i`.
    pub fn neighbours(&self, i: usize) -> &[usize] {
        &self.neighbours[i]
    }

    /// Number of bonded (non-hydrogen) neighbours of atom `i` (RDKit `GetDegree`
    /// after `RemoveHs`).
    pub fn degree(&self, i: usize) -> usize {
        self.neighbours[i].len()
    }

    /// Connected components (fragments of a salt or mixture): for each atom, the index
    /// of its fragment; fragments are numbered in order of their first atom.
    pub fn fragments(&self) -> Vec<usize> {
        let mut frag = vec![usize::MAX; self.atoms.len()];
        let mut next = 0;
        for start in 0..self.atoms.len() {
            if frag[start] != usize::MAX {
                continue;
            }
            frag[start] = next;
            let mut stack = vec![start];
            while let Some(a) = stack.pop() {
                for &n in &self.neighbours[a] {
                    if frag[n] == usize::MAX {
                        frag[n] = next;
                        stack.push(n);
                    }
                }
            }
            next += 1;
        }
        frag
    }

    /// Number of bonds on the shortest path between every pair of atoms, row-major
    /// `[n * n]`; `None` between different fragments.
    pub fn topological_distances(&self) -> Vec<Option<u32>> {
        let n = self.atoms.len();
        let mut out = vec![None; n * n];
        for s in 0..n {
            let row = &mut out[s * n..(s + 1) * n];
            row[s] = Some(0);
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(a) = queue.pop_front() {
                let d = row[a].unwrap_or(0);
                for &b in &self.neighbours[a] {
                    if row[b].is_none() {
                        row[b] = Some(d + 1);
                        queue.push_back(b);
                    }
                }
            }
        }
        out
    }

    /// Ring membership of every bond (RDKit `Bond.IsInRing`): a ring-closing bond
    /// (`closes_rings[k]`; dative and zero-order bonds are not) is in a ring iff it is not
    /// a bridge of the graph of ring-closing bonds. An atom is in a ring (RDKit
    /// `Atom.IsInRing`) iff one of its bonds is.
    fn bond_ring_membership(&self, closes_rings: &[bool]) -> Vec<bool> {
        let n = self.atoms.len();
        // The graph of ring-closing bonds: per atom, (neighbour, bond index).
        let mut adjacent: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (k, bond) in self.bonds.iter().enumerate() {
            if closes_rings[k] {
                adjacent[bond.begin].push((bond.end, k));
                adjacent[bond.end].push((bond.begin, k));
            }
        }
        let mut in_ring = vec![false; self.bonds.len()];
        let mut seen = vec![false; n];
        for (k, bond) in self.bonds.iter().enumerate() {
            if !closes_rings[k] {
                continue;
            }
            // Bond k is in a ring iff its ends stay connected without it.
            seen.iter_mut().for_each(|s| *s = false);
            seen[bond.begin] = true;
            let mut stack = vec![bond.begin];
            'search: while let Some(a) = stack.pop() {
                for &(next, j) in &adjacent[a] {
                    if j == k || seen[next] {
                        continue;
                    }
                    if next == bond.end {
                        in_ring[k] = true;
                        break 'search;
                    }
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        in_ring
    }
}

/// Whether two per-atom (or per-bond) lists keep the same entries (`Some` at the same
/// places).
fn same_entries<A, B>(a: &[Option<A>], b: &[Option<B>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.is_some() == y.is_some())
}

/// Runs `f`, turning a panic inside a third-party routine into
/// [`FeaturizeError::Internal`] naming the SMILES.
pub(crate) fn guard<T>(
    smiles: &str,
    f: impl FnOnce() -> Result<T, FeaturizeError>,
) -> Result<T, FeaturizeError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(FeaturizeError::Internal {
            smiles: smiles.to_string(),
            reason: panic_text(payload.as_ref()),
        })
    })
}

/// The message of a caught panic (`"panic"` when it carried none).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_smiles_are_typed_errors() {
        assert_eq!(Molecule::from_smiles("C1CC").unwrap_err().kind(), "parse");
        assert_eq!(
            Molecule::from_smiles("C(C)(C)(C)(C)C").unwrap_err().kind(),
            "sanitize"
        );
        assert_eq!(Molecule::from_smiles("   ").unwrap_err().kind(), "empty");
        let e = Molecule::from_smiles("C1CC").unwrap_err().to_string();
        assert!(e.contains("C1CC"), "{e}");
    }

    #[test]
    fn whitespace_is_trimmed_and_hydrogens_folded() {
        let m = Molecule::from_smiles(" [H]OC([H])([H])C \t").unwrap();
        assert_eq!(m.smiles(), "[H]OC([H])([H])C");
        assert_eq!(m.num_atoms(), 3);
        let h: Vec<u8> = m.atoms().iter().map(|a| a.total_hydrogens).collect();
        assert_eq!(h, vec![1, 2, 3]);
    }

    #[test]
    fn rings_and_fragments() {
        // Spiro/bridged ring plus a side chain and a counter-ion.
        let m = Molecule::from_smiles("C1CC2(CC1)CCC2CO.[Na+]").unwrap();
        let ring: Vec<bool> = m.atoms().iter().map(|a| a.is_in_ring).collect();
        assert_eq!(
            ring,
            vec![
                true, true, true, true, true, true, true, true, false, false, false
            ]
        );
        assert_eq!(m.fragments(), vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let d = m.topological_distances();
        let n = m.num_atoms();
        // Row 0: atom 0 -> O (atom 9) is 5 bonds (0-1-2-7-8-9); Na+ is unreachable.
        assert_eq!(d[9], Some(5));
        assert_eq!(d[10], None);
        assert_eq!(d[9 * n], Some(5));
    }
}
