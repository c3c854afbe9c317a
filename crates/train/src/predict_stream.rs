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
use std::time::Instant;

use burn::prelude::*;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mol_featurize::cache::ConformerCache;

use crate::error::TrainError;
pub use crate::predict_rows::{DEFAULT_CHUNK_ROWS, StreamInput, StreamOptions};
use crate::predict_rows::{mc_dropout_passes, predict_rows};
use crate::trained_run::TrainedRun;

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

/// Predicts every row of `input` with `members` (one run, or an ensemble's members:
/// [`crate::trained_run::open_members`]) into the CSV `out` (standard output when `None`;
/// see the module documentation), featurizing with `cache` when given
/// ([`predict_rows`]); each chunk's rows are written and flushed as it finishes.
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
    if members.is_empty() {
        return Err(TrainError::Invalid("no model to predict with".into()));
    }
    let with_ids = matches!(&input, StreamInput::Table(t) if !t.table.ids.is_empty());
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
    let done = predict_rows(
        members,
        input,
        resumed,
        options,
        (cache, conformer_bar),
        device,
        |rows| {
            let n = rows.len();
            for row in rows {
                let mut rec = vec![row.row.to_string()];
                if with_ids {
                    rec.push(row.id.unwrap_or_default());
                }
                rec.push(row.smiles);
                match (row.values, row.error) {
                    (Some(values), _) => {
                        rec.extend(values.iter().map(f32::to_string));
                        rec.push(String::new());
                    }
                    (None, error) => {
                        rec.extend((0..header.len() - rec.len() - 1).map(|_| String::new()));
                        // One line per row, whatever the reason says (a resume cuts at the
                        // last newline).
                        let reason = error.map_or_else(String::new, |(_, r)| r.replace('\n', " "));
                        rec.push(reason);
                    }
                }
                w.write_record(&rec).map_err(csv_err)?;
            }
            w.flush().map_err(|e| TrainError::io(&shown, e))?;
            bar.inc(n as u64);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    w.into_inner()
        .map_err(|e| TrainError::io(&shown, e.into_error()))?
        .flush()
        .map_err(|e| TrainError::io(&shown, e))?;
    Ok(StreamReport {
        rows_written: resumed + done.rows,
        rows_resumed: resumed,
        rows_predicted: done.rows,
        skipped_by_kind: done.skipped_by_kind,
        seconds: t0.elapsed().as_secs_f64(),
        complete: done.complete,
    })
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
