//! Where recall keeps a channel's vectors while it searches them: a dense
//! matrix per channel, scanned exactly (cosine on unit vectors).
//!
//! Fusion never sees this: it gets ranked keys with their similarity, so a
//! bounded cache or an approximate index can replace this without touching
//! how hits are scored.

use super::recall::ItemKey;

/// One channel's vectors, as a dense matrix (rows in key order).
pub struct ChannelVectors {
    keys: Vec<ItemKey>,
    data: Vec<f32>,
    dim: usize,
}

impl ChannelVectors {
    /// A matrix from `(key, vector)` rows; rows whose length differs from
    /// the first row's are left out.
    pub fn new(mut rows: Vec<(ItemKey, Vec<f32>)>) -> Self {
        rows.sort_by_key(|(k, _)| *k);
        let dim = rows.first().map(|(_, v)| v.len()).unwrap_or(0);
        let mut keys = Vec::with_capacity(rows.len());
        let mut data = Vec::with_capacity(rows.len() * dim);
        for (key, vector) in rows {
            if vector.len() == dim {
                keys.push(key);
                data.extend_from_slice(&vector);
            }
        }
        ChannelVectors { keys, data, dim }
    }

    /// The memory its rows take, in bytes.
    pub fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
            + self.keys.len() * std::mem::size_of::<ItemKey>()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The vector of `key`, if it has one.
    pub fn get(&self, key: ItemKey) -> Option<&[f32]> {
        let row = self.keys.binary_search(&key).ok()?;
        self.data.get(row * self.dim..(row + 1) * self.dim)
    }

    /// The `n` keys closest to `query`, best first, with their similarity.
    pub fn nearest(&self, query: &[f32], n: usize) -> Vec<(ItemKey, f32)> {
        if self.dim == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut scored: Vec<(f32, ItemKey)> = self
            .data
            .chunks_exact(self.dim)
            .zip(&self.keys)
            .map(|(v, k)| (dot(v, query), *k))
            .collect();
        let n = n.min(scored.len());
        if n == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(n - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(n);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(s, k)| (k, s)).collect()
    }
}

/// A dot product written so the compiler vectorises it (eight lanes).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = a.len() / 8;
    for i in 0..chunks {
        for lane in 0..8 {
            acc[lane] += a[i * 8 + lane] * b[i * 8 + lane];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_ranks_by_cosine_and_get_finds_rows() {
        let m = ChannelVectors::new(vec![
            (ItemKey(6), vec![0.0, 1.0]),
            (ItemKey(2), vec![1.0, 0.0]),
            (ItemKey(4), vec![0.6, 0.8]),
            (ItemKey(8), vec![1.0, 0.0, 0.0]),
        ]);
        let near = m.nearest(&[1.0, 0.0], 2);
        assert_eq!(
            near.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [ItemKey(2), ItemKey(4)]
        );
        assert!((near[1].1 - 0.6).abs() < 1e-6);
        assert_eq!(m.get(ItemKey(6)), Some(&[0.0, 1.0][..]));
        assert_eq!(
            m.get(ItemKey(8)),
            None,
            "a row of another length is left out"
        );
    }
}
