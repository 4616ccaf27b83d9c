//! Hostile netCDF files given to `zarrtool import`: classic headers written byte by byte
//! here (sizes whose products wrap, names longer than netCDF allows, data past the end of
//! the file, truncated files) and an HDF5 file with over-long attribute names. Each import
//! must fail with status 1 and a one-line message saying what is wrong, write nothing and not
//! crash. The tests run when the binary has netCDF support (`zarrtool version --features`),
//! and must run when `ZARR_TEST_NETCDF=1`. `ZARRTOOL_BIN` names the binary to test.
#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::path::Path;

use crate::common;

use common::zarrtool::{exe, s, tool};

/// Whether the binary under test imports netCDF files (a failure when `ZARR_TEST_NETCDF=1`
/// and it does not).
fn netcdf_tool() -> bool {
    let out = tool(&["version", "--features"]);
    let has = String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.starts_with("netcdf: import"));
    if !has && std::env::var("ZARR_TEST_NETCDF").as_deref() == Ok("1") {
        panic!("ZARR_TEST_NETCDF=1 but {} has no netCDF import", exe());
    }
    if !has {
        eprintln!("this zarrtool has no netCDF import: skipped");
    }
    has
}

/// An attribute of a classic file: name, type (1 byte ... 11 uint64), count and the value
/// bytes written (padded to 4 when encoded).
#[derive(Clone)]
struct Att {
    name: Vec<u8>,
    ty: u32,
    nelems: u64,
    values: Vec<u8>,
}

/// A variable of a classic file. `begin` is where its data lies (`None`: after the header and
/// the variables before it, as netCDF lays them out); `data` is appended there.
#[derive(Clone)]
struct Var {
    name: Vec<u8>,
    dimids: Vec<u64>,
    atts: Vec<Att>,
    ty: u32,
    vsize: u64,
    begin: Option<u64>,
    data: Vec<u8>,
}

/// A netCDF classic file (CDF-1, CDF-2 or CDF-5) as its header's fields.
#[derive(Clone)]
struct Cdf {
    version: u8,
    numrecs: u64,
    dims: Vec<(Vec<u8>, u64)>,
    atts: Vec<Att>,
    vars: Vec<Var>,
}

fn text_att(name: &str, text: &str) -> Att {
    Att {
        name: name.into(),
        ty: 2,
        nelems: text.len() as u64,
        values: text.into(),
    }
}

/// A valid small file: dimensions n = 3, time (the record dimension), len = 4; a global
/// `title`; int x(n) = 1 2 3 with `units`; char s(n, len) = "abcd" "efgh" "ijkl"; double
/// t(time) with two records 0.5 and 2 and a `scale` attribute of two doubles.
fn sample(version: u8) -> Cdf {
    let ints: Vec<u8> = [1i32, 2, 3].iter().flat_map(|v| v.to_be_bytes()).collect();
    let doubles: Vec<u8> = [0.5f64, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    let var = |name: &str, dimids: Vec<u64>, atts, ty, data: Vec<u8>, vsize| Var {
        name: name.into(),
        dimids,
        atts,
        ty,
        vsize,
        begin: None,
        data,
    };
    Cdf {
        version,
        numrecs: 2,
        dims: vec![
            (b"n".to_vec(), 3),
            (b"time".to_vec(), 0),
            (b"len".to_vec(), 4),
        ],
        atts: vec![text_att("title", "hostile")],
        vars: vec![
            var("x", vec![0], vec![text_att("units", "m")], 4, ints, 12),
            var("s", vec![0, 2], vec![], 2, b"abcdefghijkl".to_vec(), 12),
            var(
                "t",
                vec![1],
                vec![Att {
                    name: b"scale".to_vec(),
                    ty: 6,
                    nelems: 2,
                    values: doubles.clone(),
                }],
                6,
                doubles,
                8,
            ),
        ],
    }
}

impl Cdf {
    /// The file's bytes: the header, then each variable's data at its `begin`.
    fn bytes(&self) -> Vec<u8> {
        let header_len = self.header(&vec![0; self.vars.len()]).len() as u64;
        let mut begins = Vec::new();
        let mut at = header_len;
        for v in &self.vars {
            begins.push(v.begin.unwrap_or(at));
            at += v.data.len() as u64;
        }
        let mut out = self.header(&begins);
        for v in &self.vars {
            out.extend_from_slice(&v.data);
        }
        out
    }

    fn header(&self, begins: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        let wide = self.version == 5;
        let non_neg = |b: &mut Vec<u8>, v: u64| {
            if wide {
                b.extend_from_slice(&v.to_be_bytes());
            } else {
                b.extend_from_slice(&(v as u32).to_be_bytes());
            }
        };
        let int = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_be_bytes());
        let pad = |b: &mut Vec<u8>| b.resize(b.len().div_ceil(4) * 4, 0);
        let name = |b: &mut Vec<u8>, n: &[u8]| {
            non_neg(b, n.len() as u64);
            b.extend_from_slice(n);
            pad(b);
        };
        let list = |b: &mut Vec<u8>, tag: u32, n: usize| {
            int(b, if n == 0 { 0 } else { tag });
            non_neg(b, n as u64);
        };
        let atts = |b: &mut Vec<u8>, atts: &[Att]| {
            list(b, 0x0C, atts.len());
            for a in atts {
                name(b, &a.name);
                int(b, a.ty);
                non_neg(b, a.nelems);
                b.extend_from_slice(&a.values);
                pad(b);
            }
        };
        b.extend_from_slice(&[b'C', b'D', b'F', self.version]);
        non_neg(&mut b, self.numrecs);
        list(&mut b, 0x0A, self.dims.len());
        for (n, len) in &self.dims {
            name(&mut b, n);
            non_neg(&mut b, *len);
        }
        atts(&mut b, &self.atts);
        list(&mut b, 0x0B, self.vars.len());
        for (v, &begin) in self.vars.iter().zip(begins) {
            name(&mut b, &v.name);
            non_neg(&mut b, v.dimids.len() as u64);
            for &d in &v.dimids {
                non_neg(&mut b, d);
            }
            atts(&mut b, &v.atts);
            int(&mut b, v.ty);
            non_neg(&mut b, v.vsize);
            if self.version == 1 {
                int(&mut b, begin as u32);
            } else {
                b.extend_from_slice(&begin.to_be_bytes());
            }
        }
        b
    }
}

/// Every file below `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(s(&p).to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Imports `bytes` (written as `dir/name`) into the store `dir/s.zarr`, expecting status 1,
/// no output and one line on stderr; returns that line. The store must be as before: absent,
/// or its files unchanged.
fn refused(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let file = dir.join(name);
    std::fs::write(&file, bytes).unwrap();
    let store = dir.join("s.zarr");
    let before = store.exists().then(|| snapshot(&store));
    let out = tool(&["import", s(&file), s(&store), "imported"]);
    let err = String::from_utf8(out.stderr).expect("UTF-8 messages");
    assert_eq!(out.status.code(), Some(1), "{name}: {err}");
    assert_eq!(out.stdout, b"", "{name}");
    assert!(
        err.starts_with("zarrtool: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{name}: {err}"
    );
    assert_eq!(store.exists().then(|| snapshot(&store)), before, "{name}");
    err
}

/// The message of a classic header refused at byte `at` for `what`.
fn header_error(file: &Path, at: u64, what: &str) -> String {
    format!(
        "zarrtool: metadata error: {:?}: netCDF header, byte {at}: {what}\n",
        s(file)
    )
}

/// The valid sample imports in every version, values and attributes exact.
#[test]
fn the_sample_classic_files_import_exactly() {
    if !netcdf_tool() {
        return;
    }
    for version in [1, 2, 5] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ok.nc");
        std::fs::write(&file, sample(version).bytes()).unwrap();
        let store = dir.path().join("s.zarr");
        let out = tool(&["import", s(&file), s(&store)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dump = |node: &str| {
            let out = tool(&["dump", s(&store), node]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(dump("x"), "1 2 3\n", "CDF-{version}");
        assert_eq!(dump("t"), "0.5 2.0\n", "CDF-{version}");
        assert_eq!(
            dump("s"),
            "b\"abcd\" b\"efgh\" b\"ijkl\"\n",
            "CDF-{version}"
        );
        let attrs = tool(&["attrs", "get", s(&store), "t"]);
        assert_eq!(
            String::from_utf8(attrs.stdout).unwrap(),
            "{\n  \"scale\": [\n    0.5,\n    2.0\n  ]\n}\n"
        );
    }
}

/// An attribute of 2^61 + 1 doubles: netCDF-C's `nelems * 8` wraps to 8 bytes, and it would
/// write the values into a buffer sized the same way. Refused before netCDF reads the file;
/// an existing store is left as it was.
#[test]
fn an_attribute_whose_byte_size_wraps_is_refused() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.nc");
    std::fs::write(&ok, sample(5).bytes()).unwrap();
    let store = dir.path().join("s.zarr");
    assert!(tool(&["import", s(&ok), s(&store), "ok"]).status.success());
    let mut cdf = Cdf {
        version: 5,
        numrecs: 0,
        dims: vec![],
        atts: vec![Att {
            name: b"x".to_vec(),
            ty: 6,
            nelems: (1 << 61) + 1,
            values: 1.5f64.to_be_bytes().to_vec(),
        }],
        vars: vec![],
    };
    // magic 4, numrecs 8, no dimensions 12, list 12, name 12, type 4: nelems at 52.
    assert_eq!(
        refused(dir.path(), "wrap.nc", &cdf.bytes()),
        header_error(
            &dir.path().join("wrap.nc"),
            52,
            "attribute \"x\" of the file claims 2305843009213693953 values of type double, \
             more than the 20 bytes left in the file"
        )
    );
    // The same on a variable, in CDF-1 (4-byte counts: 2^29 + 1 doubles, 2^32 + 8 bytes).
    cdf = sample(1);
    cdf.vars[0].atts[0] = Att {
        name: b"big".to_vec(),
        ty: 6,
        nelems: (1 << 29) + 1,
        values: vec![0; 8],
    };
    let err = refused(dir.path(), "wrap1.nc", &cdf.bytes());
    assert!(
        err.contains("attribute \"big\" of variable \"x\" claims 536870913 values of type double"),
        "{err}"
    );
}

/// Names longer than `NC_MAX_NAME` (256 bytes): netCDF-C 4.9 reads them from a classic
/// header whole and copies them into its callers' 257-byte buffers. Refused for dimensions,
/// variables and attributes; names of 255 and 256 bytes import.
#[test]
fn names_longer_than_nc_max_name_are_refused() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cdf = sample(1);
    cdf.dims[0].0 = vec![b'd'; 257];
    // magic 4, numrecs 4, list tag and count 8: the first name's length at 16.
    assert_eq!(
        refused(dir.path(), "dim.nc", &cdf.bytes()),
        header_error(
            &dir.path().join("dim.nc"),
            16,
            "the name of dimension 0 is 257 bytes long (netCDF names have 1 to 256)"
        )
    );
    cdf = sample(2);
    cdf.vars[1].name = vec![b'v'; 1000];
    let err = refused(dir.path(), "var.nc", &cdf.bytes());
    assert!(
        err.contains("the name of variable 1 is 1000 bytes long (netCDF names have 1 to 256)"),
        "{err}"
    );
    cdf = sample(5);
    cdf.vars[2].atts[0].name = vec![b'a'; 4096];
    let err = refused(dir.path(), "att.nc", &cdf.bytes());
    assert!(
        err.contains(
            "the name of attribute 0 of variable \"t\" is 4096 bytes long (netCDF names have \
             1 to 256)"
        ),
        "{err}"
    );
    for len in [255, 256] {
        let mut cdf = sample(1);
        cdf.vars[0].name = vec![b'x'; len];
        cdf.vars[0].atts[0].name = vec![b'u'; len];
        cdf.dims[0].0 = vec![b'n'; len];
        let file = dir.path().join(format!("ok{len}.nc"));
        std::fs::write(&file, cdf.bytes()).unwrap();
        // A zip store: a directory of 256 bytes is more than most filesystems allow.
        let store = dir.path().join(format!("ok{len}.zip"));
        let out = tool(&["import", s(&file), s(&store)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let name = "x".repeat(len);
        let out = tool(&["dump", s(&store), &name]);
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "1 2 3\n");
    }
}

/// A `char` attribute claiming 2^31 - 1 characters in a file of 52 bytes: refused unread
/// (it asked for 2 GiB).
#[test]
fn a_char_attribute_larger_than_the_file_is_refused() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cdf = Cdf {
        version: 1,
        numrecs: 0,
        dims: vec![],
        atts: vec![Att {
            name: b"c".to_vec(),
            ty: 2,
            nelems: (1 << 31) - 1,
            values: b"abc".to_vec(),
        }],
        vars: vec![],
    };
    let bytes = cdf.bytes();
    assert_eq!(bytes.len(), 52);
    assert_eq!(
        refused(dir.path(), "char.nc", &bytes),
        header_error(
            &dir.path().join("char.nc"),
            36,
            "attribute \"c\" of the file claims 2147483647 values of type char, more than \
             the 12 bytes left in the file"
        )
    );
}

/// netCDF-C passes the attribute names of HDF5 files through whole (a 1000-byte name came
/// back from `nc_inq_attname` whole, into a 257-byte buffer before): they are read into a
/// buffer of 64 KiB (HDF5 names attributes with a 2-byte length) and refused. The file was
/// made by `tests/data/long_attribute_names.c`.
#[test]
fn hdf5_attribute_names_longer_than_nc_max_name_are_refused() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let h5 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/long_attribute_names.h5");
    let bytes = std::fs::read(h5).unwrap();
    assert_eq!(
        refused(dir.path(), "long.h5", &bytes),
        format!(
            "zarrtool: metadata error: {:?}: attribute 0 of group / has a name of 1000 bytes \
             (\"gggggggggggggggggggggggggggggggg\"...), more than netCDF allows (256)\n",
            s(&dir.path().join("long.h5"))
        )
    );
}

/// Many hostile headers, each made from the valid sample by one change: every one is refused
/// with a message naming what is wrong, and nothing is written.
#[test]
fn hostile_classic_headers_are_refused() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(String, Cdf, &str)> = Vec::new();
    for version in [1u8, 2, 5] {
        let base = sample(version);
        let mut case = |what: String, change: &dyn Fn(&mut Cdf), expect: &'static str| {
            let mut cdf = base.clone();
            change(&mut cdf);
            cases.push((format!("CDF-{version}: {what}"), cdf, expect));
        };
        let wide = version == 5;
        let max_count = if wide {
            i64::MAX as u64
        } else {
            u32::MAX as u64
        };
        // Huge counts of every type's values, on a global and a variable attribute.
        let types: &[u32] = if wide {
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
        } else {
            &[1, 2, 3, 4, 5, 6]
        };
        for &ty in types {
            let counts: &[u64] = if wide {
                &[(1 << 61) + 1, 1 << 62, i64::MAX as u64, 1 << 40, 1 << 20]
            } else {
                &[
                    (1 << 31) - 1,
                    u32::MAX as u64,
                    (1 << 30) + 1,
                    (1 << 29) + 1,
                    1 << 20,
                ]
            };
            for &n in counts {
                case(
                    format!("global attribute of {n} values of type {ty}"),
                    &|c| {
                        c.atts[0].ty = ty;
                        c.atts[0].nelems = n;
                    },
                    "claims",
                );
                case(
                    format!("variable attribute of {n} values of type {ty}"),
                    &|c| {
                        c.vars[2].atts[0].ty = ty;
                        c.vars[2].atts[0].nelems = n;
                    },
                    "claims",
                );
            }
        }
        if wide {
            for n in [1u64 << 63, u64::MAX] {
                case(
                    format!("attribute count {n}"),
                    &|c| c.atts[0].nelems = n,
                    "is negative",
                );
                case(format!("numrecs {n}"), &|c| c.numrecs = n, "is negative");
            }
        }
        // Names around and far past NC_MAX_NAME, empty, and with bytes no name may hold.
        for len in [257usize, 300, 1000, 70_000] {
            case(
                format!("dimension name of {len}"),
                &|c| c.dims[1].0 = vec![b'd'; len],
                "bytes long",
            );
            case(
                format!("variable name of {len}"),
                &|c| c.vars[2].name = vec![b'v'; len],
                "bytes long",
            );
            case(
                format!("attribute name of {len}"),
                &|c| c.atts[0].name = vec![b'a'; len],
                "bytes long",
            );
        }
        case(
            "empty variable name".into(),
            &|c| c.vars[0].name.clear(),
            "is 0 bytes long",
        );
        case(
            "name with a slash".into(),
            &|c| c.vars[0].name = b"a/b".to_vec(),
            "a '/'",
        );
        case(
            "name with a NUL".into(),
            &|c| c.dims[0].0 = b"a\0b".to_vec(),
            "a NUL byte",
        );
        case(
            "name not UTF-8".into(),
            &|c| c.atts[0].name = b"\xff\xfe".to_vec(),
            "not UTF-8",
        );
        // A name length claiming more than the file, with the name's bytes missing.
        case(
            "name length past the file".into(),
            &|c| {
                c.vars.clear();
                c.atts.clear();
                c.dims.truncate(1);
                c.dims[0].0 = vec![b'n'; 200];
                c.dims.push((vec![b'm'; 300], 1));
            },
            "bytes long",
        );
        // Dimensions whose product overflows, or exceeds the file.
        let huge = if wide { 1u64 << 62 } else { u32::MAX as u64 };
        case(
            "dimension product overflows".into(),
            &|c| {
                c.dims[0].1 = huge;
                c.dims[2].1 = huge;
                c.dims.push((b"m".to_vec(), huge));
                c.vars[1].dimids = vec![0, 2, 3];
            },
            "overflows 64 bits",
        );
        case(
            "dimension larger than the file".into(),
            &|c| c.dims[0].1 = huge / 8,
            "runs past the end of the file",
        );
        // Data offsets and sizes past the end, or inside the header.
        let ends: &[u64] = if version == 1 {
            &[1000, i32::MAX as u64]
        } else {
            &[1000, u32::MAX as u64, i64::MAX as u64]
        };
        for &begin in ends {
            case(
                format!("begin {begin}"),
                &|c| c.vars[0].begin = Some(begin),
                "runs past the end of the file",
            );
            case(
                format!("record begin {begin}"),
                &|c| c.vars[2].begin = Some(begin),
                "runs past the end of the file",
            );
        }
        if version == 1 {
            case(
                "negative begin".into(),
                &|c| c.vars[1].begin = Some(u32::MAX as u64),
                "is negative",
            );
        }
        case(
            "begin in the header".into(),
            &|c| c.vars[0].begin = Some(8),
            "inside the header",
        );
        case(
            "vsize past the file".into(),
            &|c| c.vars[0].vsize = max_count,
            "larger than the file",
        );
        for n in [3u64, 1000, u32::MAX as u64] {
            case(
                format!("numrecs {n}"),
                &|c| c.numrecs = n,
                "runs past the end of the file",
            );
        }
        // Counts, ids, ranks and types the format does not allow.
        case(
            "dimension id out of range".into(),
            &|c| c.vars[0].dimids = vec![7],
            "dimension id 7",
        );
        case(
            "negative dimension id".into(),
            &|c| c.vars[0].dimids = vec![if wide { u64::MAX } else { u32::MAX as u64 }],
            if wide {
                "is negative"
            } else {
                "dimension id 4294967295"
            },
        );
        case(
            "record dimension second".into(),
            &|c| c.vars[1].dimids = vec![0, 1],
            "may only come first",
        );
        case(
            "two record dimensions".into(),
            &|c| c.dims[2].1 = 0,
            "second record dimension",
        );
        case(
            "1025 dimensions".into(),
            &|c| c.vars[0].dimids = vec![0; 1025],
            "has 1025 dimensions",
        );
        case(
            "1024 dimensions".into(),
            &|c| c.vars[0].dimids = vec![0; 1024],
            "overflows 64 bits",
        );
        case(
            "type 0".into(),
            &|c| c.vars[0].ty = 0,
            "is not a type of CDF",
        );
        case(
            "type 12".into(),
            &|c| c.atts[0].ty = 12,
            "is not a type of CDF",
        );
        if !wide {
            case(
                "type 7 in CDF-1/2".into(),
                &|c| c.vars[0].ty = 7,
                "is not a type of CDF",
            );
        }
    }
    // Changes a built header cannot express: list tags and counts.
    let mut raw: Vec<(String, Vec<u8>, &str)> = Vec::new();
    for version in [1u8, 2, 5] {
        let bytes = sample(version).bytes();
        let n = if version == 5 { 8 } else { 4 };
        let dims_at = 4 + n;
        let mut bad_tag = bytes.clone();
        bad_tag[dims_at + 3] = 0x0B;
        raw.push((
            format!("CDF-{version}: dimension tag"),
            bad_tag,
            "has the tag 0xb",
        ));
        let mut huge_count = bytes.clone();
        huge_count[dims_at + 4..dims_at + 4 + n].fill(0x7f);
        raw.push((
            format!("CDF-{version}: dimension count"),
            huge_count,
            "items, more than the file",
        ));
        let mut absent = bytes.clone();
        absent[dims_at + 3] = 0;
        raw.push((
            format!("CDF-{version}: absent list with a count"),
            absent,
            "or 0 and a count of 0",
        ));
    }
    let total = cases.len() + raw.len();
    let cases = cases
        .into_iter()
        .map(|(w, c, e)| (w, c.bytes(), e))
        .chain(raw);
    for (i, (what, bytes, expect)) in cases.enumerate() {
        let name = format!("case{i}.nc");
        let err = refused(dir.path(), &name, &bytes);
        let head = format!(
            "zarrtool: metadata error: {:?}: netCDF header, byte ",
            s(&dir.path().join(&name))
        );
        assert!(
            err.starts_with(&head) && err.contains(expect),
            "{what}: {err}"
        );
    }
    assert_eq!(total, 358);
}

/// The valid sample cut at every length is refused (never imported in part, never a crash).
#[test]
fn truncated_classic_files_are_refused_at_every_length() {
    if !netcdf_tool() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for version in [1, 2, 5] {
        let bytes = sample(version).bytes();
        for len in 0..bytes.len() {
            let name = format!("cut{version}-{len}.nc");
            let err = refused(dir.path(), &name, &bytes[..len]);
            let file = s(&dir.path().join(&name)).to_string();
            let expected = if len < 4 {
                format!(
                    "zarrtool: invalid argument: {file:?} is not a netCDF or HDF5 file: a raw \
                     binary file needs --dtype and --shape\n"
                )
            } else {
                format!("zarrtool: metadata error: {file:?}: netCDF header, byte ")
            };
            assert!(
                err.starts_with(&expected),
                "CDF-{version} cut at {len}: {err}"
            );
            assert!(
                len < 4
                    || ["the file ends", "runs past the end", "more than the"]
                        .iter()
                        .any(|p| err.contains(p)),
                "CDF-{version} cut at {len}: {err}"
            );
        }
    }
}
