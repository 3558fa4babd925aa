//! Checking a command's `--out` directory before any work starts.

use std::path::{Path, PathBuf};

/// The output directory cannot be created or written to.
#[derive(Debug, thiserror::Error)]
#[error("cannot write results to {}", dir.display())]
pub struct OutDirError {
    /// The directory.
    pub dir: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Creates `dir` (and its parents) if needed and checks that a file can be created in
/// it, by creating and removing one. Commands that write results call this before
/// any work: a run of minutes or hours must not fail only when it saves its results.
pub fn ensure_writable_dir(dir: &Path) -> Result<(), OutDirError> {
    let fail = |source| OutDirError { dir: dir.to_path_buf(), source };
    if dir.exists() && !dir.is_dir() {
        return Err(fail(std::io::Error::new(std::io::ErrorKind::NotADirectory, "it exists and is not a directory")));
    }
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".bauxite-write-check-{}", std::process::id()));
    std::fs::File::create_new(&probe).map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_is_created_and_left_empty() {
        let base = std::env::temp_dir().join(format!("bx-outdir-{}", std::process::id()));
        let dir = base.join("a/b");
        ensure_writable_dir(&dir).unwrap();
        assert!(dir.is_dir());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the probe file is removed");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_file_or_an_unwritable_place_is_refused() {
        let file = std::env::temp_dir().join(format!("bx-outdir-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let e = ensure_writable_dir(&file).unwrap_err();
        assert!(e.to_string().contains(&*file.to_string_lossy()), "{e}");
        std::fs::remove_file(&file).unwrap();
        // sysfs refuses new files even to root.
        assert!(ensure_writable_dir(Path::new("/sys/kernel")).is_err());
        assert!(ensure_writable_dir(Path::new("/proc/self/bauxite")).is_err());
    }
}
