//! Empirical flow-size distributions.
//!
//! A CDF file has one point per line, `size_bytes cumulative_probability`, with
//! sizes and probabilities non-decreasing and the last probability 1; `#` starts a
//! comment. A size is drawn by inverting the CDF with linear interpolation between
//! points (ns-2/ns-3 `EmpiricalRandomVariable`): for u ∈ [0, 1), find the first point
//! with probability ≥ u and interpolate from the point before it. The five published
//! distributions ship inside the crate.

use crate::engine::rng::Rng;

/// A piecewise-linear cumulative distribution of flow sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    /// Where it came from (a built-in name or a file path).
    pub name: String,
    points: Vec<(f64, f64)>,
}

/// The distributions shipped with tenantnet: (name, file contents).
pub const BUILTIN: [(&str, &str); 5] = [
    (
        "websearch",
        include_str!("../../data/workloads/websearch.cdf"),
    ),
    (
        "datamining",
        include_str!("../../data/workloads/datamining.cdf"),
    ),
    ("cache", include_str!("../../data/workloads/cache.cdf")),
    ("hadoop", include_str!("../../data/workloads/hadoop.cdf")),
    (
        "enterprise",
        include_str!("../../data/workloads/enterprise.cdf"),
    ),
];

impl Cdf {
    /// Parses CDF text; errors name the line.
    pub fn parse(text: &str, name: &str) -> Result<Cdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut last_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let n = i + 1;
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(format!(
                    "line {n}: {}: expected two numbers, `size_bytes cumulative_probability`",
                    crate::units::quoted(line)
                ));
            }
            let num = |s: &str, what: &str| -> Result<f64, String> {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        format!(
                            "line {n}: {} is not a number ({what})",
                            crate::units::quoted(s)
                        )
                    })
            };
            let size = num(fields[0], "size_bytes")?;
            let p = num(fields[1], "cumulative_probability")?;
            if size < 0.0 {
                return Err(format!("line {n}: size {size} is negative"));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("line {n}: probability {p} is outside [0, 1]"));
            }
            if let Some(&(s0, p0)) = points.last() {
                if size < s0 {
                    return Err(format!("line {n}: size {size} is smaller than the previous {s0}; sizes must not decrease"));
                }
                if p < p0 {
                    return Err(format!("line {n}: probability {p} is smaller than the previous {p0}; a CDF must not decrease"));
                }
            }
            points.push((size, p));
            last_line = n;
        }
        match points.last() {
            None => {
                return Err(
                    "no points; expected lines of `size_bytes cumulative_probability`".into(),
                )
            }
            Some(&(_, p)) if (p - 1.0).abs() > 1e-9 => {
                return Err(format!(
                    "line {last_line}: the last cumulative probability is {p}; a CDF must end at 1"
                ))
            }
            _ => {}
        }
        if points.iter().all(|&(s, _)| s == 0.0) {
            return Err("every size is 0".into());
        }
        Ok(Cdf {
            name: name.to_string(),
            points,
        })
    }

    /// A built-in distribution by name.
    pub fn builtin(name: &str) -> Option<Cdf> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Cdf::parse(text, n).expect("built-in CDFs are valid"))
    }

    /// Names of the built-in distributions.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// The (size, probability) points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The inverse CDF at `u` ∈ [0, 1], interpolating linearly.
    pub fn quantile(&self, u: f64) -> f64 {
        let i = self.points.partition_point(|&(_, p)| p < u);
        if i == 0 {
            return self.points[0].0;
        }
        if i >= self.points.len() {
            return self.points[self.points.len() - 1].0;
        }
        let (x0, p0) = self.points[i - 1];
        let (x1, p1) = self.points[i];
        if p1 <= p0 {
            return x1;
        }
        x0 + (x1 - x0) * (u - p0) / (p1 - p0)
    }

    /// The mean size under linear interpolation (what `quantile` samples).
    pub fn mean(&self) -> f64 {
        let (x0, p0) = self.points[0];
        let mut m = x0 * p0;
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            m += (pb - pa) * (a + b) / 2.0;
        }
        m
    }

    /// A size in whole bytes (at least 1) for uniform variate `u`.
    pub fn size_at(&self, u: f64) -> u64 {
        (self.quantile(u).round() as u64).max(1)
    }

    /// `n` sizes drawn i.i.d.
    pub fn sample_iid(&self, n: usize, rng: &mut Rng) -> Vec<u64> {
        (0..n).map(|_| self.size_at(rng.uniform())).collect()
    }

    /// `n` sizes by stratified sampling: the i-th of n strata of [0, 1) gets one
    /// uniform point, and the strata are assigned to flows in random order. Every
    /// size still has exactly the CDF's distribution, but the empirical distribution
    /// of the n sizes matches the CDF far more closely than i.i.d. draws, so the
    /// offered load of a run is what was asked for (see `Poisson::sizes`).
    pub fn sample_stratified(&self, n: usize, rng: &mut Rng) -> Vec<u64> {
        let mut strata: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut strata);
        strata
            .into_iter()
            .map(|k| self.size_at((k as f64 + rng.uniform()) / n as f64))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_means_match_the_published_table() {
        // ../shared/workloads/README.md
        for (name, mean) in [
            ("websearch", 1_711_250.0),
            ("datamining", 12_658_199.0),
            ("cache", 935_453.0),
            ("hadoop", 4_135_297.0),
            ("enterprise", 200_688.0),
        ] {
            let c = Cdf::builtin(name).unwrap();
            assert!((c.mean() - mean).abs() < 1.0, "{name}: {}", c.mean());
        }
    }

    #[test]
    fn quantile_interpolates() {
        let c = Cdf::parse("0 0\n100 0.5\n300 1\n", "t").unwrap();
        assert_eq!(c.quantile(0.25), 50.0);
        assert_eq!(c.quantile(0.75), 200.0);
        assert_eq!(c.quantile(1.0), 300.0);
        assert_eq!(c.mean(), 0.5 * 50.0 + 0.5 * 200.0);
        // an atom: half the mass at exactly 1500
        let e = Cdf::builtin("enterprise").unwrap();
        assert_eq!(e.quantile(0.3), 1500.0);
    }

    #[test]
    fn rejects_malformed_files() {
        let err = |t: &str| Cdf::parse(t, "x").unwrap_err();
        assert!(err("0 0\n100 0.9\n").contains("must end at 1"));
        assert!(err("0 0\n100 0.9\n").contains("line 2"));
        assert!(err("0 0\n100 0.5\n50 1\n").contains("must not decrease"));
        assert!(err("0 0\n100 0.7\n200 0.6\n300 1").contains("line 3"));
        assert!(err("0 0 0\n").contains("two numbers"));
        assert!(err("# only a comment\n").contains("no points"));
        assert!(err("a 1\n").contains("not a number"));
        assert!(err("10 1.5\n").contains("outside"));
    }

    #[test]
    fn stratified_sample_has_the_cdf_mean() {
        let mut rng = Rng::stream(1, "sizes");
        for (name, _) in BUILTIN {
            let c = Cdf::builtin(name).unwrap();
            let s = c.sample_stratified(10_000, &mut rng);
            let m = s.iter().sum::<u64>() as f64 / s.len() as f64;
            assert!(
                (m / c.mean() - 1.0).abs() < 0.01,
                "{name}: {m} vs {}",
                c.mean()
            );
        }
    }
}
