//! The tables a scenario names by file, as the Python side read them with Arrow
//! (`tenantnet.sim.tables`): each column a tuple of little-endian buffers, as the
//! results' columns come back (`("opt_f64", values, missing)`, or `("str", codes,
//! labels)` with a missing value coded `u32::MAX`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use tenantnet_core::scenario::{InputTable, Inputs};
use tenantnet_core::sim::results::Column;

fn bad(what: &str) -> PyErr {
    PyValueError::new_err(format!("tables: {what}"))
}

fn words<const N: usize>(b: &[u8]) -> PyResult<impl Iterator<Item = [u8; N]> + '_> {
    if b.len() % N != 0 {
        return Err(bad(
            "a column buffer's length is not a whole number of values",
        ));
    }
    Ok(b.chunks_exact(N)
        .map(|c| c.try_into().expect("chunks of N")))
}

fn column(t: &Bound<'_, PyTuple>, rows: usize) -> PyResult<Column> {
    let kind: String = t.get_item(0)?.extract()?;
    let buf = t.get_item(1)?;
    let buf = buf.cast::<PyBytes>()?.as_bytes();
    let c = match kind.as_str() {
        "opt_f64" => {
            let missing = t.get_item(2)?;
            let missing = missing.cast::<PyBytes>()?.as_bytes();
            let vals = words::<8>(buf)?.map(f64::from_le_bytes);
            let v = vals
                .zip(missing)
                .map(|(x, &m)| (m == 0).then_some(x))
                .collect();
            Column::OptF64(v)
        }
        "str" => Column::Str {
            codes: words::<4>(buf)?.map(u32::from_le_bytes).collect(),
            labels: t.get_item(2)?.cast::<PyList>()?.extract()?,
        },
        other => return Err(bad(&format!("unknown column kind {other:?}"))),
    };
    if c.len() != rows {
        return Err(bad("a column's length is not the table's rows"));
    }
    if let Column::Str { codes, labels } = &c {
        let n = labels.len() as u32;
        if codes.iter().any(|&x| x >= n && x != u32::MAX) {
            return Err(bad("a text column's code is past its labels"));
        }
    }
    Ok(c)
}

/// `{file: (path, rows, {column: tuple})}` as [`Inputs`].
pub fn inputs(tables: Option<&Bound<'_, PyDict>>) -> PyResult<Inputs> {
    let mut out = Inputs::default();
    for (file, t) in tables.into_iter().flat_map(|d| d.iter()) {
        let file: String = file.extract()?;
        let t = t.cast::<PyTuple>()?;
        let path: String = t.get_item(0)?.extract()?;
        let rows: usize = t.get_item(1)?.extract()?;
        let cols = t.get_item(2)?;
        let mut columns = Vec::new();
        for (name, c) in cols.cast::<PyDict>()?.iter() {
            columns.push((name.extract()?, column(c.cast::<PyTuple>()?, rows)?));
        }
        out.insert(
            &file,
            InputTable {
                path,
                rows,
                columns,
            },
        );
    }
    Ok(out)
}
