//! The regex SMILES tokenizer of the SMILES language models and a vocabulary built from
//! training data.
//!
//! Tokens (the pattern of Schwaller et al. 2019's Molecular Transformer, used unchanged
//! by MolGPT, Bagal et al. 2022, `train/dataset.py`): a bracket atom `[...]` whole, `Br`
//! and `Cl`, the organic-subset atoms `B C N O S P F I` and aromatic `b c n o s p`, ring
//! bond digits `0-9` and `%nn`, bonds `- = # $ : / \ ~`, branches `( )`, the fragment
//! separator `.`, and `* + @ ? > <`. Every character of a SMILES must belong to a token:
//! anything else (a space, a stray `]`, a letter such as `X`) is an error naming it and its
//! position, never dropped, so `tokens.concat() == smiles` for every SMILES that tokenizes.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::error::TokenizeError;

/// The token pattern (see the module documentation).
pub const SMILES_PATTERN: &str = r"(\[[^\]]+]|<|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|/|:|~|@|\?|>|\*|\$|%[0-9]{2}|[0-9])";

static TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(SMILES_PATTERN).expect("the SMILES pattern compiles"));

/// Splits `smiles` into tokens (slices of it, in order; their concatenation is `smiles`).
///
/// # Errors
/// [`TokenizeError::UnknownCharacter`] for the first character no token covers.
pub fn tokenize(smiles: &str) -> Result<Vec<&str>, TokenizeError> {
    let mut tokens = Vec::with_capacity(smiles.len());
    let mut at = 0;
    for m in TOKEN.find_iter(smiles) {
        if m.start() != at {
            return Err(unknown(smiles, at));
        }
        tokens.push(m.as_str());
        at = m.end();
    }
    if at != smiles.len() {
        return Err(unknown(smiles, at));
    }
    Ok(tokens)
}

fn unknown(smiles: &str, at: usize) -> TokenizeError {
    TokenizeError::UnknownCharacter {
        smiles: smiles.to_string(),
        position: smiles[..at].chars().count(),
        character: smiles[at..].chars().next().unwrap_or(' '),
    }
}

/// Heavy atoms written in `smiles`, counted from its tokens without parsing it: bracket
/// atoms other than plain hydrogen, organic-subset atoms and `*`. For a valid SMILES
/// this is its heavy-atom count (never more); it takes linear time, where parsing a 5,000-atom SMILES takes
/// about 50 s, so a size limit can be applied before the parser runs.
pub fn heavy_atom_tokens(smiles: &str) -> usize {
    TOKEN
        .find_iter(smiles)
        .filter(|t| match t.as_str() {
            "B" | "Br" | "C" | "Cl" | "N" | "O" | "S" | "P" | "F" | "I" | "b" | "c" | "n" | "o"
            | "s" | "p" | "*" => true,
            bracket if bracket.starts_with('[') => {
                // [isotope]symbol...: a plain hydrogen is H followed by no lowercase
                // letter ([Hg] is mercury) and without isotope (the molecule keeps [2H]
                // as an atom). Never more than the parsed count, so never a false refusal.
                let rest = bracket[1..].trim_start_matches(|c: char| c.is_ascii_digit());
                let isotope = rest.len() + 1 < bracket.len();
                let mut chars = rest.chars();
                let hydrogen = chars.next() == Some('H')
                    && !chars.next().is_some_and(|c| c.is_ascii_lowercase());
                isotope || !hydrogen
            }
            _ => false,
        })
        .count()
}

/// Padding token id (always 0).
pub const PAD: u32 = 0;
/// Start-of-sequence token id.
pub const BOS: u32 = 1;
/// End-of-sequence token id.
pub const EOS: u32 = 2;
/// Unknown-token id: reserved, never produced by [`SmilesVocab::encode`] (an unknown token
/// is an error); a model may still sample it, and [`SmilesVocab::decode`] reports it.
pub const UNK: u32 = 3;
/// The special tokens' spellings, at ids 0..4.
pub const SPECIALS: [&str; 4] = ["<pad>", "<bos>", "<eos>", "<unk>"];

/// A token vocabulary: ids 0..4 are [`SPECIALS`], then the SMILES tokens of the training
/// data by descending count (ties by spelling), stored with a run as `vocab.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "VocabFile", into = "VocabFile")]
pub struct SmilesVocab {
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
}

#[derive(Serialize, Deserialize)]
struct VocabFile {
    tokens: Vec<String>,
}

impl TryFrom<VocabFile> for SmilesVocab {
    type Error = String;
    fn try_from(file: VocabFile) -> Result<Self, String> {
        if file.tokens.len() < SPECIALS.len() || file.tokens[..SPECIALS.len()] != SPECIALS {
            return Err(format!("a vocabulary starts with {SPECIALS:?}"));
        }
        let ids: HashMap<String, u32> = file
            .tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        if ids.len() != file.tokens.len() {
            return Err("a vocabulary lists each token once".into());
        }
        Ok(Self {
            tokens: file.tokens,
            ids,
        })
    }
}

impl From<SmilesVocab> for VocabFile {
    fn from(vocab: SmilesVocab) -> Self {
        VocabFile {
            tokens: vocab.tokens,
        }
    }
}

/// What [`SmilesVocab::build`] could not tokenize: `(row, error)`.
pub type SkippedRows = Vec<(usize, TokenizeError)>;

impl SmilesVocab {
    /// The vocabulary of every token in `smiles` (rows that do not tokenize are returned
    /// with their errors and contribute nothing).
    pub fn build<'a>(smiles: impl IntoIterator<Item = &'a str>) -> (Self, SkippedRows) {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        let mut skipped = Vec::new();
        for (row, s) in smiles.into_iter().enumerate() {
            match tokenize(s) {
                Ok(tokens) => tokens
                    .into_iter()
                    .for_each(|t| *counts.entry(t).or_default() += 1),
                Err(e) => skipped.push((row, e)),
            }
        }
        let mut by_count: Vec<(&str, usize)> = counts.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let tokens = SPECIALS
            .iter()
            .map(|s| s.to_string())
            .chain(by_count.into_iter().map(|(t, _)| t.to_string()))
            .collect();
        let vocab = Self::try_from(VocabFile { tokens }).expect("specials first, tokens unique");
        (vocab, skipped)
    }

    /// Tokens, specials included (the model's vocabulary size).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Only the special tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.len() == SPECIALS.len()
    }

    /// The spelling of token `id`.
    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// `[BOS, tokens..., EOS]` of `smiles`.
    ///
    /// # Errors
    /// [`TokenizeError::UnknownCharacter`], or [`TokenizeError::UnknownToken`] for a token
    /// the vocabulary does not hold (named, with the SMILES).
    pub fn encode(&self, smiles: &str) -> Result<Vec<u32>, TokenizeError> {
        let mut ids = vec![BOS];
        for token in tokenize(smiles)? {
            let id = self
                .ids
                .get(token)
                .ok_or_else(|| TokenizeError::UnknownToken {
                    smiles: smiles.to_string(),
                    token: token.to_string(),
                })?;
            ids.push(*id);
        }
        ids.push(EOS);
        Ok(ids)
    }

    /// The SMILES of `ids`: [`BOS`] and [`PAD`] skipped, stopping at the first [`EOS`].
    ///
    /// # Errors
    /// [`TokenizeError::BadId`] for [`UNK`] or an id outside the vocabulary (a sampled
    /// sequence that names no SMILES).
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizeError> {
        let mut out = String::new();
        for &id in ids {
            match id {
                EOS => break,
                BOS | PAD => continue,
                _ => match self.token(id) {
                    Some(t) if id != UNK => out.push_str(t),
                    _ => return Err(TokenizeError::BadId { id, partial: out }),
                },
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_follow_the_molgpt_pattern() {
        let smiles = "C[C@@H](Cl)c1ccc2[nH]c(=O)%12.[Na+]/C=C\\Br#N";
        let tokens = tokenize(smiles).unwrap();
        assert_eq!(
            tokens,
            vec![
                "C", "[C@@H]", "(", "Cl", ")", "c", "1", "c", "c", "c", "2", "[nH]", "c", "(", "=",
                "O", ")", "%12", ".", "[Na+]", "/", "C", "=", "C", "\\", "Br", "#", "N"
            ]
        );
        assert_eq!(tokens.concat(), smiles);
    }

    #[test]
    fn a_character_no_token_covers_is_an_error_naming_it() {
        for (smiles, position, character) in [("CCO ", 3, ' '), ("CXC", 1, 'X'), ("C]C", 1, ']')] {
            let e = tokenize(smiles).unwrap_err();
            assert_eq!(
                e,
                TokenizeError::UnknownCharacter {
                    smiles: smiles.into(),
                    position,
                    character
                }
            );
        }
    }

    #[test]
    fn vocabulary_round_trip_and_unknown_tokens() {
        let (vocab, skipped) = SmilesVocab::build(["CCO", "c1ccccc1", "C C"]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].0, 2);
        // c (6) and C (2) ... by count: c, 1, C, O.
        assert_eq!(vocab.token(4), Some("c"));
        assert_eq!(vocab.len(), 8);
        let ids = vocab.encode("OCc1ccccc1").unwrap();
        assert_eq!(ids[0], BOS);
        assert_eq!(*ids.last().unwrap(), EOS);
        assert_eq!(vocab.decode(&ids).unwrap(), "OCc1ccccc1");
        let e = vocab.encode("CCN").unwrap_err();
        assert_eq!(
            e,
            TokenizeError::UnknownToken {
                smiles: "CCN".into(),
                token: "N".into()
            }
        );
        assert!(vocab.decode(&[BOS, 4, UNK]).is_err());
        let json = serde_json::to_string(&vocab).unwrap();
        let back: SmilesVocab = serde_json::from_str(&json).unwrap();
        assert_eq!(back, vocab);
        assert!(serde_json::from_str::<SmilesVocab>(r#"{"tokens":["C"]}"#).is_err());
    }

    /// The token count equals the parsed heavy-atom count on bracket atoms, two-letter
    /// halogens, aromatic atoms, hydrogens and ring closures.
    #[test]
    fn heavy_atom_tokens_count_heavy_atoms() {
        for smiles in [
            "CCO",
            "c1ccccc1Cl",
            "[2H]C([H])([H])Br",
            "[Hg+2].[Cl-].[Cl-]",
            "C%10CC%10[NH3+]",
            "OC(=O)[C@@H](N)Cc1c[nH]c2ccccc12",
            "[Na+].[O-]S(=O)(=O)c1ccc(cc1)B(O)O",
        ] {
            let mol = crate::Molecule::from_smiles(smiles).unwrap();
            assert_eq!(heavy_atom_tokens(smiles), mol.num_atoms(), "{smiles}");
        }
    }
}
