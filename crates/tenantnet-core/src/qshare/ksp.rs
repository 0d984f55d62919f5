//! Yen's k shortest loopless paths (Yen 1971, the "k-shortest path algorithm [18]"
//! of QShare §4.1), by hop count, over the switch-to-switch links of a datacenter.
//!
//! Deterministic: the inner search is a breadth-first search visiting neighbours in
//! link-id order, so the first path equals the breadth-first-search tree's path, and
//! among candidate paths of equal length the one with the smaller link-id sequence
//! comes first.

use std::collections::BTreeSet;

/// A path: its nodes from source to destination and the links between them
/// (`links[i]` joins `nodes[i]` and `nodes[i + 1]`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path {
    /// Nodes, source first.
    pub nodes: Vec<u32>,
    /// Links, source end first.
    pub links: Vec<u32>,
}

/// Adjacency: for every node, its (link, neighbour) pairs in link-id order.
pub type Adjacency = [Vec<(u32, u32)>];

/// The shortest path from `src` to `dst` avoiding the nodes marked in `banned_node`
/// and the links in `banned_link`; `None` if there is none.
fn bfs_path(
    adj: &Adjacency,
    src: u32,
    dst: u32,
    banned_node: &[bool],
    banned_link: &BTreeSet<u32>,
) -> Option<Path> {
    let mut parent: Vec<Option<(u32, u32)>> = vec![None; adj.len()];
    let mut seen = banned_node.to_vec();
    seen[src as usize] = true;
    let mut queue = std::collections::VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        if u == dst {
            break;
        }
        for &(l, v) in &adj[u as usize] {
            if !seen[v as usize] && !banned_link.contains(&l) {
                seen[v as usize] = true;
                parent[v as usize] = Some((l, u));
                queue.push_back(v);
            }
        }
    }
    if src != dst && parent[dst as usize].is_none() {
        return None;
    }
    let (mut nodes, mut links) = (vec![dst], Vec::new());
    let mut at = dst;
    while let Some((l, u)) = parent[at as usize] {
        links.push(l);
        nodes.push(u);
        at = u;
    }
    nodes.reverse();
    links.reverse();
    Some(Path { nodes, links })
}

/// Up to `k` shortest loopless paths from `src` to `dst`, shortest first.
pub fn k_shortest(adj: &Adjacency, src: u32, dst: u32, k: usize) -> Vec<Path> {
    let none = vec![false; adj.len()];
    let Some(first) = bfs_path(adj, src, dst, &none, &BTreeSet::new()) else {
        return Vec::new();
    };
    let mut found = vec![first];
    // candidates ordered by (hops, links): the smallest is the next path
    let mut candidates: BTreeSet<(usize, Path)> = BTreeSet::new();
    while found.len() < k {
        let last = found.last().expect("at least one path").clone();
        for i in 0..last.links.len() {
            let spur = last.nodes[i];
            let root_nodes = &last.nodes[..=i];
            let root_links = &last.links[..i];
            let mut banned_link = BTreeSet::new();
            for p in &found {
                if p.nodes.len() > i && p.nodes[..=i] == *root_nodes {
                    banned_link.insert(p.links[i]);
                }
            }
            let mut banned_node = none.clone();
            for &n in &root_nodes[..i] {
                banned_node[n as usize] = true;
            }
            if let Some(spur_path) = bfs_path(adj, spur, dst, &banned_node, &banned_link) {
                let mut nodes = root_nodes.to_vec();
                nodes.extend_from_slice(&spur_path.nodes[1..]);
                let mut links = root_links.to_vec();
                links.extend_from_slice(&spur_path.links);
                let p = Path { nodes, links };
                if !found.contains(&p) {
                    candidates.insert((p.links.len(), p));
                }
            }
        }
        match candidates.pop_first() {
            Some((_, p)) => found.push(p),
            None => break,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph from (a, b) edges; link ids in edge order.
    fn graph(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<(u32, u32)>> {
        let mut adj = vec![Vec::new(); n];
        for (l, &(a, b)) in edges.iter().enumerate() {
            adj[a as usize].push((l as u32, b));
            adj[b as usize].push((l as u32, a));
        }
        adj
    }

    /// Every loopless path from `src` to `dst`, by depth-first search.
    fn all_paths(adj: &Adjacency, src: u32, dst: u32) -> Vec<Vec<u32>> {
        fn walk(adj: &Adjacency, at: u32, dst: u32, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
            if at == dst {
                out.push(path.clone());
                return;
            }
            for &(_, v) in &adj[at as usize] {
                if !path.contains(&v) {
                    path.push(v);
                    walk(adj, v, dst, path, out);
                    path.pop();
                }
            }
        }
        let mut out = Vec::new();
        walk(adj, src, dst, &mut vec![src], &mut out);
        out
    }

    #[test]
    fn yen_on_a_grid_lists_paths_by_length_like_brute_force() {
        // 3 x 3 grid, nodes r*3 + c
        let mut edges = Vec::new();
        for r in 0..3u32 {
            for c in 0..3u32 {
                if c < 2 {
                    edges.push((r * 3 + c, r * 3 + c + 1));
                }
                if r < 2 {
                    edges.push((r * 3 + c, (r + 1) * 3 + c));
                }
            }
        }
        let adj = graph(9, &edges);
        let mut every = all_paths(&adj, 0, 8);
        every.sort_by_key(|p| p.len());
        for k in [1, 3, 6, 7, 10, every.len(), every.len() + 5] {
            let paths = k_shortest(&adj, 0, 8, k);
            assert_eq!(paths.len(), k.min(every.len()));
            let hops: Vec<usize> = paths.iter().map(|p| p.links.len()).collect();
            let want: Vec<usize> = every.iter().take(k).map(|p| p.len() - 1).collect();
            assert_eq!(hops, want, "k = {k}: the k shortest lengths");
            let distinct: BTreeSet<&Vec<u32>> = paths.iter().map(|p| &p.nodes).collect();
            assert_eq!(distinct.len(), paths.len(), "no path twice");
            for p in &paths {
                assert!(every.contains(&p.nodes), "a loopless path from 0 to 8");
                for (i, &l) in p.links.iter().enumerate() {
                    let (a, b) = edges[l as usize];
                    let ends = [p.nodes[i], p.nodes[i + 1]];
                    assert!(ends == [a, b] || ends == [b, a], "link joins its nodes");
                }
            }
        }
    }

    #[test]
    fn first_path_is_the_bfs_one_and_missing_paths_are_empty() {
        // square 0-1-2-3-0 plus an isolated node 4
        let adj = graph(5, &[(0, 1), (1, 2), (2, 3), (3, 0)]);
        let p = k_shortest(&adj, 0, 2, 3);
        assert_eq!(p.len(), 2, "a cycle has two paths between opposite corners");
        assert_eq!(p[0].nodes, vec![0, 1, 2], "ties go to the lower link id");
        assert_eq!(p[1].nodes, vec![0, 3, 2]);
        assert!(k_shortest(&adj, 0, 4, 3).is_empty());
        assert_eq!(k_shortest(&adj, 2, 2, 3).len(), 1, "a node reaches itself");
    }
}
