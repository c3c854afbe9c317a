//! Prints, per SMILES of a file (one per line), the conformer's method, atom count and the
//! FNV-1a 64 hash of every coordinate's `f64` bits (little-endian, atom by atom, x y z), as
//! tab-separated `smiles method atoms fnv64`: the published crates' conformers that the test
//! of the forks of chematic-3d and chematic-ff under `vendor/` compares with
//! (`fixtures/conformers/published_chematic_bits.tsv`, made with the `[patch.crates-io]`
//! entries of the root Cargo.toml commented out).
//! `cargo run --release -p mol-featurize --example conformer_bits -- smiles.txt`
use mol_featurize::Molecule;
use mol_featurize::conformer::{ConformerOptions, coordinates, coordinates_fnv64};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: conformer_bits SMILES_FILE (one SMILES per line)");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    let options = ConformerOptions::default();
    for (row, smiles) in text.lines().enumerate() {
        let mol = match Molecule::from_smiles(smiles) {
            Ok(mol) => mol,
            Err(e) => {
                eprintln!("row {row}: {smiles}: {e}");
                continue;
            }
        };
        match coordinates(&mol, &options) {
            Some((xyz, method)) => {
                println!(
                    "{smiles}\t{method:?}\t{}\t{:016x}",
                    xyz.len(),
                    coordinates_fnv64(&xyz)
                )
            }
            None => println!("{smiles}\tnone\t0\t0"),
        }
    }
}
