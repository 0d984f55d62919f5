//! Traffic-matrix and arrival generators.

use super::cdf::Cdf;
use super::OnHost;
use crate::engine::rng::Rng;
use crate::engine::{from_secs, Time};

/// Every (src, dst) with src from `srcs` and dst from `dsts` on different hosts, in order.
pub fn all_pairs<T: OnHost>(srcs: &[T], dsts: &[T]) -> Vec<(T, T)> {
    srcs.iter()
        .flat_map(|&s| {
            dsts.iter()
                .filter(move |d| d.host() != s.host())
                .map(move |&d| (s, d))
        })
        .collect()
}

/// A random permutation traffic matrix: every endpoint sends to exactly one other
/// and receives from exactly one (a uniformly random derangement, drawn by
/// rejection). Needs at least two endpoints, on distinct hosts.
pub fn permutation<T: OnHost>(hosts: &[T], rng: &mut Rng) -> Vec<(T, T)> {
    assert!(hosts.len() >= 2);
    let mut dst: Vec<usize> = (0..hosts.len()).collect();
    loop {
        rng.shuffle(&mut dst);
        if dst.iter().enumerate().all(|(i, &d)| i != d) {
            break;
        }
    }
    dst.iter()
        .enumerate()
        .map(|(i, &d)| (hosts[i], hosts[d]))
        .collect()
}

/// How long a Poisson workload generates arrivals.
#[derive(Clone, Copy, Debug)]
pub enum Window {
    /// Exactly this many flows.
    Flows(usize),
    /// Until this time.
    Until(Time),
}

/// Poisson flow arrivals at a target load.
///
/// The arrival rate is λ = load · C / (8 · E[size]) flows per second, where C is the
/// summed NIC rate of the source hosts, so `load` is the fraction of the sources'
/// capacity the workload offers. Each arrival picks its source uniformly among the
/// sources and its destination uniformly among the destinations on other hosts.
///
/// With `Window::Until`, inter-arrival times are i.i.d. exponential. With
/// `Window::Flows(n)`, the run covers T = n/λ and the n arrival times are n sorted
/// uniform points in [start, start + T): exactly the law of a Poisson process
/// conditioned on n arrivals in T, so the number of flows is the one asked for.
pub struct Poisson<'a> {
    /// Target fraction of source capacity.
    pub load: f64,
    /// Summed NIC rate of the sources, bit/s.
    pub capacity_bps: f64,
    /// First possible arrival.
    pub start: Time,
    /// How many or how long.
    pub window: Window,
    /// The size distribution.
    pub cdf: &'a Cdf,
    /// Stratified (else i.i.d.) size sampling.
    pub stratified: bool,
}

impl Poisson<'_> {
    /// Arrivals per second.
    pub fn rate(&self) -> f64 {
        self.load * self.capacity_bps / (8.0 * self.cdf.mean())
    }

    /// The (start, src, dst, size) of every flow, in start order, and the length of
    /// the arrival window in seconds.
    pub fn generate<T: OnHost>(
        &self,
        srcs: &[T],
        dsts: &[T],
        seed: u64,
        stream: &str,
    ) -> (Vec<(Time, T, T, u64)>, f64) {
        let mut r_arr = Rng::stream(seed, &format!("{stream}/arrivals"));
        let mut r_size = Rng::stream(seed, &format!("{stream}/sizes"));
        let mut r_pair = Rng::stream(seed, &format!("{stream}/pairs"));
        let lambda = self.rate();
        let (times, window_s): (Vec<Time>, f64) = match self.window {
            Window::Flows(n) => {
                let t = n as f64 / lambda;
                let mut u: Vec<f64> = (0..n).map(|_| r_arr.uniform() * t).collect();
                u.sort_by(|a, b| a.total_cmp(b));
                (
                    u.into_iter().map(|s| self.start + from_secs(s)).collect(),
                    t,
                )
            }
            Window::Until(stop) => {
                let mut v = Vec::new();
                let mut t = self.start as f64 / 1e12;
                let end = stop as f64 / 1e12;
                loop {
                    t += r_arr.exponential(1.0 / lambda);
                    if t >= end {
                        break;
                    }
                    v.push(from_secs(t));
                }
                (v, end - self.start as f64 / 1e12)
            }
        };
        let sizes = if self.stratified {
            self.cdf.sample_stratified(times.len(), &mut r_size)
        } else {
            self.cdf.sample_iid(times.len(), &mut r_size)
        };
        let flows = times
            .into_iter()
            .zip(sizes)
            .map(|(t, size)| {
                let s = srcs[r_pair.below(srcs.len() as u64) as usize];
                let d = loop {
                    let d = dsts[r_pair.below(dsts.len() as u64) as usize];
                    if d.host() != s.host() {
                        break d;
                    }
                };
                (t, s, d, size)
            })
            .collect();
        (flows, window_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HostId;

    fn hosts(n: u32) -> Vec<HostId> {
        (0..n).map(HostId).collect()
    }

    #[test]
    fn permutation_is_a_derangement() {
        let h = hosts(50);
        let mut rng = Rng::stream(1, "perm");
        let p = permutation(&h, &mut rng);
        let mut dsts: Vec<_> = p.iter().map(|x| x.1).collect();
        assert!(p.iter().all(|(s, d)| s != d));
        dsts.sort();
        assert_eq!(dsts, h);
    }

    #[test]
    fn all_pairs_skips_self() {
        let h = hosts(3);
        assert_eq!(all_pairs(&h, &h).len(), 6);
        assert_eq!(all_pairs(&h[..1], &h).len(), 2);
    }

    #[test]
    fn poisson_flows_window_hits_the_load() {
        let cdf = Cdf::builtin("websearch").unwrap();
        let h = hosts(16);
        let p = Poisson {
            load: 0.4,
            capacity_bps: 16.0 * 10e9,
            start: 0,
            window: Window::Flows(10_000),
            cdf: &cdf,
            stratified: true,
        };
        let (flows, window) = p.generate(&h, &h, 7, "w0");
        assert_eq!(flows.len(), 10_000);
        let bytes: u64 = flows.iter().map(|f| f.3).sum();
        let load = bytes as f64 * 8.0 / (window * 16.0 * 10e9);
        assert!((load / 0.4 - 1.0).abs() < 0.01, "{load}");
        assert!(flows.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(flows.iter().all(|f| f.1 != f.2));
    }
}
