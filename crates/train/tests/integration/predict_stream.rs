//! Streaming prediction (issue #38 item 4): the same rows as the batch path, chunk by
//! chunk; an interrupted prediction resumes without duplicate or missing rows.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use train::predict::predict_table_limited;
use train::predict_stream::{StreamInput, StreamOptions, StreamReport, predict_stream};
use train::table_data::{MoleculeFormat, MoleculeSource};
use train::trained_run::TrainedRun;
use train::{RunControl, SplitSpec, Task, TrainError, train_run};

/// A tiny MAT trained one epoch on 40 ESOL molecules, and a 100-row input with an
/// unparsable SMILES at row 50.
fn run_and_input(name: &str) -> (PathBuf, PathBuf) {
    let dir = crate::pipeline::scratch(name);
    let train_csv = crate::pipeline::subset_csv("esol", 40, &[], &dir);
    let spec = crate::pipeline::spec(
        train_csv,
        Task::Regression,
        SplitSpec::Random { seed: 0 },
        1,
    );
    let run_dir = dir.join("run");
    train_run(&spec, &run_dir, &RunControl::default(), &Device::flex()).unwrap();
    let text = std::fs::read_to_string(
        mol_featurize::mat_datasets::dir()
            .unwrap()
            .join("esol/esol.csv"),
    )
    .unwrap();
    let mut lines: Vec<&str> = text.lines().skip(200).take(100).collect();
    lines[50] = "not a smiles,0.0";
    let input = dir.join("input.csv");
    std::fs::write(&input, format!("smiles,y\n{}\n", lines.join("\n"))).unwrap();
    (run_dir, input)
}

fn delimited(input: &Path) -> StreamInput {
    StreamInput::Delimited {
        path: input.to_path_buf(),
        smiles_column: "smiles".into(),
        delimiter: b',',
    }
}

/// [`predict_stream`] of `input` with `run` into `out`, on the CPU, no conformer cache.
fn stream(
    run: &TrainedRun,
    input: &Path,
    out: &Path,
    options: StreamOptions,
) -> Result<StreamReport, TrainError> {
    let device = Device::flex();
    predict_stream(
        std::slice::from_ref(run),
        delimited(input),
        Some(out),
        &options,
        None,
        &device,
    )
}

fn options(resume: bool, stop_after_chunks: Option<usize>) -> StreamOptions {
    StreamOptions {
        chunk_rows: 16,
        resume,
        progress: false,
        stop_after_chunks,
        ..Default::default()
    }
}

#[test]
fn streamed_rows_equal_the_batch_path() {
    let _rng = crate::rng_shared();
    let (run_dir, input) = run_and_input("stream-rows");
    let device = Device::flex();
    let run = TrainedRun::open(&run_dir, &device, "used to predict").unwrap();
    let out = input.with_file_name("streamed.csv");
    let report = stream(&run, &input, &out, options(false, None)).unwrap();
    assert!(report.complete);
    assert_eq!((report.rows_written, report.rows_predicted), (100, 100));
    assert_eq!(report.skipped_by_kind.values().sum::<usize>(), 1);

    let source = MoleculeSource {
        path: input.clone(),
        format: MoleculeFormat::Delimited,
        smiles_column: "smiles".into(),
        delimiter: ',',
    };
    let batch =
        predict_table_limited(&run_dir, &source.read(&[]).unwrap(), &device, None, None).unwrap();
    let mut reader = csv::Reader::from_path(&out).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        ["row", "smiles", "y_pred", "error"]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), batch.predictions.len());
    for (row, p) in rows.iter().zip(&batch.predictions) {
        assert_eq!(row[0].parse::<usize>().unwrap(), p.row);
        assert_eq!(&row[1], p.smiles.as_str());
        match &p.values {
            Some(v) => {
                let streamed: f32 = row[2].parse().unwrap();
                // Other batches (chunks of 16): float rounding only.
                assert!(
                    (streamed - v[0]).abs() <= 1e-4,
                    "row {}: {streamed} vs {}",
                    p.row,
                    v[0]
                );
                assert!(row[3].is_empty());
            }
            None => {
                assert!(row[2].is_empty());
                assert_eq!(Some(&row[3]), p.error.as_deref(), "row {}", p.row);
            }
        }
    }
    assert!(rows[50][3].contains("not a smiles"), "{:?}", rows[50]);
}

#[test]
fn an_interrupted_prediction_resumes_without_duplicates_or_gaps() {
    let _rng = crate::rng_shared();
    let (run_dir, input) = run_and_input("stream-resume");
    let device = Device::flex();
    let run = TrainedRun::open(&run_dir, &device, "used to predict").unwrap();
    let whole = input.with_file_name("whole.csv");
    stream(&run, &input, &whole, options(false, None)).unwrap();

    // Stopped after 3 chunks (48 rows), then a line cut in the middle, as a kill during a
    // write leaves it.
    let out = input.with_file_name("resumed.csv");
    let first = stream(&run, &input, &out, options(false, Some(3))).unwrap();
    assert!(!first.complete);
    assert_eq!(first.rows_written, 48);
    let mut text = std::fs::read_to_string(&out).unwrap();
    text.push_str("48,CC(C)Cl,-0.1");
    std::fs::write(&out, text).unwrap();
    let second = stream(&run, &input, &out, options(true, None)).unwrap();
    assert!(second.complete);
    assert_eq!((second.rows_resumed, second.rows_predicted), (48, 52));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&whole).unwrap()
    );
    // Resuming a finished file predicts nothing more.
    let third = stream(&run, &input, &out, options(true, None)).unwrap();
    assert_eq!((third.rows_resumed, third.rows_predicted), (100, 0));

    // A file this prediction did not write is refused, untouched.
    let other = input.with_file_name("other.csv");
    std::fs::write(&other, "row,smiles,logS\n0,CCO,1.0\n").unwrap();
    let e = stream(&run, &input, &other, options(true, None))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot resume") && e.contains("header"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "row,smiles,logS\n0,CCO,1.0\n"
    );
}

/// The columns of `out` by name, rows as strings.
fn read_csv(out: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(out).unwrap();
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn mc_dropout_mean_and_std_are_the_passes_and_repeat_for_a_seed() {
    // Exclusive: another test drawing from the generator between a pass's reseeding and
    // its draws would change the masks.
    let _rng = crate::rng_exclusive();
    let (run_dir, input) = run_and_input("stream-mc");
    let plain = Device::flex();
    let ad = plain.clone().autodiff();
    let run = TrainedRun::open(&run_dir, &ad, "used to predict").unwrap();
    assert!(run.dropout() > 0.0, "the test run needs dropout");
    let mc = StreamOptions {
        mc_dropout: Some(4),
        members: true,
        seed: 5,
        ..options(false, None)
    };
    let dir = run_dir.parent().unwrap();
    let outs = [dir.join("mc-a.csv"), dir.join("mc-b.csv")];
    for out in &outs {
        predict_stream(
            std::slice::from_ref(&run),
            delimited(&input),
            Some(out),
            &mc,
            None,
            &ad,
        )
        .unwrap();
    }
    let (header, rows) = read_csv(&outs[0]);
    assert_eq!(
        read_csv(&outs[1]).1,
        rows,
        "the same seed gives the same masks"
    );
    // Interrupted after two chunks, then resumed: the rows of the uninterrupted run.
    let resumed = dir.join("mc-resumed.csv");
    for (resume, stop) in [(false, Some(2)), (true, None)] {
        let o = StreamOptions {
            resume,
            stop_after_chunks: stop,
            ..mc.clone()
        };
        predict_stream(
            std::slice::from_ref(&run),
            delimited(&input),
            Some(&resumed),
            &o,
            None,
            &ad,
        )
        .unwrap();
    }
    assert_eq!(read_csv(&resumed).1, rows, "a resumed MC prediction");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (mean, std) = (col("y_pred"), col("y_std"));
    let passes: Vec<usize> = (0..4).map(|k| col(&format!("y_pred_{k}"))).collect();
    let mut varied = 0;
    for row in rows.iter().filter(|r| !r[mean].is_empty()) {
        let v: Vec<f64> = passes.iter().map(|&c| row[c].parse().unwrap()).collect();
        let m = v.iter().sum::<f64>() / 4.0;
        let s = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!(
            (row[mean].parse::<f64>().unwrap() - m).abs() < 1e-5,
            "{row:?}"
        );
        assert!(
            (row[std].parse::<f64>().unwrap() - s).abs() < 1e-5,
            "{row:?}"
        );
        varied += usize::from(s > 1e-4);
    }
    assert!(
        varied >= 90,
        "dropout varies the passes ({varied} of 99 rows)"
    );
    // Without an autodiff device dropout is off: refused, not a std of 0.
    let run = TrainedRun::open(&run_dir, &plain, "used to predict").unwrap();
    let err = stream(&run, &input, &dir.join("mc-plain.csv"), mc).unwrap_err();
    assert!(err.to_string().contains("autodiff"), "{err}");
}
