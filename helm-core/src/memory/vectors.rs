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
//! The matrices hold bfloat16 ([`bf16`](super::bf16)): a search is bounded
//! by the bytes it reads, and in the 100,000-message channel an indexed
//! search took 2.5 ms in f32 (see docs/memory.md, "At scale"). The store
//! keeps every vector in f32; only this copy is rounded.
//!
//! Fusion never sees this: it gets ranked keys with their similarity.

use std::sync::Arc;

use super::bf16;
use super::ivf::{INDEX_FROM, Ivf};
use super::recall::ItemKey;

/// Recent vectors past this many are merged into the main matrix.
pub const MERGE_AT: usize = 2048;

/// Vectors as the store hands them over, rows of one length laid end to
/// end (a channel of 100,000 is one allocation, not 100,000), and the
/// store's number of the newest of them (the number asked after when there
/// are none).
#[derive(Debug, Clone, Default)]
pub struct StoredVectors {
    keys: Vec<ItemKey>,
    data: Vec<f32>,
    dim: usize,
    /// The store's sequence number of the newest row.
    pub last: i64,
}

impl StoredVectors {
    /// None yet, read after the store's number `after`.
    pub fn after(after: i64) -> Self {
        StoredVectors {
            last: after,
            ..Default::default()
        }
    }

    /// Adds a row from its stored bytes (little-endian `f32`s, as
    /// [`encode`](Self::encode) writes them), numbered `seq`. A row whose
    /// length differs from the first row's is left out.
    pub fn push_stored(&mut self, key: ItemKey, bytes: &[u8], seq: i64) {
        self.last = self.last.max(seq);
        if !fits(&mut self.dim, self.keys.is_empty(), bytes.len() / 4) {
            return;
        }
        self.keys.push(key);
        self.data.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }

    /// Adds a row (left out when its length differs from the first row's).
    pub fn push(&mut self, key: ItemKey, vector: &[f32]) {
        if fits(&mut self.dim, self.keys.is_empty(), vector.len()) {
            self.keys.push(key);
            self.data.extend_from_slice(vector);
        }
    }

    /// The rows, in the order they were stored.
    pub fn rows(&self) -> impl Iterator<Item = (ItemKey, &[f32])> {
        let dim = self.dim.max(1);
        self.keys.iter().copied().zip(self.data.chunks_exact(dim))
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// A vector as the store keeps it: little-endian `f32`s.
    pub fn encode(vector: &[f32]) -> Vec<u8> {
        vector.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
}

/// Whether a row of `len` values joins rows of length `*dim`; the first
/// row (`empty`, no length yet) sets the length.
fn fits(dim: &mut usize, empty: bool, len: usize) -> bool {
    if empty && *dim == 0 {
        *dim = len;
    }
    len > 0 && len == *dim
}

/// One channel's vectors.
pub struct ChannelVectors {
    main: Arc<Matrix>,
    /// Rows stored since `main` was made, in the order they came.
    recent: Arc<Matrix>,
    last: i64,
}

/// Rows of one length, in bfloat16. `main`'s are in key order, or, once
/// indexed, list by list (the index's order) with `by_key` giving the key
/// order.
struct Matrix {
    keys: Vec<ItemKey>,
    data: Vec<u16>,
    dim: usize,
    index: Option<Ivf>,
    /// The rows in key order, when they are not kept in it (indexed).
    by_key: Vec<u32>,
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
            by_key: Vec::new(),
            trained_on: 0,
        }
    }

    /// Its rows in key order (of a matrix kept in key order or indexed).
    fn key_order(&self) -> impl Iterator<Item = usize> + '_ {
        let direct = if self.by_key.is_empty() {
            self.keys.len()
        } else {
            0
        };
        (0..direct).chain(self.by_key.iter().map(|&r| r as usize))
    }

    /// The row of `key` in a matrix kept in key order or indexed.
    fn find(&self, key: ItemKey) -> Option<usize> {
        if self.by_key.is_empty() {
            return self.keys.binary_search(&key).ok();
        }
        let at = self
            .by_key
            .binary_search_by_key(&key, |&r| self.keys[r as usize])
            .ok()?;
        Some(self.by_key[at] as usize)
    }

    /// Indexes a matrix kept in key order with `centroids`, rows in lists
    /// `lists_of`: the rows move, in place, into the index's order.
    fn index_with(&mut self, centroids: Vec<f32>, lists_of: &[u32]) {
        let (ivf, order) = Ivf::grouped(self.dim, centroids, lists_of);
        // Row `place` takes the row now at `order[place]`, cycle by cycle,
        // so no second copy of the matrix is made.
        let dim = self.dim;
        let mut done = vec![false; order.len()];
        let mut spare = vec![0u16; dim];
        for start in 0..order.len() {
            if done[start] || order[start] as usize == start {
                continue;
            }
            spare.copy_from_slice(&self.data[start * dim..(start + 1) * dim]);
            let spare_key = self.keys[start];
            let mut place = start;
            loop {
                done[place] = true;
                let from = order[place] as usize;
                if from == start {
                    self.data[place * dim..(place + 1) * dim].copy_from_slice(&spare);
                    self.keys[place] = spare_key;
                    break;
                }
                self.data
                    .copy_within(from * dim..(from + 1) * dim, place * dim);
                self.keys[place] = self.keys[from];
                place = from;
            }
        }
        // The rows were in key order: the one of rank `r` is now at the
        // place that took row `r`.
        let mut by_key = vec![0u32; order.len()];
        for (place, &rank) in order.iter().enumerate() {
            by_key[rank as usize] = place as u32;
        }
        self.by_key = by_key;
        self.index = Some(ivf);
    }

    fn row(&self, i: usize) -> &[u16] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Appends rows of its length (or, while empty of a length, of the
    /// first row's), rounded.
    fn extend<'a>(&mut self, rows: impl Iterator<Item = (ItemKey, &'a [f32])>) {
        for (key, vector) in rows {
            if fits(&mut self.dim, self.keys.is_empty(), vector.len()) {
                self.keys.push(key);
                bf16::round_into(&mut self.data, vector);
            }
        }
    }

    /// Appends a row of another matrix (of this one's length).
    fn push_row(&mut self, key: ItemKey, row: &[u16]) {
        if fits(&mut self.dim, self.keys.is_empty(), row.len()) {
            self.keys.push(key);
            self.data.extend_from_slice(row);
        }
    }

    fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<u16>()
            + self.keys.len() * std::mem::size_of::<ItemKey>()
            + self.by_key.len() * std::mem::size_of::<u32>()
            + self.index.as_ref().map_or(0, Ivf::bytes)
    }

    /// The best `n` rows of `rows` for `query`, as (similarity, key).
    fn best(
        &self,
        query: &[f32],
        rows: impl Iterator<Item = usize>,
        n: usize,
    ) -> Vec<(f32, ItemKey)> {
        let rows: Vec<usize> = rows.collect();
        let mut sims = Vec::with_capacity(rows.len());
        bf16::dots(rows.iter().map(|&i| self.row(i)), query, &mut sims);
        let mut scored: Vec<(f32, ItemKey)> = sims
            .into_iter()
            .zip(&rows)
            .map(|(s, &i)| (s, self.keys[i]))
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
    #[cfg(test)]
    pub(crate) fn new(rows: Vec<(ItemKey, Vec<f32>)>) -> Self {
        let mut stored = StoredVectors::after(0);
        for (key, vector) in &rows {
            stored.push(*key, vector);
        }
        Self::loaded(stored)
    }

    /// A channel's vectors as read whole from the store (each key once).
    /// Not indexed: see [`merged`](Self::merged).
    pub fn loaded(stored: StoredVectors) -> Self {
        let dim = stored.dim;
        // Items are mostly embedded in the order they were made, so the
        // rows usually arrive in key order already and are kept as they are.
        let mut main = Matrix::empty(dim);
        if stored.keys.is_sorted() {
            main.data.reserve_exact(stored.data.len());
            bf16::round_into(&mut main.data, &stored.data);
            main.keys = stored.keys;
        } else {
            let mut order: Vec<usize> = (0..stored.keys.len()).collect();
            order.sort_by_key(|&i| stored.keys[i]);
            order.dedup_by_key(|i| stored.keys[*i]);
            main.keys = order.iter().map(|&i| stored.keys[i]).collect();
            main.data.reserve_exact(order.len() * dim);
            for &i in &order {
                bf16::round_into(&mut main.data, &stored.data[i * dim..(i + 1) * dim]);
            }
        }
        ChannelVectors {
            main: Arc::new(main),
            recent: Arc::new(Matrix::empty(dim)),
            last: stored.last,
        }
    }

    /// The memory one row of `dim` values takes when held, its key
    /// included (an index adds a little, see [`bytes`](Self::bytes)).
    pub fn row_bytes(dim: usize) -> usize {
        dim * std::mem::size_of::<u16>() + std::mem::size_of::<ItemKey>()
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
        recent.extend(newer.rows());
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
        let main_keys = &self.main.keys;
        let mut order: Vec<(ItemKey, bool, usize)> = self
            .main
            .key_order()
            .filter(|&i| !newest.contains_key(&main_keys[i]))
            .map(|i| (main_keys[i], false, i))
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
            let lists = match (&self.main.index, keep) {
                (Some(ivf), true) => {
                    let lists_of = known
                        .iter()
                        .zip(main.data.chunks_exact(dim))
                        .map(|(list, v)| {
                            list.unwrap_or_else(|| Ivf::place(ivf.centroids(), &bf16::widen_row(v)))
                        })
                        .collect();
                    Some((ivf.centroids().to_vec(), lists_of))
                }
                _ => Ivf::train(&main.data, dim),
            };
            if let Some((centroids, lists_of)) = lists {
                main.index_with(centroids, &lists_of);
                main.trained_on = if keep { self.main.trained_on } else { n };
            }
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
        let mut recent = Matrix::empty(self.dim());
        for i in taken..self.recent.keys.len() {
            recent.push_row(self.recent.keys[i], self.recent.row(i));
        }
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

    /// Whether `key` has a vector here.
    pub fn contains(&self, key: ItemKey) -> bool {
        self.main.find(key).is_some() || self.recent.keys.contains(&key)
    }

    /// The vector of `key`, if it has one (as held: rounded to bfloat16).
    pub fn get(&self, key: ItemKey) -> Option<Vec<f32>> {
        if let Some(i) = self.recent.keys.iter().rposition(|k| *k == key) {
            return Some(bf16::widen_row(self.recent.row(i)));
        }
        Some(bf16::widen_row(self.main.row(self.main.find(key)?)))
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
            Some(ivf) => main.best(query, ivf.probe(query).into_iter().flatten(), n),
            None => main.best(query, 0..main.keys.len(), n),
        };
        if !self.recent.keys.is_empty() {
            // The newest row of a key replaces its older ones, recent or main.
            let recent = &self.recent;
            let mut seen = std::collections::HashSet::new();
            let rows = (0..recent.keys.len())
                .rev()
                .filter(|&i| seen.insert(recent.keys[i]));
            // Only the best `n` of them can be in the answer.
            let newest = recent.best(query, rows, n);
            scored.retain(|(_, k)| !seen.contains(k));
            scored.extend(newest);
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

    /// `v` as a matrix holds it: rounded to bfloat16.
    fn held(v: &[f32]) -> Option<Vec<f32>> {
        Some(v.iter().map(|&x| bf16::widen(bf16::round(x))).collect())
    }

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
        assert!((near[1].1 - 0.6).abs() < 0.6 / 256.0);
        assert_eq!(m.get(ItemKey(6)), held(&[0.0, 1.0]));
        assert_eq!(
            m.get(ItemKey(8)),
            None,
            "a row of another length is left out"
        );
    }

    fn stored(rows: &[(i64, [f32; 2])], last: i64) -> StoredVectors {
        let mut stored = StoredVectors::after(0);
        for (seq, (k, v)) in rows.iter().enumerate() {
            stored.push_stored(ItemKey(*k), &StoredVectors::encode(v), seq as i64 + 1);
        }
        stored.last = last;
        stored
    }

    #[test]
    fn newer_rows_are_searched_and_replace_older_ones_of_their_key() {
        let v = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0]), (4, [0.0, 1.0])], 7));
        let v = v.with_newer(stored(&[(6, [0.8, 0.6]), (4, [0.6, 0.8])], 9));
        assert_eq!(v.last_stored(), 9);
        assert_eq!(v.get(ItemKey(4)), held(&[0.6, 0.8]));
        let near = v.nearest(&[0.0, 1.0], 3);
        assert_eq!(
            near.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            [ItemKey(4), ItemKey(6), ItemKey(2)],
            "key 4 once, with its newer vector"
        );
        assert!((near[0].1 - 0.8).abs() < 0.8 / 256.0);
        // Merged, the same answers from one matrix.
        let m = v.merged();
        assert_eq!(m.len(), 3);
        assert_eq!(m.nearest(&[0.0, 1.0], 3), near);
        assert_eq!(m.last_stored(), 9);
    }

    #[test]
    fn a_key_stored_twice_since_the_merge_is_searched_by_its_newest_vector() {
        let v = ChannelVectors::loaded(stored(&[(2, [0.6, 0.8])], 1));
        let v = v.with_newer(stored(
            &[
                (4, [0.0, 1.0]),
                (6, [0.8, 0.6]),
                (8, [0.6, 0.8]),
                (10, [1.0, 0.0]),
            ],
            5,
        ));
        let v = v.with_newer(stored(&[(4, [1.0, 0.0]), (12, [0.0, 1.0])], 7));
        let near = v.nearest(&[0.0, 1.0], 10);
        assert_eq!(near.iter().filter(|(k, _)| *k == ItemKey(4)).count(), 1);
        let four = near.iter().find(|(k, _)| *k == ItemKey(4)).map(|(_, s)| *s);
        assert_eq!(four, Some(0.0), "key 4's newest vector is [1, 0]");
        assert_eq!(near[0].0, ItemKey(12));
        assert_eq!(v.get(ItemKey(4)), held(&[1.0, 0.0]));
    }

    #[test]
    fn a_merge_made_meanwhile_keeps_the_rows_that_came_after_it() -> anyhow::Result<()> {
        let v = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0])], 1));
        let v = v.with_newer(stored(&[(4, [0.0, 1.0])], 2));
        let merged = v.merged();
        // Rows arrive while the merge runs.
        let now = v.with_newer(stored(&[(6, [0.6, 0.8])], 3));
        let rebased = now
            .rebased(&v, &merged)
            .ok_or_else(|| anyhow::anyhow!("the same main matrix, yet no rebase"))?;
        assert_eq!(rebased.len(), 3);
        assert_eq!(rebased.recent.keys, [ItemKey(6)]);
        assert_eq!(rebased.last_stored(), 3);
        // A channel read afresh meanwhile does not take an old merge.
        let reread = ChannelVectors::loaded(stored(&[(2, [1.0, 0.0])], 1));
        assert!(reread.rebased(&v, &merged).is_none());
        Ok(())
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
        let stored = |rows: &[(ItemKey, Vec<f32>)]| {
            let mut stored = StoredVectors::after(0);
            rows.iter().for_each(|(k, v)| stored.push(*k, v));
            stored
        };
        let v = ChannelVectors::loaded(stored(first));
        assert!(v.wants_merge() && !v.is_indexed());
        let v = v.merged();
        assert!(v.is_indexed() && !v.wants_merge());
        let trained = v.main.trained_on;
        let grown = v.with_newer(stored(rest)).merged();
        assert_eq!(grown.len(), INDEX_FROM + 100);
        assert_eq!(grown.main.trained_on, trained, "the centroids are kept");
        // Every row is found by its own vector, and by its key, though the
        // index moved the rows out of key order.
        for (key, vector) in rows.iter().step_by(997) {
            assert_eq!(grown.nearest(vector, 1)[0].0, *key);
            assert_eq!(grown.get(*key), held(vector));
        }
        assert_eq!(grown.get(ItemKey(1)), None);
        // A key stored again keeps one row, the newer, through a merge.
        let (key, _) = &rows[5];
        let again = grown.with_newer(stored(&rows[7..8]));
        let mut moved = StoredVectors::after(3);
        moved.push(*key, &rows[9].1);
        let again = again.with_newer(moved).merged();
        assert_eq!(again.len(), INDEX_FROM + 100);
        assert_eq!(again.get(*key), held(&rows[9].1));
        assert!(again.is_indexed());
    }
}
