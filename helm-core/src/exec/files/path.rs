//! Agent-visible paths: `/workspace/...` or relative to it, checked and
//! normalised before anything touches the disk.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};
use crate::exec::computer::AGENT_ROOT;

/// A path as a file tool received it, resolved against the tool's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolPath {
    /// Relative to the root (empty for the root itself) when confined; may be
    /// absolute for a host computer.
    pub(crate) rel: PathBuf,
    /// What the caller sees: `/workspace/a/b`, or the host path.
    pub(crate) visible: String,
}

impl ToolPath {
    /// Whether this names the root itself.
    pub(crate) fn is_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }

    /// The last component, if this is not the root.
    pub(crate) fn file_name(&self) -> Option<&std::ffi::OsStr> {
        self.rel.file_name()
    }

    /// The child `name` of this path.
    pub(crate) fn child(&self, name: &str) -> ToolPath {
        ToolPath {
            rel: self.rel.join(name),
            visible: if self.visible.ends_with('/') {
                format!("{}{name}", self.visible)
            } else {
                format!("{}/{name}", self.visible)
            },
        }
    }
}

/// Resolves `input` inside the workspace: `/workspace/x`, `x` and `./x` name
/// the same file; `..` may not climb above `/workspace`, and no other
/// absolute path is accepted.
pub(crate) fn confined(input: &str) -> Result<ToolPath> {
    check_text(input)?;
    let path = Path::new(input);
    let inside = if path.is_absolute() {
        match path.strip_prefix(AGENT_ROOT) {
            Ok(rest) => rest,
            Err(_) => return Err(escapes(input)),
        }
    } else {
        path
    };
    let mut rel = PathBuf::new();
    for component in inside.components() {
        match component {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !rel.pop() {
                    return Err(escapes(input));
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(escapes(input)),
        }
    }
    let visible = if rel.as_os_str().is_empty() {
        AGENT_ROOT.to_string()
    } else {
        format!("{AGENT_ROOT}/{}", rel.display())
    };
    Ok(ToolPath { rel, visible })
}

/// Resolves `input` on a host computer: absolute paths as they are, relative
/// ones against `base`.
pub(crate) fn host(base: &Path, input: &str) -> Result<ToolPath> {
    check_text(input)?;
    let path = Path::new(input);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    // Relative to `base` when it lies under it, so that the root check and
    // visible names read naturally.
    let rel = match full.strip_prefix(base) {
        Ok(inside) => inside.to_path_buf(),
        Err(_) => full.clone(),
    };
    let rel = if rel.as_os_str() == "." {
        PathBuf::new()
    } else {
        rel
    };
    Ok(ToolPath {
        visible: full.display().to_string(),
        rel,
    })
}

fn check_text(input: &str) -> Result<()> {
    if input.is_empty() {
        return Err(Error::invalid(
            "path",
            "it is empty; use /workspace or a path relative to it",
        ));
    }
    if input.contains('\0') {
        return Err(Error::invalid(
            "path",
            format!("{input:?} contains a NUL byte"),
        ));
    }
    Ok(())
}

/// The refusal for a path that leaves the workspace: forbidden, whatever
/// the state of the disk, so frontends answer it like any lack of authority.
pub(crate) fn escapes(input: &str) -> Error {
    Error::Forbidden(format!("path escapes {AGENT_ROOT}: {input}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_paths_normalise() -> Result<()> {
        for (input, rel, visible) in [
            ("/workspace", "", "/workspace"),
            ("/workspace/", "", "/workspace"),
            ("a/b", "a/b", "/workspace/a/b"),
            ("./a/../b", "b", "/workspace/b"),
            ("/workspace/a/./b/..", "a", "/workspace/a"),
            (".", "", "/workspace"),
        ] {
            let p = confined(input)?;
            assert_eq!(p.rel, PathBuf::from(rel), "{input}");
            assert_eq!(p.visible, visible, "{input}");
        }
        Ok(())
    }

    #[test]
    fn escapes_are_refused_with_the_path_named() {
        for input in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "/workspaces/x",
            "/workspace/../etc",
        ] {
            let err = confined(input)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert_eq!(
                err,
                format!("not allowed: path escapes /workspace: {input}")
            );
        }
        assert!(matches!(confined(""), Err(Error::Invalid { .. })));
        assert!(matches!(confined("a\0b"), Err(Error::Invalid { .. })));
    }

    #[test]
    fn host_paths_are_taken_as_given() -> Result<()> {
        let p = host(Path::new("/srv/main"), "notes.txt")?;
        assert_eq!(p.rel, PathBuf::from("notes.txt"));
        assert_eq!(p.visible, "/srv/main/notes.txt");
        let p = host(Path::new("/srv/main"), "/etc/hosts")?;
        assert_eq!(p.rel, PathBuf::from("/etc/hosts"));
        Ok(())
    }
}
