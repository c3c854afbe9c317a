//! Every vocabulary (one-hot list) used by the featurizers, in one place.
//!
//! Source: MAT reference featurizer (ardigen/MAT `src/featurization/data_utils.py`),
//! docs/SPEC.md 1.1. A value outside a list is mapped by [`one_hot_index`].

/// Atomic numbers with their own MAT slot: B C N O F P S Cl Br I. A 12th slot
/// ("other") follows for everything else.
pub const MAT_ATOMIC_NUMBERS: [u8; 10] = [5, 6, 7, 8, 9, 15, 16, 17, 35, 53];
/// Number of slots of the MAT atomic-number one-hot (10 elements + other).
pub const MAT_ATOMIC_NUMBER_SLOTS: usize = MAT_ATOMIC_NUMBERS.len() + 1;
/// Heavy-atom neighbour counts with their own slot.
pub const MAT_NEIGHBOURS: [i32; 6] = [0, 1, 2, 3, 4, 5];
/// Total hydrogen counts (implicit + explicit) with their own slot.
pub const MAT_HYDROGENS: [i32; 5] = [0, 1, 2, 3, 4];
/// Formal charges with their own slot.
pub const MAT_FORMAL_CHARGES: [i32; 3] = [-1, 0, 1];

/// Width of the MAT feature vector with the dummy-node flag and one-hot charge:
/// 1 + 11 + 6 + 5 + 3 + 1 + 1 = 28.
pub const MAT_D_ATOM: usize = 1
    + MAT_ATOMIC_NUMBER_SLOTS
    + MAT_NEIGHBOURS.len()
    + MAT_HYDROGENS.len()
    + MAT_FORMAL_CHARGES.len()
    + 2;
/// Width with the raw-integer formal charge (one slot instead of three): 26.
pub const MAT_D_ATOM_RAW_CHARGE: usize = MAT_D_ATOM - MAT_FORMAL_CHARGES.len() + 1;

/// OGB atom features per atom (`ogb.utils.features.atom_to_feature_vector`).
pub const OGB_ATOM_FEATURES: usize = 9;
/// OGB bond features per bond (`ogb.utils.features.bond_to_feature_vector`).
pub const OGB_BOND_FEATURES: usize = 3;
/// OGB chirality tags (`possible_chirality_list`), then "misc".
pub const OGB_CHIRALITY: [&str; 5] = [
    "CHI_UNSPECIFIED",
    "CHI_TETRAHEDRAL_CW",
    "CHI_TETRAHEDRAL_CCW",
    "CHI_OTHER",
    "misc",
];
/// OGB hybridizations (`possible_hybridization_list`), then "misc".
pub const OGB_HYBRIDIZATION: [&str; 6] = ["SP", "SP2", "SP3", "SP3D", "SP3D2", "misc"];
/// OGB bond types (`possible_bond_type_list`), then "misc".
pub const OGB_BOND_TYPE: [&str; 5] = ["SINGLE", "DOUBLE", "TRIPLE", "AROMATIC", "misc"];
/// OGB bond stereo labels (`possible_bond_stereo_list`).
pub const OGB_BOND_STEREO: [&str; 6] = [
    "STEREONONE",
    "STEREOZ",
    "STEREOE",
    "STEREOCIS",
    "STEREOTRANS",
    "STEREOANY",
];
/// Size of an integer OGB vocabulary `lo..=hi` plus "misc".
const fn range_with_misc(lo: i32, hi: i32) -> usize {
    (hi - lo + 1) as usize + 1
}
/// OGB atom vocabulary sizes, "misc" included, in feature order: atomic number 1..=118,
/// chirality, total degree 0..=10, formal charge -5..=5, total H 0..=8, radical electrons
/// 0..=4, hybridization, aromatic, in ring (`ogb.utils.features.get_atom_feature_dims`).
pub const ATOM_VOCAB: [usize; OGB_ATOM_FEATURES] = [
    range_with_misc(1, 118),
    OGB_CHIRALITY.len(),
    range_with_misc(0, 10),
    range_with_misc(-5, 5),
    range_with_misc(0, 8),
    range_with_misc(0, 4),
    OGB_HYBRIDIZATION.len(),
    2,
    2,
];
/// OGB bond vocabulary sizes: bond type, stereo, conjugated
/// (`ogb.utils.features.get_bond_feature_dims`).
pub const BOND_VOCAB: [usize; OGB_BOND_FEATURES] = [OGB_BOND_TYPE.len(), OGB_BOND_STEREO.len(), 2];
/// Sum of a vocabulary's sizes.
const fn total(sizes: &[usize]) -> usize {
    let mut sum = 0;
    let mut k = 0;
    while k < sizes.len() {
        sum += sizes[k];
        k += 1;
    }
    sum
}
/// Rows of the single atom embedding table: every atom feature value gets its own row
/// (offset by the earlier features' vocabularies), row 0 is padding.
pub const ATOM_TABLE_ROWS: usize = 1 + total(&ATOM_VOCAB);
/// Rows of the single bond embedding table, row 0 meaning "no bond" / padding.
pub const BOND_TABLE_ROWS: usize = 1 + total(&BOND_VOCAB);
/// Rows of the atom-type table of the 3D channel: row 0 padding, then the atomic-number
/// vocabulary (1..=118 and misc).
pub const ATOM_TYPES: usize = 1 + ATOM_VOCAB[0];

/// Index of `value` in the sorted integer list `choices`.
///
/// A value outside the list goes to the nearest end (`reference_compat = false`,
/// our default: charge -2 -> the -1 slot, 6 neighbours -> the 5 slot), or always to the
/// LAST slot (`reference_compat = true`, the MAT reference: charge -2 -> the +1 slot).
pub fn one_hot_index(value: i32, choices: &[i32], reference_compat: bool) -> usize {
    match choices.iter().position(|&c| c == value) {
        Some(i) => i,
        None if !reference_compat && value < choices[0] => 0,
        None => choices.len() - 1,
    }
}

/// Slot of an atomic number in the MAT element one-hot (last slot = other).
pub fn atomic_number_index(atomic_number: u8) -> usize {
    MAT_ATOMIC_NUMBERS
        .iter()
        .position(|&z| z == atomic_number)
        .unwrap_or(MAT_ATOMIC_NUMBERS.len())
}

#[cfg(test)]
mod tests {

    /// The sizes ogb 1.3.6 reports (`get_atom_feature_dims`, `get_bond_feature_dims`).
    #[test]
    fn ogb_vocabularies_have_ogbs_sizes() {
        assert_eq!(ATOM_VOCAB, [119, 5, 12, 12, 10, 6, 6, 2, 2]);
        assert_eq!(BOND_VOCAB, [5, 6, 2]);
        assert_eq!(ATOM_TABLE_ROWS, 175);
        assert_eq!(BOND_TABLE_ROWS, 14);
        assert_eq!(ATOM_TYPES, 120);
    }

    use super::*;

    #[test]
    fn widths() {
        assert_eq!(MAT_D_ATOM, 28);
        assert_eq!(MAT_D_ATOM_RAW_CHARGE, 26);
    }

    #[test]
    fn out_of_range_values() {
        assert_eq!(one_hot_index(-2, &MAT_FORMAL_CHARGES, false), 0);
        assert_eq!(one_hot_index(-2, &MAT_FORMAL_CHARGES, true), 2);
        assert_eq!(one_hot_index(2, &MAT_FORMAL_CHARGES, false), 2);
        assert_eq!(one_hot_index(6, &MAT_NEIGHBOURS, false), 5);
        assert_eq!(atomic_number_index(14), 10);
        assert_eq!(atomic_number_index(53), 9);
    }
}
