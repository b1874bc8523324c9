//! The names an input gave its vertices, where they are not the numbers `0..n`: a
//! SNAP file's ids with gaps (wiki-Vote's 7,115 vertices numbered up to 8,297), ids
//! beyond `u32`, or labels (`alice,bob` in a CSV). The graph holds the vertices that
//! appear, numbered `0..n` for the kernels; every answer, source and vertex file
//! speaks the input's names ([`Naming`]), so the compaction is invisible to the user.

use std::fmt;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

/// Each vertex's name in the input: vertex `v` of the graph (in the input's order,
/// before any [`crate::VertexOrder`]) is `name(v)`. Names are distinct.
#[derive(Debug)]
pub enum VertexNames {
    /// Integer ids, ascending: vertex `v` is `ids[v]`.
    Numbers(Vec<u64>),
    /// UTF-8 labels: vertex `v` is `text[offsets[v]..offsets[v + 1]]`.
    Labels {
        /// `n + 1` offsets into `text`, from 0 to its length.
        offsets: Vec<u64>,
        /// The labels, one after another.
        text: String,
        /// The vertices sorted by label, for look-ups (built on the first one).
        sorted: OnceLock<Vec<u32>>,
    },
}

impl PartialEq for VertexNames {
    fn eq(&self, other: &VertexNames) -> bool {
        match (self, other) {
            (VertexNames::Numbers(a), VertexNames::Numbers(b)) => a == b,
            (VertexNames::Labels { offsets: a, text: s, .. }, VertexNames::Labels { offsets: b, text: t, .. }) => a == b && s == t,
            _ => false,
        }
    }
}

impl VertexNames {
    /// Integer names, which must be strictly ascending.
    pub fn numbers(ids: Vec<u64>) -> Result<VertexNames, String> {
        if let Some(i) = (1..ids.len()).into_par_iter().find_first(|&i| ids[i - 1] >= ids[i]) {
            return Err(format!("vertex ids are not strictly ascending at vertex {i} ({} then {})", ids[i - 1], ids[i]));
        }
        Ok(VertexNames::Numbers(ids))
    }

    /// Labels given as offsets into `text` (from 0 to its length, non-decreasing, on
    /// character boundaries), which must be distinct.
    pub fn labels(offsets: Vec<u64>, text: String) -> Result<VertexNames, String> {
        let ends_right = offsets.first() == Some(&0) && offsets.last() == Some(&(text.len() as u64));
        if !ends_right || offsets.windows(2).any(|w| w[0] > w[1] || !text.is_char_boundary(w[1] as usize)) {
            return Err("label offsets do not run from 0 to the text's length on character boundaries".into());
        }
        let names = VertexNames::Labels { offsets, text, sorted: OnceLock::new() };
        let sorted = names.sorted();
        if let Some(w) = sorted.windows(2).find(|w| names.label(w[0]) == names.label(w[1])) {
            return Err(format!("label {:?} names two vertices", names.label(w[0])));
        }
        Ok(names)
    }

    /// The number of vertices named.
    pub fn len(&self) -> usize {
        match self {
            VertexNames::Numbers(ids) => ids.len(),
            VertexNames::Labels { offsets, .. } => offsets.len() - 1,
        }
    }

    /// Whether no vertex is named.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn label(&self, v: u32) -> &str {
        match self {
            VertexNames::Labels { offsets, text, .. } => &text[offsets[v as usize] as usize..offsets[v as usize + 1] as usize],
            VertexNames::Numbers(_) => unreachable!("only labels are looked up by text"),
        }
    }

    fn sorted(&self) -> &[u32] {
        match self {
            VertexNames::Labels { sorted, offsets, .. } => sorted.get_or_init(|| {
                let mut order: Vec<u32> = (0..offsets.len() as u32 - 1).collect();
                order.par_sort_unstable_by(|&a, &b| self.label(a).cmp(self.label(b)));
                order
            }),
            VertexNames::Numbers(_) => &[],
        }
    }

    /// Vertex `v`'s name.
    pub fn name(&self, v: u32) -> Name<'_> {
        match self {
            VertexNames::Numbers(ids) => Name::Number(ids[v as usize]),
            VertexNames::Labels { .. } => Name::Label(self.label(v)),
        }
    }

    /// The vertex named `text`, if any.
    pub fn find(&self, text: &str) -> Option<u32> {
        match self {
            VertexNames::Numbers(ids) => {
                let id: u64 = text.trim().parse().ok()?;
                ids.binary_search(&id).ok().map(|i| i as u32)
            }
            VertexNames::Labels { .. } => {
                let sorted = self.sorted();
                sorted.binary_search_by(|&v| self.label(v).cmp(text)).ok().map(|i| sorted[i])
            }
        }
    }

    /// Bytes held.
    pub fn size_bytes(&self) -> u64 {
        match self {
            VertexNames::Numbers(ids) => 8 * ids.len() as u64,
            VertexNames::Labels { offsets, text, .. } => 12 * offsets.len() as u64 + text.len() as u64,
        }
    }
}

/// A vertex's name as the user sees it: a number or a label. Serialises as a JSON
/// number or string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Name<'a> {
    /// An integer id.
    Number(u64),
    /// A label.
    Label(&'a str),
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Name::Number(x) => write!(f, "{x}"),
            Name::Label(s) => f.write_str(s),
        }
    }
}

impl serde::Serialize for Name<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Name::Number(x) => s.serialize_u64(*x),
            Name::Label(l) => s.serialize_str(l),
        }
    }
}

/// How the user names a graph's vertices: numbers from `base` (0, or 1 for DIMACS,
/// PACE and Matrix Market inputs), or the input's own names.
#[derive(Clone, Debug)]
pub enum Naming {
    /// Vertex `v` is the number `v + base`.
    From(u32),
    /// Vertex `v` is `names.name(v)`.
    Names(Arc<VertexNames>),
}

impl Naming {
    /// Vertex `v`'s name.
    pub fn name(&self, v: u32) -> Name<'_> {
        match self {
            Naming::From(base) => Name::Number(v as u64 + *base as u64),
            Naming::Names(names) => names.name(v),
        }
    }

    /// The vertex of a graph of `n` vertices that `text` names, or why none is.
    pub fn vertex(&self, text: &str, n: usize) -> Result<u32, String> {
        match self {
            Naming::From(base) => {
                let last = n as u64 + *base as u64;
                match text.trim().parse::<u64>() {
                    Ok(x) if x >= *base as u64 && x < last => Ok((x - *base as u64) as u32),
                    Ok(_) | Err(_) if n == 0 => Err(format!("{text} is not a vertex: the graph has none")),
                    _ => {
                        let hint = if *base == 1 { " (its input numbers vertices from 1; --zero-based numbers them from 0)" } else { "" };
                        Err(format!("{text} is not a vertex: this graph's vertices are {base} to {}{hint}", last - 1))
                    }
                }
            }
            Naming::Names(names) => names.find(text).ok_or_else(|| {
                let what = match names.as_ref() {
                    VertexNames::Numbers(_) => "the ids its input uses (ids that appear in no edge are not vertices)",
                    VertexNames::Labels { .. } => "the labels its input uses",
                };
                format!("{text} is not a vertex: this graph's vertices are {what}")
            }),
        }
    }

    /// Whether names are labels (text) rather than numbers.
    pub fn is_labels(&self) -> bool {
        matches!(self, Naming::Names(n) if matches!(n.as_ref(), VertexNames::Labels { .. }))
    }
}

/// Numbers the names of an input's vertices in order of first appearance, as its
/// edges are read.
#[derive(Default)]
pub(crate) struct Namer<'a> {
    ids: rustc_hash::FxHashMap<&'a str, u32>,
    names: Vec<&'a str>,
}

impl<'a> Namer<'a> {
    /// The vertex named `name`, numbered now if it is new.
    pub(crate) fn id(&mut self, name: &'a str) -> Result<u32, String> {
        let next = self.names.len();
        match self.ids.entry(name) {
            std::collections::hash_map::Entry::Occupied(e) => Ok(*e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                let id = u32::try_from(next).ok().filter(|&id| id < u32::MAX).ok_or("more than 4294967294 vertices are named")?;
                self.names.push(name);
                Ok(*e.insert(id))
            }
        }
    }

    /// The names; where every one is a distinct integer, they become numbers, in
    /// ascending order, and `lists` (the vertex ids handed out) are renumbered to match.
    pub(crate) fn finish(self, lists: &mut [&mut [u32]]) -> VertexNames {
        let numbers: Option<Vec<u64>> = self.names.par_iter().map(|s| s.parse::<u64>().ok().filter(|_| !s.starts_with('+'))).collect();
        if let Some(numbers) = numbers {
            let mut order: Vec<u32> = (0..numbers.len() as u32).collect();
            order.par_sort_unstable_by_key(|&v| numbers[v as usize]);
            let sorted: Vec<u64> = order.iter().map(|&v| numbers[v as usize]).collect();
            if let Ok(names) = VertexNames::numbers(sorted) {
                let mut new_id = vec![0u32; order.len()];
                order.iter().enumerate().for_each(|(rank, &v)| new_id[v as usize] = rank as u32);
                lists.par_iter_mut().for_each(|l| l.iter_mut().for_each(|v| *v = new_id[*v as usize]));
                return names;
            }
        }
        let mut offsets = Vec::with_capacity(self.names.len() + 1);
        offsets.push(0u64);
        let mut text = String::with_capacity(self.names.iter().map(|s| s.len()).sum());
        for name in &self.names {
            text.push_str(name);
            offsets.push(text.len() as u64);
        }
        VertexNames::Labels { offsets, text, sorted: OnceLock::new() }
    }
}

/// The vertices that appear in `lists` (ids below `range`), renumbered `0..n` in
/// ascending order in place; `None` (nothing changed) when every id in the range
/// appears. A bitmap and its running counts where the range is small beside the
/// lists; sorting the ids otherwise.
pub(crate) fn compact_ids(mut lists: Vec<&mut [u32]>, range: usize) -> Option<VertexNames> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let endpoints: usize = lists.iter().map(|l| l.len()).sum();
    if range.div_ceil(64) <= endpoints {
        let bits: Vec<AtomicU64> = (0..range.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        lists.par_iter().for_each(|l| l.iter().for_each(|&v| _ = bits[v as usize / 64].fetch_or(1 << (v % 64), Relaxed)));
        let bits: Vec<u64> = bits.into_iter().map(AtomicU64::into_inner).collect();
        let before: Vec<u32> = bits
            .iter()
            .scan(0u32, |count, w| {
                let at = *count;
                *count += w.count_ones();
                Some(at)
            })
            .collect();
        let n = before.last().map_or(0, |&b| b as usize + bits.last().unwrap().count_ones() as usize);
        if n == range {
            return None;
        }
        let rank = |v: u32| before[v as usize / 64] + (bits[v as usize / 64] & ((1u64 << (v % 64)) - 1)).count_ones();
        lists.par_iter_mut().for_each(|l| l.iter_mut().for_each(|v| *v = rank(*v)));
        let ids = (0..range as u64).filter(|&v| bits[v as usize / 64] >> (v % 64) & 1 == 1).collect();
        return Some(VertexNames::Numbers(ids));
    }
    let mut ids: Vec<u32> = lists.par_iter().flat_map_iter(|l| l.iter().copied()).collect();
    ids.par_sort_unstable();
    ids.dedup();
    if ids.len() == range {
        return None;
    }
    lists.par_iter_mut().for_each(|l| l.iter_mut().for_each(|v| *v = ids.binary_search(v).expect("every id is listed") as u32));
    Some(VertexNames::Numbers(ids.into_iter().map(u64::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_vertices() {
        let numbers = VertexNames::numbers(vec![3, 7, 8297]).unwrap();
        assert_eq!(numbers.find("7"), Some(1));
        assert_eq!(numbers.find("4"), None);
        assert_eq!(numbers.name(2), Name::Number(8297));
        assert!(VertexNames::numbers(vec![3, 3]).is_err());
        let labels = VertexNames::labels(vec![0, 5, 8, 12], "alicebobcarl".into()).unwrap();
        assert_eq!(labels.find("carl"), Some(2));
        assert_eq!(labels.find("dave"), None);
        assert_eq!(labels.name(1), Name::Label("bob"));
        assert!(VertexNames::labels(vec![0, 3, 6], "bobbob".into()).is_err());
        assert!(VertexNames::labels(vec![0, 9], "bob".into()).is_err());
    }

    #[test]
    fn ids_with_gaps_are_compacted_and_dense_ones_kept() {
        for spread in [1u32, 1000] {
            let (mut a, mut b) = (vec![3 * spread, 8 * spread], vec![8 * spread, 5 * spread]);
            let names = compact_ids(vec![&mut a, &mut b], 8 * spread as usize + 1).unwrap();
            assert_eq!((a, b), (vec![0, 2], vec![2, 1]));
            assert_eq!(names, VertexNames::Numbers(vec![3 * spread as u64, 5 * spread as u64, 8 * spread as u64]));
        }
        let mut dense = vec![0, 2, 1];
        assert!(compact_ids(vec![&mut dense], 3).is_none());
        assert_eq!(dense, [0, 2, 1]);
    }

    #[test]
    fn a_namer_numbers_labels_in_order_and_integers_ascending() {
        let mut namer = Namer::default();
        let mut ids: Vec<u32> = ["bob", "alice", "bob"].iter().map(|s| namer.id(s).unwrap()).collect();
        assert_eq!(ids, [0, 1, 0]);
        let names = namer.finish(&mut [&mut ids]);
        assert_eq!(names.name(1), Name::Label("alice"));
        let mut namer = Namer::default();
        let mut ids: Vec<u32> = ["9000000000", "7", "9000000000"].iter().map(|s| namer.id(s).unwrap()).collect();
        assert_eq!(namer.finish(&mut [&mut ids]), VertexNames::Numbers(vec![7, 9_000_000_000]));
        assert_eq!(ids, [1, 0, 1]);
    }

    #[test]
    fn numbers_from_a_base_are_parsed_in_range() {
        let n = Naming::From(1);
        assert_eq!(n.vertex("1", 3), Ok(0));
        assert!(n.vertex("0", 3).unwrap_err().contains("1 to 3"));
        assert!(n.vertex("4", 3).is_err());
        assert!(n.vertex("x", 3).is_err());
    }
}
