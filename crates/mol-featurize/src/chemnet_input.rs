//! ChemNet's input (Preuer et al. 2018, "Fréchet ChemNet Distance"): a SMILES as a
//! sequence of 350 symbols of a 35-symbol alphabet, one-hot encoded and scaled by 1/35,
//! exactly as `fcd_torch` 1.0.7 builds it (`utils.py`: `__vocab`, `get_one_hot`,
//! `SmilesDataset`), the input of the FCD metric of MOSES.
//!
//! The symbols are read greedily: a character followed by `r`, `i` or `l` is read with it
//! as one two-letter symbol (`Br`, `Si`, `Cl`, but also `Cr`); a symbol outside the
//! alphabet is `X`. The sequence ends with `.` (also when it is cut at 349 symbols) and the
//! rest is zero rows. fcd_torch reads the canonical SMILES (`Chem.MolToSmiles`).

/// ChemNet's alphabet, in fcd_torch's order (`__vocab`).
pub const CHEMNET_ALPHABET: [&str; 35] = [
    "C", "N", "O", "H", "F", "Cl", "P", "B", "Br", "S", "I", "Si", "#", "(", ")", "+", "-", "1",
    "2", "3", "4", "5", "6", "7", "8", "=", "[", "]", "@", "c", "n", "o", "s", "X", ".",
];

/// Sequence length of ChemNet's input (`SmilesDataset.__PAD_LEN`).
pub const CHEMNET_LENGTH: usize = 350;

/// The alphabet index of each symbol of `smiles` (fcd_torch's `get_one_hot` with
/// `pad_len = 350`), the closing `.` included; at most [`CHEMNET_LENGTH`] entries. Rows
/// after the last entry are zero in the one-hot matrix.
pub fn chemnet_symbols(smiles: &str) -> Vec<usize> {
    let index = |sym: &str| {
        CHEMNET_ALPHABET
            .iter()
            .position(|a| *a == sym)
            .unwrap_or(33)
    };
    let stop = index(".");
    let chars: Vec<char> = smiles.chars().chain(std::iter::once('.')).collect();
    let mut out = Vec::new();
    let mut src = 0;
    loop {
        let two = matches!(chars.get(src + 1), Some('r' | 'i' | 'l'));
        let end = if two { src + 2 } else { src + 1 };
        let sym: String = chars[src..end.min(chars.len())].iter().collect();
        src = end;
        out.push(index(&sym));
        if chars.get(src) == Some(&'.') || out.len() == CHEMNET_LENGTH - 1 {
            out.push(stop);
            return out;
        }
        if src >= chars.len() {
            // Only reachable for a SMILES ending in a two-letter symbol swallowed the '.':
            // fcd_torch would index past its string here; stop like it would at the end.
            out.push(stop);
            return out;
        }
    }
}

/// The one-hot matrix `[350, 35]` of `smiles`, row-major, scaled by 1/35 (fcd_torch divides
/// the features by `features.shape[1]`).
pub fn chemnet_one_hot(smiles: &str) -> Vec<f32> {
    let mut x = vec![0f32; CHEMNET_LENGTH * CHEMNET_ALPHABET.len()];
    for (row, sym) in chemnet_symbols(smiles).into_iter().enumerate() {
        x[row * CHEMNET_ALPHABET.len() + sym] = 1.0 / CHEMNET_ALPHABET.len() as f32;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(s: &str) -> Vec<&'static str> {
        chemnet_symbols(s)
            .into_iter()
            .map(|i| CHEMNET_ALPHABET[i])
            .collect()
    }

    #[test]
    fn symbols_as_fcd_torch_reads_them() {
        // fcd_torch 1.0.7: np.argmax(get_one_hot(s, 350)[:n], 1) mapped to __vocab.
        assert_eq!(symbols("CCO"), ["C", "C", "O", "."]);
        assert_eq!(symbols("ClCBr"), ["Cl", "C", "Br", "."]);
        assert_eq!(symbols("C[Na+]"), ["C", "[", "N", "X", "+", "]", "."]);
        assert_eq!(
            symbols("c1ccccc1"),
            ["c", "1", "c", "c", "c", "c", "c", "1", "."]
        );
        let long = "C".repeat(400);
        let s = chemnet_symbols(&long);
        assert_eq!(s.len(), CHEMNET_LENGTH);
        assert_eq!(CHEMNET_ALPHABET[s[CHEMNET_LENGTH - 1]], ".");
        let x = chemnet_one_hot("CO");
        assert_eq!(x.iter().filter(|v| **v > 0.0).count(), 3);
        assert!((x[0] - 1.0 / 35.0).abs() < 1e-9);
    }
}
