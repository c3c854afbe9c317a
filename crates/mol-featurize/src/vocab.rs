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
