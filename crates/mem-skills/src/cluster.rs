//! Grouping memories: TF-IDF vectors, cosine similarity over the pairs that share a feature,
//! average-linkage agglomerative clustering.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::Item;

/// Weight of a tag feature relative to a word (tags are chosen by people: a strong signal).
pub const TAG_WEIGHT: f64 = 1.5;
/// Weight of a category feature relative to a word (broad: a weak signal).
pub const CATEGORY_WEIGHT: f64 = 0.5;
/// Weight of the words of a title relative to those of the text.
pub const TITLE_WEIGHT: f64 = 2.0;
/// Pairs less similar than this are not kept (they barely move an average).
const MIN_PAIR_SIMILARITY: f64 = 0.02;

/// The items as unit-length feature vectors, their pairwise similarities (pairs sharing a
/// feature), and the surface word behind each word feature.
#[derive(Debug, Clone, Default)]
pub struct Features {
    /// Feature names: `w:<stem>`, `#<tag>`, `@<category>`.
    names: Vec<String>,
    /// Per item: (feature, weight), unit length.
    vectors: Vec<Vec<(usize, f64)>>,
    /// Per item: similar items and the cosine.
    neighbors: Vec<HashMap<usize, f64>>,
    /// Per word feature: the word people wrote most often for it.
    surfaces: HashMap<usize, String>,
}

fn words_of(text: &str) -> Vec<String> {
    mem_llm::offline::tokenize(text)
}

/// Builds the vectors and similarities of `items`: words of the title (weighted
/// [`TITLE_WEIGHT`]; not an entry's, which is its category heading), text and context as the offline selector tokenizes them; tags
/// ([`TAG_WEIGHT`]); the category ([`CATEGORY_WEIGHT`]). Weight = (1 + ln tf) × (1 + ln((1 +
/// N) / (1 + df))), then normalised. Similarities are computed for pairs that share a feature
/// held by at most a quarter of the items (at least 50): a feature nearly everything has says
/// nothing about groups, and skipping it keeps the cost near-linear.
pub fn featurize(items: &[Item]) -> Features {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut surface_counts: HashMap<usize, HashMap<String, usize>> = HashMap::new();
    let mut intern = |name: String, names: &mut Vec<String>| -> usize {
        if let Some(&i) = index.get(&name) {
            return i;
        }
        let i = names.len();
        names.push(name.clone());
        index.insert(name, i);
        i
    };
    let mut raw: Vec<HashMap<usize, f64>> = Vec::with_capacity(items.len());
    for item in items {
        let mut tf: HashMap<usize, f64> = HashMap::new();
        let mut scale: HashMap<usize, f64> = HashMap::new();
        let body = format!(
            "{}\n{}",
            item.text,
            item.context.as_deref().unwrap_or_default()
        );
        // An entry's title is its category heading: counted as the category, not as words.
        let title = if item.source == mem_tiers::SourceKind::Entry {
            ""
        } else {
            item.title.as_str()
        };
        for (text, weight) in [(title, TITLE_WEIGHT), (body.as_str(), 1.0)] {
            for w in words_of(text) {
                let f = intern(format!("w:{w}"), &mut names);
                *tf.entry(f).or_default() += weight;
                scale.entry(f).or_insert(1.0);
            }
            // The surface form of single-stem words, for naming groups.
            for word in text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty() && w.chars().count() <= 40)
            {
                let lower = word.to_lowercase();
                if let [stem] = words_of(&lower).as_slice() {
                    let f = intern(format!("w:{stem}"), &mut names);
                    *surface_counts
                        .entry(f)
                        .or_default()
                        .entry(lower)
                        .or_default() += 1;
                }
            }
        }
        for tag in &item.tags {
            let tag = tag.trim().to_lowercase();
            if tag.is_empty() {
                continue;
            }
            let f = intern(format!("#{tag}"), &mut names);
            tf.insert(f, 1.0);
            scale.insert(f, TAG_WEIGHT);
        }
        if let Some(c) = &item.category {
            let c = c.trim().to_lowercase();
            if !c.is_empty() {
                let f = intern(format!("@{c}"), &mut names);
                tf.insert(f, 1.0);
                scale.insert(f, CATEGORY_WEIGHT);
            }
        }
        raw.push(
            tf.into_iter()
                .map(|(f, n)| (f, (1.0 + n.ln()) * scale.get(&f).copied().unwrap_or(1.0)))
                .collect(),
        );
    }
    let n = items.len() as f64;
    let mut df = vec![0usize; names.len()];
    for v in &raw {
        for f in v.keys() {
            df[*f] += 1;
        }
    }
    let mut vectors: Vec<Vec<(usize, f64)>> = Vec::with_capacity(raw.len());
    for v in raw {
        let mut vec: Vec<(usize, f64)> = v
            .into_iter()
            .map(|(f, w)| (f, w * (1.0 + ((1.0 + n) / (1.0 + df[f] as f64)).ln())))
            .collect();
        vec.sort_by_key(|(f, _)| *f);
        let norm = vec.iter().map(|(_, w)| w * w).sum::<f64>().sqrt();
        if norm > 0.0 {
            for (_, w) in &mut vec {
                *w /= norm;
            }
        }
        vectors.push(vec);
    }
    // Pairs through an inverted index of the telling features.
    let cap = (items.len() / 4).max(50);
    let mut postings: Vec<Vec<(usize, f64)>> = vec![Vec::new(); names.len()];
    for (i, v) in vectors.iter().enumerate() {
        for &(f, w) in v {
            if df[f] <= cap {
                postings[f].push((i, w));
            }
        }
    }
    let mut neighbors: Vec<HashMap<usize, f64>> = vec![HashMap::new(); items.len()];
    let mut acc: HashMap<usize, f64> = HashMap::new();
    for (i, v) in vectors.iter().enumerate() {
        acc.clear();
        for &(f, w) in v {
            if df[f] > cap {
                continue;
            }
            for &(j, wj) in &postings[f] {
                if j > i {
                    *acc.entry(j).or_default() += w * wj;
                }
            }
        }
        for (&j, &s) in &acc {
            if s >= MIN_PAIR_SIMILARITY {
                neighbors[i].insert(j, s);
                neighbors[j].insert(i, s);
            }
        }
    }
    let surfaces = surface_counts
        .into_iter()
        .filter_map(|(f, counts)| {
            counts
                .into_iter()
                .max_by(|a, b| {
                    a.1.cmp(&b.1)
                        .then(b.0.len().cmp(&a.0.len()))
                        .then(b.0.cmp(&a.0))
                })
                .map(|(w, _)| (f, w))
        })
        .collect();
    Features {
        names,
        vectors,
        neighbors,
        surfaces,
    }
}

impl Features {
    /// The cosine similarity of items `a` and `b` (0 for pairs sharing no telling feature).
    pub fn similarity(&self, a: usize, b: usize) -> f64 {
        self.neighbors
            .get(a)
            .and_then(|n| n.get(&b))
            .copied()
            .unwrap_or(0.0)
    }

    /// `members` most central first (largest summed similarity to the others; ties by index),
    /// and the average pairwise similarity.
    pub fn order(&self, members: &[usize]) -> (Vec<usize>, f64) {
        let mut scored: Vec<(usize, f64)> = members
            .iter()
            .map(|&m| {
                let s: f64 = members
                    .iter()
                    .filter(|&&o| o != m)
                    .map(|&o| self.similarity(m, o))
                    .sum();
                (m, s)
            })
            .collect();
        let total: f64 = scored.iter().map(|(_, s)| s).sum::<f64>() / 2.0;
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let pairs = members.len() * members.len().saturating_sub(1) / 2;
        let cohesion = if pairs == 0 {
            1.0
        } else {
            total / pairs as f64
        };
        (scored.into_iter().map(|(m, _)| m).collect(), cohesion)
    }

    /// The `k` words or tags most characteristic of `members`: the largest summed weight over
    /// the members, among features at least two members share (any, for a single member);
    /// words as people wrote them, tags as tagged.
    pub fn terms(&self, members: &[usize], k: usize) -> Vec<String> {
        let mut sum: HashMap<usize, (f64, usize)> = HashMap::new();
        for &m in members {
            for &(f, w) in self.vectors.get(m).map(Vec::as_slice).unwrap_or_default() {
                if self.names[f].starts_with('@') {
                    continue;
                }
                let e = sum.entry(f).or_default();
                e.0 += w;
                e.1 += 1;
            }
        }
        let shared = members.len() > 1 && sum.values().any(|(_, n)| *n >= 2);
        let mut ranked: Vec<(usize, f64)> = sum
            .into_iter()
            .filter(|(_, (_, n))| !shared || *n >= 2)
            .map(|(f, (w, _))| (f, w))
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.names[a.0].cmp(&self.names[b.0]))
        });
        let mut out: Vec<String> = Vec::new();
        for (f, _) in ranked {
            let name = &self.names[f];
            let word = match name.strip_prefix("w:") {
                Some(stem) => self
                    .surfaces
                    .get(&f)
                    .cloned()
                    .unwrap_or_else(|| stem.to_owned()),
                None => name.trim_start_matches('#').to_owned(),
            };
            let key = super::safe_name(&word);
            if !out.iter().any(|w| super::safe_name(w) == key) {
                out.push(word);
            }
            if out.len() == k {
                break;
            }
        }
        out
    }
}

#[derive(Debug, PartialEq)]
struct Candidate {
    average: f64,
    a: usize,
    b: usize,
    va: u32,
    vb: u32,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.average
            .total_cmp(&other.average)
            .then_with(|| other.a.cmp(&self.a))
            .then_with(|| other.b.cmp(&self.b))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Average-linkage agglomerative clustering: repeatedly merges the two clusters whose average
/// pairwise similarity is highest, while it is at least `threshold`. Returns every cluster
/// (singletons included) as item indices, in ascending order, clusters ordered by their
/// smallest index. Deterministic.
pub fn agglomerate(features: &Features, threshold: f64) -> Vec<Vec<usize>> {
    let n = features.vectors.len();
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut active = vec![true; n];
    let mut version = vec![0u32; n];
    // Summed similarity between clusters.
    let mut links: Vec<HashMap<usize, f64>> = features.neighbors.clone();
    let mut heap = BinaryHeap::new();
    for (a, l) in links.iter().enumerate() {
        for (&b, &s) in l {
            if a < b && s >= threshold {
                heap.push(Candidate {
                    average: s,
                    a,
                    b,
                    va: 0,
                    vb: 0,
                });
            }
        }
    }
    while let Some(c) = heap.pop() {
        if c.average < threshold {
            break;
        }
        if !active[c.a] || !active[c.b] || version[c.a] != c.va || version[c.b] != c.vb {
            continue;
        }
        let (a, b) = (c.a, c.b);
        let moved = std::mem::take(&mut members[b]);
        members[a].extend(moved);
        active[b] = false;
        version[a] += 1;
        let from_b = std::mem::take(&mut links[b]);
        links[a].remove(&b);
        for (k, s) in from_b {
            if k == a {
                continue;
            }
            *links[a].entry(k).or_default() += s;
            let lk = &mut links[k];
            lk.remove(&b);
            *lk.entry(a).or_default() += s;
        }
        let size_a = members[a].len() as f64;
        let mut next: Vec<(usize, f64)> = links[a].iter().map(|(&k, &s)| (k, s)).collect();
        next.sort_by_key(|(k, _)| *k);
        for (k, s) in next {
            let average = s / (size_a * members[k].len() as f64);
            if average >= threshold {
                let (x, y) = if a < k { (a, k) } else { (k, a) };
                heap.push(Candidate {
                    average,
                    a: x,
                    b: y,
                    va: version[x],
                    vb: version[y],
                });
            }
        }
    }
    let mut out: Vec<Vec<usize>> = members
        .into_iter()
        .zip(active)
        .filter(|(_, a)| *a)
        .map(|(mut m, _)| {
            m.sort_unstable();
            m
        })
        .collect();
    out.sort_by_key(|m| m.first().copied().unwrap_or(usize::MAX));
    out
}
