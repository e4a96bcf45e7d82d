//! The `Embedder` port: turns texts into vectors for meaning-based recall.
//!
//! Recall always works by words (FTS5/BM25); with an embedder it also works
//! by meaning, fused by reciprocal rank. Vectors from different models never
//! mix: each is stored under the model's id.

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::provider::Provider;

/// Something that embeds texts.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// A stable id of the model and its settings, such as `all-MiniLM-L6-v2`.
    fn model(&self) -> &str;

    /// The length of every vector.
    fn dimensions(&self) -> usize;

    /// Embeds `texts`, one L2-normalised vector each, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// An embedder backed by a model provider's embeddings endpoint.
pub struct ProviderEmbedder {
    provider: Arc<dyn Provider>,
    /// The provider's model name, sent with each request.
    provider_model: String,
    /// `provider/model`, the id vectors are stored under.
    model: String,
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
            model: format!("{provider_name}/{model}"),
            dimensions,
        }
    }
}

#[async_trait]
impl Embedder for ProviderEmbedder {
    fn model(&self) -> &str {
        &self.model
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
