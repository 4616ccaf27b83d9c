//! `copy --rechunk` and `--shards`: one shape for every copied array of its rank, and
//! shapes for named arrays (`NAME:SHAPE`, several separated by `;` or by repeating the
//! option). A name is the array's path relative to the copied node, or its last segment
//! when no other copied array ends in it.

use crate::describe::display;
use zarr::{Error, Result};

/// A value given for arrays: the default for every array of its rank, and named ones.
pub struct PerArray<T> {
    /// The option's name, for errors.
    option: &'static str,
    /// The value for every array of its rank, with its text.
    default: Option<(String, T)>,
    /// Named values: the name, the entry's text and the value.
    named: Vec<(String, String, T)>,
}

impl<T> PerArray<T> {
    /// Parses the option's values (`parse` reads one shape; `option` names the option).
    pub fn parse(
        values: &[String],
        option: &'static str,
        parse: impl Fn(&str, &str) -> Result<T>,
    ) -> Result<Self> {
        let mut this = PerArray {
            option,
            default: None,
            named: Vec::new(),
        };
        for entry in values.iter().flat_map(|v| v.split(';')).map(str::trim) {
            // A JSON shape starts with `[`; a name comes before the first `:`.
            match entry.split_once(':').filter(|_| !entry.starts_with('[')) {
                Some((name, shape)) => {
                    let name = name.trim().trim_matches('/');
                    if name.is_empty() {
                        return Err(Error::InvalidArg(format!(
                            "{option} {entry:?}: the array's name is empty"
                        )));
                    }
                    if this.named.iter().any(|(n, _, _)| n == name) {
                        return Err(Error::InvalidArg(format!(
                            "{option}: {name} is given twice"
                        )));
                    }
                    let value = parse(shape, &format!("{option} {name}:"))?;
                    this.named
                        .push((name.to_string(), entry.to_string(), value));
                }
                None if this.default.is_some() => {
                    return Err(Error::InvalidArg(format!(
                        "{option}: more than one shape for every array (name the arrays: \
                         NAME:SHAPE)"
                    )))
                }
                None => this.default = Some((entry.to_string(), parse(entry, option)?)),
            }
        }
        Ok(this)
    }

    /// The value of each array of `arrays` (their paths relative to the copied node, their
    /// source paths and ranks; `rank_of` gives a value's rank), in their order. Refuses a
    /// name no array has, a name two arrays end in, a named value of another rank, and a
    /// default that fits no array.
    pub fn resolve<'a>(
        &'a self,
        arrays: &[(String, String, usize)],
        rank_of: impl Fn(&T) -> usize,
    ) -> Result<Vec<Option<&'a T>>> {
        let option = self.option;
        let mut chosen: Vec<Option<&T>> = vec![None; arrays.len()];
        for (name, entry, value) in &self.named {
            let exact: Vec<usize> = (0..arrays.len())
                .filter(|&i| arrays[i].0 == *name)
                .collect();
            let matches = if exact.is_empty() {
                (0..arrays.len())
                    .filter(|&i| arrays[i].1.rsplit('/').next() == Some(name.as_str()))
                    .collect()
            } else {
                exact
            };
            let i = match matches.as_slice() {
                [i] => *i,
                [] => {
                    return Err(Error::InvalidArg(format!(
                        "{option} {entry:?}: no array {name} is copied"
                    )))
                }
                many => {
                    let paths: Vec<String> = many.iter().map(|&i| display(&arrays[i].1)).collect();
                    return Err(Error::InvalidArg(format!(
                        "{option} {entry:?}: {name} names {}: give the path",
                        paths.join(" and ")
                    )));
                }
            };
            let (rank, want) = (arrays[i].2, rank_of(value));
            if rank != want {
                return Err(Error::InvalidArg(format!(
                    "{option} {entry:?} has {want} dimension{} but {} has {rank}",
                    plural(want),
                    display(&arrays[i].1)
                )));
            }
            chosen[i] = Some(value);
        }
        if let Some((text, value)) = &self.default {
            let want = rank_of(value);
            let mut fits = false;
            for (i, (_, _, rank)) in arrays.iter().enumerate() {
                if *rank == want {
                    fits = true;
                    chosen[i].get_or_insert(value);
                }
            }
            if !fits && !arrays.is_empty() {
                let ranks: Vec<String> = arrays
                    .iter()
                    .map(|(_, path, rank)| format!("{} has {rank}", display(path)))
                    .collect();
                return Err(Error::InvalidArg(format!(
                    "{option} {text} has {want} dimension{} and no array copied has \
                     {want} ({}): name the arrays with NAME:SHAPE",
                    plural(want),
                    ranks.join(", ")
                )));
            }
        }
        Ok(chosen)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
