//! The SMILES tokenizer round trip on every molecule of MAT's three datasets (the shipped
//! ones, `mol_featurize::mat_datasets`, or $MOLATTN_DATA): each SMILES (the CSV cell, surrounding
//! spaces trimmed as the table reader does) tokenizes, its tokens concatenate back to it,
//! and encoding then decoding through the vocabulary built from all of them gives it back.

use mol_featurize::{SmilesVocab, tokenize};

fn datasets() -> std::path::PathBuf {
    mol_featurize::mat_datasets::dir().unwrap()
}

fn smiles_column(name: &str) -> Vec<String> {
    let path = datasets().join(name).join(format!("{name}.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.rsplit_once(',').expect("smiles,y").0.trim().to_string())
        .collect()
}

#[test]
fn every_dataset_smiles_round_trips_through_tokens_and_vocabulary() {
    let mut all = Vec::new();
    for (name, rows) in [("esol", 1128), ("freesolv", 642), ("bbbp", 2039)] {
        let smiles = smiles_column(name);
        assert_eq!(smiles.len(), rows, "{name}");
        all.extend(smiles);
    }
    for s in &all {
        let tokens = tokenize(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tokens.concat(), *s);
    }
    let (vocab, skipped) = SmilesVocab::build(all.iter().map(String::as_str));
    assert!(skipped.is_empty(), "{skipped:?}");
    for s in &all {
        let ids = vocab.encode(s).unwrap();
        assert_eq!(vocab.decode(&ids).unwrap(), *s);
    }
    // Bracket atoms make most of the vocabulary; the organic subset alone would be ~30.
    assert!((40..200).contains(&vocab.len()), "{}", vocab.len());
}

/// The same round trip on MOSES's three sets (1,936,962 SMILES; `cargo xtask data moses`
/// writes them). Ignored in CI (the sets are a 52 MB download); run it with
/// `MOLATTN_MOSES=~/.cache/molattn/moses cargo test ... -- --ignored moses`.
#[test]
#[ignore = "needs MOSES's sets: cargo xtask data moses, then MOLATTN_MOSES=<its folder>"]
fn every_moses_smiles_round_trips() {
    let dir = std::path::PathBuf::from(std::env::var_os("MOLATTN_MOSES").expect("MOLATTN_MOSES"));
    let mut all = Vec::new();
    for split in ["train", "test", "test_scaffolds"] {
        let text = std::fs::read_to_string(dir.join(format!("{split}.csv"))).unwrap();
        all.extend(
            text.lines()
                .skip(1)
                .filter(|l| !l.is_empty())
                .map(str::to_string),
        );
    }
    assert_eq!(all.len(), 1_584_663 + 176_074 + 176_225);
    let (vocab, skipped) = SmilesVocab::build(all.iter().map(String::as_str));
    assert!(skipped.is_empty(), "{:?}", &skipped[..skipped.len().min(5)]);
    for s in &all {
        assert_eq!(vocab.decode(&vocab.encode(s).unwrap()).unwrap(), *s);
    }
    eprintln!("MOSES vocabulary: {} tokens", vocab.len());
}
