//! The matrix product of a few rows (one short text's tokens) by a weight
//! matrix, on the calling thread.
//!
//! For a query of ten tokens, candle's product (the `gemm` crate) repacks
//! each weight matrix (42 MB of f32 over the six layers) before multiplying
//! it by the ten rows, and spreads the work over the embedder's threads;
//! profiled, a query took 7 ms on one core, mostly repacking. A batch of
//! items pays that once; a query pays it for every product. So a query's
//! product reads a second copy of the weights, packed once at load, in the
//! order the product reads them, in 16 bits a weight (21 MB, half the bytes
//! to read), while a few rows' sums stay in registers. It runs on the
//! calling thread, leaving the other core to a recall's word search.
//!
//! The copy takes one of two forms:
//! - **Pairs of 16-bit integers** ([`pairs`]) where AVX2 is there:
//!   `vpmaddwd` does twice the multiply-adds a cycle of f32 FMAs. Each
//!   column of weights and each row of activations is scaled to 13 bits.
//!   A query's vector is within cosine 0.99999 of the exact one.
//! - **bfloat16** elsewhere (NEON on aarch64, scalar on older x86-64), at
//!   the width `pulp` detects. It keeps f32's exponent and 7 of its 23
//!   mantissa bits: a weight moves by at most 1/256 of itself.
//!
//! Either way a query's vector stays within cosine 0.9995 of the exact one
//! (`tests/suite/embed.rs`). Items' vectors, which are stored and reused,
//! are always computed with the exact weights.

use pulp::{Arch, Simd, WithSimd};

use crate::memory::bf16;

#[cfg(target_arch = "x86_64")]
mod pairs;

/// Up to this many rows a product may be done here; above it, candle's
/// blocked product over the exact weights wins.
pub(super) const MAX_ROWS: usize = 32;

/// At most this many rows' sums are held in registers at once: 6 rows × 2
/// vectors are 12 of AVX2's 16 registers, enough independent sums to keep
/// both FMA units busy.
const TILE_ROWS: usize = 6;

/// A weight matrix packed for a query's product: as pairs of 16-bit
/// integers where AVX2 is there to multiply them (twice the multiply-adds a
/// cycle of f32 FMAs, see [`pairs`]), else in bfloat16.
pub(super) enum PackedWeights {
    #[cfg(target_arch = "x86_64")]
    Pairs(pairs::PairWeights),
    Bf16(Bf16Weights),
}

impl PackedWeights {
    /// Packs `w`, (`k`, `n`) row-major; `None` when neither form takes its
    /// shape (every width of the encoder is a multiple of 32).
    pub(super) fn pack(w: &[f32], k: usize, n: usize) -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if let Some(pairs) = pairs::PairWeights::pack(w, k, n) {
            return Some(PackedWeights::Pairs(pairs));
        }
        Bf16Weights::pack(w, k, n).map(PackedWeights::Bf16)
    }

    /// `x · w` for `x` of (`rows`, `k`), row-major: (`rows`, `n`). `None`
    /// for more than [`MAX_ROWS`] rows or an `x` of another length.
    pub(super) fn product(&self, x: &[f32], rows: usize) -> Option<Vec<f32>> {
        if rows > MAX_ROWS {
            return None;
        }
        match self {
            #[cfg(target_arch = "x86_64")]
            PackedWeights::Pairs(pairs) => pairs.product(x, rows),
            PackedWeights::Bf16(bf16) => bf16.product(x, rows),
        }
    }
}

/// A (`k`, `n`) weight matrix rounded to bfloat16, in strips of two vectors'
/// width: strip after strip, each row of a strip one `u32` per lane holding
/// the column of the first vector in its low half and that of the second in
/// its high half.
pub(super) struct Bf16Weights {
    k: usize,
    n: usize,
    /// f32 lanes per vector on this machine when packed.
    lanes: usize,
    words: Vec<u32>,
}

impl Bf16Weights {
    /// Packs `w`, (`k`, `n`) row-major; `None` when `n` is not a whole
    /// number of strips on this machine.
    pub(super) fn pack(w: &[f32], k: usize, n: usize) -> Option<Self> {
        let lanes = Arch::new().dispatch(Lanes);
        let width = 2 * lanes;
        if k == 0 || n == 0 || !n.is_multiple_of(width) || w.len() != k * n {
            return None;
        }
        let mut words = Vec::with_capacity(k * n / 2);
        for strip in (0..n).step_by(width) {
            for row in w.chunks_exact(n) {
                let strip = &row[strip..strip + width];
                let (low, high) = strip.split_at(lanes);
                words.extend(
                    low.iter().zip(high).map(|(&l, &h)| {
                        u32::from(bf16::round(l)) | (u32::from(bf16::round(h)) << 16)
                    }),
                );
            }
        }
        Some(Bf16Weights { k, n, lanes, words })
    }

    /// `x · w` for `x` of (`rows`, `k`), row-major: (`rows`, `n`). `None`
    /// for more than [`MAX_ROWS`] rows or an `x` of another length.
    pub(super) fn product(&self, x: &[f32], rows: usize) -> Option<Vec<f32>> {
        if rows == 0 || rows > MAX_ROWS || x.len() != rows * self.k {
            return None;
        }
        let mut out = vec![0f32; rows * self.n];
        let done = Arch::new().dispatch(Product {
            weights: self,
            x,
            rows,
            out: &mut out,
        });
        done.then_some(out)
    }
}

/// `rows` split into tiles of at most `most` rows, as even as they go (10
/// rows in tiles of 6 are 5 + 5, not 6 + 4), so every tile has enough sums
/// in flight.
fn even_tiles(rows: usize, most: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let tiles = rows.div_ceil(most);
    let mut first = 0;
    (0..tiles).map(move |t| {
        let take = (rows - first) / (tiles - t);
        first += take;
        first - take..first
    })
}

/// Asks `pulp` how many f32 lanes a vector has on this machine.
struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        S::F32_LANES
    }
}

/// One product's operands, handed to `pulp` to run at the machine's width.
struct Product<'a> {
    weights: &'a Bf16Weights,
    x: &'a [f32],
    rows: usize,
    out: &'a mut [f32],
}

impl WithSimd for Product<'_> {
    /// Whether the product was done: not when the weights were packed for
    /// another width.
    type Output = bool;

    // Everything below is inlined into the function `pulp` compiles for
    // the detected features; a call that is not would leave each vector
    // operation a function call (measured: 50 times slower).
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> bool {
        let Product {
            weights,
            x,
            rows,
            out,
        } = self;
        if weights.lanes != S::F32_LANES {
            return false;
        }
        let (words, _) = S::as_simd_u32s(&weights.words);
        let (k, n) = (weights.k, weights.n);
        // Strips outermost: a strip's k × 2 vectors of weights are read
        // from memory once and stay in cache for every tile of rows.
        for (strip, strip_words) in words.chunks_exact(k).enumerate() {
            let column = strip * 2 * S::F32_LANES;
            for tile_rows in even_tiles(rows, TILE_ROWS) {
                let x = &x[tile_rows.start * k..tile_rows.end * k];
                let out = &mut out[tile_rows.start * n..tile_rows.end * n];
                match tile_rows.len() {
                    6 => tile::<S, 6>(simd, x, strip_words, out, column),
                    5 => tile::<S, 5>(simd, x, strip_words, out, column),
                    4 => tile::<S, 4>(simd, x, strip_words, out, column),
                    3 => tile::<S, 3>(simd, x, strip_words, out, column),
                    2 => tile::<S, 2>(simd, x, strip_words, out, column),
                    _ => tile::<S, 1>(simd, x, strip_words, out, column),
                }
            }
        }
        true
    }
}

/// The `R` rows of `x` times one strip of weights (`k` words of two
/// vectors' columns), written to the strip's columns, from `column`, of the
/// `R` rows of `out`.
#[inline(always)]
fn tile<S: Simd, const R: usize>(
    simd: S,
    x: &[f32],
    strip: &[S::u32s],
    out: &mut [f32],
    column: usize,
) {
    let k = strip.len();
    let zero = simd.splat_f32s(0.0);
    let high_half = simd.splat_u32s(0xffff_0000);
    let sixteen = simd.splat_u32s(16);
    let mut sums = [[zero; 2]; R];
    let rows: [&[f32]; R] = std::array::from_fn(|r| &x[r * k..(r + 1) * k]);
    for (i, &word) in strip.iter().enumerate() {
        // A bfloat16 is the high half of an f32's bits.
        let low = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(word, sixteen));
        let high = simd.transmute_f32s_u32s(simd.and_u32s(word, high_half));
        for (sum, row) in sums.iter_mut().zip(rows) {
            let v = simd.splat_f32s(row[i]);
            sum[0] = simd.mul_add_e_f32s(v, low, sum[0]);
            sum[1] = simd.mul_add_e_f32s(v, high, sum[1]);
        }
    }
    let n = out.len() / R;
    for (r, sum) in sums.iter().enumerate() {
        let at = r * n + column;
        let (row, _) = S::as_mut_simd_f32s(&mut out[at..at + 2 * S::F32_LANES]);
        row[0] = sum[0];
        row[1] = sum[1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same product by the textbook loop, in f64.
    fn reference(x: &[f32], rows: usize, w: &[f32], k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            for c in 0..n {
                let s: f64 = (0..k)
                    .map(|i| f64::from(x[r * k + i]) * f64::from(w[i * n + c]))
                    .sum();
                out[r * n + c] = s as f32;
            }
        }
        out
    }

    /// Deterministic values in [-1, 1).
    pub(super) fn values(len: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
            })
            .collect()
    }

    /// Rounds every value to bfloat16 and back.
    fn rounded(w: &[f32]) -> Vec<f32> {
        w.iter().map(|&v| bf16::widen(bf16::round(v))).collect()
    }

    #[test]
    fn every_row_count_matches_the_textbook_product_of_the_rounded_weights() {
        let (k, n) = (48, 64);
        let w = values(k * n, 7);
        let Some(packed) = Bf16Weights::pack(&w, k, n) else {
            panic!("64 columns were not packed");
        };
        let exact = rounded(&w);
        for rows in 1..=MAX_ROWS {
            let x = values(rows * k, rows as u32);
            let Some(got) = packed.product(&x, rows) else {
                panic!("{rows} rows were not taken");
            };
            let want = reference(&x, rows, &exact, k, n);
            for (g, e) in got.iter().zip(&want) {
                assert!((g - e).abs() < 1e-4, "rows {rows}: {g} against {e}");
            }
        }
    }

    #[test]
    fn rows_are_split_into_tiles_as_even_as_they_go() {
        let split = |rows, most| even_tiles(rows, most).map(|t| t.len()).collect::<Vec<_>>();
        assert_eq!(split(10, 6), vec![5, 5]);
        assert_eq!(split(12, 5), vec![4, 4, 4]);
        assert_eq!(split(13, 5), vec![4, 4, 5]);
        assert_eq!(split(3, 6), vec![3]);
        let tiles: Vec<_> = even_tiles(32, 5).collect();
        assert_eq!(tiles.first().map(|t| t.start), Some(0));
        assert_eq!(tiles.last().map(|t| t.end), Some(32));
        assert!(tiles.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn shapes_it_does_not_take_are_left_to_the_caller() {
        // Two and a half strips' width on this machine.
        let lanes = Arch::new().dispatch(Lanes);
        let uneven = 5 * lanes;
        assert!(
            Bf16Weights::pack(&values(8 * uneven, 1), 8, uneven).is_none(),
            "{uneven} columns"
        );
        assert!(
            Bf16Weights::pack(&values(8 * 32, 1), 8, 64).is_none(),
            "too few weights"
        );
        let Some(packed) = Bf16Weights::pack(&values(8 * 32, 1), 8, 32) else {
            panic!("32 columns were not packed");
        };
        assert!(packed.product(&values(8, 2), 2).is_none(), "x too short");
        let x = values((MAX_ROWS + 1) * 8, 3);
        assert!(packed.product(&x, MAX_ROWS + 1).is_none(), "too many rows");
    }
}
