//! 2D depictions of a [`Molecule`] with each atom shaded by a weight (attention,
//! attribution), drawn by the `chematic` depiction crate's similarity map.

use chematic::depict::{RenderOptions, similarity_map_svg_opts};

use crate::molecule::Molecule;

/// An SVG of `mol` (its atoms, in [`Molecule::atoms`] order) with atom `i` tinted by
/// `weights[i]`: blue for positive, red for negative, white for 0, the largest `|w|` at
/// full strength (`chematic_depict::similarity_map_svg`). Element labels and bonds as
/// RDKit-style 2D depiction; `width` x `height` pixels.
///
/// # Errors
/// A message when `weights` does not have one value per atom.
pub fn atom_weight_svg(
    mol: &Molecule,
    weights: &[f64],
    width: u32,
    height: u32,
) -> Result<String, String> {
    if weights.len() != mol.num_atoms() {
        return Err(format!(
            "{}: {} weights for {} atoms",
            mol.smiles(),
            weights.len(),
            mol.num_atoms()
        ));
    }
    let options = RenderOptions {
        width: Some(width),
        height: Some(height),
        ..Default::default()
    };
    Ok(similarity_map_svg_opts(&mol.heavy, weights, &options))
}

/// The element symbol of atomic number `z` (`*` for 0, a dummy atom).
pub fn element_symbol(z: u8) -> String {
    if z == 0 {
        return "*".into();
    }
    chematic::core::Element::from_atomic_number(z)
        .map(|e| e.symbol().to_string())
        .unwrap_or_else(|| format!("Z{z}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_tint_atoms_and_must_match_the_atom_count() {
        let phenol = Molecule::from_smiles("Oc1ccccc1").unwrap();
        let mut w = vec![0.0; 7];
        w[0] = 1.0; // the oxygen at full blue
        w[1] = -0.5;
        let svg = atom_weight_svg(&phenol, &w, 300, 300).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"), "{svg}");
        assert!(
            svg.contains("#7070FF") || svg.contains("#7070ff"),
            "full blue tint"
        );
        assert!(atom_weight_svg(&phenol, &[1.0], 300, 300).is_err());
    }
}
