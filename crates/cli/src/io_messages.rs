//! What went wrong when an output cannot be written, in a user's terms. The operating
//! system's words name the failed call's error, not what the user asked for: writing
//! `/proc/version` fails with "entity not found" because the temporary file beside it cannot
//! be created, and a path under a regular file "does not exist" although every name in it
//! does. These say which folder, what it is, and why.

use std::io;
use std::path::Path;

/// Why the folder `dir` of an output cannot hold it, when it is not a usable folder: it
/// does not exist, or it is something else (None when it is a folder).
pub(crate) fn unusable_folder(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => None,
        Ok(_) => Some(format!(
            "{} is a file, not a folder, so nothing can be created under it",
            dir.display()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Some(format!("its folder {} does not exist", dir.display()))
        }
        Err(e) => Some(format!(
            "its folder {} cannot be used: {}",
            dir.display(),
            error_words(&e)
        )),
    }
}

/// Why a new file (the output, or the temporary file it is written to first) cannot be
/// created in the existing folder `dir`.
pub(crate) fn cannot_create_in(dir: &Path, e: &io::Error) -> String {
    let why = match e.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::ReadOnlyFilesystem => "the file system is read-only".to_string(),
        io::ErrorKind::StorageFull => "no space left on the device".to_string(),
        io::ErrorKind::QuotaExceeded => "the disk quota is exceeded".to_string(),
        // In an existing folder, "not found" means the folder takes no new files (/proc, /sys).
        io::ErrorKind::NotFound => {
            "its file system does not allow creating files there (a system folder such as /proc?)"
                .to_string()
        }
        _ => error_words(e),
    };
    format!("cannot create a file in {}: {why}", folder_name(dir))
}

/// A folder for a message (`.` is the current folder).
fn folder_name(dir: &Path) -> String {
    if dir == Path::new(".") {
        "the current folder".to_string()
    } else {
        dir.display().to_string()
    }
}

/// The operating system's message without the Rust-style " (os error N)" suffix.
fn error_words(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_that_cannot_hold_an_output_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.trace");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(unusable_folder(dir.path()), None);
        let not_folder = unusable_folder(&file).unwrap();
        assert!(
            not_folder.contains("is a file, not a folder"),
            "{not_folder}"
        );
        let missing = unusable_folder(&dir.path().join("nope")).unwrap();
        assert!(missing.contains("does not exist"), "{missing}");
    }

    #[test]
    fn creation_failures_name_the_folder_and_the_reason() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let m = cannot_create_in(Path::new("/proc"), &e);
        assert!(m.starts_with("cannot create a file in /proc: "), "{m}");
        assert!(m.contains("does not allow creating files"), "{m}");
        assert!(!m.contains("entity not found"), "{m}");
        let e = io::Error::from_raw_os_error(libc::EACCES);
        let m = cannot_create_in(Path::new("."), &e);
        assert_eq!(
            m,
            "cannot create a file in the current folder: permission denied"
        );
    }
}
