//! [`MiniLmEmbedder`]: all-MiniLM-L6-v2 on the CPU, as an [`Embedder`].
//!
//! Vectors match sentence-transformers' `all-MiniLM-L6-v2` (mean pooling,
//! unit length) for texts within its 256-token limit; a longer text is read
//! in overlapping windows and gets their mean, where sentence-transformers
//! would cut it. Items are a list of texts, sorted by
//! length and run in batches (so each batch pads little) on the embedder's
//! own thread pool, with the exact weights. A query of up to 32 tokens is
//! one unpadded sequence run on its caller's thread by the 16-bit copy of
//! the weights ([`few_rows`](super::few_rows)); both stay off the async
//! runtime.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;

use super::Embedder;
use super::bert::{HIDDEN, MiniLmEncoder, Precision};
use super::few_rows::MAX_ROWS;
use super::locate::{FETCH_HINT, TOKENIZER_FILE, WEIGHTS_FILE};
use super::safetensors_file::SafetensorsFile;
use super::wordpiece::WordPieceTokenizer;
use crate::error::{Error, Result};

/// The model id vectors from [`MiniLmEmbedder`] are stored under.
pub const MINILM_MODEL_ID: &str = "all-MiniLM-L6-v2";

/// The length of every all-MiniLM-L6-v2 vector.
pub const MINILM_DIMENSIONS: usize = HIDDEN;

/// Pieces each window of a long text shares with the one before.
const WINDOW_OVERLAP: usize = 32;

/// The most windows a text is read in: about 3,600 pieces, some 14,000
/// characters of English. Past that a text is found by its words, and the
/// cost of embedding one text stays bounded (16 sequences, a fraction of a
/// second on two cores).
const MAX_WINDOWS: usize = 16;

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
///
/// [`load`](Self::load) reads the weights at once; [`open`](Self::open)
/// reads them on the first embedding. The weights are ~90 MB of memory and
/// a fifth of a second to read: a process that never embeds (most `1helm`
/// commands, an idle server) should not pay for them.
#[derive(Clone)]
pub struct MiniLmEmbedder {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    options: MiniLmOptions,
    engine: OnceLock<Engine>,
    /// Held while the engine loads, so two first callers load it once.
    loading: Mutex<()>,
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
            .field("dir", &self.shared.dir)
            .field("loaded", &self.shared.engine.get().is_some())
            .field("max_batch", &self.shared.options.max_batch)
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
        let embedder = Self::open_with(dir, options)?;
        embedder.engine()?;
        Ok(embedder)
    }

    /// The model in `dir`, read on the first embedding (or the first call
    /// that needs it). Fails now with [`Error::ModelMissing`] if a file is
    /// absent, or [`Error::Invalid`] if the weights are not a whole file of
    /// this kind of model (by their header and length); weights damaged
    /// otherwise fail the embedding that first needs them.
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_with(dir, MiniLmOptions::default())
    }

    /// [`open`](Self::open), running as `options` say.
    pub fn open_with(dir: &Path, options: MiniLmOptions) -> Result<Self> {
        let (weights_path, _) = model_files(dir)?;
        open_weights(&weights_path)?;
        Ok(MiniLmEmbedder {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                options,
                engine: OnceLock::new(),
                loading: Mutex::new(()),
            }),
        })
    }

    /// The engine, loaded on first use.
    fn engine(&self) -> Result<&Engine> {
        let shared = &*self.shared;
        if let Some(engine) = shared.engine.get() {
            return Ok(engine);
        }
        let _loading = shared
            .loading
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(engine) = shared.engine.get() {
            return Ok(engine);
        }
        let engine = Engine::load(&shared.dir, &shared.options)?;
        tracing::debug!(dir = %shared.dir.display(), "embedding model loaded");
        Ok(shared.engine.get_or_init(|| engine))
    }

    /// Whether the model has been read (always, after [`load`](Self::load)).
    pub fn is_loaded(&self) -> bool {
        self.shared.engine.get().is_some()
    }

    /// The tokenizer the model reads its input with (loads the model).
    pub fn tokenizer(&self) -> Result<&WordPieceTokenizer> {
        Ok(&self.engine()?.tokenizer)
    }

    /// How many threads the model runs on (loads the model).
    pub fn threads(&self) -> Result<usize> {
        Ok(self.engine()?.pool.current_num_threads())
    }

    /// Embeds `texts` on the calling thread (plus the embedder's pool): one
    /// unit-length vector of [`MINILM_DIMENSIONS`] each, in order.
    ///
    /// For callers outside an async runtime, such as batch indexing jobs;
    /// [`Embedder::embed`] runs this off the runtime's threads.
    pub fn embed_blocking<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        self.engine()?.embed(texts)
    }

    /// Embeds one search query on the calling thread alone, by the
    /// 16-bit copy of the weights when it has at most 32 tokens (a
    /// vector within cosine 0.9995 of [`embed_blocking`](Self::embed_blocking)'s,
    /// in about half the time on one core); a longer one as an item is.
    pub fn embed_query_blocking(&self, text: &str) -> Result<Vec<f32>> {
        self.engine()?.embed_query(text)
    }
}

/// The weights and tokenizer files in `dir`, or which one is missing.
fn model_files(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let files = (dir.join(WEIGHTS_FILE), dir.join(TOKENIZER_FILE));
    for path in [&files.0, &files.1] {
        if !path.is_file() {
            return Err(Error::ModelMissing {
                path: path.clone(),
                help: FETCH_HINT.to_string(),
            });
        }
    }
    Ok(files)
}

/// Opens the weights at `path`, reading only the header: it must be a
/// whole safetensors file (as long as its header says) of a BERT model (it
/// names the word embeddings). Catches a cut-short download or another
/// model's file when the embedder is opened (so a configuration that
/// requires the model refuses to start), not at its first use.
fn open_weights(path: &Path) -> Result<SafetensorsFile> {
    let invalid =
        |why: &str| Error::invalid("embedding model", format!("{}: {why}", path.display()));
    let weights = SafetensorsFile::open(path).map_err(|why| invalid(&why))?;
    if !weights
        .names()
        .any(|k| k.ends_with("embeddings.word_embeddings.weight"))
    {
        return Err(invalid(
            "it holds no word embeddings: not a BERT model's weights",
        ));
    }
    Ok(weights)
}

impl Engine {
    /// Reads the tokenizer and the weights in `dir` and starts the threads.
    fn load(dir: &Path, options: &MiniLmOptions) -> Result<Self> {
        let (weights_path, tokenizer_path) = model_files(dir)?;
        let tokenizer = WordPieceTokenizer::from_file(&tokenizer_path)?;
        let mut weights = open_weights(&weights_path)?;
        let encoder = MiniLmEncoder::load(&mut weights).map_err(|reason| {
            Error::invalid(
                "embedding model",
                format!("{}: {reason}", weights_path.display()),
            )
        })?;
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
        Ok(Engine {
            tokenizer,
            encoder,
            pool,
            max_batch: options.max_batch.max(1),
        })
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let tokens = self.tokenizer.encode(text);
        let (batch, pad) = ([tokens.as_slice()], self.tokenizer.pad_id());
        // Not in the pool: the pool may be busy with a batch of items, and
        // the product of a few rows is done on one thread anyway. A longer
        // query is embedded as an item would be, in the pool.
        let vectors = if tokens.len() <= MAX_ROWS {
            self.encoder
                .embed(&batch, pad, Precision::Query)
                .map_err(failed)?
        } else {
            self.embed(&[text])?
        };
        vectors
            .into_iter()
            .next()
            .ok_or_else(|| Error::Internal("the embedder gave no vector".into()))
    }

    fn embed<S: AsRef<str>>(&self, texts: &[S]) -> Result<Vec<Vec<f32>>> {
        // Every window of every text, with the text it is of.
        let mut sequences: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        let mut owner: Vec<usize> = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            for window in self
                .tokenizer
                .encode_windows(text.as_ref(), WINDOW_OVERLAP, MAX_WINDOWS)
            {
                sequences.push(window);
                owner.push(i);
            }
        }
        // Similar lengths side by side, so each batch pads little.
        let mut order: Vec<usize> = (0..sequences.len()).collect();
        order.sort_by_key(|&i| sequences[i].len());

        let mut windows = vec![Vec::new(); sequences.len()];
        self.pool.install(|| {
            for chunk in order.chunks(self.max_batch) {
                let batch: Vec<&[u32]> = chunk.iter().map(|&i| sequences[i].as_slice()).collect();
                let embedded = self
                    .encoder
                    .embed(&batch, self.tokenizer.pad_id(), Precision::Exact)
                    .map_err(failed)?;
                for (&i, vector) in chunk.iter().zip(embedded) {
                    windows[i] = vector;
                }
            }
            Ok::<_, Error>(())
        })?;
        Ok(pooled(texts.len(), &owner, windows))
    }
}

/// One vector per text from its windows' (`owner[i]` is window `i`'s
/// text): a text of one window keeps that window's vector as it is; a
/// longer one, the mean of its windows made unit length again, so a match
/// anywhere in it counts (its windows are all full length, so each weighs
/// the same).
fn pooled(texts: usize, owner: &[usize], windows: Vec<Vec<f32>>) -> Vec<Vec<f32>> {
    let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts];
    let mut counts = vec![0usize; texts];
    for (&i, window) in owner.iter().zip(windows) {
        counts[i] += 1;
        if vectors[i].is_empty() {
            vectors[i] = window;
        } else {
            for (sum, x) in vectors[i].iter_mut().zip(&window) {
                *sum += x;
            }
        }
    }
    for (vector, count) in vectors.iter_mut().zip(counts) {
        if count > 1 {
            super::normalize(vector);
        }
    }
    vectors
}

/// The encoder's failure as Helm's.
fn failed(e: candle_core::Error) -> Error {
    Error::Internal(format!("embedding with {MINILM_MODEL_ID}: {e}"))
}

#[async_trait]
impl Embedder for MiniLmEmbedder {
    fn model(&self) -> &str {
        MINILM_MODEL_ID
    }

    fn dimensions(&self) -> usize {
        MINILM_DIMENSIONS
    }

    async fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let embedder = self.clone();
        let text = text.to_string();
        tokio::task::spawn_blocking(move || embedder.embed_query_blocking(&text))
            .await
            .map_err(|e| Error::Internal(format!("the embedding task failed: {e}")))?
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let embedder = self.clone();
        let texts = texts.to_vec();
        // Milliseconds to seconds of CPU work (and the first call reads the
        // model): keep it off the async workers.
        tokio::task::spawn_blocking(move || embedder.embed_blocking(&texts))
            .await
            .map_err(|e| Error::Internal(format!("the embedding task failed: {e}")))?
    }
}
