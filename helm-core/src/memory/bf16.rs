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
}
