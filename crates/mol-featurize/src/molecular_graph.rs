//! The atoms and bonds of a hydrogen-suppressed molecule with RDKit's perceived
//! properties ([`crate::Molecule`] holds them).

/// One atom of a hydrogen-suppressed molecule, with RDKit's perceived properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    /// Atomic number (6 = carbon; 0 = dummy atom `*`).
    pub atomic_number: u8,
    /// Formal charge (elementary charges).
    pub formal_charge: i8,
    /// Total hydrogen count, implicit + explicit (RDKit `GetTotalNumHs` after `RemoveHs`).
    pub total_hydrogens: u8,
    /// Aromatic under RDKit's default aromaticity model.
    pub is_aromatic: bool,
    /// Member of at least one ring (RDKit `IsInRing`).
    pub is_in_ring: bool,
}

/// Bond order as perceived by RDKit (aromatic bonds are `Aromatic`, not Kekulé).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BondOrder {
    /// Single (also directional `/` `\`).
    Single,
    /// Double.
    Double,
    /// Triple.
    Triple,
    /// Aromatic.
    Aromatic,
    /// Dative (coordinate) bond, `->` / `<-`: OGB's "misc" bond type; closes no ring.
    Dative,
    /// Quadruple, zero-order or another order.
    Other,
}

/// One bond between atoms `begin` and `end` (indices into [`Molecule::atoms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bond {
    /// First atom.
    pub begin: usize,
    /// Second atom.
    pub end: usize,
    /// Bond order.
    pub order: BondOrder,
}
