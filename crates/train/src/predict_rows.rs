//! The rows of a prediction, chunk by chunk (issue #38 item 4; the Python API's
//! `Run.predict`, issue #39): the input is cut into chunks of `chunk_rows` rows, a second
//! thread featurizes the next chunk while the model runs on the current one, and each
//! chunk's rows go to a sink as soon as they are predicted, so memory does not grow with
//! the input. [`crate::predict_stream::predict_stream`] writes them as a CSV; the Python
//! package collects them into arrays.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;

use burn::prelude::*;
use mol_featurize::FeaturizeReport;
use mol_featurize::cache::ConformerCache;

use crate::delimited_rows::{Columns, DelimitedRows};
use crate::error::TrainError;
use crate::table_data::TableData;
use crate::trained_run::{Readout, RunFeatures, TrainedRun};

/// Rows per chunk by default: about 7 MB of MAT features for drug-sized molecules.
pub const DEFAULT_CHUNK_ROWS: usize = 1024;

/// The molecules of a streaming prediction.
pub enum StreamInput {
    /// A delimited file read in chunks.
    Delimited {
        /// The file.
        path: PathBuf,
        /// Its SMILES column.
        smiles_column: String,
        /// Its field delimiter.
        delimiter: u8,
    },
    /// Rows already in memory (a structure file, SMILES).
    Table(TableData),
}

/// Settings of [`predict_rows`] and of the CSV stream over it
/// ([`crate::predict_stream::predict_stream`], the only one that reads `resume` and
/// `progress`).
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Rows per chunk (at least 1).
    pub chunk_rows: usize,
    /// Continue the output file where it stops instead of starting it again.
    pub resume: bool,
    /// Heavy-atom limit per molecule.
    pub max_atoms: usize,
    /// Draw a progress bar with rate and ETA on stderr (on a terminal only).
    pub progress: bool,
    /// With an ensemble or MC dropout, also write each member's (or pass's) prediction
    /// (`<task>_pred_<k>`).
    pub members: bool,
    /// MC dropout (Gal and Ghahramani 2016; chemprop's `dropout` uncertainty): this many
    /// forward passes per run with dropout on, their mean and standard deviation written
    /// as an ensemble's. The runs must be opened on an autodiff device
    /// (`TrainedRun::open(dir, &device.clone().autodiff(), ..)`, the same device given to
    /// [`predict_rows`]), where dropout is active; `None`: one deterministic pass.
    pub mc_dropout: Option<usize>,
    /// MC dropout: the masks' seed. Each chunk's passes reseed the device from it and the
    /// chunk's first row, so a row's passes do not depend on the chunk before it (a
    /// resumed prediction writes what an uninterrupted one would).
    pub seed: u64,
    /// Stop after this many chunks have been written (tests: an interruption between
    /// chunks); `None` to run to the end.
    pub stop_after_chunks: Option<usize>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            chunk_rows: DEFAULT_CHUNK_ROWS,
            resume: false,
            max_atoms: mol_featurize::DEFAULT_MAX_ATOMS,
            progress: true,
            members: false,
            mc_dropout: None,
            seed: 0,
            stop_after_chunks: None,
        }
    }
}

/// Forward passes per run: `mc_dropout`'s count (checked: at least 2, an autodiff
/// `device`, every run's model with dropout), else 1.
pub(crate) fn mc_dropout_passes(
    members: &[TrainedRun],
    mc_dropout: Option<usize>,
    device: &Device,
) -> Result<usize, TrainError> {
    let Some(k) = mc_dropout else {
        return Ok(1);
    };
    if k < 2 {
        return Err(TrainError::Invalid(format!(
            "--mc-dropout {k}: at least 2 passes are needed for a standard deviation"
        )));
    }
    if !device.is_autodiff() {
        return Err(TrainError::Invalid(
            "MC dropout needs the runs opened on an autodiff device (dropout is off elsewhere)"
                .into(),
        ));
    }
    if let Some(run) = members.iter().find(|r| r.dropout() <= 0.0) {
        return Err(TrainError::Invalid(format!(
            "{}: its model has no dropout (dropout 0 in run.json), so MC dropout would \
             repeat one prediction",
            run.dir.display()
        )));
    }
    Ok(k)
}

/// One row's values: per task the members' mean, [std, each member's value], as
/// [`header`] orders them.
pub(crate) fn row_values(outputs: &[Vec<f32>], each: bool) -> Vec<f32> {
    let tasks = outputs.first().map_or(0, Vec::len);
    let mut values = Vec::new();
    for t in 0..tasks {
        let member: Vec<f32> = outputs.iter().map(|o| o[t]).collect();
        let (mean, std) = crate::ensemble::mean_std(&member);
        values.push(mean);
        if outputs.len() > 1 {
            values.push(std);
            if each {
                values.extend(&member);
            }
        }
    }
    values
}

/// One featurized chunk: its first row, its rows, their features and report.
type Chunk = (usize, TableData, RunFeatures, FeaturizeReport);

/// One predicted row, in input order ([`predict_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PredictedRow {
    /// Input row (a structure file's record index).
    pub row: usize,
    /// The row's identity (an SDF record's title or id field), when the input has ids.
    pub id: Option<String>,
    /// SMILES as given (an SDF record's canonical SMILES).
    pub smiles: String,
    /// Per task: the mean over members and passes (target units, or the probability of
    /// the positive class), then with several outputs their standard deviation, then
    /// with `members` each output; the order of
    /// [`crate::predict_stream::header`]'s value columns. `None` where the molecule was
    /// skipped.
    pub values: Option<Vec<f32>>,
    /// Why the molecule was skipped: the reason's kind (`parse`, `max_atoms`, ...) and
    /// its text naming the molecule.
    pub error: Option<(String, String)>,
}

/// What [`predict_rows`] did.
#[derive(Debug, Clone, Default)]
pub struct RowsDone {
    /// Rows predicted (skipped ones included).
    pub rows: usize,
    /// Rows skipped, by reason kind.
    pub skipped_by_kind: BTreeMap<String, usize>,
    /// Whether the input was read to its end.
    pub complete: bool,
}

/// Predicts every row of `input` after its first `skip` rows with `members` (one run, or
/// an ensemble's members: [`TrainedRun::open_members`]), featurizing with `cache` when
/// given (the members share one featurization: they share the featurizer settings), and
/// hands each chunk's rows to `sink` in input order. `conformer_bar`: draw the
/// featurizer's per-molecule bar (on a terminal only).
///
/// # Errors
/// No member; an unreadable input (its row named); MC dropout that cannot run
/// ([`StreamOptions::mc_dropout`]); a batch the model cannot take; the sink's error.
pub fn predict_rows(
    members: &[TrainedRun],
    input: StreamInput,
    skip: usize,
    options: &StreamOptions,
    (cache, conformer_bar): (Option<&ConformerCache>, bool),
    device: &Device,
    mut sink: impl FnMut(Vec<PredictedRow>) -> Result<(), TrainError>,
) -> Result<RowsDone, TrainError> {
    let Some(run) = members.first() else {
        return Err(TrainError::Invalid("no model to predict with".into()));
    };
    let passes = mc_dropout_passes(members, options.mc_dropout, device)?;
    let mut done = RowsDone::default();
    let featurizer = run.featurizer();
    let chunk_rows = options.chunk_rows.max(1);
    let max_atoms = options.max_atoms;
    std::thread::scope(|scope| -> Result<(), TrainError> {
        // One chunk in flight: featurizing chunk k + 1 overlaps the model on chunk k.
        let (tx, rx) = sync_channel::<Result<Chunk, TrainError>>(1);
        scope.spawn(move || {
            let mut next = Chunks::new(input, skip, chunk_rows);
            loop {
                let chunk = match next.next_chunk() {
                    Ok(Some((first, data))) => featurizer
                        .featurize(&data, (cache, max_atoms, conformer_bar))
                        .map(|(f, r)| (first, data, f, r)),
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                if tx.send(chunk).is_err() || failed {
                    return; // the sink stopped, or nothing more can be read
                }
            }
        });
        let mut chunks_done = 0;
        for chunk in rx {
            let (first, data, features, featurized) = chunk?;
            let mut outputs: Vec<Vec<Option<Vec<f32>>>> = Vec::with_capacity(members.len());
            for (m, member) in members.iter().enumerate() {
                let labels = member.labels();
                for pass in 0..passes {
                    if options.mc_dropout.is_some() {
                        let pass = (m * passes + pass) as u64;
                        let first = first as u64;
                        device
                            .clone()
                            .without_autodiff()
                            .seed(options.seed ^ first.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ pass);
                    }
                    let (rows, _) =
                        member.infer_features(&features, Readout::Prediction, device)?;
                    outputs.push(
                        rows.into_iter()
                            .map(|r| r.map(|raw| labels.output(&raw)))
                            .collect(),
                    );
                }
            }
            let mut skipped = featurized.skipped.iter().peekable();
            let rows = (0..data.table.len())
                .map(|k| {
                    let raw: Option<Vec<Vec<f32>>> = outputs.iter().map(|o| o[k].clone()).collect();
                    let values = raw.map(|outputs| row_values(&outputs, options.members));
                    let error = match values {
                        Some(_) => None,
                        None => {
                            let s = skipped.next_if(|s| s.row == k);
                            let kind = s.map_or("not featurized", |s| s.kind.as_str());
                            *done.skipped_by_kind.entry(kind.to_string()).or_default() += 1;
                            let reason = s.map_or_else(|| kind.to_string(), |s| s.reason.clone());
                            Some((kind.to_string(), reason))
                        }
                    };
                    PredictedRow {
                        row: first + k,
                        id: data.table.ids.get(k).cloned(),
                        smiles: data.table.smiles[k].clone(),
                        values,
                        error,
                    }
                })
                .collect();
            done.rows += data.table.len();
            sink(rows)?;
            chunks_done += 1;
            if options.stop_after_chunks == Some(chunks_done) {
                return Ok(());
            }
        }
        done.complete = true;
        Ok(())
    })?;
    Ok(done)
}

/// The input cut into chunks of rows, starting at row `skip`.
struct Chunks {
    source: ChunkSource,
    chunk_rows: usize,
}

enum ChunkSource {
    /// An open delimited file, or the error of opening it (reported once).
    Delimited(Option<Result<DelimitedRows, TrainError>>, usize),
    /// Rows in memory and the next one.
    Table(TableData, usize),
}

impl Chunks {
    fn new(input: StreamInput, skip: usize, chunk_rows: usize) -> Self {
        let source = match input {
            StreamInput::Table(data) => ChunkSource::Table(data, skip),
            StreamInput::Delimited {
                path,
                smiles_column,
                delimiter,
            } => {
                let columns = Columns {
                    smiles: &smiles_column,
                    id: None,
                    targets: &[],
                };
                let opened = DelimitedRows::open(&path, columns, delimiter);
                ChunkSource::Delimited(Some(opened), skip)
            }
        };
        Self { source, chunk_rows }
    }

    /// The next chunk's first row and rows; `None` at the end.
    fn next_chunk(&mut self) -> Result<Option<(usize, TableData)>, TrainError> {
        match &mut self.source {
            ChunkSource::Table(data, next) => {
                let end = (*next + self.chunk_rows).min(data.table.len());
                if *next >= end {
                    return Ok(None);
                }
                let rows: Vec<usize> = (*next..end).collect();
                let first = *next;
                *next = end;
                Ok(Some((first, data.subset(&rows))))
            }
            ChunkSource::Delimited(reader, skip) => {
                if matches!(reader, Some(Err(_)))
                    && let Some(Err(e)) = reader.take()
                {
                    return Err(e);
                }
                let Some(Ok(rows)) = reader.as_mut() else {
                    return Ok(None);
                };
                // Rows an earlier run wrote, read and dropped a chunk at a time.
                while *skip > 0 {
                    let skipped = rows.next_chunk((*skip).min(self.chunk_rows))?.len();
                    if skipped == 0 {
                        break;
                    }
                    *skip -= skipped;
                }
                let first = rows.next_row();
                let table = rows.next_chunk(self.chunk_rows)?;
                if table.is_empty() {
                    return Ok(None);
                }
                Ok(Some((
                    first,
                    TableData {
                        table,
                        structures: None,
                    },
                )))
            }
        }
    }
}
