//! The `Embedder` port: turns texts into vectors for meaning-based recall.
//!
//! Recall always works by words (FTS5/BM25); with an embedder it also works
//! by meaning, fused by reciprocal rank. Vectors from different models never
//! mix: each is stored under the model's id.
//!
//! Two embedders: [`ProviderEmbedder`] asks a model provider's embeddings
//! endpoint; with the `local-embed` feature, `MiniLmEmbedder` runs
//! all-MiniLM-L6-v2 on the CPU from files on disk, found by
//! [`find_local_model`] and put there by `scripts/fetch-embedding-model`.
//! Nothing is ever downloaded at run time.

#[cfg(feature = "local-embed")]
mod bert;
#[cfg(feature = "local-embed")]
mod few_rows;
#[cfg(feature = "local-embed")]
mod kernels;
mod locate;
#[cfg(feature = "local-embed")]
mod minilm;
#[cfg(feature = "local-embed")]
mod safetensors_file;
#[cfg(feature = "local-embed")]
pub mod wordpiece;

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::provider::Provider;

pub use locate::{
    FETCH_HINT, MINILM_DIR_NAME, MODEL_DIR_ENV, TOKENIZER_FILE, WEIGHTS_FILE, find_local_model,
    holds_model,
};
#[cfg(feature = "local-embed")]
pub use minilm::{MINILM_DIMENSIONS, MINILM_MODEL_ID, MiniLmEmbedder, MiniLmOptions};
#[cfg(feature = "local-embed")]
pub use wordpiece::WordPieceTokenizer;

/// Something that embeds texts.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// A stable id of the model and its settings, such as `all-MiniLM-L6-v2`.
    fn model(&self) -> &str;

    /// The length of every vector.
    fn dimensions(&self) -> usize;

    /// Embeds `texts`, one L2-normalised vector each, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;

    /// Embeds one search query, L2-normalised. An embedder may compute a
    /// query's vector more cheaply than an item's, which is stored and
    /// compared for as long as the item lives (the local one reads
    /// bfloat16 weights); by default it is [`embed`](Self::embed) of the
    /// one text.
    async fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        self.embed(&[text.to_string()])
            .await?
            .pop()
            .ok_or_else(|| crate::error::Error::Internal("the embedder gave no vector".into()))
    }
}

/// An embedder backed by a model provider's embeddings endpoint.
pub struct ProviderEmbedder {
    provider: Arc<dyn Provider>,
    /// The model's name at the provider.
    provider_model: String,
    /// `provider/model`, what vectors are stored under.
    model_id: String,
    dimensions: usize,
}

impl ProviderEmbedder {
    /// Embeds with `model` of `provider`; `dimensions` is the model's vector length.
    pub fn new(
        provider: Arc<dyn Provider>,
        provider_name: &str,
        model: &str,
        dimensions: usize,
    ) -> Self {
        ProviderEmbedder {
            provider,
            provider_model: model.to_string(),
            model_id: format!("{provider_name}/{model}"),
            dimensions,
        }
    }
}

#[async_trait]
impl Embedder for ProviderEmbedder {
    fn model(&self) -> &str {
        &self.model_id
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut vectors = self.provider.embed(&self.provider_model, texts).await?;
        for v in &mut vectors {
            normalize(v);
        }
        Ok(vectors)
    }
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// The local embedder for a data directory, when this build has one and its
/// model files are where [`find_local_model`] looks; `None` otherwise (recall
/// then works by words). A model that is present but cannot be loaded is an
/// error rather than a silent downgrade.
pub fn local_embedder(
    data_dir: &std::path::Path,
) -> crate::error::Result<Option<std::sync::Arc<dyn Embedder>>> {
    #[cfg(feature = "local-embed")]
    {
        if let Some(dir) = find_local_model(data_dir) {
            let embedder = MiniLmEmbedder::open(&dir)?;
            return Ok(Some(std::sync::Arc::new(embedder)));
        }
        tracing::info!("no local embedding model found; recall works by words only ({FETCH_HINT})");
        Ok(None)
    }
    #[cfg(not(feature = "local-embed"))]
    {
        let _ = data_dir;
        Ok(None)
    }
}
