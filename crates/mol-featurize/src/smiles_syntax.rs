//! RDKit's SMILES grammar where the toolkit's parser is more lenient (issue #19).
//!
//! `chematic`'s parser accepts some strings that RDKit 2026.09's `MolFromSmiles` rejects,
//! and each would silently become a different molecule than the one a typo hid: an empty
//! branch `CC()C`, a bond symbol with no atom after it `CC(=)O` or before a branch
//! `CC-(C)C`, two bond symbols in a row `C=-C`, a chirality mark outside brackets
//! `CO@`, an empty dot-separated component `C..C` / `.C` / `C.`, a branch that opens
//! with a dot or another branch `C(.C)C` / `C((C))C`, and an atom-map colon without
//! digits `[C@:]`. [`check`] rejects these with the reason, before parsing.
//!
//! Two kinds RDKit accepts are rejected on purpose, with the reason: the SMARTS any-bond
//! `~` (RDKit builds a query bond with no order and no valence, so `C~O` becomes methane
//! and water joined by an edge no featurizer can type), and a `.` inside a branch
//! (`CC(C.C)C`: RDKit starts a new molecule inside the branch and returns to the branch
//! point after `)`, so the text reads as one molecule but is two).
//!
//! [`smiles_part`] follows RDKit on whitespace: a SMILES ends at the first space or tab
//! and the rest of the text is the molecule's name (the SMILES-file convention).
//! docs/CHEMISTRY.md lists every rule; `fixtures/smiles_fuzz.tsv.gz` checks them.

/// What the scanner saw last.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    Start,
    Atom,
    Bond,
    Ring,
    Open,
    Close,
    Dot,
}

/// The SMILES part of a (trimmed) text: up to the first space or tab.
pub fn smiles_part(text: &str) -> &str {
    text.split([' ', '\t']).next().unwrap_or_default()
}

/// Rejects the strings RDKit's grammar rejects and the toolkit's parser would accept.
///
/// # Errors
/// The reason and the 0-based character position, e.g. `empty branch "()" at 2`.
pub(crate) fn check(smiles: &str) -> Result<(), String> {
    let b = smiles.as_bytes();
    let mut last = Last::Start;
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'[' => {
                let Some(len) = b[i..].iter().position(|&x| x == b']') else {
                    return Ok(()); // the parser reports the unclosed bracket
                };
                let inside = &b[i + 1..i + len];
                if let Some(colon) = inside.iter().position(|&x| x == b':')
                    && !inside.get(colon + 1).is_some_and(u8::is_ascii_digit)
                {
                    return Err(format!(
                        "atom-map ':' without a number at {}",
                        i + 1 + colon
                    ));
                }
                i += len + 1;
                last = Last::Atom;
                continue;
            }
            b'(' => match last {
                Last::Bond => return Err(format!("bond symbol before a branch at {}", i - 1)),
                Last::Open => return Err(format!("a branch opens with '(' at {i}")),
                _ => {
                    last = Last::Open;
                    depth += 1;
                }
            },
            b')' => match last {
                Last::Open => return Err(format!("empty branch \"()\" at {}", i - 1)),
                Last::Bond => {
                    return Err(format!("bond symbol with no atom after it at {}", i - 1));
                }
                _ => {
                    last = Last::Close;
                    depth = depth.saturating_sub(1);
                }
            },
            b'~' => {
                return Err(format!(
                    "'~' (any bond) at {i} is a SMARTS query bond: it has no bond order to \
                     featurize (RDKit reads a query molecule)"
                ));
            }
            b'-' | b'=' | b'#' | b'$' | b':' | b'/' | b'\\' => match last {
                Last::Bond => return Err(format!("two bond symbols in a row at {i}")),
                Last::Start | Last::Dot => {
                    return Err(format!("bond symbol with no atom before it at {i}"));
                }
                _ => last = Last::Bond,
            },
            b'.' => match last {
                Last::Start | Last::Dot => {
                    return Err(format!("empty dot-separated component at {i}"));
                }
                Last::Open => return Err(format!("a branch opens with '.' at {i}")),
                Last::Bond => {
                    return Err(format!("bond symbol with no atom after it at {}", i - 1));
                }
                _ if depth > 0 => {
                    return Err(format!(
                        "'.' inside a branch at {i}: the text reads as one molecule but is two \
                         (write the second molecule after the branch)"
                    ));
                }
                _ => last = Last::Dot,
            },
            b'@' => {
                return Err(format!(
                    "chirality mark '@' outside brackets at {i} (write [C@H], [C@@], ...)"
                ));
            }
            b'%' | b'0'..=b'9' => last = Last::Ring,
            _ => last = Last::Atom,
        }
        i += 1;
    }
    match last {
        Last::Bond => Err(format!(
            "ends with a bond symbol at {}",
            smiles.len().saturating_sub(1)
        )),
        Last::Dot => Err(format!(
            "empty dot-separated component at {}",
            smiles.len().saturating_sub(1)
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RDKit 2026.09's verdict on each string (`Chem.MolFromSmiles(s) is not None`),
    /// for strings whose verdict is decided by syntax alone.
    #[test]
    fn verdicts_match_rdkit() {
        let rejected = [
            "CC()C",
            "CCCCC(=)OC",
            "NC(=O)c1ccccc1O@",
            "CC-(C)C(O)=O",
            "CC\\(C)O",
            "CC(:)CO",
            "C=-C",
            "C..C",
            ".C",
            "C.",
            "=CC",
            "C=.C",
            "C(.C)C",
            "C((C))C",
            "C[C@:]O",
            "CC#",
        ];
        // Accepted by RDKit, rejected on purpose (module docs).
        let deliberate = [
            "C~O",
            "Cc1cc~nc(c1)C",
            "CCCc1nc(NC(C).C)nc(SC)n1",
            "C(C.C)C",
        ];
        for s in rejected.iter().chain(&deliberate) {
            assert!(check(s).is_err(), "{s} should be rejected");
        }
        let accepted = [
            "CCO",
            "C(C)1CC1",
            "C1CC=1",
            "C%10CC%10",
            "CC(=O)(C)",
            "C[13C@H:2](O)N",
            "C-1CC-1",
            "*",
            "[*]",
            "F/C=C/F",
            "C(C)C.CC",
            "c1ccccc1",
            "[Na+].[Cl-]",
        ];
        for s in accepted {
            assert_eq!(check(s), Ok(()), "{s}");
        }
        let e = check("CC()C").unwrap_err();
        assert_eq!(e, "empty branch \"()\" at 2");
        assert_eq!(smiles_part("CCO ethanol"), "CCO");
        assert_eq!(smiles_part("CCO\tethanol x"), "CCO");
        assert_eq!(smiles_part("CCO"), "CCO");
    }
}
