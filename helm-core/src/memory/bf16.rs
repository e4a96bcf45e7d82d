//! bfloat16: the top half of an f32's bits (its sign, its exponent and 7 of
//! its 23 mantissa bits), for numbers read far more often than they are
//! written and whose last digits do not change an answer.
//!
//! Recall holds each searched channel's vectors in memory this way
//! ([`vectors`](super::vectors)), and the local embedder multiplies a
//! query by its weights this way. A search reads every vector it scans,
//! and on this machine that is bounded by memory, not arithmetic: half the
//! bytes is nearly half the time, and twice the channels in the same cache.
//! A value moves by at most 1/256 of itself; a cosine between unit vectors
//! of 384 moves by about 10⁻⁴, which reorders only near-ties.

use pulp::{Arch, Simd, WithSimd};

/// Rounds to the nearest bfloat16, ties to even; NaN stays NaN.
pub(crate) fn round(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// The f32 a bfloat16 stands for (exactly).
pub(crate) fn widen(x: u16) -> f32 {
    f32::from_bits(u32::from(x) << 16)
}

/// `row` rounded, appended to `out`.
pub(crate) fn round_into(out: &mut Vec<u16>, row: &[f32]) {
    out.extend(row.iter().map(|&x| round(x)));
}

/// `row` widened back to f32s.
pub(crate) fn widen_row(row: &[u16]) -> Vec<f32> {
    row.iter().map(|&x| widen(x)).collect()
}

/// The dot products of `v` with each of `rows` (bfloat16 rows of its
/// length), appended to `out` in order, at the machine's vector width.
///
/// A search scans thousands of rows; built for the baseline x86-64, the
/// plain loop ([`dot`]) gets four lanes and no fused multiply-adds, so the
/// width is chosen at run time by `pulp` (AVX2 and FMA here), as for the
/// embedder's query product. The scan is still mostly bound by memory:
/// the index's search in a 150,000-vector channel went from 1.4–1.8 to
/// 1.1–1.4 ms at the median, an exact scan of it from 12–14 to 9–11.5 ms
/// (docs/memory.md, "At scale").
pub(crate) fn dots<'a>(rows: impl Iterator<Item = &'a [u16]>, v: &[f32], out: &mut Vec<f32>) {
    // Two bfloat16s share a u32 lane: the even-indexed element in its low
    // half, the odd one in its high half (little-endian), so `v` is split
    // the same way once, and each row is read as u32s where it can be.
    let even: Vec<f32> = v.iter().step_by(2).copied().collect();
    let odd: Vec<f32> = v.iter().skip(1).step_by(2).copied().collect();
    Arch::new().dispatch(Dots {
        rows,
        v,
        even: &even,
        odd: &odd,
        out,
    });
}

/// One [`dots`] call's operands, handed to `pulp`.
struct Dots<'v, 'o, I> {
    rows: I,
    v: &'v [f32],
    even: &'v [f32],
    odd: &'v [f32],
    out: &'o mut Vec<f32>,
}

impl<'r, I: Iterator<Item = &'r [u16]>> WithSimd for Dots<'_, '_, I> {
    type Output = ();

    // Inlined into the function `pulp` compiles for the detected features,
    // as in `few_rows`: a call left out of line would cost a call per row.
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Dots {
            rows,
            v,
            even,
            odd,
            out,
        } = self;
        let (even_head, even_tail) = S::as_simd_f32s(even);
        let (odd_head, odd_tail) = S::as_simd_f32s(odd);
        let high_half = simd.splat_u32s(0xffff_0000);
        let sixteen = simd.splat_u32s(16);
        let zero = simd.splat_f32s(0.0);
        for row in rows {
            let words = match pulp::bytemuck::try_cast_slice::<u16, u32>(row) {
                Ok(words)
                    if cfg!(target_endian = "little")
                        && words.len() == odd.len()
                        && row.len() == v.len() =>
                {
                    words
                }
                // An odd length or a row not aligned to four bytes.
                _ => {
                    out.push(dot(row, v));
                    continue;
                }
            };
            let (head, tail) = S::as_simd_u32s(words);
            // Four sums in flight, so each FMA need not wait for the last.
            let mut sums = [zero; 4];
            let pairs = head
                .chunks_exact(2)
                .zip(even_head.chunks_exact(2))
                .zip(odd_head.chunks_exact(2));
            for ((w, e), o) in pairs {
                for j in 0..2 {
                    let low = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(w[j], sixteen));
                    let high = simd.transmute_f32s_u32s(simd.and_u32s(w[j], high_half));
                    sums[2 * j] = simd.mul_add_e_f32s(low, e[j], sums[2 * j]);
                    sums[2 * j + 1] = simd.mul_add_e_f32s(high, o[j], sums[2 * j + 1]);
                }
            }
            let whole = head.len() / 2 * 2;
            for ((w, e), o) in head[whole..]
                .iter()
                .zip(&even_head[whole..])
                .zip(&odd_head[whole..])
            {
                let low = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(*w, sixteen));
                let high = simd.transmute_f32s_u32s(simd.and_u32s(*w, high_half));
                sums[0] = simd.mul_add_e_f32s(low, *e, sums[0]);
                sums[1] = simd.mul_add_e_f32s(high, *o, sums[1]);
            }
            let sums = simd.add_f32s(
                simd.add_f32s(sums[0], sums[1]),
                simd.add_f32s(sums[2], sums[3]),
            );
            let mut sum = simd.reduce_sum_f32s(sums);
            for ((w, e), o) in tail.iter().zip(even_tail).zip(odd_tail) {
                sum += widen(*w as u16) * e + widen((*w >> 16) as u16) * o;
            }
            out.push(sum);
        }
    }
}

/// The dot product of a bfloat16 row and an f32 vector, in f32, written so
/// the compiler vectorises it (eight lanes).
pub(crate) fn dot(row: &[u16], v: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let whole = row.len().min(v.len()) / 8 * 8;
    let (r8, r_rest) = row.split_at(whole);
    let (v8, v_rest) = v.split_at(whole);
    for (x, y) in r8.chunks_exact(8).zip(v8.chunks_exact(8)) {
        for lane in 0..8 {
            acc[lane] += widen(x[lane]) * y[lane];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in r_rest.iter().zip(v_rest) {
        sum += widen(*x) * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_the_nearest_and_ties_to_even() {
        assert_eq!(round(1.0), 0x3f80);
        assert_eq!(round(-2.0), 0xc000);
        assert_eq!(round(0.0), 0);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even, 1.
        assert_eq!(round(1.0 + 1.0 / 256.0), 0x3f80);
        // 1 + 3 · 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even.
        assert_eq!(round(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(round(1.0 + 1.5 / 256.0), 0x3f81);
        assert!(widen(round(f32::NAN)).is_nan());
        assert_eq!(widen(round(f32::INFINITY)), f32::INFINITY);
        let mut s = 1u32;
        for _ in 0..10_000 {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = f32::from_bits(s & 0xbfff_ffff); // finite, |v| < 2
            if !v.is_normal() {
                // Below f32's normal range the bits left are fewer.
                continue;
            }
            let back = widen(round(v));
            assert!((back - v).abs() <= v.abs() / 256.0, "{v} became {back}");
        }
    }

    #[test]
    fn a_dot_product_is_the_widened_rows() {
        let a: Vec<f32> = (0..21).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..21).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut row = Vec::new();
        round_into(&mut row, &a);
        let want: f32 = widen_row(&row).iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&row, &b) - want).abs() < 1e-5);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&row, &b) - exact).abs() < 0.01);
    }

    #[test]
    fn many_dot_products_match_one_at_a_time_whatever_the_length_or_alignment() {
        let v: Vec<f32> = (0..401).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut data = Vec::new();
        let values: Vec<f32> = (0..4000).map(|i| (i as f32 * 0.11).cos()).collect();
        round_into(&mut data, &values);
        // Every length up to past two vectors' width and a search's 384,
        // each from an even offset (read as u32s) and an odd one (not).
        for len in (1..=40).chain([383, 384, 401]) {
            for from in [0, 1, 2, 3] {
                let rows: Vec<&[u16]> = (0..5).map(|r| &data[from + r * len..][..len]).collect();
                let mut got = Vec::new();
                dots(rows.iter().copied(), &v[..len], &mut got);
                assert_eq!(got.len(), rows.len());
                for (g, row) in got.iter().zip(&rows) {
                    let want = dot(row, &v[..len]);
                    assert!(
                        (g - want).abs() < 1e-4,
                        "len {len} from {from}: {g} against {want}"
                    );
                }
            }
        }
    }
}
