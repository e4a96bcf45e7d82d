//! Fused, in-place CPU kernels for the encoder's element-wise steps.
//!
//! candle-core runs each element-wise operation as its own pass with a new
//! buffer: a layer norm written with tensor operations is seven passes, and
//! its exact GELU calls a scalar `erf` per element. Profiled, these took
//! about half as long as the matrix products. Each kernel here is one pass
//! over the rows of a freshly computed tensor, in place, spread over the
//! embedder's thread pool when the tensor is large. (candle-nn has fused
//! softmax and layer norm, but not bias + GELU or bias + residual + norm, and
//! would be one more crate to build.)

use candle_core::{CpuStorage, InplaceOp1, InplaceOp2, Layout, Tensor};
use rayon::prelude::*;

/// Below this many elements a kernel stays on the calling thread: handing
/// rows to the pool would cost more than it saves.
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// The contiguous f32 elements of a tensor's storage and the length of its rows.
fn rows_mut<'a>(
    storage: &'a mut CpuStorage,
    layout: &Layout,
) -> candle_core::Result<(&'a mut [f32], usize)> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("expected f32 storage")
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("expected a contiguous tensor")
    };
    let width = layout.dims().last().copied().unwrap_or(1).max(1);
    Ok((&mut data[start..end], width))
}

/// The contiguous f32 elements of a tensor that is only read.
fn elements<'a>(storage: &'a CpuStorage, layout: &Layout) -> candle_core::Result<&'a [f32]> {
    let CpuStorage::F32(data) = storage else {
        candle_core::bail!("expected f32 storage")
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("expected a contiguous tensor")
    };
    Ok(&data[start..end])
}

/// Whether there is enough work to hand rows to the embedder's pool, and
/// this thread is in it: a query is embedded on its caller's thread, which
/// must not wake rayon's global pool.
fn spread(elements: usize) -> bool {
    elements >= PARALLEL_ELEMENTS && rayon::current_thread_index().is_some()
}

/// Runs `f` on each row, on the current rayon pool when there is enough work.
fn for_each_row(data: &mut [f32], width: usize, f: impl Fn(&mut [f32]) + Send + Sync) {
    if spread(data.len()) {
        data.par_chunks_mut(width).for_each(f);
    } else {
        data.chunks_mut(width).for_each(f);
    }
}

/// Like [`for_each_row`], pairing each row with the same row of `other`.
fn for_each_row_with(
    data: &mut [f32],
    other: &[f32],
    width: usize,
    f: impl Fn(&mut [f32], &[f32]) + Send + Sync,
) {
    if spread(data.len()) {
        data.par_chunks_mut(width)
            .zip(other.par_chunks(width))
            .for_each(|(row, other)| f(row, other));
    } else {
        data.chunks_mut(width)
            .zip(other.chunks(width))
            .for_each(|(row, other)| f(row, other));
    }
}

/// `x += bias`, row by row.
pub(super) struct AddBias<'a>(pub &'a [f32]);

impl InplaceOp1 for AddBias<'_> {
    fn name(&self) -> &'static str {
        "add-bias"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (data, width) = rows_mut(storage, layout)?;
        check_width(width, self.0.len())?;
        for_each_row(data, width, |row| {
            for (x, b) in row.iter_mut().zip(self.0) {
                *x += b;
            }
        });
        Ok(())
    }
}

/// `x = gelu(x + bias)`, the exact (erf) GELU BERT uses.
pub(super) struct AddBiasGelu<'a>(pub &'a [f32]);

impl InplaceOp1 for AddBiasGelu<'_> {
    fn name(&self) -> &'static str {
        "add-bias-gelu"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (data, width) = rows_mut(storage, layout)?;
        check_width(width, self.0.len())?;
        for_each_row(data, width, |row| {
            for (x, b) in row.iter_mut().zip(self.0) {
                let v = *x + b;
                *x = 0.5 * v * (1.0 + erf(v * std::f32::consts::FRAC_1_SQRT_2));
            }
        });
        Ok(())
    }
}

/// A layer norm's learned scale and shift, with its epsilon.
pub(super) struct NormParams {
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
    pub eps: f32,
}

impl NormParams {
    /// Normalises one row in place: zero mean, unit variance, then scale and shift.
    fn apply(&self, row: &mut [f32]) {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let variance = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
        let inv_std = 1.0 / (variance + self.eps).sqrt();
        for ((x, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
            *x = (*x - mean) * inv_std * w + b;
        }
    }
}

/// `x = layer_norm(x)`.
pub(super) struct Norm<'a>(pub &'a NormParams);

impl InplaceOp1 for Norm<'_> {
    fn name(&self) -> &'static str {
        "layer-norm"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (data, width) = rows_mut(storage, layout)?;
        check_width(width, self.0.weight.len())?;
        for_each_row(data, width, |row| self.0.apply(row));
        Ok(())
    }
}

/// `x = layer_norm(x + bias + residual)`: the end of each BERT sub-layer.
pub(super) struct AddBiasResidualNorm<'a> {
    pub bias: &'a [f32],
    pub norm: &'a NormParams,
}

impl InplaceOp2 for AddBiasResidualNorm<'_> {
    fn name(&self) -> &'static str {
        "add-bias-residual-norm"
    }

    fn cpu_fwd(
        &self,
        storage: &mut CpuStorage,
        layout: &Layout,
        residual: &CpuStorage,
        residual_layout: &Layout,
    ) -> candle_core::Result<()> {
        let (data, width) = rows_mut(storage, layout)?;
        let residual = elements(residual, residual_layout)?;
        check_width(width, self.bias.len())?;
        if residual.len() != data.len() {
            candle_core::bail!("residual of {} elements for {}", residual.len(), data.len());
        }
        for_each_row_with(data, residual, width, |row, residual| {
            for ((x, b), r) in row.iter_mut().zip(self.bias).zip(residual) {
                *x += b + r;
            }
            self.norm.apply(row);
        });
        Ok(())
    }
}

/// `x = softmax(x)` along the last dimension.
pub(super) struct Softmax;

impl InplaceOp1 for Softmax {
    fn name(&self) -> &'static str {
        "softmax"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let (data, width) = rows_mut(storage, layout)?;
        for_each_row(data, width, |row| {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for x in row.iter_mut() {
                *x = (*x - max).exp();
                sum += *x;
            }
            let inv = 1.0 / sum;
            for x in row.iter_mut() {
                *x *= inv;
            }
        });
        Ok(())
    }
}

fn check_width(width: usize, params: usize) -> candle_core::Result<()> {
    if width != params {
        candle_core::bail!("rows of {width} for {params} parameters");
    }
    Ok(())
}

/// Applies an in-place kernel to a tensor the caller just computed and owns.
pub(super) fn apply(x: Tensor, op: &impl InplaceOp1) -> candle_core::Result<Tensor> {
    x.inplace_op1(op)?;
    Ok(x)
}

/// Applies an in-place kernel reading `other` to a tensor the caller just computed and owns.
pub(super) fn apply_with(
    x: Tensor,
    other: &Tensor,
    op: &impl InplaceOp2,
) -> candle_core::Result<Tensor> {
    x.inplace_op2(other, op)?;
    Ok(x)
}

/// erf for f32 as a rational function (the one Eigen and XLA use), within
/// 5e-7 of the true erf everywhere. It needs no `exp`, so the GELU loop
/// vectorises; plain `*` and `+` because `mul_add` is a slow library call on
/// CPUs not known to have FMA at build time.
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906_3e-4;
    p = p * x2 - 2.954_6e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329_2e-3;
    q = q * x2 - 1.426_473_9e-2;
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_is_close_to_the_true_function() {
        // Reference values of erf.
        let cases = [
            (0.0, 0.0),
            (0.1, 0.112_462_916),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (1.5, 0.966_105_16),
            (2.0, 0.995_322_3),
            (3.0, 0.999_977_9),
            (5.0, 1.0),
            (-1.0, -0.842_700_8),
            (-8.0, -1.0),
        ];
        for (x, want) in cases {
            let got = erf(x);
            assert!(
                (got - want).abs() < 1e-6,
                "erf({x}) = {got}, expected {want}"
            );
        }
    }

    #[test]
    fn kernels_match_their_definitions() -> candle_core::Result<()> {
        let dev = candle_core::Device::Cpu;
        let x = Tensor::new(&[[1.0f32, 2.0, 3.0, 4.0], [-1.0, 0.0, 1.0, 0.5]], &dev)?;
        let bias = [0.5f32, -0.5, 0.0, 1.0];

        let softmax = apply(x.copy()?, &Softmax)?.to_vec2::<f32>()?;
        let e: Vec<f32> = [1.0f32, 2.0, 3.0, 4.0].iter().map(|v| v.exp()).collect();
        let total: f32 = e.iter().sum();
        for (got, want) in softmax[0].iter().zip(&e) {
            assert!((got - want / total).abs() < 1e-6);
        }

        let gelu = apply(x.copy()?, &AddBiasGelu(&bias))?.to_vec2::<f32>()?;
        // gelu(1.5) = 1.5 * Φ(1.5) = 1.399_789_3
        assert!((gelu[0][0] - 1.399_789_3).abs() < 1e-5, "{}", gelu[0][0]);
        // gelu(-0.5) = -0.5 * Φ(-0.5) = -0.154_268_65
        assert!((gelu[1][1] + 0.154_268_65).abs() < 1e-5, "{}", gelu[1][1]);

        let norm = NormParams {
            weight: vec![1.0; 4],
            bias: vec![0.0; 4],
            eps: 1e-12,
        };
        let residual = Tensor::zeros((2, 4), candle_core::DType::F32, &dev)?;
        let zero_bias = [0.0f32; 4];
        let normed = apply_with(
            x.copy()?,
            &residual,
            &AddBiasResidualNorm {
                bias: &zero_bias,
                norm: &norm,
            },
        )?
        .to_vec2::<f32>()?;
        for row in &normed {
            let mean: f32 = row.iter().sum::<f32>() / 4.0;
            let var: f32 = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 4.0;
            assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-4, "{row:?}");
        }
        Ok(())
    }
}
