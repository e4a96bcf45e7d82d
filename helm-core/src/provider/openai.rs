//! Placeholder until the adapter lands: refuses every request.

use async_trait::async_trait;

use super::{ChatRequest, EventStream, Provider, ProviderConfig};
use crate::error::{Error, ProviderFailure, Result};

/// The adapter (not implemented yet).
pub struct OpenAiCompatible {
    name: String,
}

impl OpenAiCompatible {
    /// Builds the adapter for `config`.
    pub fn new(config: &ProviderConfig) -> Result<Self> {
        config.validate()?;
        Ok(OpenAiCompatible {
            name: config.name.clone(),
        })
    }
}

#[async_trait]
impl Provider for OpenAiCompatible {
    async fn stream(&self, _request: ChatRequest) -> Result<EventStream> {
        Err(Error::provider(
            &self.name,
            ProviderFailure::Unsupported,
            "adapter not built yet",
        ))
    }
}
