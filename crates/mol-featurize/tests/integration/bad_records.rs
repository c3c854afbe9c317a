//! Broken SDF records (issue #19): a truncated record, a wrong counts line and a V3000
//! atom block with a bad line each give one error naming the record; the records around
//! them read back unchanged.

use mol_featurize::fuzz::Corpus;
use mol_featurize::structure_file::parse_sdf;

fn seeds() -> Vec<String> {
    // Record 0 is V2000, record 1 V3000 (Corpus alternates), then V2000 again.
    Corpus::new(
        ["CCO", "c1ccccc1O", "CC(=O)N"].map(String::from).to_vec(),
        3,
    )
    .records
}

/// `broken` (record 1) between two good records: the error names record 1, the others
/// read back with their atom counts.
fn check(broken: &str, what: &str) {
    let r = seeds();
    let text = format!("{}{broken}{}", r[0], r[2]);
    let read = parse_sdf(&text, "x.sdf");
    assert_eq!(read.len(), 3, "{what}: every record accounted for");
    assert_eq!(
        read[0].as_ref().expect("record 0").molecule.num_atoms(),
        3,
        "{what}"
    );
    assert_eq!(
        read[2].as_ref().expect("record 2").molecule.num_atoms(),
        4,
        "{what}"
    );
    let e = read[1]
        .as_ref()
        .err()
        .unwrap_or_else(|| panic!("{what}: accepted"))
        .to_string();
    assert!(e.starts_with("x.sdf record 1:"), "{what}: {e}");
}

#[test]
fn broken_records_are_reported_one_by_one() {
    let r = seeds();
    // Truncated in the atom block (the $$$$ line kept).
    let lines: Vec<&str> = r[0].lines().collect();
    check(&format!("{}\n$$$$\n", lines[..6].join("\n")), "truncated");
    // A counts line claiming 9 atoms and 8 bonds.
    let wrong_counts = r[0].replacen(&lines[3][..6], "  9  8", 1);
    check(&wrong_counts, "wrong counts line");
    // A V3000 atom line without its coordinates.
    let v3000 = &r[1];
    assert!(v3000.contains("V3000"));
    let bad = v3000
        .lines()
        .map(|l| {
            if l.starts_with("M  V30 1 ") {
                "M  V30 1 C".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    check(&format!("{bad}\n"), "V3000 bad atom line");
}
