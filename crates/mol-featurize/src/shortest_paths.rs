//! All-pairs shortest paths of a molecular graph, in the order the original Graphormer /
//! Transformer-M preprocessing finds them (`algos.pyx`), with atom 0 kept on paths.

use crate::molecule::Molecule;

/// [`GraphormerFeatures::spd`] of a pair in different fragments.
pub const UNREACHABLE: u16 = u16::MAX;

/// All-pairs shortest paths of a molecular graph by Floyd-Warshall, in the loop order
/// of the original Transformer-M / Graphormer `algos.pyx` (`k`, then `i`, then `j`; an
/// entry changes only on a strict improvement), so ties break as there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortestPaths {
    n: usize,
    /// `via[i * n + j]`: the intermediate atom that last shortened `i -> j`, or
    /// [`ShortestPaths::DIRECT`].
    via: Vec<usize>,
    spd: Vec<u16>,
}

impl ShortestPaths {
    /// "No intermediate atom" in `via` (the original uses 0, see the module docs).
    const DIRECT: usize = usize::MAX;

    /// Paths of `mol`'s bond graph; `O(N^3)` time.
    pub fn new(mol: &Molecule) -> Self {
        let n = mol.num_atoms();
        const INF: u32 = u32::MAX / 4;
        let mut dist = vec![INF; n * n];
        for i in 0..n {
            dist[i * n + i] = 0;
            for &j in mol.neighbours(i) {
                dist[i * n + j] = 1;
            }
        }
        let mut via = vec![Self::DIRECT; n * n];
        for k in 0..n {
            for i in 0..n {
                let d_ik = dist[i * n + k];
                if d_ik >= INF {
                    continue;
                }
                for j in 0..n {
                    let cost = d_ik + dist[k * n + j];
                    if dist[i * n + j] > cost {
                        dist[i * n + j] = cost;
                        via[i * n + j] = k;
                    }
                }
            }
        }
        let spd = dist
            .iter()
            .map(|&d| if d >= INF { UNREACHABLE } else { d as u16 })
            .collect();
        Self { n, via, spd }
    }

    /// Every shortest-path distance, row-major `N x N` ([`UNREACHABLE`] between
    /// fragments).
    pub fn into_distances(self) -> Vec<u16> {
        self.spd
    }

    /// Shortest-path distance in bonds, or `None` between fragments.
    ///
    /// # Panics
    /// If `i` or `j` is not an atom index.
    pub fn distance(&self, i: usize, j: usize) -> Option<u16> {
        let d = self.spd[i * self.n + j];
        (d != UNREACHABLE).then_some(d)
    }

    /// The atoms of the shortest path from `i` to `j`, both ends included (`[i]` when
    /// `i == j`), or `None` between fragments.
    ///
    /// # Panics
    /// If `i` or `j` is not an atom index.
    pub fn path(&self, i: usize, j: usize) -> Option<Vec<usize>> {
        self.distance(i, j)?;
        let mut path = vec![i];
        if i != j {
            self.inner(i, j, &mut path);
            path.push(j);
        }
        Some(path)
    }

    /// Appends the intermediate atoms of `i -> j` (the original's `get_all_edges`).
    fn inner(&self, i: usize, j: usize, out: &mut Vec<usize>) {
        let k = self.via[i * self.n + j];
        if k != Self::DIRECT {
            self.inner(i, k, out);
            out.push(k);
            self.inner(k, j, out);
        }
    }
}
