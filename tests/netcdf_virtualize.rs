//! `zarrtool virtualize`: kerchunk references to the chunks of netCDF-3 and netCDF-4 files,
//! read back through `reference:///PATH` and compared value for value and attribute for
//! attribute with what `zarrtool import` copies from the same files (whose own checks are
//! against ncdump); chunk layouts, filters, byte orders and groups of netCDF-4; many files
//! concatenated along a dimension; and what is refused. Run when the binary under test has
//! netCDF support, and must run when `ZARR_TEST_NETCDF=1`; they need Debian's netcdf-bin.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

use common::zarrtool::{exe, ncgen, ok, s, tool};
use serde_json::Value;

/// Whether the binary under test has netCDF support (a failure under ZARR_TEST_NETCDF=1
/// when it has not).
fn netcdf_tool() -> bool {
    let has = ok(&["version", "--features"])
        .lines()
        .any(|l| l.starts_with("netcdf: import") && l.contains("references"));
    if !has && std::env::var("ZARR_TEST_NETCDF").as_deref() == Ok("1") {
        panic!("ZARR_TEST_NETCDF=1 but {} has no netCDF support", exe());
    }
    has
}

/// Runs `zarrtool virtualize ARGS`, expecting success; returns its standard error.
fn virtualize(args: &[&str]) -> String {
    let mut all = vec!["virtualize"];
    all.extend_from_slice(args);
    let out = tool(&all);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "zarrtool {all:?}: {err}");
    assert_eq!(out.stdout, b"", "zarrtool {all:?}");
    err
}

/// Runs `zarrtool virtualize ARGS`, expecting failure; returns its standard error.
fn refused(args: &[&str]) -> String {
    let mut all = vec!["virtualize"];
    all.extend_from_slice(args);
    common::zarrtool::fails(&all, 1)
}

/// The store URL of the reference file `refs`.
fn url(refs: &Path) -> String {
    format!("reference://{}", refs.display())
}

/// The references of the reference file `refs`.
fn refs_of(refs: &Path) -> serde_json::Map<String, Value> {
    let doc: Value = serde_json::from_slice(&std::fs::read(refs).unwrap()).unwrap();
    assert_eq!(doc["version"], 1);
    doc["refs"].as_object().unwrap().clone()
}

/// A document of the reference file as JSON.
fn document(refs: &serde_json::Map<String, Value>, key: &str) -> Value {
    serde_json::from_str(refs[key].as_str().unwrap()).unwrap()
}

/// Imports `nc` into a Zarr v2 store beside it and compares it with the references
/// `refs` by value and attributes (`zarrtool diff --attrs`); returns what diff printed
/// (nothing when they are the same) and its status.
fn diff_with_import(nc: &Path, refs: &Path) -> (String, i32) {
    let store = nc.with_extension("zarr");
    ok(&["import", s(nc), s(&store), "--format", "2"]);
    let out = tool(&["diff", "--attrs", s(&store), &url(refs)]);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap(),
    )
}

/// Every type a classic file has, record and fixed variables, a scalar, chars, a given
/// fill value and packing attributes; `EXTRA` stands for CDF-5's and netCDF-4's types.
const TYPES_CDL: &str = r#"netcdf types {
dimensions:
	time = UNLIMITED ;
	lat = 3 ;
	lon = 4 ;
	nchar = 5 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
		time:calendar = "standard" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	short temp(time, lat, lon) ;
		temp:_FillValue = -999s ;
		temp:scale_factor = 0.01 ;
		temp:add_offset = 273.15 ;
	char name(lat, nchar) ;
	int scalar ;
		scalar:note = "a 0-d variable" ;
	byte flags(time) ;
	double wind(lat, lon) ;
		wind:missing_value = -1. ;
EXTRA_VARS
// global attributes:
		:Conventions = "CF-1.8" ;
		:version = 2 ;
data:
	time = 0, 1.5 ;
	lat = -10, 0, 10.5 ;
	temp = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, _,
	       -13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 32767 ;
	name = "alpha", "be", "gamma" ;
	scalar = 42 ;
	flags = -128, 127 ;
	wind = 0.5, -1, 2.25, 3, 4, 5, 6, 7, 8, 9, 10, 1e300 ;
EXTRA_DATA
}
"#;

const EXTRA_VARS: &str = "\tubyte ub(lon) ;\n\tushort us(lon) ;\n\tuint ui(lon) ;\n\
                          \tint64 big(time) ;\n\tuint64 ubig(lon) ;\n";
const EXTRA_DATA: &str = "\tub = 0, 1, 128, 255 ;\n\tus = 0, 1, 2, 65535 ;\n\
                          \tui = 0, 1, 2, 4294967295 ;\n\
                          \tbig = -9223372036854775807, 9223372036854775807 ;\n\
                          \tubig = 0, 1, 2, 18446744073709551615 ;\n";

#[test]
fn every_netcdf_format_reads_through_references_as_its_import() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (kind, extra) in [
        ("classic", false),
        ("64-bit-offset", false),
        ("cdf5", true),
        ("nc4", true),
    ] {
        let cdl = match extra {
            true => TYPES_CDL
                .replace("EXTRA_VARS", EXTRA_VARS)
                .replace("EXTRA_DATA", EXTRA_DATA),
            false => TYPES_CDL
                .replace("EXTRA_VARS", "")
                .replace("EXTRA_DATA", ""),
        };
        let name = kind.replace('-', "_");
        let nc = ncgen(dir.path(), &name, kind, &cdl);
        let refs = dir.path().join(format!("{name}.json"));
        let said = virtualize(&[s(&nc), "-o", s(&refs)]);
        assert!(
            said.starts_with(&format!("wrote {:?}: ", s(&refs))),
            "{said}"
        );
        assert_eq!(diff_with_import(&nc, &refs), (String::new(), 0), "{kind}");
        let store = url(&refs);
        // Exact values, as ncdump shows them (the fill where "_" stands).
        assert_eq!(
            ok(&["dump", &store, "temp"]),
            "1 2 3 4\n5 6 7 8\n9 10 11 -999\n-13 14 15 16\n17 18 19 20\n21 22 23 32767\n",
            "{kind}"
        );
        assert_eq!(ok(&["dump", &store, "time"]), "0.0 1.5\n", "{kind}");
        assert_eq!(ok(&["dump", &store, "scalar"]), "42\n", "{kind}");
        let r = refs_of(&refs);
        let temp = document(&r, "temp/.zarray");
        // Classic files store big-endian items, one record per chunk; HDF5 little-endian.
        let (dtype, chunks) = match kind {
            "nc4" => ("<i2", temp["chunks"].clone()),
            _ => (">i2", serde_json::json!([1, 3, 4])),
        };
        assert_eq!(temp["dtype"], dtype, "{kind}");
        assert_eq!(temp["chunks"], chunks, "{kind}");
        assert_eq!(temp["fill_value"], -999, "{kind}");
        assert_eq!(
            document(&r, "temp/.zattrs")["_ARRAY_DIMENSIONS"],
            serde_json::json!(["time", "lat", "lon"])
        );
        // Every chunk reference names the file by its absolute path, within its size.
        let size = std::fs::metadata(&nc).unwrap().len();
        let real = std::fs::canonicalize(&nc).unwrap();
        for (key, value) in &r {
            if let Some([target, at, len]) = value.as_array().map(|a| a.as_slice()) {
                assert_eq!(target, s(&real), "{key}");
                assert!(
                    at.as_u64().unwrap() + len.as_u64().unwrap() <= size,
                    "{key}"
                );
            }
        }
        if kind == "classic" {
            // Records follow one another at the record size: one reference per record.
            let (r0, r1) = (r["temp/0.0.0"].as_array(), r["temp/1.0.0"].as_array());
            assert_eq!(r0.unwrap()[2], 24);
            assert_eq!(r1.unwrap()[2], 24);
            assert!(!r.contains_key("temp/2.0.0"));
        }
    }
}

/// netCDF-4 chunking, filters (deflate with shuffle, fletcher32), big-endian and
/// contiguous storage, a variable never written and a group.
const NC4_CDL: &str = r#"netcdf layouts {
dimensions:
	time = UNLIMITED ;
	y = 10 ;
	x = 7 ;
variables:
	float t(time, y, x) ;
		t:_ChunkSizes = 1, 4, 3 ;
		t:_DeflateLevel = 4 ;
		t:_Shuffle = "true" ;
		t:units = "K" ;
	double f(y, x) ;
		f:_ChunkSizes = 5, 7 ;
		f:_Fletcher32 = "true" ;
		f:_DeflateLevel = 1 ;
		f:_Endianness = "big" ;
	int unwritten(y, x) ;
		unwritten:_ChunkSizes = 2, 2 ;
	int contiguous(y) ;
		contiguous:_Storage = "contiguous" ;
		contiguous:_Endianness = "big" ;
data:
	t = T_VALUES ;
	f = F_VALUES ;
	contiguous = 1, 2, 3, 4, 5, 6, 7, 8, 9, -10 ;

group: sub {
  variables:
	int v(y) ;
		v:long_name = "in a group" ;
  // group attributes:
		:about = "a subgroup" ;
  data:
	v = 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 ;
  }
}
"#;

#[test]
fn netcdf4_chunks_filters_byte_orders_and_groups_are_referenced() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t: Vec<String> = (0..140).map(|i| format!("{}.25", i * 3 - 200)).collect();
    let f: Vec<String> = (0..70).map(|i| format!("{}", i as f64 * 0.1)).collect();
    let cdl = NC4_CDL
        .replace("T_VALUES", &t.join(", "))
        .replace("F_VALUES", &f.join(", "));
    let nc = ncgen(dir.path(), "layouts", "nc4", &cdl);
    let refs = dir.path().join("layouts.json");
    virtualize(&[s(&nc), "-o", s(&refs)]);
    // Everything equals the import, except the variable never written: netCDF reads its
    // default fill there, and so do the references (its chunks are absent).
    let (said, code) = diff_with_import(&nc, &refs);
    assert_eq!(
        (said.as_str(), code),
        (
            "/unwritten: missing value only in the second: -2147483647.0\n",
            3
        )
    );
    let store = url(&refs);
    let fill = ["-2147483647"; 7].join(" ");
    assert_eq!(
        ok(&["dump", &store, "unwritten"]),
        format!("{}\n", vec![fill; 10].join("\n"))
    );
    assert_eq!(
        ok(&["dump", &store, "contiguous"]),
        "1 2 3 4 5 6 7 8 9 -10\n"
    );
    assert_eq!(ok(&["dump", &store, "sub/v"]), "9 8 7 6 5 4 3 2 1 0\n");
    let r = refs_of(&refs);
    let t = document(&r, "t/.zarray");
    assert_eq!(t["dtype"], "<f4");
    assert_eq!(t["chunks"], serde_json::json!([1, 4, 3]));
    assert_eq!(
        t["filters"],
        serde_json::json!([{"id": "shuffle", "elementsize": 4}])
    );
    assert_eq!(
        t["compressor"],
        serde_json::json!({"id": "zlib", "level": 4})
    );
    // 2 x 3 x 3 chunks, every one stored.
    assert_eq!(
        r.keys()
            .filter(|k| k.starts_with("t/") && !k.contains(".z"))
            .count(),
        18
    );
    let f = document(&r, "f/.zarray");
    assert_eq!(f["dtype"], ">f8");
    // HDF5's pipeline in its order: the checksum, then deflate.
    assert_eq!(f["filters"], serde_json::json!([{"id": "fletcher32"}]));
    assert_eq!(
        f["compressor"],
        serde_json::json!({"id": "zlib", "level": 1})
    );
    assert_eq!(document(&r, "contiguous/.zarray")["dtype"], ">i4");
    assert!(!r
        .keys()
        .any(|k| k.starts_with("unwritten/") && !k.contains(".z")));
    assert_eq!(document(&r, "sub/.zattrs")["about"], "a subgroup");
}

/// One day of a model's output: `time` as records, a static `lat` (netCDF-4 files chunk
/// `temp` by one step).
fn day_cdl(day: usize, kind: &str) -> String {
    let chunks = match kind {
        "nc4" => "\t\ttemp:_ChunkSizes = 1, 3 ;\n",
        _ => "",
    };
    format!(
        r#"netcdf day {{
dimensions:
	time = UNLIMITED ;
	lat = 3 ;
variables:
	double time(time) ;
		time:units = "hours since 2000-01-01" ;
	float lat(lat) ;
	float temp(time, lat) ;
		temp:_FillValue = -1.f ;
{chunks}data:
	time = {}, {} ;
	lat = -30, 0, 30 ;
	temp = {}, {}, {}, {}, {}, {} ;
}}
"#,
        day * 24,
        day * 24 + 12,
        day * 6,
        day * 6 + 1,
        day * 6 + 2,
        day * 6 + 3,
        day * 6 + 4,
        day * 6 + 5,
    )
}

#[test]
fn thirty_files_are_concatenated_along_time() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for kind in ["classic", "nc4"] {
        let files: Vec<PathBuf> = (0..30)
            .map(|d| {
                ncgen(
                    dir.path(),
                    &format!("{kind}_{d:02}"),
                    kind,
                    &day_cdl(d, kind),
                )
            })
            .collect();
        let names: Vec<&str> = files.iter().map(|f| s(f)).collect();
        let refs = dir.path().join(format!("{kind}.json"));
        let mut args = names.clone();
        args.extend(["--concat", "time", "-o", s(&refs)]);
        let said = virtualize(&args);
        assert!(said.contains("into 30 files"), "{said}");
        let store = url(&refs);
        let times: Vec<String> = (0..60).map(|i| format!("{:.1}", i as f64 * 12.0)).collect();
        assert_eq!(
            ok(&["dump", &store, "time"]),
            format!("{}\n", times.join(" "))
        );
        let temps: Vec<String> = (0..60u32)
            .map(|i| format!("{0}.0 {1}.0 {2}.0", i * 3, i * 3 + 1, i * 3 + 2))
            .collect();
        assert_eq!(
            ok(&["dump", &store, "temp"]),
            format!("{}\n", temps.join("\n"))
        );
        assert_eq!(ok(&["dump", &store, "lat"]), "-30.0 0.0 30.0\n");
        let r = refs_of(&refs);
        // temp's chunks stay in their files: day 15's second record is chunk 31.
        let day15 = std::fs::canonicalize(&files[15]).unwrap();
        assert_eq!(r["temp/31.0"][0], s(&day15), "{kind}");
        assert_eq!(
            document(&r, "temp/.zarray")["shape"],
            serde_json::json!([60, 3])
        );
        match kind {
            // netCDF-4 chunks a 1-d record variable by many steps: two steps per file do not
            // continue one grid, so the 60 times are written into the reference file.
            "nc4" => assert!(r["time/0"].as_str().unwrap().starts_with("base64:")),
            _ => assert_eq!(
                r["time/59"][0].as_str().unwrap(),
                s(&std::fs::canonicalize(&files[29]).unwrap())
            ),
        }
    }
}

#[test]
fn what_cannot_be_referenced_is_refused_with_the_reason() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = ncgen(d, "a", "classic", &day_cdl(0, "classic"));
    let b = ncgen(d, "b", "classic", &day_cdl(1, "classic"));
    let out = d.join("out.json");
    let err = refused(&[s(&a), s(&b), "-o", s(&out)]);
    assert!(err.contains("several files need --concat DIM"), "{err}");
    let err = refused(&[s(&a), s(&b), "--concat", "depth", "-o", s(&out)]);
    assert!(
        err.contains("no variable of") && err.contains("\"depth\""),
        "{err}"
    );
    // A variable without the dimension must be the same in every file.
    let moved = ncgen(
        d,
        "moved",
        "classic",
        &day_cdl(1, "classic").replace("-30, 0, 30", "-30, 0, 31"),
    );
    let err = refused(&[s(&a), s(&moved), "--concat", "time", "-o", s(&out)]);
    assert!(
        err.contains("differ in the values of variable /lat")
            && err.contains("such variables must be the same in every file"),
        "{err}"
    );
    let units = ncgen(
        d,
        "units",
        "classic",
        &day_cdl(1, "classic").replace("hours since", "days since"),
    );
    let err = refused(&[s(&a), s(&units), "--concat", "time", "-o", s(&out)]);
    assert!(
        err.contains("differ in the attributes of variable /time"),
        "{err}"
    );
    // Variable-length strings live in HDF5's heap; chunks that split strings.
    let strings = ncgen(
        d,
        "strings",
        "nc4",
        "netcdf s {\ndimensions:\n\tn = 2 ;\nvariables:\n\tstring label(n) ;\ndata:\n\
         \tlabel = \"one\", \"two\" ;\n}\n",
    );
    let err = refused(&[s(&strings), "-o", s(&out)]);
    assert!(
        err.contains("variable /label holds variable-length strings"),
        "{err}"
    );
    let split = ncgen(
        d,
        "split",
        "nc4",
        "netcdf c {\ndimensions:\n\tn = 2 ;\n\tlen = 6 ;\nvariables:\n\tchar c(n, len) ;\n\
         \t\tc:_ChunkSizes = 1, 3 ;\ndata:\n\tc = \"abcdef\", \"gh\" ;\n}\n",
    );
    let err = refused(&[s(&split), "-o", s(&out)]);
    assert!(
        err.contains("its chunks split its strings (3 of 6 chars)"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written when a file is refused");
    // An existing reference file is kept unless --overwrite.
    std::fs::write(&out, "keep").unwrap();
    let err = refused(&[s(&a), "-o", s(&out)]);
    assert!(err.contains("exists (--overwrite replaces it)"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    virtualize(&[s(&a), "-o", s(&out), "--overwrite"]);
    assert_eq!(ok(&["dump", &url(&out), "lat"]), "-30.0 0.0 30.0\n");
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn references_outside_the_reference_files_directory_are_named() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let nc = ncgen(data.path(), "day", "classic", &day_cdl(3, "classic"));
    let refs = elsewhere.path().join("refs.json");
    let said = virtualize(&[s(&nc), "-o", s(&refs)]);
    assert!(
        said.contains("lie outside") && said.contains("allowed_targets"),
        "{said}"
    );
    // Read as written, the references are refused (they point out of the directory); the
    // store option allows the data's directory, through the API or zarrtool's variable.
    let out = tool(&["dump", &url(&refs), "lat"]);
    assert!(!out.status.success());
    let options = serde_json::json!({"allowed_targets": [s(data.path())]}).to_string();
    let dumped = with_options(&options, &["dump", &url(&refs), "lat"]);
    assert_eq!(dumped, "-30.0 0.0 30.0\n");
    let store = zarr::store::open_url(&url(&refs), zarr::node::Mode::Read, Some(&options)).unwrap();
    let array = zarr::node::Array::open(store, "lat", zarr::node::Mode::Read).unwrap();
    let mut buf = vec![0u8; 12];
    array
        .read(
            &[0],
            &[3],
            zarr::dtype::ElementType::Float32,
            zarr::meta::Order::C,
            &mut buf,
        )
        .unwrap();
    let lat: Vec<f32> = buf
        .chunks(4)
        .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(lat, [-30.0, 0.0, 30.0]);
}

/// Runs zarrtool with `args` and ZARRTOOL_STORE_OPTIONS set to `options`, expecting
/// success; returns its standard output.
fn with_options(options: &str, args: &[&str]) -> String {
    let out = Command::new(exe())
        .args(args)
        .env("ZARRTOOL_STORE_OPTIONS", options)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zarrtool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[cfg(feature = "icechunk")]
#[test]
fn icechunk_repositories_hold_the_chunks_as_virtual_chunks() {
    if !netcdf_tool() {
        eprintln!("this zarrtool has no netCDF support: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let t: Vec<String> = (0..140).map(|i| format!("{}.25", i * 3 - 200)).collect();
    let f: Vec<String> = (0..70).map(|i| format!("{}", i as f64 * 0.1)).collect();
    let cdl = NC4_CDL
        .replace("T_VALUES", &t.join(", "))
        .replace("F_VALUES", &f.join(", "));
    let nc = ncgen(&data, "layouts", "nc4", &cdl);
    let repo = dir.path().join("repo");
    let repo_url = format!("icechunk://{}", repo.display());
    let said = virtualize(&[s(&nc), "-o", &repo_url]);
    assert!(said.contains("chunk references into 1 file"), "{said}");
    // Read with the files' directory allowed: the same as a Zarr v3 import of the file.
    let allowed = serde_json::json!({"virtual_chunk_containers": [s(&data)]}).to_string();
    let imported = dir.path().join("v3.zarr");
    ok(&["import", s(&nc), s(&imported), "--format", "3"]);
    let out = Command::new(exe())
        .args(["diff", "--attrs", s(&imported), &repo_url])
        .env("ZARRTOOL_STORE_OPTIONS", &allowed)
        .output()
        .unwrap();
    assert_eq!(
        (
            String::from_utf8_lossy(&out.stdout).as_ref(),
            out.status.code()
        ),
        ("", Some(0)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        with_options(&allowed, &["dump", &repo_url, "sub/v"]),
        "9 8 7 6 5 4 3 2 1 0\n"
    );
    let info = with_options(&allowed, &["info", "--json", &repo_url, "t"]);
    let info: Value = serde_json::from_str(&info).unwrap();
    assert!(info.to_string().contains("numcodecs.zlib"), "{info}");
    // The repository holds references, not the data.
    let copy = std::fs::metadata(&nc).unwrap().len();
    let held: u64 = common::dir_size(&repo);
    assert!(
        held < copy,
        "the repository holds {held} bytes, the file {copy}"
    );
    // Without the directory allowed, reading a virtual chunk is refused and says why.
    let err = common::zarrtool::fails(&["dump", &repo_url, "t"], 1);
    assert!(
        err.contains("authorize the virtual chunk container"),
        "{err}"
    );
    // A refusal leaves no repository behind where there was none.
    let strings = ncgen(
        &data,
        "strings",
        "nc4",
        "netcdf s {\ndimensions:\n\tn = 2 ;\nvariables:\n\tstring label(n) ;\ndata:\n\
         \tlabel = \"one\", \"two\" ;\n}\n",
    );
    let other = dir.path().join("other");
    let err = refused(&[
        s(&strings),
        "-o",
        &format!("icechunk://{}", other.display()),
    ]);
    assert!(err.contains("variable-length strings"), "{err}");
    assert!(!other.exists());
    // A repository that holds a hierarchy is replaced only with --overwrite.
    let err = refused(&[s(&nc), "-o", &repo_url]);
    assert!(err.contains("holds a hierarchy already"), "{err}");
    virtualize(&[s(&nc), "-o", &repo_url, "--overwrite"]);
    let log = ok(&["log", &repo_url]);
    assert_eq!(
        log.matches("zarrtool virtualize: 1 file").count(),
        2,
        "{log}"
    );
}
