//! The all-MiniLM-L6-v2 forward pass over candle-core tensors.
//!
//! A BERT encoder (6 layers, hidden size 384, 12 heads of 32, GELU feed-forward
//! of 1536, post-LayerNorm), then sentence-transformers' pooling: the mean of
//! the last hidden states over real (unpadded) tokens, scaled to unit length.
//! Written here rather than taken from candle-transformers, which compiles
//! every model it has; this is the only one Helm runs.
//!
//! Three rewrites make it cheaper than a literal port without changing the
//! result: the query, key and value projections are one matrix product, with
//! the 1/√32 attention scale folded into the query weights; the position and
//! token-type embeddings are summed once at load (every token is type 0); and
//! the element-wise steps between matrix products are fused kernels
//! ([`kernels`](super::kernels)).

use candle_core::{Device, Tensor};

use super::few_rows::PackedWeights;
use super::safetensors_file::SafetensorsFile;

use super::kernels::{
    AddBias, AddBiasGelu, AddBiasResidualNorm, Norm, NormParams, Softmax, apply, apply_with,
};

/// Hidden size: the length of the sentence vector.
pub(crate) const HIDDEN: usize = 384;
const HEADS: usize = 12;
const HEAD_DIM: usize = HIDDEN / HEADS;
const LAYERS: usize = 6;
const INTERMEDIATE: usize = 1536;
const MAX_POSITIONS: usize = 512;
const LAYER_NORM_EPS: f32 = 1e-12;
/// Added to attention scores of padded positions: far below any real score,
/// yet finite, so that the softmax's subtraction cannot make NaN.
const MASKED: f32 = -1e9;

/// Loading failed: names the tensor and what was wrong with it.
pub(crate) type LoadError = String;

/// The encoder's weights, ready for [`MiniLmEncoder::embed`].
pub(crate) struct MiniLmEncoder {
    word_embeddings: Tensor,
    /// Position embeddings plus the token-type-0 embedding, (512, 384).
    position_embeddings: Tensor,
    embeddings_norm: NormParams,
    layers: Vec<EncoderLayer>,
}

/// `x · Wᵀ + b`, with `Wᵀ` stored contiguous as (in, out) for the matrix
/// product; the bias is added by whichever fused kernel comes next.
struct Linear {
    weight_t: Tensor,
    bias: Vec<f32>,
    /// The same weights rounded and packed for a query's few rows
    /// ([`few_rows`](super::few_rows)); `None` where the width does not
    /// pack, and then queries use `weight_t` too.
    packed: Option<PackedWeights>,
}

/// Which weights an embedding multiplies by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precision {
    /// The model's f32 weights: for items, whose vectors are stored.
    Exact,
    /// A query's few tokens by the 16-bit copy, where it applies
    /// (see [`few_rows`](super::few_rows)).
    Query,
}

struct EncoderLayer {
    qkv: Linear,
    attention_output: Linear,
    attention_norm: NormParams,
    intermediate: Linear,
    output: Linear,
    output_norm: NormParams,
}

/// Reads named tensors out of the weights file, checking their shapes.
struct Weights<'f>(&'f mut SafetensorsFile);

impl Weights<'_> {
    /// The tensor `name` as f32; `shape` may start with a 0 for "any length".
    /// Some exports prefix every name with the model type (`bert.`).
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Tensor, LoadError> {
        let tensor = match self.0.read_f32(name) {
            Some(read) => read,
            None => self
                .0
                .read_f32(&format!("bert.{name}"))
                .ok_or_else(|| format!("it has no tensor {name}"))?,
        }?;
        let fits = tensor.dims().len() == shape.len()
            && tensor
                .dims()
                .iter()
                .zip(shape)
                .all(|(&have, &want)| want == 0 || have == want);
        if !fits {
            return Err(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                tensor.dims()
            ));
        }
        Ok(tensor)
    }

    fn vector(&mut self, name: &str, len: usize) -> Result<Vec<f32>, LoadError> {
        self.take(name, &[len])?
            .to_vec1()
            .map_err(|e| format!("tensor {name}: {e}"))
    }

    fn linear(&mut self, prefix: &str, inputs: usize, outputs: usize) -> Result<Linear, LoadError> {
        let weight = self.take(&format!("{prefix}.weight"), &[outputs, inputs])?;
        let bias = self.vector(&format!("{prefix}.bias"), outputs)?;
        let weight_t = weight
            .t()
            .and_then(|t| t.contiguous())
            .map_err(|e| format!("{prefix}: {e}"))?;
        Ok(Linear {
            weight_t,
            bias,
            packed: None,
        })
    }

    fn layer_norm(&mut self, prefix: &str) -> Result<NormParams, LoadError> {
        Ok(NormParams {
            weight: self.vector(&format!("{prefix}.weight"), HIDDEN)?,
            bias: self.vector(&format!("{prefix}.bias"), HIDDEN)?,
            eps: LAYER_NORM_EPS,
        })
    }
}

impl MiniLmEncoder {
    /// Builds the encoder from the tensors of all-MiniLM-L6-v2's `model.safetensors`.
    pub(crate) fn load(weights: &mut SafetensorsFile) -> Result<Self, LoadError> {
        let extra_layer = format!("encoder.layer.{LAYERS}.");
        if weights.names().any(|k| {
            k.strip_prefix("bert.")
                .unwrap_or(k)
                .starts_with(&extra_layer)
        }) {
            return Err(format!(
                "it has more than {LAYERS} layers: not all-MiniLM-L6-v2"
            ));
        }
        let mut w = Weights(weights);
        let word_embeddings = w.take("embeddings.word_embeddings.weight", &[0, HIDDEN])?;
        let positions = w.take(
            "embeddings.position_embeddings.weight",
            &[MAX_POSITIONS, HIDDEN],
        )?;
        let token_types = w.take("embeddings.token_type_embeddings.weight", &[2, HIDDEN])?;
        let position_embeddings = token_types
            .get(0)
            .and_then(|type0| positions.broadcast_add(&type0))
            .map_err(|e| format!("embeddings: {e}"))?;
        let embeddings_norm = w.layer_norm("embeddings.LayerNorm")?;

        let mut layers = Vec::with_capacity(LAYERS);
        for l in 0..LAYERS {
            let p = format!("encoder.layer.{l}");
            let query = w.linear(&format!("{p}.attention.self.query"), HIDDEN, HIDDEN)?;
            let key = w.linear(&format!("{p}.attention.self.key"), HIDDEN, HIDDEN)?;
            let value = w.linear(&format!("{p}.attention.self.value"), HIDDEN, HIDDEN)?;
            let packed = |linear: Linear| linear.with_packed().map_err(|e| format!("{p}: {e}"));
            let qkv = packed(
                Linear::fuse_attention(query, key, value).map_err(|e| format!("{p}: {e}"))?,
            )?;
            layers.push(EncoderLayer {
                qkv,
                attention_output: packed(w.linear(
                    &format!("{p}.attention.output.dense"),
                    HIDDEN,
                    HIDDEN,
                )?)?,
                attention_norm: w.layer_norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate: packed(w.linear(
                    &format!("{p}.intermediate.dense"),
                    HIDDEN,
                    INTERMEDIATE,
                )?)?,
                output: packed(w.linear(&format!("{p}.output.dense"), INTERMEDIATE, HIDDEN)?)?,
                output_norm: w.layer_norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(MiniLmEncoder {
            word_embeddings,
            position_embeddings,
            embeddings_norm,
            layers,
        })
    }

    /// The size of the vocabulary the embeddings cover.
    pub(crate) fn vocab_size(&self) -> usize {
        self.word_embeddings.dims()[0]
    }

    /// Unit-length sentence vectors of a batch of token-id sequences.
    ///
    /// Shorter sequences are padded with `pad_id` and masked out of attention
    /// and pooling, so a text's vector does not depend on its batch-mates.
    /// `precision` says which weights the matrix products use.
    pub(crate) fn embed(
        &self,
        sequences: &[&[u32]],
        pad_id: u32,
        precision: Precision,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let batch = sequences.len();
        let len = sequences.iter().map(|s| s.len()).max().unwrap_or(0);
        if batch == 0 {
            return Ok(Vec::new());
        }
        if sequences.iter().any(|s| s.is_empty()) || len > MAX_POSITIONS {
            candle_core::bail!("token sequences must hold 1 to {MAX_POSITIONS} tokens");
        }
        let padded = sequences.iter().any(|s| s.len() != len);
        let mut ids = Vec::with_capacity(batch * len);
        let mut mask = Vec::with_capacity(if padded { batch * len } else { 0 });
        for s in sequences {
            ids.extend_from_slice(s);
            ids.resize(ids.len() + len - s.len(), pad_id);
            if padded {
                mask.extend(std::iter::repeat_n(1f32, s.len()));
                mask.extend(std::iter::repeat_n(0f32, len - s.len()));
            }
        }
        let ids = Tensor::from_vec(ids, batch * len, &Device::Cpu)?;
        let mask = if padded {
            Some(Tensor::from_vec(mask, (batch, len), &Device::Cpu)?)
        } else {
            None
        };
        // Added to the scores of each query row: 0 for real keys, MASKED for padding.
        let attention_bias = match &mask {
            Some(m) => Some(
                m.affine(-f64::from(MASKED), f64::from(MASKED))?
                    .reshape((batch, 1, 1, len))?,
            ),
            None => None,
        };

        let x = self
            .word_embeddings
            .index_select(&ids, 0)?
            .reshape((batch, len, HIDDEN))?
            .broadcast_add(&self.position_embeddings.narrow(0, 0, len)?)?
            .reshape((batch * len, HIDDEN))?;
        let mut x = apply(x, &Norm(&self.embeddings_norm))?;
        for layer in &self.layers {
            x = layer.forward(&x, batch, len, attention_bias.as_ref(), precision)?;
        }

        let x = x.reshape((batch, len, HIDDEN))?;
        let pooled = match &mask {
            Some(m) => {
                let m = m.unsqueeze(2)?;
                let counts = m.sum(1)?;
                x.broadcast_mul(&m)?.sum(1)?.broadcast_div(&counts)?
            }
            None => x.mean(1)?,
        };
        let norms = pooled.sqr()?.sum_keepdim(1)?.sqrt()?;
        pooled.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Linear {
    /// One projection for query, key and value; the query is pre-scaled by 1/√head_dim.
    fn fuse_attention(query: Linear, key: Linear, value: Linear) -> candle_core::Result<Self> {
        let scale = 1.0 / (HEAD_DIM as f64).sqrt();
        let weight_t = Tensor::cat(
            &[
                &query.weight_t.affine(scale, 0.0)?,
                &key.weight_t,
                &value.weight_t,
            ],
            1,
        )?;
        let bias = query
            .bias
            .iter()
            .map(|b| b * scale as f32)
            .chain(key.bias)
            .chain(value.bias)
            .collect();
        Ok(Linear {
            weight_t,
            bias,
            packed: None,
        })
    }

    /// Packs the copy of the weights a query's product reads.
    fn with_packed(mut self) -> candle_core::Result<Self> {
        let (inputs, outputs) = self.weight_t.dims2()?;
        let weights = self.weight_t.flatten_all()?.to_vec1::<f32>()?;
        self.packed = PackedWeights::pack(&weights, inputs, outputs);
        Ok(self)
    }

    /// `x · Wᵀ` for `x` of (rows, in): (rows, out), bias not yet added.
    fn product(&self, x: &Tensor, precision: Precision) -> candle_core::Result<Tensor> {
        if let (Precision::Query, Some(packed)) = (precision, &self.packed) {
            let (rows, _) = x.dims2()?;
            let values = x.flatten_all()?.to_vec1::<f32>()?;
            if let Some(product) = packed.product(&values, rows) {
                let outputs = self.weight_t.dim(1)?;
                return Tensor::from_vec(product, (rows, outputs), &Device::Cpu);
            }
        }
        x.matmul(&self.weight_t)
    }
}

impl EncoderLayer {
    /// `x` is (batch × len, hidden); `attention_bias` is (batch, 1, 1, len) when padded.
    fn forward(
        &self,
        x: &Tensor,
        batch: usize,
        len: usize,
        attention_bias: Option<&Tensor>,
        precision: Precision,
    ) -> candle_core::Result<Tensor> {
        let qkv = apply(self.qkv.product(x, precision)?, &AddBias(&self.qkv.bias))?
            .reshape((batch, len, 3, HEADS, HEAD_DIM))?
            .permute((2, 0, 3, 1, 4))?; // (3, batch, heads, len, head_dim)
        let query = qkv.get(0)?.contiguous()?;
        let key = qkv.get(1)?.contiguous()?;
        let value = qkv.get(2)?.contiguous()?;

        let scores = query.matmul(&key.t()?)?; // (batch, heads, len, len), already scaled
        let scores = match attention_bias {
            Some(bias) => scores.broadcast_add(bias)?,
            None => scores,
        };
        let context = apply(scores, &Softmax)?
            .matmul(&value)? // (batch, heads, len, head_dim)
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch * len, HIDDEN))?;

        let x = apply_with(
            self.attention_output.product(&context, precision)?,
            x,
            &AddBiasResidualNorm {
                bias: &self.attention_output.bias,
                norm: &self.attention_norm,
            },
        )?;
        let hidden = apply(
            self.intermediate.product(&x, precision)?,
            &AddBiasGelu(&self.intermediate.bias),
        )?;
        apply_with(
            self.output.product(&hidden, precision)?,
            &x,
            &AddBiasResidualNorm {
                bias: &self.output.bias,
                norm: &self.output_norm,
            },
        )
    }
}
