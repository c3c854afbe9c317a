//! Streaming prediction (issue #38 item 4, chemprop #48 / #346): a delimited input is
//! read `chunk_rows` rows at a time, a second thread featurizes the next chunk while the
//! model runs on the current one, and rows are written (and flushed) as each chunk
//! finishes, so memory does not grow with the file. An interrupted run continues where its
//! output stops (`resume`): the last incomplete line is cut, the rows already written are
//! skipped in the input, the rest appended.
//!
//! Structure files (SDF, XYZ) and `--smiles` are read whole and then predicted in the
//! same chunks.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use burn::prelude::*;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
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

/// Settings of [`predict_stream`].
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
    /// [`predict_stream`]), where dropout is active; `None`: one deterministic pass.
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

/// What [`predict_stream`] did.
#[derive(Debug, Clone, Default)]
pub struct StreamReport {
    /// Rows in the output file when it finished (resumed ones included).
    pub rows_written: usize,
    /// Rows found already written by an earlier run (`resume`).
    pub rows_resumed: usize,
    /// Rows predicted by this call.
    pub rows_predicted: usize,
    /// Of those, rows skipped (error column filled), by reason kind.
    pub skipped_by_kind: BTreeMap<String, usize>,
    /// Wall-clock seconds of this call.
    pub seconds: f64,
    /// Whether the input was read to its end.
    pub complete: bool,
}

/// The output CSV's header for `members` (one run, or an ensemble's members) run
/// `passes` times each (MC dropout; 1 otherwise): `row`, [`id`,] `smiles`, per task
/// `<task>_pred` (the mean over members and passes), `<task>_std` (their standard
/// deviation) and with `each` `<task>_pred_<k>` per member and pass (member-major);
/// `error`.
pub fn header(members: &[TrainedRun], passes: usize, with_ids: bool, each: bool) -> Vec<String> {
    let outputs = members.len() * passes;
    let mut header = vec!["row".to_string()];
    if with_ids {
        header.push("id".into());
    }
    header.push("smiles".into());
    let columns = members
        .first()
        .map(|r| r.labels().columns)
        .unwrap_or_default();
    for c in &columns {
        header.push(format!("{c}_pred"));
        if outputs > 1 {
            header.push(format!("{c}_std"));
            if each {
                header.extend((0..outputs).map(|k| format!("{c}_pred_{k}")));
            }
        }
    }
    header.push("error".into());
    header
}

/// Forward passes per run: `mc_dropout`'s count (checked: at least 2, an autodiff
/// `device`, every run's model with dropout), else 1.
fn mc_dropout_passes(
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
fn row_values(outputs: &[Vec<f32>], each: bool) -> Vec<f32> {
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

/// Rows already complete in `out`, after cutting an incomplete last line: checks that the
/// header is `header` and the rows are numbered 0, 1, ... Returns their count.
///
/// # Errors
/// [`TrainError::Invalid`] when `out` has another header or its rows are not numbered in
/// order (not this prediction's output); [`TrainError::Io`].
fn resume_point(out: &Path, header: &[String]) -> Result<usize, TrainError> {
    let io = |e| TrainError::io(out, e);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(out)
        .map_err(io)?;
    let complete = end_of_last_line(&file).map_err(io)?;
    file.set_len(complete).map_err(io)?;
    if complete == 0 {
        return Ok(0);
    }
    let mut file = file;
    std::io::Seek::rewind(&mut file).map_err(io)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(std::io::BufReader::new(file));
    let not_ours = |why: String| {
        TrainError::Invalid(format!(
            "{}: cannot resume: {why}; remove it or drop --resume to start again",
            out.display()
        ))
    };
    let mut records = reader.records();
    let found: Vec<String> = match records.next() {
        Some(Ok(r)) => r.iter().map(String::from).collect(),
        _ => return Err(not_ours("no header".into())),
    };
    if found != header {
        return Err(not_ours(format!(
            "its header is {found:?}, this run and input write {header:?}"
        )));
    }
    let mut rows = 0;
    for record in records {
        let record = record.map_err(|e| not_ours(e.to_string()))?;
        if record.get(0) != Some(rows.to_string().as_str()) {
            return Err(not_ours(format!(
                "line {} is row {:?}, expected {rows}",
                rows + 2,
                record.get(0).unwrap_or_default()
            )));
        }
        rows += 1;
    }
    Ok(rows)
}

/// The length of `file` up to and including its last newline (0 without one): what
/// remains after cutting a line an interrupted writer left incomplete. Reads backwards
/// in blocks, so a large output is not read whole.
fn end_of_last_line(mut file: &std::fs::File) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut end = file.metadata()?.len();
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block[..n])?;
        if let Some(i) = block[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// One featurized chunk: its first row, its rows, their features and report.
type Chunk = (usize, TableData, RunFeatures, FeaturizeReport);

/// Predicts every row of `input` with `members` (one run, or an ensemble's members:
/// [`crate::trained_run::open_members`]) into the CSV `out` (standard output when `None`;
/// see the module documentation), featurizing with `cache` when given. The members share
/// one featurization (they share the featurizer settings).
///
/// # Errors
/// An unreadable input (its row named), an `out` that cannot be written or resumed, a
/// batch the model cannot take.
pub fn predict_stream(
    members: &[TrainedRun],
    input: StreamInput,
    out: Option<&Path>,
    options: &StreamOptions,
    cache: Option<&ConformerCache>,
    device: &Device,
) -> Result<StreamReport, TrainError> {
    let t0 = Instant::now();
    let with_ids = matches!(&input, StreamInput::Table(t) if !t.table.ids.is_empty());
    let Some(run) = members.first() else {
        return Err(TrainError::Invalid("no model to predict with".into()));
    };
    let passes = mc_dropout_passes(members, options.mc_dropout, device)?;
    let header = header(members, passes, with_ids, options.members);
    let shown = out.map_or_else(|| PathBuf::from("<stdout>"), Path::to_path_buf);
    let resumed = match out {
        Some(out) if options.resume && out.exists() => resume_point(out, &header)?,
        None if options.resume => {
            return Err(TrainError::Invalid(
                "--resume continues an output file: give --out".into(),
            ));
        }
        _ => 0,
    };
    let total = match &input {
        StreamInput::Table(t) => Some(t.table.len()),
        StreamInput::Delimited {
            path, delimiter, ..
        } => count_records(path, *delimiter),
    };
    let sink: Box<dyn Write> = match out {
        Some(out) => Box::new(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(resumed > 0)
                .write(true)
                .truncate(resumed == 0)
                .open(out)
                .map_err(|e| TrainError::io(out, e))?,
        )),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = csv::Writer::from_writer(sink);
    let csv_err = |e: csv::Error| TrainError::Invalid(format!("{}: {e}", shown.display()));
    if resumed == 0 {
        w.write_record(&header).map_err(csv_err)?;
    }
    // One chunk: the featurizer's own conformer bar (per molecule) says more than a bar
    // of chunks; several: a bar of molecules over the chunks, with rate and ETA.
    let one_chunk = total.is_some_and(|n| n.saturating_sub(resumed) <= options.chunk_rows);
    let conformer_bar = options.progress && one_chunk;
    let bar = progress_bar(options.progress && !one_chunk, total, resumed);
    let mut report = StreamReport {
        rows_resumed: resumed,
        rows_written: resumed,
        ..Default::default()
    };
    let featurizer = run.featurizer();
    let chunk_rows = options.chunk_rows.max(1);
    let max_atoms = options.max_atoms;
    std::thread::scope(|scope| -> Result<(), TrainError> {
        // One chunk in flight: featurizing chunk k + 1 overlaps the model on chunk k.
        let (tx, rx) = sync_channel::<Result<Chunk, TrainError>>(1);
        let reader_input = input;
        scope.spawn(move || {
            let mut next = Chunks::new(reader_input, resumed, chunk_rows);
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
                    return; // the writer stopped, or nothing more can be read
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
            let rows: Vec<Option<Vec<Vec<f32>>>> = (0..data.table.len())
                .map(|k| outputs.iter().map(|o| o[k].clone()).collect())
                .collect();
            let mut skipped = featurized.skipped.iter().peekable();
            for (k, raw) in rows.into_iter().enumerate() {
                let mut rec = vec![(first + k).to_string()];
                if with_ids {
                    rec.push(data.table.ids.get(k).cloned().unwrap_or_default());
                }
                rec.push(data.table.smiles[k].clone());
                match raw {
                    Some(outputs) => {
                        let values = row_values(&outputs, options.members);
                        rec.extend(values.iter().map(f32::to_string));
                        rec.push(String::new());
                    }
                    None => {
                        rec.extend((0..header.len() - rec.len() - 1).map(|_| String::new()));
                        let s = skipped.next_if(|s| s.row == k);
                        let kind = s.map_or("not featurized", |s| s.kind.as_str());
                        *report.skipped_by_kind.entry(kind.to_string()).or_default() += 1;
                        // One line per row, whatever the reason says (a resume cuts at the last newline).
                        rec.push(
                            s.map_or_else(|| kind.to_string(), |s| s.reason.replace('\n', " ")),
                        );
                    }
                }
                w.write_record(&rec).map_err(csv_err)?;
            }
            w.flush().map_err(|e| TrainError::io(&shown, e))?;
            let n = data.table.len();
            report.rows_predicted += n;
            report.rows_written += n;
            bar.inc(n as u64);
            chunks_done += 1;
            if options.stop_after_chunks == Some(chunks_done) {
                return Ok(());
            }
        }
        report.complete = true;
        Ok(())
    })?;
    bar.finish_and_clear();
    w.into_inner()
        .map_err(|e| TrainError::io(&shown, e.into_error()))?
        .flush()
        .map_err(|e| TrainError::io(&shown, e))?;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// Data records of a delimited file (a quick pass without parsing cells), for the
/// progress bar's length; `None` when it cannot be read (the reader reports why).
fn count_records(path: &Path, delimiter: u8) -> Option<usize> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_path(path)
        .ok()?;
    let mut record = csv::ByteRecord::new();
    let mut n = 0;
    while reader.read_byte_record(&mut record).ok()? {
        n += 1;
    }
    Some(n)
}

/// A bar of `total` molecules with rate and ETA, drawn on stderr when it is a terminal.
fn progress_bar(show: bool, total: Option<usize>, done: usize) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(n) => ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = "predict {pos}/{len} molecules [{elapsed_precise}] {per_sec} ETA {eta}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_position(done as u64);
    bar.reset_eta();
    // Elapsed time moves while a chunk of cold conformers is embedded.
    bar.enable_steady_tick(std::time::Duration::from_millis(500));
    bar
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
