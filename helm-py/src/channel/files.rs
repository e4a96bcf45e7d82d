//! `Files` and `AsyncFiles`: the files of a channel's workspace
//! (`channel.files`), read, written, noted and listed by the agent's paths.

use std::sync::Arc;

use helm_core::ErrorKind;
use helm_core::NewNote;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use super::ChannelCore;
use super::twins::twins;
use crate::errors::{failure, to_py};
use crate::records::FileEntry;
use crate::runtime::{awaitable_py, blocking};

/// A file's new contents: `str` (written as UTF-8) or `bytes`.
fn contents(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = value.cast::<PyString>() {
        Ok(text.to_str()?.as_bytes().to_vec())
    } else if let Ok(bytes) = value.cast::<PyBytes>() {
        Ok(bytes.as_bytes().to_vec())
    } else {
        Err(to_py(failure(
            ErrorKind::Invalid,
            "invalid",
            "a file's contents are str or bytes",
        )))
    }
}

/// The files of a channel's workspace (blocking). Paths are the agent's:
/// `/workspace/plan.md` or `plan.md`; nothing outside it is reachable.
#[pyclass(frozen, module = "onehelm")]
pub struct Files {
    pub(super) core: Arc<ChannelCore>,
}

/// The files of a channel's workspace (asyncio).
#[pyclass(frozen, module = "onehelm")]
pub struct AsyncFiles {
    pub(super) core: Arc<ChannelCore>,
}

twins! {
    Files / AsyncFiles;

    /// A text file, whole.
    async
    /// A text file, whole.
    fn read(&self, path: String) -> String {
        let core = self.core.clone();
        async move { core.backend.read_text(&core.key, &path).await }
    }

    /// Writes a file (`str` or `bytes`), replacing it; parents are made.
    /// With `create=True` only a new file is made: one already there raises
    /// `ConflictError` and is left as it was.
    async
    /// Writes a file (`str` or `bytes`), replacing it, or with
    /// `create=True` only making a new one (see `Files.write`).
    #[pyo3(signature = (path, content, *, create=false))]
    fn write(&self, path: String, content: &Bound<'_, PyAny>, create: bool) -> FileEntry {
        let bytes = contents(content)?;
        let core = self.core.clone();
        async move {
            core.backend
                .write_file(&core.key, &path, bytes, create)
                .await
                .map(FileEntry::from)
        }
    }

    /// Saves a quick note as a new Markdown file in `/workspace/notes`,
    /// named `<day>-<title>.md` (`-2`, `-3`, … when taken; no file is ever
    /// replaced), and returns its entry.
    async
    /// Saves a quick note (see `Files.note`).
    #[pyo3(signature = (text, *, title=None))]
    fn note(&self, text: String, title: Option<String>) -> FileEntry {
        let core = self.core.clone();
        async move {
            let note = NewNote { text, title };
            core.backend
                .save_note(&core.key, note)
                .await
                .map(FileEntry::from)
        }
    }

    /// A directory's entries, by name (or a file's own entry).
    async
    /// A directory's entries, by name.
    #[pyo3(signature = (path="/workspace"))]
    fn list(&self, path: &str) -> Vec<FileEntry> {
        let (core, path) = (self.core.clone(), path.to_string());
        async move {
            let entries = core.backend.list_files(&core.key, &path).await?;
            Ok(entries.into_iter().map(FileEntry::from).collect::<Vec<_>>())
        }
    }
}

// A file's bytes: the blocking twin makes `bytes` with the GIL it holds,
// the asyncio one takes the GIL once they are read.

#[pymethods]
impl Files {
    /// A file's bytes, whole.
    fn read_bytes<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyBytes>> {
        let core = self.core.clone();
        let bytes = blocking(py, async move {
            core.backend.read_bytes(&core.key, &path).await
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
}

#[pymethods]
impl AsyncFiles {
    /// A file's bytes, whole.
    fn read_bytes<'py>(&self, py: Python<'py>, path: String) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core.clone();
        awaitable_py(py, async move {
            let bytes = core
                .backend
                .read_bytes(&core.key, &path)
                .await
                .map_err(to_py)?;
            Python::attach(|py| Ok(PyBytes::new(py, &bytes).unbind()))
        })
    }
}
