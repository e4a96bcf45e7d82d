//! An inverted-file index (IVF) over one channel's vectors, so a meaning
//! search in a large channel scans a few of its neighbourhoods instead of
//! every vector.
//!
//! The vectors are grouped around `lists` centroids found by spherical
//! k-means (cosine on unit vectors) on an evenly strided sample; each vector
//! belongs to the list of its nearest centroid. A search ranks the centroids
//! against the query and scans the rows of the nearest lists until at least
//! a fixed share of the channel has been scanned. That is approximate: a
//! true neighbour whose centroid ranks low is missed. The tests hold it to
//! the exact scan's top hits on clustered data, and recall keeps the exact
//! scan for channels below [`INDEX_FROM`], where it is fast enough.
//!
//! Building is deterministic (no random start) and costs about
//! `n × lists × dim × 2` multiply-adds, a few seconds for 100,000 vectors;
//! the engine builds it on a blocking thread, off the request path.

use super::bf16;
use super::vectors::dot;

/// Channels with at least this many vectors are indexed; below it an exact
/// scan takes about a millisecond.
pub const INDEX_FROM: usize = 20_000;
/// The share of a channel's rows a search scans, at least: about 1 in 8,
/// which keeps nearly all of the exact scan's top hits on real embeddings
/// (see the `memory_scale` bench).
const SCAN_SHARE: usize = 8;
/// Vectors the centroids are trained on, per list.
const SAMPLE_PER_LIST: usize = 40;
/// Rounds of k-means on the sample.
const ROUNDS: usize = 8;

/// The index: centroids, and where each list's rows lie. The matrix it
/// indexes keeps each list's rows together ([`Ivf::grouped`] gives the
/// order), so a search streams through a few runs of memory: scanning an
/// eighth of the rows gathered one by one from all over the matrix cost
/// nearly as much as scanning all of them in order.
pub struct Ivf {
    dim: usize,
    centroids: Vec<f32>,
    /// List `l`'s rows are the matrix's rows `starts[l]..starts[l + 1]`.
    starts: Vec<u32>,
}

impl Ivf {
    /// Centroids for `data`, rows of `dim` unit vectors in bfloat16 (as
    /// recall holds them), and the list of each row. `None` when there are
    /// too few rows to group (fewer than two per list).
    pub fn train(data: &[u16], dim: usize) -> Option<(Vec<f32>, Vec<u32>)> {
        if dim == 0 {
            return None;
        }
        let n = data.len() / dim;
        let lists = (n as f64).sqrt().round() as usize;
        if lists < 2 || n < 2 * lists {
            return None;
        }
        let row = |i: usize| bf16::widen_row(&data[i * dim..(i + 1) * dim]);
        let sample: Vec<usize> = strided(n, (lists * SAMPLE_PER_LIST).min(n));
        // Start from evenly strided sample rows: deterministic, and spread
        // over the channel's history.
        let mut centroids: Vec<f32> = strided(sample.len(), lists)
            .into_iter()
            .flat_map(|s| row(sample[s]))
            .collect();
        let mut nearest = vec![(0usize, 0f32); sample.len()];
        for _ in 0..ROUNDS {
            for (slot, &i) in nearest.iter_mut().zip(&sample) {
                *slot = closest(&centroids, dim, &row(i));
            }
            let mut sums = vec![0f32; lists * dim];
            let mut counts = vec![0usize; lists];
            for (&(list, _), &i) in nearest.iter().zip(&sample) {
                counts[list] += 1;
                for (s, x) in sums[list * dim..(list + 1) * dim].iter_mut().zip(row(i)) {
                    *s += x;
                }
            }
            // An empty list restarts at a sample row its centroid serves
            // worst, so no centroid is wasted.
            let mut spare = Vec::new();
            if counts.contains(&0) {
                spare = (0..sample.len()).collect();
                spare.sort_by(|a, b| nearest[*a].1.total_cmp(&nearest[*b].1));
            }
            let mut spare = spare.into_iter();
            for list in 0..lists {
                let centroid = &mut sums[list * dim..(list + 1) * dim];
                if counts[list] == 0
                    && let Some(s) = spare.next()
                {
                    centroid.copy_from_slice(&row(sample[s]));
                }
                super::embed::normalize(centroid);
            }
            centroids = sums;
        }
        let lists_of = (0..n)
            .map(|i| closest(&centroids, dim, &row(i)).0 as u32)
            .collect();
        Some((centroids, lists_of))
    }

    /// The list of `centroids` nearest to `vector`.
    pub fn place(centroids: &[f32], vector: &[f32]) -> u32 {
        closest(centroids, vector.len(), vector).0 as u32
    }

    /// The index of `centroids` over rows whose lists are `lists_of`, and
    /// the order to keep those rows in: the matrix's row `i` is to be the
    /// current row `order[i]` (lists in turn, rows in their order within).
    pub fn grouped(dim: usize, centroids: Vec<f32>, lists_of: &[u32]) -> (Ivf, Vec<u32>) {
        let lists = centroids.len() / dim;
        let mut starts = vec![0u32; lists + 1];
        for &list in lists_of {
            starts[list as usize + 1] += 1;
        }
        for list in 0..lists {
            starts[list + 1] += starts[list];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; lists_of.len()];
        for (i, &list) in lists_of.iter().enumerate() {
            order[next[list as usize] as usize] = i as u32;
            next[list as usize] += 1;
        }
        let ivf = Ivf {
            dim,
            centroids,
            starts,
        };
        (ivf, order)
    }

    /// Its centroids, rows of `dim`.
    pub fn centroids(&self) -> &[f32] {
        &self.centroids
    }

    /// The list each of the matrix's rows is in, by row.
    pub fn lists_of_rows(&self) -> Vec<u32> {
        let mut lists_of = Vec::with_capacity(self.rows());
        for (list, run) in self.starts.windows(2).enumerate() {
            lists_of.extend(std::iter::repeat_n(list as u32, (run[1] - run[0]) as usize));
        }
        lists_of
    }

    fn rows(&self) -> usize {
        self.starts.last().map_or(0, |&n| n as usize)
    }

    /// The runs of rows a search for `query` scans: the lists nearest to
    /// it, until at least one row in [`SCAN_SHARE`] is taken.
    pub fn probe(&self, query: &[f32]) -> Vec<std::ops::Range<usize>> {
        let mut order: Vec<(f32, usize)> = self
            .centroids
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(list, c)| (dot(c, query), list))
            .collect();
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let want = self.rows().div_ceil(SCAN_SHARE);
        let (mut taken, mut runs) = (0, Vec::new());
        for (_, list) in order {
            if taken >= want {
                break;
            }
            let run = self.starts[list] as usize..self.starts[list + 1] as usize;
            taken += run.len();
            runs.push(run);
        }
        runs
    }

    /// The memory it takes, in bytes.
    pub fn bytes(&self) -> usize {
        self.centroids.len() * std::mem::size_of::<f32>()
            + self.starts.len() * std::mem::size_of::<u32>()
    }
}

/// `count` indexes spread evenly over `0..n`.
fn strided(n: usize, count: usize) -> Vec<usize> {
    (0..count).map(|i| i * n / count.max(1)).collect()
}

/// The centroid nearest to `v`, and its similarity.
fn closest(centroids: &[f32], dim: usize, v: &[f32]) -> (usize, f32) {
    let mut best = (0, f32::NEG_INFINITY);
    for (list, c) in centroids.chunks_exact(dim).enumerate() {
        let s = dot(c, v);
        if s > best.1 {
            best = (list, s);
        }
    }
    best
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Unit vectors in `clusters` groups around random centres, as
    /// embeddings of a conversation fall around its topics.
    pub(crate) fn clustered(n: usize, dim: usize, clusters: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..clusters)
            .map(|_| (0..dim).map(|_| next()).collect())
            .collect();
        let mut data = Vec::with_capacity(n * dim);
        for i in 0..n {
            let centre = &centres[i % clusters];
            let mut v: Vec<f32> = centre.iter().map(|c| c + 0.6 * next()).collect();
            crate::memory::embed::normalize(&mut v);
            data.extend(v);
        }
        data
    }

    /// `data` rounded to bfloat16, as recall holds it.
    fn rounded(data: &[f32]) -> Vec<u16> {
        let mut out = Vec::with_capacity(data.len());
        bf16::round_into(&mut out, data);
        out
    }

    /// Trains on `data` and groups it: the index and the row order.
    fn indexed(data: &[f32], dim: usize) -> Option<(Ivf, Vec<u32>)> {
        let (centroids, lists_of) = Ivf::train(&rounded(data), dim)?;
        Some(Ivf::grouped(dim, centroids, &lists_of))
    }

    #[test]
    fn every_row_is_in_exactly_one_list() -> anyhow::Result<()> {
        let (n, dim) = (3_000, 16);
        let data = clustered(n, dim, 20, 7);
        let (ivf, order) = indexed(&data, dim).ok_or_else(|| anyhow::anyhow!("not indexed"))?;
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
        assert_eq!(ivf.starts.len(), 56, "about sqrt(n) lists, plus the end");
        // Each row, in its new place, is in the list of its nearest centroid.
        let lists_of = ivf.lists_of_rows();
        for (place, &row) in order.iter().enumerate() {
            let v = bf16::widen_row(&rounded(&data[row as usize * dim..][..dim]));
            assert_eq!(lists_of[place], Ivf::place(ivf.centroids(), &v));
        }
        Ok(())
    }

    #[test]
    fn a_probe_scans_a_share_of_the_rows_and_finds_the_exact_neighbours() -> anyhow::Result<()> {
        let (n, dim) = (20_000, 32);
        let data = clustered(n, dim, 150, 11);
        let (ivf, order) = indexed(&data, dim).ok_or_else(|| anyhow::anyhow!("not indexed"))?;
        let queries = clustered(50, dim, 150, 12);
        let (mut found, mut wanted) = (0, 0);
        for q in queries.chunks_exact(dim) {
            let scanned: Vec<u32> = ivf
                .probe(q)
                .into_iter()
                .flatten()
                .map(|p| order[p])
                .collect();
            assert!(scanned.len() >= n / SCAN_SHARE && scanned.len() < n / 2);
            let mut exact: Vec<(f32, u32)> = (0..n as u32)
                .map(|i| (dot(&data[i as usize * dim..][..dim], q), i))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let scanned: std::collections::HashSet<u32> = scanned.into_iter().collect();
            for (_, i) in exact.iter().take(20) {
                wanted += 1;
                found += usize::from(scanned.contains(i));
            }
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.95, "kept {recall:.3} of the exact top 20");
        Ok(())
    }

    #[test]
    fn too_few_rows_are_not_indexed() {
        assert!(Ivf::train(&rounded(&clustered(3, 8, 1, 1)), 8).is_none());
        assert!(Ivf::train(&[], 0).is_none());
    }
}
