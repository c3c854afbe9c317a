//! On-disk cache of conformer coordinates: a dataset embedded once is not embedded again.
//!
//! The 3D embedding (ETKDG + UFF) is nearly all of featurization's cost; parsing and the
//! MAT features of a molecule take microseconds. So the cache holds what
//! [`conformer::coordinates`] returned for one input, and everything that featurizes
//! SMILES through [`crate::dataset::featurize_all_cached`] (MAT and Transformer-M training
//! on a table, prediction, `cargo xtask featurize`) reads it, whatever the model and its
//! feature settings (charge encoding, `reference_compat`), which cannot change the
//! coordinates and are recomputed from the molecule each time: a MAT run and a
//! Transformer-M run with the same seed share their conformers. (On QM9, Transformer-M
//! uses the dataset's own geometries: no conformers.)
//!
//! - Key: SHA-256 of [`crate::VERSION`], the [`ConformerOptions`] (method, seed, attempts,
//!   size limit, UFF on/off, as JSON) and the input SMILES exactly as given (trimmed). A
//!   change of any of them misses.
//! - Value: SHA-256 checksum of the payload, then the payload (method, atom count,
//!   coordinates as little-endian f64). An entry whose checksum does not match is treated
//!   as missing, recomputed and overwritten.
//! - Storage: one `redb` file (`conformers.redb`, an embedded single-file ACID store) in
//!   the cache folder. redb lets one process open a file at a time, so each read or write
//!   opens it briefly and retries while another run holds it: two runs featurizing the
//!   same CSV at once both succeed. A file that cannot be opened as a database (truncated,
//!   overwritten) is moved aside to `conformers.redb.corrupt` and started afresh.
//!
//! [`conformer::coordinates`]: crate::conformer::coordinates

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redb::{Database, DatabaseError, ReadableDatabase, TableDefinition};
use sha2::{Digest, Sha256};

use crate::conformer::{ConformerOptions, CoordinateMethod, Coordinates};

/// File name of the cache inside its folder.
pub const CACHE_FILE: &str = "conformers.redb";
/// How long a read or write waits for another process that holds the file.
pub const LOCK_WAIT: Duration = Duration::from_secs(60);

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("conformers");

/// What [`coordinates`](crate::conformer::coordinates) returned for one molecule: its
/// heavy-atom coordinates (Angstrom) and their method, or `None` when every coordinate
/// method failed.
pub type CachedCoordinates = Option<Coordinates>;

/// Errors of the cache.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The cache folder or file could not be created or read.
    #[error("conformer cache {path}: {reason}")]
    Io {
        /// The cache file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// Another process held the cache file for longer than [`LOCK_WAIT`].
    #[error("conformer cache {path}: still in use by another process after {seconds} s")]
    Busy {
        /// The cache file.
        path: PathBuf,
        /// Seconds waited.
        seconds: u64,
    },
}

/// The conformer cache in one folder.
#[derive(Debug, Clone)]
pub struct ConformerCache {
    path: PathBuf,
}

/// The default cache folder: `$MOLATTN_CACHE`, else `molattn` in the platform's cache
/// folder (`$XDG_CACHE_HOME`, else `~/.cache` on Linux; `~/Library/Caches` on macOS;
/// `dirs::cache_dir`); `None` when there is none.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MOLATTN_CACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|dir| dir.join("molattn"))
}

/// The cache root of a command: `given` (its `--cache`), else [`default_cache_dir`], else
/// `.cache/molattn` in the working folder.
pub fn cache_root(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(default_cache_dir)
        .unwrap_or_else(|| PathBuf::from(".cache/molattn"))
}

/// The cache key of `smiles` under `options` (see the module docs).
pub fn cache_key(smiles: &str, options: &ConformerOptions) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(crate::VERSION.as_bytes());
    h.update([0]);
    // ConformerOptions serialises to JSON infallibly (plain fields, no maps).
    h.update(serde_json::to_vec(options).unwrap_or_default());
    h.update([0]);
    h.update(smiles.trim().as_bytes());
    h.finalize().into()
}

fn method_code(m: CoordinateMethod) -> u8 {
    match m {
        CoordinateMethod::Embed3d => 1,
        CoordinateMethod::Layout2d => 2,
        CoordinateMethod::Topological => 3,
        CoordinateMethod::File => 4,
    }
}

/// Checksummed bytes of one entry.
fn encode(value: &CachedCoordinates) -> Vec<u8> {
    let mut payload = Vec::new();
    match value {
        None => payload.push(0),
        Some((xyz, method)) => {
            payload.push(method_code(*method));
            payload.extend_from_slice(&(xyz.len() as u32).to_le_bytes());
            for v in xyz.iter().flatten() {
                payload.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    let mut out = Sha256::digest(&payload).to_vec();
    out.extend_from_slice(&payload);
    out
}

/// The entry in `bytes`, or `None` when its checksum or layout is wrong (corrupt).
fn decode(bytes: &[u8]) -> Option<CachedCoordinates> {
    if bytes.len() < 33 {
        return None;
    }
    let (sum, payload) = bytes.split_at(32);
    if Sha256::digest(payload).as_slice() != sum {
        return None;
    }
    let method = match payload[0] {
        0 => return (payload.len() == 1).then_some(None),
        1 => CoordinateMethod::Embed3d,
        2 => CoordinateMethod::Layout2d,
        3 => CoordinateMethod::Topological,
        4 => CoordinateMethod::File,
        _ => return None,
    };
    let n = u32::from_le_bytes(payload.get(1..5)?.try_into().ok()?) as usize;
    let values = payload.get(5..)?;
    if values.len() != n * 24 {
        return None;
    }
    let xyz = values
        .chunks_exact(24)
        .map(|c| {
            let f = |k: usize| f64::from_le_bytes(c[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]));
            [f(0), f(1), f(2)]
        })
        .collect();
    Some(Some((xyz, method)))
}

/// What [`ConformerCache::get_many`] found.
#[derive(Debug, Default)]
pub struct Lookup {
    /// One entry per key: the cached value, or `None` on a miss.
    pub values: Vec<Option<CachedCoordinates>>,
    /// Entries present but corrupt (bad checksum): counted as misses.
    pub corrupt: usize,
    /// Where the cache file was moved because it was not a readable database (the
    /// lookup then started from an empty cache).
    pub moved_aside: Option<PathBuf>,
}

impl ConformerCache {
    /// The cache in `dir` (created if missing).
    ///
    /// # Errors
    /// [`CacheError::Io`] when the folder cannot be created.
    pub fn open(dir: &Path) -> Result<Self, CacheError> {
        std::fs::create_dir_all(dir).map_err(|e| CacheError::Io {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            path: dir.join(CACHE_FILE),
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: impl std::fmt::Display) -> CacheError {
        CacheError::Io {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// Opens the database, waiting (up to [`LOCK_WAIT`]) while another process holds it;
    /// a file that is not a readable database (corrupt, truncated, not redb) is moved aside
    /// once and replaced by an empty one. Every other error (permissions, disk, a newer
    /// file format) is returned and leaves the file alone.
    fn database(&self) -> Result<(Database, Option<PathBuf>), CacheError> {
        let start = Instant::now();
        let mut moved_aside = None;
        loop {
            let err = match Database::create(&self.path) {
                Ok(db) => return Ok((db, moved_aside)),
                Err(e) => e,
            };
            let busy = matches!(
                err,
                DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch
            ) || matches!(&err, DatabaseError::Storage(redb::StorageError::Io(e))
                if e.kind() == std::io::ErrorKind::WouldBlock);
            let corrupt = matches!(
                &err,
                DatabaseError::Storage(redb::StorageError::Corrupted(_))
            ) || matches!(&err, DatabaseError::Storage(redb::StorageError::Io(e))
                    if matches!(e.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData));
            if busy {
                if start.elapsed() > LOCK_WAIT {
                    return Err(CacheError::Busy {
                        path: self.path.clone(),
                        seconds: LOCK_WAIT.as_secs(),
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            } else if corrupt && moved_aside.is_none() {
                // Keep it for inspection and start afresh. Another process may have moved
                // it first: then there is nothing to move and the next open creates it.
                let aside = self.path.with_extension("redb.corrupt");
                match std::fs::rename(&self.path, &aside) {
                    Ok(()) => {}
                    Err(r) if r.kind() == std::io::ErrorKind::NotFound => {}
                    Err(r) => return Err(self.io(format!("{err}; moving it aside failed: {r}"))),
                }
                moved_aside = Some(aside);
            } else {
                return Err(self.io(err));
            }
        }
    }

    /// Looks up `keys` in one read transaction.
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be opened or read.
    pub fn get_many(&self, keys: &[[u8; 32]]) -> Result<Lookup, CacheError> {
        let (db, moved_aside) = self.database()?;
        let mut lookup = Lookup {
            values: Vec::with_capacity(keys.len()),
            corrupt: 0,
            moved_aside,
        };
        let txn = db.begin_read().map_err(|e| self.io(e))?;
        let table = match txn.open_table(TABLE) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => {
                lookup.values.resize(keys.len(), None);
                return Ok(lookup);
            }
            Err(e) => return Err(self.io(e)),
        };
        for key in keys {
            let found = table.get(key.as_slice()).map_err(|e| self.io(e))?;
            lookup.values.push(match found {
                None => None,
                Some(bytes) => match decode(bytes.value()) {
                    Some(v) => Some(v),
                    None => {
                        lookup.corrupt += 1;
                        None
                    }
                },
            });
        }
        Ok(lookup)
    }

    /// Stores `entries` in one write transaction (atomic: all or none).
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be opened or written.
    pub fn put_many(&self, entries: &[([u8; 32], &CachedCoordinates)]) -> Result<(), CacheError> {
        if entries.is_empty() {
            return Ok(());
        }
        let (db, _) = self.database()?;
        let txn = db.begin_write().map_err(|e| self.io(e))?;
        {
            let mut table = txn.open_table(TABLE).map_err(|e| self.io(e))?;
            for (key, value) in entries {
                table
                    .insert(key.as_slice(), encode(value).as_slice())
                    .map_err(|e| self.io(e))?;
            }
        }
        txn.commit().map_err(|e| self.io(e))
    }

    /// Overwrites the stored bytes of `key` (tests: simulate a corrupt entry).
    #[doc(hidden)]
    pub fn put_raw(&self, key: [u8; 32], bytes: &[u8]) -> Result<(), CacheError> {
        let (db, _) = self.database()?;
        let txn = db.begin_write().map_err(|e| self.io(e))?;
        {
            let mut table = txn.open_table(TABLE).map_err(|e| self.io(e))?;
            table
                .insert(key.as_slice(), bytes)
                .map_err(|e| self.io(e))?;
        }
        txn.commit().map_err(|e| self.io(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("molattn-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn entries_round_trip_and_corruption_is_detected() {
        let xyz = vec![[0.0, 1.5, -2.25], [1e-3, 7.0, 3.0]];
        let value: CachedCoordinates = Some((xyz.clone(), CoordinateMethod::Embed3d));
        let bytes = encode(&value);
        assert_eq!(decode(&bytes), Some(value.clone()));
        assert_eq!(decode(&encode(&None)), Some(None));
        let mut flipped = bytes.clone();
        flipped[40] ^= 1;
        assert_eq!(decode(&flipped), None);
        assert_eq!(decode(&bytes[..bytes.len() - 8]), None);
    }

    #[test]
    fn keys_change_with_every_setting_and_the_input() {
        let o = ConformerOptions::default();
        let k = cache_key("CCO", &o);
        assert_eq!(k, cache_key(" CCO ", &o));
        assert_ne!(k, cache_key("OCC", &o));
        for changed in [
            ConformerOptions {
                seed: 7,
                ..o.clone()
            },
            ConformerOptions {
                uff_optimize: false,
                ..o.clone()
            },
            ConformerOptions {
                method: CoordinateMethod::Layout2d,
                ..o.clone()
            },
            ConformerOptions {
                max_embed_attempts: 3,
                ..o.clone()
            },
            ConformerOptions {
                max_heavy_atoms_3d: 10,
                ..o.clone()
            },
        ] {
            assert_ne!(k, cache_key("CCO", &changed), "{changed:?}");
        }
    }

    #[test]
    fn store_lookup_corrupt_entry_and_corrupt_file() {
        let dir = temp_dir("store");
        let cache = ConformerCache::open(&dir).unwrap();
        let o = ConformerOptions::default();
        let (a, b) = (cache_key("CCO", &o), cache_key("CC", &o));
        let va: CachedCoordinates = Some((vec![[1.0, 2.0, 3.0]], CoordinateMethod::Layout2d));
        assert_eq!(cache.get_many(&[a, b]).unwrap().values, vec![None, None]);
        cache.put_many(&[(a, &va), (b, &None)]).unwrap();
        let got = cache.get_many(&[a, b]).unwrap();
        assert_eq!(got.values, vec![Some(va.clone()), Some(None)]);
        // A corrupt entry reads as a miss and is counted.
        let mut bad = encode(&va);
        bad[35] ^= 0xff;
        cache.put_raw(a, &bad).unwrap();
        let got = cache.get_many(&[a, b]).unwrap();
        assert_eq!((got.values[0].clone(), got.corrupt), (None, 1));
        // A file that is not a database is moved aside and the cache starts empty.
        std::fs::write(cache.path(), b"not a database").unwrap();
        let got = cache.get_many(&[a]).unwrap();
        assert_eq!(got.values, vec![None]);
        assert!(dir.join("conformers.redb.corrupt").exists());
        // Issue #37 item 10: the lookup says so (the report said "corrupt: 0").
        assert_eq!(got.moved_aside, Some(dir.join("conformers.redb.corrupt")));
        assert_eq!(cache.get_many(&[a]).unwrap().moved_aside, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_both_succeed() {
        let dir = temp_dir("concurrent");
        let o = ConformerOptions::default();
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let dir = dir.clone();
                let o = o.clone();
                std::thread::spawn(move || {
                    let cache = ConformerCache::open(&dir).unwrap();
                    for i in 0..20 {
                        let key = cache_key(&format!("C{}", "C".repeat(i + 20 * t)), &o);
                        let v: CachedCoordinates =
                            Some((vec![[i as f64, t as f64, 0.0]], CoordinateMethod::Embed3d));
                        cache.put_many(&[(key, &v)]).unwrap();
                        assert_eq!(cache.get_many(&[key]).unwrap().values, vec![Some(v)]);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
