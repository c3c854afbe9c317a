//! Files written atomically: a temporary file in the target's folder, synced to disk, then
//! renamed over the target, so a crash or `kill -9` leaves the old file or the new one,
//! never a torn one, and two writers never share a temporary file. The file gets the
//! permissions `std::fs::write` gives (0666 less the umask on Unix; `tempfile`'s own
//! default is 0600). The conformer datasets here and every run file in `train` go through it.

use std::io::Write;
use std::path::Path;

use tempfile::NamedTempFile;

/// A temporary file in `dir` with `std::fs::write`'s permissions, deleted unless persisted.
///
/// # Errors
/// The folder cannot hold a new file.
pub fn temp_file_in(dir: &Path) -> std::io::Result<NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Writes `bytes` to `path` atomically (see the module documentation).
///
/// # Errors
/// The file cannot be written, synced or renamed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = temp_file_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_with_fs_write_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, b"old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let plain = dir.path().join("plain");
            std::fs::write(&plain, b"x").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), mode(&plain));
        }
        // Nothing left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
