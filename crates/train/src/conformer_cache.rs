//! The conformer cache as training, prediction and `cargo xtask featurize` use it:
//! opened from a folder, reported on stderr, never fatal (a cache that cannot be used
//! only costs the embedding time, so the run goes on without it and says why).

use std::path::Path;

use mol_featurize::{ConformerCache, FeaturizeReport};

/// Opens the conformer cache in `dir`; `None` (with a message on stderr) when `dir` is
/// `None` or the folder cannot be created.
pub fn open_conformer_cache(dir: Option<&Path>) -> Option<ConformerCache> {
    let dir = dir?;
    match ConformerCache::open(dir) {
        Ok(cache) => Some(cache),
        Err(e) => {
            eprintln!("conformer cache not used: {e}");
            None
        }
    }
}

/// Prints what the cache did during a featurization (one line; nothing without a cache).
pub fn print_cache_report(report: &FeaturizeReport) {
    let Some(c) = &report.cache else { return };
    match &c.error {
        Some(e) => eprintln!("conformer cache not used ({}): {e}", c.path),
        None => eprintln!("{}", cache_line(c)),
    }
}

/// The line [`print_cache_report`] prints for a cache that was used.
pub fn cache_line(c: &mol_featurize::dataset::CacheReport) -> String {
    let mut line = format!(
        "conformer cache {}: {} molecules from the cache, {} embedded and stored",
        c.path, c.hits, c.misses
    );
    if c.corrupt > 0 {
        line.push_str(&format!(" ({} corrupt entries recomputed)", c.corrupt));
    }
    if let Some(aside) = &c.moved_aside {
        line.push_str(&format!(
            "; the cache file was not a readable database: moved to {aside}, started empty"
        ));
    }
    line
}

/// Prints a featurization's outcome: the cache line, molecules featurized of the total in
/// `seconds` (and per second), where the coordinates came from, and each skipped row with
/// its reason.
pub fn print_featurize_report(report: &FeaturizeReport, seconds: f64) {
    print_cache_report(report);
    println!(
        "featurized {} of {} molecules in {seconds:.1}s ({:.1} mol/s); skipped {}",
        report.n_ok,
        report.n_total,
        report.n_total as f64 / seconds,
        report.n_skipped
    );
    for (method, count) in &report.coordinate_sources {
        println!("  coordinates from {method:?}: {count}");
    }
    for s in &report.skipped {
        println!("  skipped row {}: {}", s.row, s.reason);
    }
}
