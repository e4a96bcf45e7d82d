//! [`MiniLmEmbedder`]: all-MiniLM-L6-v2 on the CPU, as an [`Embedder`].
//!
//! Vectors match sentence-transformers' `all-MiniLM-L6-v2` (mean pooling,
//! unit length, 256-token limit). A query is one unpadded sequence, the
//! fastest path; a list of texts is sorted by length and run in batches, so
//! each batch pads little. The work runs on the embedder's own thread pool,
//! off the async runtime.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use super::Embedder;
use super::bert::{HIDDEN, MiniLmEncoder};
use super::locate::{FETCH_HINT, TOKENIZER_FILE, WEIGHTS_FILE};
use super::wordpiece::WordPieceTokenizer;
use crate::error::{Error, Result};

/// The model id vectors from [`MiniLmEmbedder`] are stored under.
pub const MINILM_MODEL_ID: &str = "all-MiniLM-L6-v2";

/// The length of every all-MiniLM-L6-v2 vector.
pub const MINILM_DIMENSIONS: usize = HIDDEN;

/// How a [`MiniLmEmbedder`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MiniLmOptions {
    /// Threads for the matrix products; `None` means the machine's available parallelism.
    pub threads: Option<NonZeroUsize>,
    /// The most texts run through the model at once (at least 1). Larger
    /// batches amortise the per-call cost; texts are sorted by length first,
    /// so a batch pads little.
    pub max_batch: usize,
}

impl Default for MiniLmOptions {
    fn default() -> Self {
        MiniLmOptions {
            threads: None,
            max_batch: 32,
        }
    }
}

impl MiniLmOptions {
    /// Runs on `threads` threads (0 means the available parallelism).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = NonZeroUsize::new(threads);
        self
    }

    /// Runs at most `max_batch` texts through the model at once.
    pub fn max_batch(mut self, max_batch: usize) -> Self {
        self.max_batch = max_batch.max(1);
        self
    }
}

/// all-MiniLM-L6-v2 on the CPU. Cloning is cheap and shares the model.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    engine: Arc<Engine>,
}

struct Engine {
    tokenizer: WordPieceTokenizer,
    encoder: MiniLmEncoder,
    pool: rayon::ThreadPool,
    max_batch: usize,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("threads", &self.threads())
            .field("max_batch", &self.engine.max_batch)
            .finish_non_exhaustive()
    }
}

impl MiniLmEmbedder {
    /// Loads `model.safetensors` and `tokenizer.json` from `dir` with default options.
    ///
    /// Reads ~90 MB and takes a fraction of a second; call it once and share
    /// the embedder. Fails with [`Error::ModelMissing`] if a file is absent
    /// (see [`find_local_model`](super::find_local_model)).
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_with(dir, MiniLmOptions::default())
    }

    /// Loads the model from `dir`, running as `options` say.
    pub fn load_with(dir: &Path, options: MiniLmOptions) -> Result<Self> {
        let weights_path = dir.join(WEIGHTS_FILE);
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        for path in [&weights_path, &tokenizer_path] {
            if !path.is_file() {
                return Err(Error::ModelMissing {
                    path: path.clone(),
                    help: FETCH_HINT.to_string(),
                });
            }
        }
        let tokenizer = WordPieceTokenizer::from_file(&tokenizer_path)?;
        let weights = std::fs::read(&weights_path)
            .map_err(|e| Error::io("reading the embedding model", &weights_path, e))?;
        let encoder = MiniLmEncoder::load(&weights).map_err(|reason| {
            Error::invalid(
                "embedding model",
                format!("{}: {reason}", weights_path.display()),
            )
        })?;
        drop(weights);
        if tokenizer.vocab_size() > encoder.vocab_size() {
            return Err(Error::invalid(
                "embedding model",
                format!(
                    "{} has {} tokens but the weights in {} cover {}: the files are from different models",
                    tokenizer_path.display(),
                    tokenizer.vocab_size(),
                    weights_path.display(),
                    encoder.vocab_size()
                ),
            ));
        }

        let threads = options
            .threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("helm-embed-{i}"))
            .build()
            .map_err(|e| Error::Internal(format!("starting the embedding threads: {e}")))?;
        Ok(MiniLmEmbedder {
            engine: Arc::new(Engine {
                tokenizer,
                encoder,
                pool,
                max_batch: options.max_batch.max(1),
            }),
        })
    }

    /// The tokenizer the model reads its input with.
    pub fn tokenizer(&self) -> &WordPieceTokenizer {
        &self.engine.tokenizer
    }

    /// How many threads the model runs on.
    pub fn threads(&self) -> usize {
        self.engine.pool.current_num_threads()
    }

    /// Embeds `texts` on the calling thread (plus the embedder's pool): one
    /// unit-length vector of [`MINILM_DIMENSIONS`] each, in order.
    ///
    /// For callers outside an async runtime, such as batch indexing jobs;
    /// [`Embedder::embed`] runs this off the runtime's threads.
    pub fn embed_blocking<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        self.engine.embed(texts)
    }
}

impl Engine {
    fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        let sequences: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t.as_ref()))
            .collect();
        // Similar lengths side by side, so each batch pads little.
        let mut order: Vec<usize> = (0..sequences.len()).collect();
        order.sort_by_key(|&i| sequences[i].len());

        let mut vectors = vec![Vec::new(); sequences.len()];
        self.pool.install(|| {
            for chunk in order.chunks(self.max_batch) {
                let batch: Vec<&[u32]> = chunk.iter().map(|&i| sequences[i].as_slice()).collect();
                let embedded = self
                    .encoder
                    .embed(&batch, self.tokenizer.pad_id())
                    .map_err(|e| {
                        Error::Internal(format!("embedding with {MINILM_MODEL_ID}: {e}"))
                    })?;
                for (&i, vector) in chunk.iter().zip(embedded) {
                    vectors[i] = vector;
                }
            }
            Ok::<_, Error>(())
        })?;
        Ok(vectors)
    }
}

#[async_trait]
impl Embedder for MiniLmEmbedder {
    fn model(&self) -> &str {
        MINILM_MODEL_ID
    }

    fn dimensions(&self) -> usize {
        MINILM_DIMENSIONS
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let engine = Arc::clone(&self.engine);
        let texts = texts.to_vec();
        // Milliseconds to seconds of CPU work: keep it off the async workers.
        tokio::task::spawn_blocking(move || engine.embed(&texts))
            .await
            .map_err(|e| Error::Internal(format!("the embedding task failed: {e}")))?
    }
}
