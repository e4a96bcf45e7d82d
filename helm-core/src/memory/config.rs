//! Memory's configuration and the recall mode it leads to.
//!
//! Recall works by words always and by meaning when an embedder is loaded.
//! Which of the two a workspace has must never be a surprise: the mode in
//! use ([`RecallMode`]) says which model, or why words only, and frontends
//! show it (status, a warning at start). `embedder = "required"` makes a
//! missing model an error at start instead of a quiet downgrade.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::embed::{self, Embedder};
use crate::error::{Error, Result};

/// Whether recall by meaning is required, used when possible, or off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderSetting {
    /// Refuse to start without the embedding model.
    Required,
    /// Use the model when it is there; otherwise recall by words, and say so.
    #[default]
    Auto,
    /// Recall by words only.
    Off,
}

impl std::str::FromStr for EmbedderSetting {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "required" => Ok(EmbedderSetting::Required),
            "auto" => Ok(EmbedderSetting::Auto),
            "off" => Ok(EmbedderSetting::Off),
            other => Err(Error::invalid(
                "embedder setting",
                format!("{other:?} is not one of required, auto, off"),
            )),
        }
    }
}

impl std::fmt::Display for EmbedderSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmbedderSetting::Required => "required",
            EmbedderSetting::Auto => "auto",
            EmbedderSetting::Off => "off",
        })
    }
}

/// The `memory` section of the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Whether the embedding model is required, used when found, or off.
    pub embedder: EmbedderSetting,
    /// How many MiB of searched channels' vectors recall keeps in memory;
    /// past it the least recently searched channels' are dropped (and read
    /// from the store again when next searched).
    pub vector_cache_mb: u64,
    /// How many MiB of an SQLite database each store reader maps into
    /// memory, which makes recall's reads of items faster; 0 maps none.
    /// Mapped pages count in resident memory, up to this much per reader.
    pub read_map_mb: u64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            embedder: EmbedderSetting::default(),
            vector_cache_mb: (super::vector_cache::DEFAULT_VECTOR_CACHE_BYTES >> 20) as u64,
            read_map_mb: 0,
        }
    }
}

impl MemoryConfig {
    /// The vector cache's budget in bytes.
    pub fn vector_cache_bytes(&self) -> usize {
        usize::try_from(self.vector_cache_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
    }

    /// The bytes of an SQLite database each store reader maps.
    pub fn read_map_bytes(&self) -> u64 {
        self.read_map_mb.saturating_mul(1 << 20)
    }
}

/// Why recall works by words only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WordsOnlyReason {
    /// The configuration turns recall by meaning off.
    TurnedOff,
    /// The local embedding model's files were not found.
    ModelNotFound,
    /// This build has no local embedder.
    NotBuilt,
    /// No embedder was given to the workspace.
    NoEmbedder,
}

impl WordsOnlyReason {
    /// The reason, for people.
    pub fn describe(self) -> &'static str {
        match self {
            WordsOnlyReason::TurnedOff => "recall by meaning is turned off in the configuration",
            WordsOnlyReason::ModelNotFound => {
                "the local embedding model (all-MiniLM-L6-v2) was not found"
            }
            WordsOnlyReason::NotBuilt => "this build of Helm has no local embedder",
            WordsOnlyReason::NoEmbedder => "no embedder was configured",
        }
    }
}

/// How recall works in this workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum RecallMode {
    /// By words and by meaning, with this embedding model.
    Meaning {
        /// The embedder's model id.
        model: String,
    },
    /// By words only.
    Words {
        /// Why.
        reason: WordsOnlyReason,
    },
}

impl RecallMode {
    /// The mode for an embedder, or for its absence and why.
    pub fn of(embedder: Option<&Arc<dyn Embedder>>, absent: Option<WordsOnlyReason>) -> Self {
        match embedder {
            Some(e) => RecallMode::Meaning {
                model: e.model().to_string(),
            },
            None => RecallMode::Words {
                reason: absent.unwrap_or(WordsOnlyReason::NoEmbedder),
            },
        }
    }

    /// One line for people: "by meaning (all-MiniLM-L6-v2) and words", or
    /// "by words only: <why>".
    pub fn describe(&self) -> String {
        match self {
            RecallMode::Meaning { model } => format!("by meaning ({model}) and words"),
            RecallMode::Words { reason } => format!("by words only: {}", reason.describe()),
        }
    }
}

/// A loaded embedder, or why there is none.
pub type LoadedEmbedder = (Option<Arc<dyn Embedder>>, Option<WordsOnlyReason>);

/// Loads the local embedder as `config` says: `None` with the reason when
/// recall is to work by words, an error when the model is required and
/// missing (or present and unreadable).
pub fn load_local_embedder(data_dir: &Path, config: &MemoryConfig) -> Result<LoadedEmbedder> {
    if config.embedder == EmbedderSetting::Off {
        return Ok((None, Some(WordsOnlyReason::TurnedOff)));
    }
    let loaded = embed::local_embedder(data_dir)?;
    match loaded {
        Some(e) => Ok((Some(e), None)),
        None => {
            let reason = if cfg!(feature = "local-embed") {
                WordsOnlyReason::ModelNotFound
            } else {
                WordsOnlyReason::NotBuilt
            };
            if config.embedder == EmbedderSetting::Required {
                return Err(required_but_missing(data_dir, reason));
            }
            Ok((None, Some(reason)))
        }
    }
}

/// The error of a required embedder that is not there.
pub fn required_but_missing(data_dir: &Path, reason: WordsOnlyReason) -> Error {
    Error::ModelMissing {
        path: data_dir
            .join("models")
            .join(embed::MINILM_DIR_NAME)
            .join(embed::WEIGHTS_FILE),
        help: format!(
            "the configuration requires recall by meaning, but {}; {}",
            reason.describe(),
            embed::FETCH_HINT
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_from_text_and_toml_names() -> Result<()> {
        assert_eq!(
            "Required".parse::<EmbedderSetting>()?,
            EmbedderSetting::Required
        );
        assert_eq!(" off ".parse::<EmbedderSetting>()?, EmbedderSetting::Off);
        let err = "sometimes".parse::<EmbedderSetting>().err();
        assert!(
            matches!(&err, Some(Error::Invalid { reason, .. }) if reason.contains("required, auto, off")),
            "{err:?}"
        );
        let config: MemoryConfig = serde_json::from_str(r#"{"embedder": "required"}"#)
            .map_err(|e| Error::Internal(e.to_string()))?;
        assert_eq!(config.embedder, EmbedderSetting::Required);
        Ok(())
    }

    #[test]
    fn turned_off_loads_nothing_and_says_why() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| Error::Internal(e.to_string()))?;
        let (embedder, reason) = load_local_embedder(
            tmp.path(),
            &MemoryConfig {
                embedder: EmbedderSetting::Off,
                ..MemoryConfig::default()
            },
        )?;
        assert!(embedder.is_none());
        assert_eq!(
            RecallMode::of(None, reason).describe(),
            "by words only: recall by meaning is turned off in the configuration"
        );
        Ok(())
    }
}
