//! Options of a training run that are not part of its definition (`run.json`): resume,
//! devices, progress, the conformer cache.

use burn::prelude::*;

use mol_featurize::{AtomLimit, FeaturizeReport, Featurizer, featurize_all_cached};

use crate::engine::{Devices, Progress};
use crate::error::TrainError;
use crate::table_data::{Featurized, TableData};

/// Options of a training run that are not part of the run's definition.
#[derive(Debug, Clone, Default)]
pub struct RunControl {
    /// Continue from the run directory's last complete checkpoint.
    pub resume: bool,
    /// Start a fresh run in a folder that holds one ([`crate::run_folder::RunFolder`]).
    pub force: bool,
    /// Heavy-atom limit per molecule (`None`: [`mol_featurize::DEFAULT_MAX_ATOMS`]);
    /// larger molecules are skipped with the reason.
    pub max_atoms: Option<usize>,
    /// What to print (default: nothing).
    pub progress: Progress,
    /// Stop this invocation after this many training batches, as a killed process would
    /// (resume tests); the run can then be resumed.
    pub interrupt_after_batches: Option<usize>,
    /// Conformer cache folder (`None`: embed every molecule, store nothing).
    pub conformer_cache: Option<std::path::PathBuf>,
    /// Devices (`None`: the `device` argument alone).
    pub devices: Option<Devices>,
    /// Validations and checkpoints per pass over the training data (0 or 1: once, at the
    /// end of each epoch); see [`crate::engine::FitSettings::checkpoints_per_epoch`].
    pub checkpoints_per_epoch: usize,
}

impl RunControl {
    /// Features of every SMILES (`None` where skipped) and the report, with conformers
    /// from and into this run's cache ([`crate::open_conformer_cache`]; a cache that
    /// cannot be opened is reported and the run embeds without it) and a progress bar
    /// unless the run is quiet. Every table run and pretraining on SMILES featurizes
    /// through here.
    pub fn featurize<F: Featurizer>(
        &self,
        featurizer: &F,
        smiles: &[String],
    ) -> (Vec<Option<F::Features>>, FeaturizeReport) {
        let cache = crate::open_conformer_cache(self.conformer_cache.as_deref());
        featurize_all_cached(
            smiles,
            &self.limited(featurizer),
            self.progress != Progress::Quiet,
            cache.as_ref(),
        )
    }

    /// `featurizer` with this run's heavy-atom limit.
    pub fn limited<'a, F: Featurizer>(&self, featurizer: &'a F) -> AtomLimit<&'a F> {
        AtomLimit {
            inner: featurizer,
            max_atoms: self.max_atoms.unwrap_or(featurizer.max_atoms()),
        }
    }

    /// [`RunControl::featurize`] for a table read from any molecule file
    /// ([`crate::table_data::featurize_table`]: the file's own coordinates with
    /// `--coords file`).
    ///
    /// # Errors
    /// `--coords file` on a table without coordinates.
    pub fn featurize_table<F: Featurizer>(
        &self,
        featurizer: &F,
        data: &TableData,
    ) -> Result<Featurized<F::Features>, TrainError> {
        let cache = crate::open_conformer_cache(self.conformer_cache.as_deref());
        crate::table_data::featurize_table(
            &self.limited(featurizer),
            data,
            self.progress != Progress::Quiet,
            cache.as_ref(),
        )
    }

    /// The devices of the run: [`RunControl::devices`] or `device` alone.
    pub fn devices_or(&self, device: &Device) -> Devices {
        self.devices
            .clone()
            .unwrap_or_else(|| Devices::single(device.clone()))
    }
}
