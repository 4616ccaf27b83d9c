//! A strict reader of the header of netCDF classic files (CDF-1, CDF-2 and CDF-5), run before
//! the netCDF library opens one. netCDF-C trusts this header: it copies names of any length
//! into its callers' `NC_MAX_NAME + 1` byte buffers and sizes an attribute's values by a
//! product that may wrap. So every name, count and size is checked here first, against the
//! format's rules and the file's real size, and a file that breaks one is refused with the
//! byte offset and the name of what is wrong.
//!
//! The layout (netCDF's "classic format specification"): `CDF` and a version byte,
//! `numrecs`, then the dimension, global attribute and variable lists. A list is a tag and a
//! count (or two zeros when empty); names are a length and bytes padded to 4; counts, lengths
//! and sizes take 8 bytes in CDF-5 and 4 otherwise, a variable's offset 4 bytes in CDF-1 and 8
//! otherwise.

use std::io::Read;
use zarr::{Error, Result};

/// The longest name netCDF allows (`NC_MAX_NAME`), in bytes.
pub const MAX_NAME: u64 = 256;
/// The most dimensions a netCDF variable may have (`NC_MAX_VAR_DIMS`).
const MAX_VAR_DIMS: u64 = 1024;

const TAG_DIMENSION: u32 = 0x0A;
const TAG_VARIABLE: u32 = 0x0B;
const TAG_ATTRIBUTE: u32 = 0x0C;

/// A dimension: its name and length (0 for the record dimension).
struct Dim {
    name: String,
    len: u64,
}

/// What the checks after the header need of a variable.
struct Var {
    name: String,
    /// Where its entry starts in the header (for messages).
    at: u64,
    dimids: Vec<usize>,
    elem: u64,
    vsize: u64,
    begin: u64,
}

/// The header being read: the version, the reader, the position and the file's size.
struct Header<R> {
    src: R,
    version: u8,
    pos: u64,
    size: u64,
    file: String,
}

/// Where a classic file keeps its variables' values, as its header says (checked).
#[derive(Debug)]
pub struct Layout {
    /// The number of records.
    pub numrecs: u64,
    /// The bytes from one record of a record variable to its next.
    pub recsize: u64,
    /// The variables, in the header's order.
    pub vars: Vec<Placed>,
}

/// Where one variable's values lie: big-endian, in C order, one record after another.
#[derive(Debug)]
pub struct Placed {
    /// The variable's name.
    pub name: String,
    /// The offset of its values (of its first record).
    pub begin: u64,
    /// The bytes of its values (of one record), without padding.
    pub bytes: u64,
    /// Whether its first dimension is the record dimension.
    pub record: bool,
}

/// Checks the header of the classic file `src` of `size` bytes (named `file` in messages):
/// where its variables lie when every name fits netCDF's limit and every attribute and
/// variable lies within the file; else `Error::Metadata` naming what is wrong and where.
pub fn check(src: impl Read, size: u64, file: &str) -> Result<Layout> {
    let mut h = Header {
        src,
        version: 0,
        pos: 0,
        size,
        file: file.to_string(),
    };
    let magic = h.bytes(4, "the magic number")?;
    h.version = match magic.as_slice() {
        [b'C', b'D', b'F', v @ (1 | 2 | 5)] => *v,
        _ => return Err(h.error(0, "it does not start with CDF\\x01, \\x02 or \\x05".into())),
    };
    let numrecs_at = h.pos;
    let numrecs = h.non_neg("the number of records")?;
    let dims = h.dims()?;
    h.attributes("the file")?;
    let vars = h.vars(&dims)?;
    let end = h.pos;
    h.extents(&dims, &vars, numrecs, numrecs_at, end)
}

impl<R: Read> Header<R> {
    /// The error for what was found at byte `at`.
    fn error(&self, at: u64, what: String) -> Error {
        Error::Metadata(format!("{:?}: netCDF header, byte {at}: {what}", self.file))
    }

    /// The next `n` bytes (`n` is small or checked against the file's size first).
    fn bytes(&mut self, n: u64, what: &str) -> Result<Vec<u8>> {
        let at = self.pos;
        if n > self.size.saturating_sub(at) {
            return Err(self.error(
                at,
                format!("the file ends ({} bytes) inside {what}", self.size),
            ));
        }
        let mut buf = vec![0; n as usize];
        self.src
            .read_exact(&mut buf)
            .map_err(|e| self.error(at, format!("reading {what}: {e}")))?;
        self.pos += n;
        Ok(buf)
    }

    /// Skips `n` bytes (checked against the file's size first).
    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        let at = self.pos;
        let copied = std::io::copy(&mut (&mut self.src).take(n), &mut std::io::sink())
            .map_err(|e| self.error(at, format!("reading {what}: {e}")))?;
        if copied != n {
            return Err(self.error(
                at,
                format!("the file ends ({} bytes) inside {what}", self.size),
            ));
        }
        self.pos += n;
        Ok(())
    }

    /// A big-endian unsigned number of `n` (4 or 8) bytes.
    fn number(&mut self, n: u64, what: &str) -> Result<u64> {
        let b = self.bytes(n, what)?;
        Ok(b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }

    /// A `NON_NEG`: 8 bytes in CDF-5, else 4, no more than a signed number of that size holds.
    fn non_neg(&mut self, what: &str) -> Result<u64> {
        let at = self.pos;
        let (n, max) = match self.version {
            5 => (8, i64::MAX as u64),
            _ => (4, u32::MAX as u64),
        };
        let v = self.number(n, what)?;
        if v > max {
            return Err(self.error(at, format!("{what} is negative ({v} as unsigned)")));
        }
        Ok(v)
    }

    /// A variable's `begin`: 4 bytes in CDF-1, else 8; a signed offset.
    fn offset(&mut self, what: &str) -> Result<u64> {
        let at = self.pos;
        let (n, max) = match self.version {
            1 => (4, i32::MAX as u64),
            _ => (8, i64::MAX as u64),
        };
        let v = self.number(n, what)?;
        if v > max {
            return Err(self.error(at, format!("{what} is negative ({v} as unsigned)")));
        }
        Ok(v)
    }

    /// Padding to the next multiple of 4 after `len` bytes.
    fn pad(&mut self, len: u64, what: &str) -> Result<()> {
        self.skip((4 - len % 4) % 4, what)
    }

    /// A name: a length of at most `MAX_NAME`, then that many bytes of UTF-8 without NUL or
    /// `/`, padded to 4.
    fn name(&mut self, what: &str) -> Result<String> {
        let at = self.pos;
        let len = self.non_neg(&format!("the name length of {what}"))?;
        if len == 0 || len > MAX_NAME {
            return Err(self.error(
                at,
                format!(
                    "the name of {what} is {len} bytes long (netCDF names have 1 to \
                     {MAX_NAME})"
                ),
            ));
        }
        let bytes = self.bytes(len, &format!("the name of {what}"))?;
        let name = String::from_utf8(bytes)
            .map_err(|_| self.error(at, format!("the name of {what} is not UTF-8")))?;
        if name.contains(['\0', '/']) {
            return Err(self.error(
                at,
                format!("the name {name:?} of {what} holds a NUL byte or a '/'"),
            ));
        }
        self.pad(len, &format!("the name of {what}"))?;
        Ok(name)
    }

    /// A list's tag and count: `(0, 0)` when absent. The count is checked against the bytes
    /// left (every item takes at least 8).
    fn list(&mut self, tag: u32, what: &str) -> Result<u64> {
        let at = self.pos;
        let found = self.number(4, &format!("the tag of {what}"))?;
        let count = self.non_neg(&format!("the count of {what}"))?;
        if found == 0 && count == 0 {
            return Ok(0);
        }
        if found != u64::from(tag) {
            return Err(self.error(
                at,
                format!("{what} has the tag {found:#x} (expected {tag:#x}, or 0 and a count of 0)"),
            ));
        }
        if count > self.size.saturating_sub(self.pos) / 8 || count > i32::MAX as u64 {
            return Err(self.error(
                at,
                format!(
                    "{what} claims {count} items, more than the file ({} bytes) can hold",
                    self.size
                ),
            ));
        }
        Ok(count)
    }

    /// A type and its size: 1-6 in CDF-1 and CDF-2, 1-11 in CDF-5.
    fn nc_type(&mut self, what: &str) -> Result<(u64, &'static str)> {
        let at = self.pos;
        let t = self.number(4, &format!("the type of {what}"))?;
        let max = if self.version == 5 { 11 } else { 6 };
        let found = match t {
            1 => (1, "byte"),
            2 => (1, "char"),
            3 => (2, "short"),
            4 => (4, "int"),
            5 => (4, "float"),
            6 => (8, "double"),
            7 => (1, "ubyte"),
            8 => (2, "ushort"),
            9 => (4, "uint"),
            10 => (8, "int64"),
            11 => (8, "uint64"),
            _ => (0, ""),
        };
        if t == 0 || t > max {
            return Err(self.error(
                at,
                format!(
                    "{what} has the type {t}, which is not a type of CDF-{} files",
                    self.version
                ),
            ));
        }
        Ok(found)
    }

    /// The dimension list.
    fn dims(&mut self) -> Result<Vec<Dim>> {
        let count = self.list(TAG_DIMENSION, "the dimension list")?;
        let mut dims = Vec::new();
        let mut record = None;
        for i in 0..count {
            let name = self.name(&format!("dimension {i}"))?;
            let at = self.pos;
            let len = self.non_neg(&format!("the length of dimension {name:?}"))?;
            if len == 0 {
                if let Some(first) = record.replace(i) {
                    return Err(self.error(
                        at,
                        format!(
                            "dimension {name:?} is a second record dimension (length 0, as \
                             dimension {first} is)"
                        ),
                    ));
                }
            }
            dims.push(Dim { name, len });
        }
        Ok(dims)
    }

    /// An attribute list (of `owner`): each value checked to lie within the file, then
    /// skipped.
    fn attributes(&mut self, owner: &str) -> Result<()> {
        let count = self.list(TAG_ATTRIBUTE, &format!("the attribute list of {owner}"))?;
        for i in 0..count {
            let name = self.name(&format!("attribute {i} of {owner}"))?;
            let what = format!("attribute {name:?} of {owner}");
            let (elem, type_name) = self.nc_type(&what)?;
            let at = self.pos;
            let nelems = self.non_neg(&format!("the length of {what}"))?;
            let left = self.size.saturating_sub(self.pos);
            let bytes = nelems
                .checked_mul(elem)
                .and_then(|b| b.checked_add((4 - b % 4) % 4))
                .filter(|&b| b <= left)
                .ok_or_else(|| {
                    self.error(
                        at,
                        format!(
                            "{what} claims {nelems} values of type {type_name}, more than \
                             the {left} bytes left in the file"
                        ),
                    )
                })?;
            self.skip(bytes, &format!("the values of {what}"))?;
        }
        Ok(())
    }

    /// The variable list (dimension ids checked against `dims`).
    fn vars(&mut self, dims: &[Dim]) -> Result<Vec<Var>> {
        let count = self.list(TAG_VARIABLE, "the variable list")?;
        let mut vars = Vec::new();
        for i in 0..count {
            let at = self.pos;
            let name = self.name(&format!("variable {i}"))?;
            let what = format!("variable {name:?}");
            let ndims_at = self.pos;
            let ndims = self.non_neg(&format!("the rank of {what}"))?;
            if ndims > MAX_VAR_DIMS {
                return Err(self.error(
                    ndims_at,
                    format!("{what} has {ndims} dimensions (netCDF allows {MAX_VAR_DIMS})"),
                ));
            }
            let mut dimids = Vec::new();
            for d in 0..ndims {
                let id_at = self.pos;
                let id = match self.version {
                    5 => self.non_neg(&format!("a dimension id of {what}"))?,
                    // A signed 4-byte int.
                    _ => self.number(4, &format!("a dimension id of {what}"))?,
                };
                let dim = usize::try_from(id)
                    .ok()
                    .filter(|&id| id < dims.len())
                    .ok_or_else(|| {
                        self.error(
                            id_at,
                            format!(
                                "dimension {d} of {what} is dimension id {id}, but the file \
                                 has {} dimensions",
                                dims.len()
                            ),
                        )
                    })?;
                if d > 0 && dims[dim].len == 0 {
                    return Err(self.error(
                        id_at,
                        format!(
                            "dimension {d} of {what} is the record dimension {:?}, which may \
                             only come first",
                            dims[dim].name
                        ),
                    ));
                }
                dimids.push(dim);
            }
            self.attributes(&what)?;
            let (elem, _) = self.nc_type(&what)?;
            let vsize = self.non_neg(&format!("the size (vsize) of {what}"))?;
            let begin = self.offset(&format!("the offset (begin) of {what}"))?;
            vars.push(Var {
                name,
                at,
                dimids,
                elem,
                vsize,
                begin,
            });
        }
        Ok(vars)
    }

    /// Checks that every variable's data starts after the header (which ends at `end`) and
    /// lies within the file, counting `numrecs` records of the record variables, and says
    /// where each lies. The sizes are those netCDF computes from the dimensions (it ignores
    /// `vsize`, which must still not exceed the file).
    fn extents(
        &self,
        dims: &[Dim],
        vars: &[Var],
        numrecs: u64,
        numrecs_at: u64,
        end: u64,
    ) -> Result<Layout> {
        // Bytes of one record (or of the whole variable) of each variable, unpadded.
        let mut sizes = Vec::new();
        for v in vars {
            let fixed = v
                .dimids
                .iter()
                .filter(|&&d| dims[d].len > 0)
                .try_fold(v.elem, |n, &d| n.checked_mul(dims[d].len))
                .filter(|&n| n <= i64::MAX as u64)
                .ok_or_else(|| {
                    self.error(
                        v.at,
                        format!(
                            "the size of variable {:?} (its dimensions' product) overflows 64 \
                             bits",
                            v.name
                        ),
                    )
                })?;
            sizes.push(fixed);
        }
        let is_record = |v: &Var| v.dimids.first().is_some_and(|&d| dims[d].len == 0);
        // The record size as netCDF computes it: the padded sizes of the record variables,
        // unpadded when there is only one.
        let records: Vec<u64> = vars
            .iter()
            .zip(&sizes)
            .filter(|(v, _)| is_record(v))
            .map(|(_, &s)| s)
            .collect();
        let recsize = match records.as_slice() {
            [one] => *one,
            many => many
                .iter()
                .try_fold(0u64, |sum, &s| sum.checked_add(s.div_ceil(4) * 4))
                .ok_or_else(|| self.error(end, "the record size overflows 64 bits".into()))?,
        };
        for (v, &bytes) in vars.iter().zip(&sizes) {
            let what = format!("variable {:?}", v.name);
            if v.begin < end {
                return Err(self.error(
                    v.at,
                    format!(
                        "{what} starts at byte {}, inside the header (which ends at byte {end})",
                        v.begin
                    ),
                ));
            }
            let (span, in_file) = if is_record(v) {
                let span = numrecs
                    .checked_sub(1)
                    .map(|n| n.checked_mul(recsize).and_then(|r| r.checked_add(bytes)));
                (span.unwrap_or(Some(0)), numrecs > 0)
            } else {
                (Some(bytes), true)
            };
            let fits = span
                .and_then(|s| v.begin.checked_add(s))
                .is_some_and(|e| e <= self.size);
            if !fits {
                let at = if is_record(v) { numrecs_at } else { v.at };
                return Err(self.error(
                    at,
                    format!(
                        "the data of {what} (from byte {}{}) runs past the end of the file \
                         ({} bytes)",
                        v.begin,
                        if is_record(v) {
                            format!(", {numrecs} records of {recsize} bytes")
                        } else {
                            format!(", {bytes} bytes")
                        },
                        self.size
                    ),
                ));
            }
            if in_file && v.vsize > self.size {
                return Err(self.error(
                    v.at,
                    format!(
                        "{what} has the size (vsize) {}, larger than the file ({} bytes)",
                        v.vsize, self.size
                    ),
                ));
            }
        }
        Ok(Layout {
            numrecs,
            recsize,
            vars: vars
                .iter()
                .zip(sizes)
                .map(|(v, bytes)| Placed {
                    name: v.name.clone(),
                    begin: v.begin,
                    bytes,
                    record: is_record(v),
                })
                .collect(),
        })
    }
}
