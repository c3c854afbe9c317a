//! Which flags the user typed, read from clap's one parse of `train`: a flag of another
//! model family is refused by name, and a table's flags with `--dataset qm9`.

use clap::{ArgMatches, Args};

use super::args::{GptTrainArgs, MatTrainArgs, TmTrainArgs};
use crate::commands::common::ModelArg;

/// Flags that describe a molecule table (`--data`), refused with `--dataset qm9` rather
/// than silently ignored.
pub(super) const TABLE_FLAGS: [&str; 13] = [
    "data",
    "id_field",
    "labels",
    "file_column",
    "splits",
    "split",
    "smiles_column",
    "targets_from",
    "delimiter",
    "units",
    "task",
    "coords",
    "no_cache",
];

/// The flags among `ids` that the user typed (not defaults), as `--flag-name`.
pub(super) fn given(matches: &ArgMatches, ids: &[&str]) -> Vec<String> {
    ids.iter()
        .filter(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect()
}

/// The flags of `F` (one family's struct) typed on the command line, as `--flag-name`
/// (the ids come from clap's definition of `F`, not from a list kept here).
fn typed<F: Args>(matches: &ArgMatches) -> Vec<String> {
    let command = F::augment_args(clap::Command::new("family"));
    let ids: Vec<&str> = command
        .get_arguments()
        .map(|a| a.get_id().as_str())
        .collect();
    given(matches, &ids)
}

/// The flags of families other than `model`'s on the command line `matches` (the one
/// parse of `train`).
pub(super) fn foreign_flags(model: ModelArg, matches: &ArgMatches) -> Vec<String> {
    let (mat, tm, gpt) = (
        typed::<MatTrainArgs>(matches),
        typed::<TmTrainArgs>(matches),
        typed::<GptTrainArgs>(matches),
    );
    match model {
        ModelArg::Mat => [tm, gpt].concat(),
        ModelArg::TransformerM => [mat, gpt].concat(),
        ModelArg::SmilesGpt => [mat, tm].concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::TrainArgs;
    use super::*;
    use clap::FromArgMatches;

    /// The flags of another family are refused by name, the family's own accepted.
    #[test]
    fn a_flag_of_the_other_family_is_refused() {
        let parse = |words: &[&str]| {
            let command = TrainArgs::augment_args(clap::Command::new("train"));
            let matches = command
                .try_get_matches_from(std::iter::once("train").chain(words.iter().copied()))
                .unwrap();
            let model = TrainArgs::from_arg_matches(&matches).unwrap().shared.model;
            foreign_flags(model, &matches)
        };
        assert!(parse(&["--out", "r", "--data", "x.csv", "--pretrained", "m.pt"]).is_empty());
        assert!(parse(&["--out", "r", "--model", "transformer-m", "--mode", "3d"]).is_empty());
        assert_eq!(
            parse(&[
                "--out",
                "r",
                "--model",
                "transformer-m",
                "--pretrained",
                "m.pt"
            ]),
            ["--pretrained"]
        );
        assert_eq!(
            parse(&[
                "--out",
                "r",
                "--data",
                "x.csv",
                "--loss",
                "mse",
                "--scaffold"
            ]),
            ["--loss", "--scaffold"]
        );
        assert_eq!(
            parse(&["--out", "r", "--model", "smiles-gpt", "--layers", "2"]),
            ["--layers"]
        );
    }
}
