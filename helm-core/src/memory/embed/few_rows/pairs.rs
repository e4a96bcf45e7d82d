//! The product of a few rows in 16-bit integers, on x86-64 with AVX2 or
//! AVX-512.
//!
//! AVX2's `vpmaddwd` multiplies sixteen pairs of 16-bit integers and adds
//! each pair into a 32-bit lane: sixteen multiply-adds an instruction, and
//! an AMD Zen 3 retires two a cycle, where it retires two f32 FMAs of
//! eight. Measured in a loop of six rows by two vectors, as the product
//! holds them: 82 against 50 billion multiply-adds a second. The weights
//! are stored as integers, so nothing is widened on the way either (a
//! bfloat16 weight is shifted into an f32 first). AVX-512 does the same
//! work in half the instructions (one vector a strip, and 32 registers for
//! bigger tiles); on an Intel Xeon a query embedded 11% faster with it
//! than with AVX2 (p50 2.50–2.62 against 2.84–2.96 ms).
//!
//! Each weight column is scaled to ±[`LEVELS`] and rounded, and so is each
//! row of activations, per product: 13 bits of each, where bfloat16 keeps
//! 8 of every value. Sums are exact in 32 bits for [`BLOCK`] pairs (that
//! many pairs of two products of at most `LEVELS`² stay below 2³¹), then
//! added into the f32 output, and scaled back at the end.

use std::arch::x86_64::{__m256, __m256i, __m512, __m512i};

use pulp::x86::{V3, V4};
use pulp::{NullaryFnOnce, Simd, cast};

use super::even_tiles;

/// The largest magnitude a weight or an activation is scaled to.
const LEVELS: f32 = 4095.0;

/// Pairs summed in 32 bits before the sums move to f32:
/// `BLOCK · 2 · 4095² = 2,146,435,200 < 2³¹`.
const BLOCK: usize = 64;

/// Columns a strip holds: two vectors of eight 32-bit lanes.
const STRIP: usize = 16;

/// At most this many rows' sums are held in registers at once: 5 rows × 2
/// vectors are 10 of AVX2's 16 registers. Not 6, as the f32 product holds:
/// `vpmaddwd` does not add into its sums, so its products need registers
/// of their own, and with 6 rows the compiler kept sums on the stack
/// (seen in `perf annotate`).
const TILE_ROWS: usize = 5;

/// The same with AVX-512: a row's sums for a strip are one vector, and
/// there are 32 registers, so a tile of 8 rows reads each block of weights
/// for 8 rows at once and leaves registers to spare.
const WIDE_TILE_ROWS: usize = 8;

/// The vector instructions a product runs with: AVX-512 (with its 16-bit
/// multiply-adds, `avx512bw`) where the machine has it, else AVX2. The
/// weights are laid out the same for both: a strip's sixteen columns of a
/// pair of rows are two AVX2 vectors or one AVX-512 vector.
#[derive(Clone, Copy)]
pub(crate) enum Isa {
    Avx2(V3),
    Avx512(V4),
}

impl Isa {
    /// The widest this machine runs.
    fn detect() -> Option<Self> {
        V4::try_new()
            .map(Isa::Avx512)
            .or_else(|| V3::try_new().map(Isa::Avx2))
    }
}

/// A (`k`, `n`) weight matrix as 16-bit integers, column by column scaled:
/// strip after strip of [`STRIP`] columns, and in a strip, for each pair of
/// rows (`2p`, `2p + 1`), two vectors whose lanes hold that pair's weights
/// of one column (row `2p` in the low half).
pub(crate) struct PairWeights {
    isa: Isa,
    k: usize,
    n: usize,
    /// What each column's integers are multiplied by to give its weights.
    scales: Vec<f32>,
    words: Vec<u32>,
}

impl PairWeights {
    /// Packs `w`, (`k`, `n`) row-major; `None` without AVX2 and FMA, or when
    /// `k` is odd or `n` not a whole number of strips.
    pub(crate) fn pack(w: &[f32], k: usize, n: usize) -> Option<Self> {
        Self::pack_for(Isa::detect()?, w, k, n)
    }

    /// [`pack`](Self::pack) for products run with `isa`.
    fn pack_for(isa: Isa, w: &[f32], k: usize, n: usize) -> Option<Self> {
        if k == 0 || !k.is_multiple_of(2) || n == 0 || !n.is_multiple_of(STRIP) || w.len() != k * n
        {
            return None;
        }
        // Each column's largest magnitude, row by row (as the weights lie).
        let mut most = vec![0f32; n];
        for row in w.chunks_exact(n) {
            for (m, v) in most.iter_mut().zip(row) {
                *m = m.max(v.abs());
            }
        }
        let scales: Vec<f32> = most
            .into_iter()
            .map(|m| if m > 0.0 { m / LEVELS } else { 1.0 })
            .collect();
        let level = |i: usize, c: usize| (w[i * n + c] / scales[c]).round() as i16;
        let mut words = Vec::with_capacity(k * n / 2);
        for strip in (0..n).step_by(STRIP) {
            for pair in (0..k).step_by(2) {
                words.extend(
                    (strip..strip + STRIP).map(|c| pack_pair(level(pair, c), level(pair + 1, c))),
                );
            }
        }
        Some(PairWeights {
            isa,
            k,
            n,
            scales,
            words,
        })
    }

    /// `x · w` for `x` of (`rows`, `k`), row-major: (`rows`, `n`); `None`
    /// for an `x` of another length.
    pub(crate) fn product(&self, x: &[f32], rows: usize) -> Option<Vec<f32>> {
        if rows == 0 || x.len() != rows * self.k {
            return None;
        }
        let (pairs, row_scales) = quantize(x, self.k);
        let mut out = vec![0f32; rows * self.n];
        match self.isa {
            Isa::Avx2(simd) => simd.vectorize(Product {
                simd,
                weights: self,
                pairs: &pairs,
                rows,
                out: &mut out,
            }),
            Isa::Avx512(simd) => simd.vectorize(WideProduct {
                simd,
                weights: self,
                pairs: &pairs,
                rows,
                out: &mut out,
            }),
        }
        for (row, scale) in out.chunks_exact_mut(self.n).zip(row_scales) {
            for (v, column) in row.iter_mut().zip(&self.scales) {
                *v *= scale * column;
            }
        }
        Some(out)
    }
}

/// Two 16-bit integers in one word, `low` in the low half.
fn pack_pair(low: i16, high: i16) -> u32 {
    u32::from(low as u16) | (u32::from(high as u16) << 16)
}

/// Each row of `x` (`k` long) scaled to ±[`LEVELS`], as pairs of 16-bit
/// integers (one word per pair), and what each row was divided by.
fn quantize(x: &[f32], k: usize) -> (Vec<u32>, Vec<f32>) {
    let mut pairs = Vec::with_capacity(x.len() / 2);
    let mut scales = Vec::with_capacity(x.len() / k);
    for row in x.chunks_exact(k) {
        let most = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if most > 0.0 { most / LEVELS } else { 1.0 };
        let inverse = 1.0 / scale;
        pairs.extend(
            row.chunks_exact(2)
                .map(|p| pack_pair(nearest(p[0] * inverse), nearest(p[1] * inverse))),
        );
        scales.push(scale);
    }
    (pairs, scales)
}

/// `v` rounded to the nearest integer (half away from zero), for `v`
/// within ±[`LEVELS`]. Not `f32::round`: built for baseline x86-64, that is
/// a call into libm per value (measured: a fifth of a query's time).
fn nearest(v: f32) -> i16 {
    (v + 0.5f32.copysign(v)) as i16
}

/// One product's operands, run with AVX2 enabled.
struct Product<'a> {
    simd: V3,
    weights: &'a PairWeights,
    pairs: &'a [u32],
    rows: usize,
    out: &'a mut [f32],
}

impl NullaryFnOnce for Product<'_> {
    type Output = ();

    // Everything below is inlined into the function `vectorize` compiles
    // with AVX2 enabled; a call that is not would leave each vector
    // operation a function call.
    #[inline(always)]
    fn call(self) {
        let Product {
            simd,
            weights,
            pairs,
            rows,
            out,
        } = self;
        let (words, _) = V3::as_simd_u32s(&weights.words);
        let (half, n) = (weights.k / 2, weights.n);
        // Strips outermost, then blocks of pairs, then tiles of rows: a
        // block of a strip's weights (4 KB) is read from memory once and
        // stays in the nearest cache for every tile.
        for (strip, strip_words) in words.chunks_exact(2 * half).enumerate() {
            let column = strip * STRIP;
            for (b, block) in strip_words.chunks(2 * BLOCK).enumerate() {
                let from = b * BLOCK;
                for tile_rows in even_tiles(rows, TILE_ROWS) {
                    let x = &pairs[tile_rows.start * half..tile_rows.end * half];
                    let out = &mut out[tile_rows.start * n..tile_rows.end * n];
                    let at = Block { half, from, column };
                    match tile_rows.len() {
                        5 => tile::<5>(simd, x, block, out, at),
                        4 => tile::<4>(simd, x, block, out, at),
                        3 => tile::<3>(simd, x, block, out, at),
                        2 => tile::<2>(simd, x, block, out, at),
                        _ => tile::<1>(simd, x, block, out, at),
                    }
                }
            }
        }
    }
}

/// Where a block of weights lies: its rows' pairs from `from` (of `half`
/// pairs a row), its strip's columns from `column`.
#[derive(Clone, Copy)]
struct Block {
    half: usize,
    from: usize,
    column: usize,
}

/// The `R` rows of `x` (pairs) times one block of a strip of weights (two
/// vectors a pair, at most [`BLOCK`] pairs), added as f32 to the strip's
/// columns of the `R` rows of `out`.
#[inline(always)]
fn tile<const R: usize>(simd: V3, x: &[u32], block: &[pulp::u32x8], out: &mut [f32], at: Block) {
    let pairs = block.len() / 2;
    let rows: [&[u32]; R] = std::array::from_fn(|r| &x[r * at.half + at.from..][..pairs]);
    let zero = simd.avx._mm256_setzero_si256();
    let mut sums = [[zero; 2]; R];
    for (p, w) in block.chunks_exact(2).enumerate() {
        let w0: __m256i = cast(w[0]);
        let w1: __m256i = cast(w[1]);
        for (sum, row) in sums.iter_mut().zip(rows) {
            let v = simd.avx._mm256_set1_epi32(row[p] as i32);
            sum[0] = simd
                .avx2
                ._mm256_add_epi32(sum[0], simd.avx2._mm256_madd_epi16(v, w0));
            sum[1] = simd
                .avx2
                ._mm256_add_epi32(sum[1], simd.avx2._mm256_madd_epi16(v, w1));
        }
    }
    let n = out.len() / R;
    for (r, sum) in sums.iter().enumerate() {
        let start = r * n + at.column;
        let (row, _) = V3::as_mut_simd_f32s(&mut out[start..start + STRIP]);
        for (acc, s) in row.iter_mut().zip(sum) {
            let widened: __m256 = simd.avx._mm256_cvtepi32_ps(*s);
            *acc = cast(simd.avx._mm256_add_ps(cast(*acc), widened));
        }
    }
}

/// [`Product`] with AVX-512.
struct WideProduct<'a> {
    simd: V4,
    weights: &'a PairWeights,
    pairs: &'a [u32],
    rows: usize,
    out: &'a mut [f32],
}

impl NullaryFnOnce for WideProduct<'_> {
    type Output = ();

    // Inlined into the function `vectorize` compiles with AVX-512 enabled,
    // as in [`Product`].
    #[inline(always)]
    fn call(self) {
        let WideProduct {
            simd,
            weights,
            pairs,
            rows,
            out,
        } = self;
        let (words, _) = V4::as_simd_u32s(&weights.words);
        let (half, n) = (weights.k / 2, weights.n);
        for (strip, strip_words) in words.chunks_exact(half).enumerate() {
            let column = strip * STRIP;
            for (b, block) in strip_words.chunks(BLOCK).enumerate() {
                let from = b * BLOCK;
                for tile_rows in even_tiles(rows, WIDE_TILE_ROWS) {
                    let x = &pairs[tile_rows.start * half..tile_rows.end * half];
                    let out = &mut out[tile_rows.start * n..tile_rows.end * n];
                    let at = Block { half, from, column };
                    match tile_rows.len() {
                        8 => wide_tile::<8>(simd, x, block, out, at),
                        7 => wide_tile::<7>(simd, x, block, out, at),
                        6 => wide_tile::<6>(simd, x, block, out, at),
                        5 => wide_tile::<5>(simd, x, block, out, at),
                        4 => wide_tile::<4>(simd, x, block, out, at),
                        3 => wide_tile::<3>(simd, x, block, out, at),
                        2 => wide_tile::<2>(simd, x, block, out, at),
                        _ => wide_tile::<1>(simd, x, block, out, at),
                    }
                }
            }
        }
    }
}

/// [`tile`] with AVX-512: one vector a pair of weight rows.
#[inline(always)]
fn wide_tile<const R: usize>(
    simd: V4,
    x: &[u32],
    block: &[pulp::u32x16],
    out: &mut [f32],
    at: Block,
) {
    let pairs = block.len();
    let rows: [&[u32]; R] = std::array::from_fn(|r| &x[r * at.half + at.from..][..pairs]);
    let mut sums = [simd.avx512f._mm512_setzero_si512(); R];
    for (p, w) in block.iter().enumerate() {
        let w: __m512i = cast(*w);
        for (sum, row) in sums.iter_mut().zip(rows) {
            let v = simd.avx512f._mm512_set1_epi32(row[p] as i32);
            *sum = simd
                .avx512f
                ._mm512_add_epi32(*sum, simd.avx512bw._mm512_madd_epi16(v, w));
        }
    }
    let n = out.len() / R;
    for (r, sum) in sums.iter().enumerate() {
        let start = r * n + at.column;
        let (row, _) = V4::as_mut_simd_f32s(&mut out[start..start + STRIP]);
        let widened: __m512 = simd.avx512f._mm512_cvtepi32_ps(*sum);
        row[0] = cast(simd.avx512f._mm512_add_ps(cast(row[0]), widened));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::values;
    use super::*;

    /// Each instruction set this machine runs, so that a machine with
    /// AVX-512 tests the AVX2 product too.
    fn isas() -> Vec<Isa> {
        let mut isas: Vec<Isa> = V3::try_new().map(Isa::Avx2).into_iter().collect();
        isas.extend(V4::try_new().map(Isa::Avx512));
        isas
    }

    #[test]
    fn every_row_count_is_within_the_rounding_of_the_exact_product() {
        for isa in isas() {
            products_are_within_rounding(isa);
        }
    }

    fn products_are_within_rounding(isa: Isa) {
        // k of several blocks and a part block; columns of very different
        // scales, and one of zeros.
        let (k, n) = (2 * BLOCK * 2 + 6, 48);
        let mut w = values(k * n, 7);
        for (i, v) in w.iter_mut().enumerate() {
            match i % n {
                0 => *v = 0.0,
                1 => *v *= 1e-3,
                2 => *v *= 40.0,
                _ => {}
            }
        }
        let Some(packed) = PairWeights::pack_for(isa, &w, k, n) else {
            panic!("48 columns were not packed");
        };
        for rows in 1..=32 {
            let mut x = values(rows * k, rows as u32);
            // An outlier, as a model's activations have.
            x[rows] *= 30.0;
            let Some(got) = packed.product(&x, rows) else {
                panic!("{rows} rows were not taken");
            };
            for r in 0..rows {
                for c in 0..n {
                    let (mut want, mut bound) = (0f64, 0f64);
                    for i in 0..k {
                        let (a, b) = (f64::from(x[r * k + i]), f64::from(w[i * n + c]));
                        want += a * b;
                        bound += (a * b).abs();
                    }
                    let got = f64::from(got[r * n + c]);
                    // Two roundings of 1/8190 of the largest value each.
                    let most_x = x[r * k..][..k].iter().fold(0f32, |m, v| m.max(v.abs()));
                    let most_w = (0..k).map(|i| w[i * n + c].abs()).fold(0f32, f32::max);
                    let tolerance = f64::from(most_x * most_w) * k as f64 / 4000.0 + 1e-6;
                    assert!(
                        (got - want).abs() <= tolerance,
                        "rows {rows}, ({r}, {c}): {got} against {want} (sum of sizes {bound})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_largest_values_do_not_overflow_the_sums() {
        // Every product at its largest, of one sign: the worst case for a
        // block's 32-bit sums.
        let (k, n) = (4 * BLOCK, STRIP);
        let w = vec![-1.0f32; k * n];
        let x = vec![-1.0f32; k];
        for isa in isas() {
            let Some(packed) = PairWeights::pack_for(isa, &w, k, n) else {
                panic!("not packed");
            };
            let Some(got) = packed.product(&x, 1) else {
                panic!("not taken");
            };
            for v in got {
                assert!((v - k as f32).abs() < 1e-3, "{v} against {k}");
            }
        }
    }

    #[test]
    fn shapes_it_does_not_take_are_left_to_the_caller() {
        if Isa::detect().is_none() {
            return;
        }
        for (k, n, weights, what) in [
            (7, 16, 7 * 16, "an odd k"),
            (8, 24, 8 * 24, "24 columns"),
            (8, 32, 8 * 16, "too few weights"),
        ] {
            assert!(
                PairWeights::pack(&values(weights, 1), k, n).is_none(),
                "{what}"
            );
        }
        let Some(packed) = PairWeights::pack(&values(8 * 16, 1), 8, 16) else {
            panic!("16 columns were not packed");
        };
        assert!(packed.product(&values(8, 2), 2).is_none(), "x too short");
    }
}
