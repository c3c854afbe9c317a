//! Prints the slowest conformer embeddings of a file with one SMILES per line.
//! `cut -d, -f1 data.csv | tail -n +2 > smiles.txt`
//! `cargo run --example conformer_times -- smiles.txt [MAX_HEAVY_ATOMS_3D]`
//! (the optional second argument overrides the 3D size limit, e.g. 1000 to time large
//! molecules that the default sends to the 2D layout)
use std::time::Instant;

use mol_featurize::Molecule;
use mol_featurize::conformer::{ConformerOptions, coordinates};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: conformer_times SMILES_FILE (one SMILES per line)");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).expect("read");
    let mut options = ConformerOptions::default();
    if let Some(limit) = std::env::args().nth(2) {
        options.max_heavy_atoms_3d = limit.parse().expect("MAX_HEAVY_ATOMS_3D: a number");
    }
    let mut times = Vec::new();
    for (row, smiles) in text.lines().enumerate() {
        let Ok(mol) = Molecule::from_smiles(smiles) else {
            continue;
        };
        let t0 = Instant::now();
        let got = coordinates(&mol, &options).map(|(_, m)| m);
        times.push((
            t0.elapsed().as_secs_f64(),
            row,
            mol.num_atoms(),
            got,
            smiles.to_string(),
        ));
    }
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = times.iter().map(|t| t.0).sum();
    println!("total {total:.1}s over {} molecules", times.len());
    for t in times.iter().take(30) {
        println!("{:.2}s row {} atoms {} {:?} {}", t.0, t.1, t.2, t.3, t.4);
    }
}
