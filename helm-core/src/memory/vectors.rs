//! Where recall keeps a channel's vectors while it searches them: a dense
//! matrix per channel (cosine on unit vectors), indexed with an
//! [`Ivf`] once the channel is large, plus the vectors stored since the
//! matrix was made.
//!
//! A channel's vectors change as its messages and records are embedded.
//! Reading them all again after each change would cost a large channel
//! about a second per recall, so the store numbers every vector it stores
//! and a refresh reads only those after the newest held
//! ([`ChannelVectors::with_newer`]). They sit in a small `recent` matrix,
//! scanned exactly, until [`ChannelVectors::merged`] folds them into the
//! main one (the engine does that on a blocking thread).
//!
//! Fusion never sees this: it gets ranked keys with their similarity.

use std::sync::Arc;

use super::ivf::{INDEX_FROM, Ivf};
use super::recall::ItemKey;

/// Recent vectors past this many are merged into the main matrix.
pub const MERGE_AT: usize = 2048;

/// Vectors as the store hands them over: rows, and the store's number of
/// the newest of them (0 when there are none).
#[derive(Debug, Clone, Default)]
pub struct StoredVectors {
    /// Items and their vectors.
    pub rows: Vec<(ItemKey, Vec<f32>)>,
    /// The store's sequence number of the newest row.
    pub last: i64,
}

impl StoredVectors {
    /// A vector as the store keeps it: little-endian `f32`s.
    pub fn encode(vector: &[f32]) -> Vec<u8> {
        vector.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// A vector from its stored bytes (a trailing partial `f32` is dropped).
    pub fn decode(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }
}

/// One channel's vectors.
pub struct ChannelVectors {
    main: Arc<Matrix>,
    /// Rows stored since `main` was made, in the order they came.
    recent: Arc<Matrix>,
    last: i64,
}

/// Rows of one length; `main`'s are in key order and may be indexed.
struct Matrix {
    keys: Vec<ItemKey>,
    data: Vec<f32>,
    dim: usize,
    index: Option<Ivf>,
    /// How many rows the index's centroids were trained on.
    trained_on: usize,
}

impl Matrix {
    fn empty(dim: usize) -> Self {
        Matrix {
            keys: Vec::new(),
            data: Vec::new(),
            dim,
            index: None,
            trained_on: 0,
        }
    }

    fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Appends the rows of length `dim` (or, while empty of a length, the
    /// first row's).
    fn extend(&mut self, rows: Vec<(ItemKey, Vec<f32>)>) {
        for (key, vector) in rows {
            if self.dim == 0 && self.keys.is_empty() {
                self.dim = vector.len();
            }
            if vector.len() == self.dim && self.dim > 0 {
                self.keys.push(key);
                self.data.extend_from_slice(&vector);
            }
        }
    }

    fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
            + self.keys.len() * std::mem::size_of::<ItemKey>()
            + self.index.as_ref().map_or(0, Ivf::bytes)
    }

    /// The best `n` rows of `rows` for `query`, as (similarity, key).
    fn best(
        &self,
        query: &[f32],
        rows: impl Iterator<Item = usize>,
        n: usize,
    ) -> Vec<(f32, ItemKey)> {
        let mut scored: Vec<(f32, ItemKey)> = rows
            .map(|i| (dot(self.row(i), query), self.keys[i]))
            .collect();
        let n = n.min(scored.len());
        if n == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(n - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(n);
        scored
    }
}

impl ChannelVectors {
    /// A matrix from `(key, vector)` rows; rows whose length differs from
    /// the first row's are left out.
    pub fn new(rows: Vec<(ItemKey, Vec<f32>)>) -> Self {
        Self::loaded(StoredVectors { rows, last: 0 })
    }

    /// A channel's vectors as read whole from the store. Not indexed: see
    /// [`merged`](Self::merged).
    pub fn loaded(mut stored: StoredVectors) -> Self {
        stored.rows.sort_by_key(|(k, _)| *k);
        stored.rows.dedup_by_key(|(k, _)| *k);
        let mut main = Matrix::empty(0);
        main.extend(stored.rows);
        let dim = main.dim;
        ChannelVectors {
            main: Arc::new(main),
            recent: Arc::new(Matrix::empty(dim)),
            last: stored.last,
        }
    }

    /// The store's number of the newest vector held: a refresh asks for
    /// those after it.
    pub fn last_stored(&self) -> i64 {
        self.last
    }

    /// These vectors and `newer` ones, read from the store since: they
    /// join the recent rows (a row for a key held already replaces it).
    /// The main matrix is shared, not copied.
    pub fn with_newer(&self, newer: StoredVectors) -> Self {
        let mut recent = Matrix::empty(self.dim());
        recent.keys = self.recent.keys.clone();
        recent.data = self.recent.data.clone();
        recent.extend(newer.rows);
        ChannelVectors {
            main: self.main.clone(),
            recent: Arc::new(recent),
            last: self.last.max(newer.last),
        }
    }

    fn dim(&self) -> usize {
        self.main.dim.max(self.recent.dim)
    }

    /// Whether [`merged`](Self::merged) is due: many recent rows, or a
    /// channel grown large enough to index that is not indexed yet.
    pub fn wants_merge(&self) -> bool {
        self.recent.keys.len() >= MERGE_AT
            || (self.main.index.is_none() && self.len() >= INDEX_FROM)
    }

    /// How many rows it holds (a key stored twice counts twice until merged).
    pub fn len(&self) -> usize {
        self.main.keys.len() + self.recent.keys.len()
    }

    /// One matrix of every row (a recent row replaces the main row of its
    /// key), indexed when large. The index's centroids are kept while the
    /// channel has not doubled since they were trained (the new rows join
    /// their nearest lists); past that they are trained again. Costs a
    /// copy of the rows, and for a new index a few seconds at 100,000
    /// rows: call it off the request path.
    pub fn merged(&self) -> Self {
        let dim = self.dim();
        let recent = &self.recent;
        let mut newest: std::collections::HashMap<ItemKey, usize> =
            std::collections::HashMap::with_capacity(recent.keys.len());
        for (i, k) in recent.keys.iter().enumerate() {
            newest.insert(*k, i);
        }
        let mut order: Vec<(ItemKey, bool, usize)> = self
            .main
            .keys
            .iter()
            .enumerate()
            .filter(|(_, k)| !newest.contains_key(k))
            .map(|(i, k)| (*k, false, i))
            .collect();
        order.extend(newest.iter().map(|(k, i)| (*k, true, *i)));
        order.sort_unstable_by_key(|(k, _, _)| *k);
        // Rows that were in the main matrix keep their list when the
        // centroids are kept; only new rows are placed.
        let n = order.len();
        let keep = self.main.index.is_some() && n >= INDEX_FROM && self.main.trained_on * 2 > n;
        let old_lists = match (&self.main.index, keep) {
            (Some(ivf), true) => ivf.lists_of_rows(),
            _ => Vec::new(),
        };
        let mut main = Matrix::empty(dim);
        main.keys.reserve(n);
        main.data.reserve(n * dim);
        let mut known: Vec<Option<u32>> = Vec::with_capacity(if keep { n } else { 0 });
        for (key, is_recent, i) in order {
            let from = if is_recent { recent } else { &self.main };
            if from.dim == dim {
                main.keys.push(key);
                main.data.extend_from_slice(from.row(i));
                if keep {
                    known.push(if is_recent {
                        None
                    } else {
                        old_lists.get(i).copied()
                    });
                }
            }
        }
        let n = main.keys.len();
        if n >= INDEX_FROM {
            main.index = match (&self.main.index, keep) {
                (Some(ivf), true) => Some(ivf.regrouped(&main.data, &known)),
                _ => Ivf::build(&main.data, dim),
            };
            main.trained_on = if keep { self.main.trained_on } else { n };
        }
        ChannelVectors {
            main: Arc::new(main),
            recent: Arc::new(Matrix::empty(dim)),
            last: self.last,
        }
    }

    /// `merged`, a merge of `from` made on another thread, with the rows
    /// this one took in since `from` (when this one still grows from the
    /// same main matrix); `None` when `merged` no longer applies.
    pub fn rebased(&self, from: &ChannelVectors, merged: &ChannelVectors) -> Option<Self> {
        if !Arc::ptr_eq(&self.main, &from.main) {
            return None;
        }
        let taken = from.recent.keys.len();
        let rows: Vec<(ItemKey, Vec<f32>)> = (taken..self.recent.keys.len())
            .map(|i| (self.recent.keys[i], self.recent.row(i).to_vec()))
            .collect();
        let mut recent = Matrix::empty(self.dim());
        recent.extend(rows);
        Some(ChannelVectors {
            main: merged.main.clone(),
            recent: Arc::new(recent),
            last: self.last,
        })
    }

    /// Whether its main matrix is indexed.
    pub fn is_indexed(&self) -> bool {
        self.main.index.is_some()
    }

    /// The memory its rows take, in bytes.
    pub fn bytes(&self) -> usize {
        self.main.bytes() + self.recent.bytes()
    }

    /// Whether it holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vector of `key`, if it has one.
    pub fn get(&self, key: ItemKey) -> Option<&[f32]> {
        if let Some(i) = self.recent.keys.iter().rposition(|k| *k == key) {
            return Some(self.recent.row(i));
        }
        let row = self.main.keys.binary_search(&key).ok()?;
        Some(self.main.row(row))
    }

    /// The `n` keys closest to `query`, best first, with their similarity:
    /// exact over the recent rows and a small main matrix, through the
    /// index over an indexed one.
    pub fn nearest(&self, query: &[f32], n: usize) -> Vec<(ItemKey, f32)> {
        let dim = self.dim();
        if dim == 0 || query.len() != dim {
            return Vec::new();
        }
        let main = &self.main;
        let mut scored = match &main.index {
            Some(ivf) => main.best(query, ivf.probe(query).into_iter().map(|r| r as usize), n),
            None => main.best(query, 0..main.keys.len(), n),
        };
        if !self.recent.keys.is_empty() {
            // A recent row replaces the main row of its key.
            let recent: std::collections::HashSet<ItemKey> =
                self.recent.keys.iter().copied().collect();
            scored.retain(|(_, k)| !recent.contains(k));
            let mut newest = self
                .recent
                .best(query, 0..self.recent.keys.len(), usize::MAX);
            newest.reverse();
            let mut seen = std::collections::HashSet::new();
            scored.extend(newest.into_iter().filter(|(_, k)| seen.insert(*k)));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(n);
        scored.into_iter().map(|(s, k)| (k, s)).collect()
    }
}

/// A dot product written so the compiler vectorises it (eight lanes).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for lane in 0..8 {
            acc[lane] += x[lane] * y[lane];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum += x * y;
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

    fn stored(rows: &[(i64, [f32; 2])], last: i64) -> StoredVectors {
        StoredVectors {
            rows: rows
                .iter()
                .map(|(k, v)| (ItemKey(*k), v.to_vec()))
                .collect(),
            last,
        }
    }

    #[test]
    fn newer_rows_are_searched_and_replace_older_ones_of_their_key() {
        let v = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0]), (4, [0.0, 1.0])], 7));
        let v = v.with_newer(stored(&[(6, [0.8, 0.6]), (4, [0.6, 0.8])], 9));
        assert_eq!(v.last_stored(), 9);
        assert_eq!(v.get(ItemKey(4)), Some(&[0.6, 0.8][..]));
        let near = v.nearest(&[0.0, 1.0], 3);
        assert_eq!(
            near.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [ItemKey(4), ItemKey(6), ItemKey(2)],
            "key 4 once, with its newer vector"
        );
        assert!((near[0].1 - 0.8).abs() < 1e-6);
        // Merged, the same answers from one matrix.
        let m = v.merged();
        assert_eq!(m.len(), 3);
        assert_eq!(m.nearest(&[0.0, 1.0], 3), near);
        assert_eq!(m.last_stored(), 9);
    }

    #[test]
    fn a_merge_made_meanwhile_keeps_the_rows_that_came_after_it() {
        let v = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0])], 1));
        let v = v.with_newer(stored(&[(4, [0.0, 1.0])], 2));
        let merged = v.merged();
        // Rows arrive while the merge runs.
        let now = v.with_newer(stored(&[(6, [0.6, 0.8])], 3));
        let rebased = now.rebased(&v, &merged).expect("same main matrix");
        assert_eq!(rebased.len(), 3);
        assert_eq!(rebased.recent.keys, [ItemKey(6)]);
        assert_eq!(rebased.last_stored(), 3);
        // A channel read afresh meanwhile does not take an old merge.
        let reread = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0])], 1));
        assert!(reread.rebased(&v, &merged).is_none());
    }

    #[test]
    fn a_large_channel_is_indexed_and_keeps_its_centroids_until_it_doubles() {
        let dim = 16;
        let data = super::super::ivf::tests::clustered(INDEX_FROM + 100, dim, 40, 3);
        let rows: Vec<(ItemKey, Vec<f32>)> = data
            .chunks_exact(dim)
            .enumerate()
            .map(|(i, v)| (ItemKey(2 * i as i64), v.to_vec()))
            .collect();
        let (first, rest) = rows.split_at(INDEX_FROM);
        let v = ChannelVectors::loaded(StoredVectors {
            rows: first.to_vec(),
            last: 1,
        });
        assert!(v.wants_merge() && !v.is_indexed());
        let v = v.merged();
        assert!(v.is_indexed() && !v.wants_merge());
        let trained = v.main.trained_on;
        let grown = v
            .with_newer(StoredVectors {
                rows: rest.to_vec(),
                last: 2,
            })
            .merged();
        assert_eq!(grown.len(), INDEX_FROM + 100);
        assert_eq!(grown.main.trained_on, trained, "the centroids are kept");
        // Every row is found by its own vector.
        for (key, vector) in rows.iter().step_by(997) {
            assert_eq!(grown.nearest(vector, 1)[0].0, *key);
        }
    }
}
