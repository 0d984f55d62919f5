//! The `matrix` workload: a tenant's traffic matrix, or a series of them over time,
//! as flows. Each pair's flows arrive as a Poisson process of rate
//! `entry / (8 · mean size)` with sizes from the workload's CDF, so that the pair's
//! offered load is its entry (its own random streams, so one entry's change leaves
//! every other pair's flows as they were).
//!
//! A matrix file (read by the caller, [`crate::scenario::Inputs`]) is a list
//! (`src`, `dst`, `rate` columns) or a dense table (the first column names the
//! sources, each other column is a destination named by its header). A rate is bits
//! per second, or a rate with its unit; empty or 0: no traffic.

use super::trace::EndCache;
use super::{load_cdf, Gen};
use crate::engine::Time;
use crate::scenario::inputs::{rate, Cell, InputTable};
use crate::scenario::parse::ScenarioError;
use crate::scenario::workloads::{Matrix, SizeSampling};
use crate::workload::generate::{Poisson, Window};
use crate::workload::TrafficEnd;

/// One nonzero entry: where it is in its file, its pair and its rate.
struct Entry {
    row: usize,
    col: String,
    src: TrafficEnd,
    dst: TrafficEnd,
    bps: u64,
}

impl<'a> Gen<'a, '_> {
    pub(super) fn matrix(&mut self, m: &Matrix) -> Result<(), ScenarioError> {
        let cdf = load_cdf(self.c.ctx, (&m.cdf, &m.cdf_file), &self.key)?;
        let steps = self.matrix_steps(m)?;
        let mut ends = EndCache::default();
        let mut windows = Vec::new();
        let mut expected = 0.0;
        for (i, (at, until, file, key)) in steps.iter().enumerate() {
            let entries = self.entries(file, key, &mut ends)?;
            let bps: f64 = entries.iter().map(|e| e.bps as f64).sum();
            expected += bps * (until - at) as f64 / 1e12 / (8.0 * cdf.mean());
            windows.push((i, *at, *until, entries));
        }
        self.count(expected.ceil() as u64, "stop")?;
        let mut bytes = 0u64;
        let mut sources = Vec::new();
        for (i, at, until, entries) in windows {
            for e in &entries {
                let gen = Poisson {
                    load: 1.0,
                    capacity_bps: e.bps as f64,
                    start: at,
                    window: Window::Until(until),
                    cdf: &cdf,
                    stratified: m.sizes == SizeSampling::Stratified,
                };
                let stream = format!("workload{}/matrix{i}/{}>{}", self.c.index, e.row, e.col);
                let (flows, _) = gen.generate(&[e.src], &[e.dst], self.c.seed, &stream);
                for (t, s, d, size) in flows {
                    bytes += size;
                    self.push((s, d), Some(size), t, None, self.tcp());
                }
                sources.push(e.src.host);
            }
        }
        sources.sort();
        sources.dedup();
        let capacity: f64 = sources
            .iter()
            .map(|&h| self.c.net.host_rate(h) as f64)
            .sum();
        let window_s = (m.stop.0 - steps[0].0) as f64 / 1e12;
        if capacity > 0.0 {
            self.info.offered_load = Some(bytes as f64 * 8.0 / (window_s * capacity));
        }
        self.info.window_s = Some(window_s);
        Ok(())
    }

    /// Each matrix with the time it covers (from its `at` to the next one's, or to
    /// `stop`), its file and the key that names it.
    #[allow(clippy::type_complexity)]
    fn matrix_steps(
        &self,
        m: &'a Matrix,
    ) -> Result<Vec<(Time, Time, &'a str, String)>, ScenarioError> {
        let mut steps: Vec<(Time, &str, String)> = match (&m.file, &m.series) {
            (Some(_), Some(_)) => {
                return Err(self.err("series", "give either file or series, not both"))
            }
            (None, None) => return Err(self.err(
                "file",
                "required key is missing; give file (one matrix) or series (matrices over time)",
            )),
            (Some(f), None) => vec![(m.start.0, f.as_str(), self.k("file"))],
            (None, Some(s)) if s.is_empty() => {
                return Err(self.err("series", "expected at least one { at, file }"))
            }
            (None, Some(s)) => (s.iter().enumerate())
                .map(|(i, st)| {
                    (
                        st.at.0,
                        st.file.as_str(),
                        self.k(&format!("series[{i}].file")),
                    )
                })
                .collect(),
        };
        for i in 1..steps.len() {
            if steps[i].0 <= steps[i - 1].0 {
                return Err(self.err(
                    &format!("series[{i}].at"),
                    "expected a time after the previous matrix's",
                ));
            }
        }
        if steps.last().is_some_and(|s| s.0 >= m.stop.0) {
            let key = if m.series.is_some() {
                format!("series[{}].at", steps.len() - 1)
            } else {
                "start".into()
            };
            return Err(self.err(&key, "expected a time before stop"));
        }
        let ends: Vec<Time> = (steps.iter().skip(1).map(|s| s.0))
            .chain([m.stop.0])
            .collect();
        Ok(steps
            .drain(..)
            .zip(ends)
            .map(|((at, file, key), until)| (at, until, file, key))
            .collect())
    }

    /// The nonzero entries of matrix `file` (named at scenario key `key`).
    fn entries(
        &self,
        file: &str,
        key: &str,
        ends: &mut EndCache,
    ) -> Result<Vec<Entry>, ScenarioError> {
        let c = self.c;
        let t = c.ctx.inputs.get(file).ok_or_else(|| {
            c.ctx.err(key, "the matrix was not read: matrix files are read by the Python package (with Arrow); run this scenario with `tenantnet run` or tenantnet.run")
        })?;
        let whose = format!("{key} of {}", c.ctx.file);
        let names = t.names();
        let long = ["src", "dst", "rate"].iter().all(|n| names.contains(n));
        if !long && names.len() < 2 {
            return Err(ScenarioError::at(&t.path, "", None, format!("expected columns src, dst and rate, or a dense matrix (a column of sources, then a column per destination); it has {} ({whose})", names.join(", "))));
        }
        let name_of = |col: &str, row: usize| match t.column(col).map(|c| InputTable::cell(c, row))
        {
            Some(Cell::Text(s)) => Ok(s.to_string()),
            Some(cell) => Err(t.err(row, col, cell, "expected a host or VM name", &whose)),
            None => unreachable!("a column of the table"),
        };
        let mut out = Vec::new();
        let mut entry = |row: usize, col: &str, src: String, dst: &str, cell: Cell| {
            let err = |m: &str| t.err(row, col, cell, m, &whose);
            let bps = rate(cell).map_err(|e| err(&e))?.unwrap_or(0);
            if bps == 0 {
                return Ok(());
            }
            let s = ends
                .end(self, &src, c.tenant)
                .map_err(|e| err(&format!("source {src:?} {e}")))?;
            let d = ends
                .end(self, dst, c.tenant)
                .map_err(|e| err(&format!("destination {dst:?} {e}")))?;
            if s.host == d.host {
                return Err(err("traffic from a host to itself; expected 0 here"));
            }
            out.push(Entry {
                row,
                col: col.to_string(),
                src: s,
                dst: d,
                bps,
            });
            Ok::<(), ScenarioError>(())
        };
        for row in 0..t.rows {
            if long {
                let (src, dst) = (name_of("src", row)?, name_of("dst", row)?);
                let cell = InputTable::cell(t.column("rate").expect("checked"), row);
                entry(row, "rate", src, &dst, cell)?;
            } else {
                let src = name_of(names[0], row)?;
                for (dst, col) in t.columns.iter().skip(1) {
                    entry(row, dst, src.clone(), dst, InputTable::cell(col, row))?;
                }
            }
        }
        Ok(out)
    }
}
