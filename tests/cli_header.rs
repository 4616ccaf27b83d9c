//! `zarrtool header` (a store as `ncdump -h` prints a netCDF file) and what it shares with
//! the other commands: NCZarr's own keys are never shown or copied as attributes, and
//! `info` prints the CF missing value. The comparisons with `ncdump -h` run when netCDF's
//! ncgen and ncdump are installed (Debian's netcdf-bin), and must run when
//! `ZARR_TEST_NETCDF=1`.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use crate::common;

use common::zarrtool::{ok, s, tool};

/// Whether ncgen and ncdump can run (required when `ZARR_TEST_NETCDF=1`); when they cannot,
/// says that the test is skipped.
fn netcdf_tools() -> bool {
    let has = ["ncgen", "ncdump"]
        .iter()
        .all(|t| Command::new(t).arg("-h").output().is_ok());
    if !has && std::env::var("ZARR_TEST_NETCDF").as_deref() == Ok("1") {
        panic!("ZARR_TEST_NETCDF=1 but ncgen or ncdump is missing");
    }
    if !has {
        eprintln!("ncgen or ncdump is missing: skipped");
    }
    has
}

/// `ncdump -h` of a Zarr directory read by netCDF-C in `mode` (`nczarr` or `zarr`).
fn ncdump(dir: &Path, mode: &str) -> String {
    let url = format!("file://{}#mode={mode},file", s(dir));
    let out = Command::new("ncdump").args(["-h", &url]).output().unwrap();
    assert!(
        out.status.success(),
        "ncdump -h {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The lines after the first (which names the file or the store differently).
fn body(text: &str) -> Vec<&str> {
    text.lines().skip(1).collect()
}

/// A v3 store with every type, groups, a scalar, unnamed and clashing dimensions, the
/// missing value in xarray's forms and attributes of every JSON kind.
fn v3_store(dir: &Path) -> String {
    let store = s(&dir.join("v3.zarr")).to_string();
    ok(&[
        "create",
        &store,
        "--group",
        "--attrs",
        r#"{"title": "every kind", "int": -5, "ints": [1, 2, 300], "big": 9999999999,
            "float": 0.25, "floats": [1, 2.5], "text": "a \"quoted\"\nline",
            "texts": ["a", "b"], "yes": true, "none": null, "obj": {"k": [1, "x"]},
            "empty": [], "mixed": [1, "a"], "nan": 0}"#,
    ]);
    // A NaN attribute, as Python's json writes it.
    let root = dir.join("v3.zarr/zarr.json");
    let text = std::fs::read_to_string(&root).unwrap();
    std::fs::write(&root, text.replace("\"nan\": 0", "\"nan\": NaN")).unwrap();
    for t in [
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "bool",
        "string",
    ] {
        let path = format!("types/{t}");
        ok(&[
            "create",
            &store,
            &path,
            "--shape",
            "2",
            "--dtype",
            t,
            "--dimension-names",
            "x",
        ]);
    }
    ok(&[
        "create",
        &store,
        "grid/t2m",
        "--shape",
        "4,3",
        "--dtype",
        "float32",
        "--fill=-9999",
        "--dimension-names",
        "time,lat",
        "--attrs",
        r#"{"units": "K", "_FillValue": "AAAAAICHw8A="}"#,
    ]);
    ok(&[
        "create",
        &store,
        "grid/n",
        "--shape",
        "4",
        "--dtype",
        "int64",
        "--fill",
        "9007199254740993",
        "--dimension-names",
        "time",
        "--attrs",
        r#"{"_FillValue": 9007199254740993}"#,
    ]);
    ok(&[
        "create",
        &store,
        "grid/odd",
        "--shape",
        "5,3",
        "--dtype",
        "uint8",
        "--dimension-names",
        "time,",
    ]);
    ok(&[
        "create",
        &store,
        "grid/scalar",
        "--shape",
        "",
        "--dtype",
        "float64",
        "--attrs",
        r#"{"long_name": "a scalar"}"#,
    ]);
    store
}

#[test]
fn header_of_a_v3_store_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let store = v3_store(dir.path());
    let expected = format!(
        "zarr {store} {{
\n// global attributes:
\t\t:title = \"every kind\" ;
\t\t:int = -5b ;
\t\t:ints = 1s, 2s, 300s ;
\t\t:big = 9999999999LL ;
\t\t:float = 0.25 ;
\t\t:floats = 1., 2.5 ;
\t\t:text = \"a \\\"quoted\\\"\\nline\" ;
\t\tstring :texts = \"a\", \"b\" ;
\t\t:yes = 1UB ;
\t\t:none = \"null\" ;
\t\t:obj = \"{{\\\"k\\\": [1,\\\"x\\\"]}}\" ;
\t\t:empty = \"[]\" ;
\t\t:mixed = \"[1,\\\"a\\\"]\" ;
\t\t:nan = NaN ;

group: grid {{
  dimensions:
  \ttime = 4 ; // also 5 in odd
  \t_zdim_3 = 3 ;
  \tlat = 3 ;
  variables:
  \tint64 n(time) ;
  \t\tn:_FillValue = 9007199254740993LL ;
  \tubyte odd(time, _zdim_3) ;
  \tdouble scalar ;
  \t\tscalar:long_name = \"a scalar\" ;
  \tfloat t2m(time, lat) ;
  \t\tt2m:units = \"K\" ;
  \t\tt2m:_FillValue = -9999.f ;
  }} // group grid

group: types {{
  dimensions:
  \tx = 2 ;
  variables:
  \tbool bool(x) ;
  \tcomplex64 complex64(x) ;
  \tfloat16 float16(x) ;
  \tfloat float32(x) ;
  \tdouble float64(x) ;
  \tshort int16(x) ;
  \tint int32(x) ;
  \tint64 int64(x) ;
  \tbyte int8(x) ;
  \tstring string(x) ;
  \tushort uint16(x) ;
  \tuint uint32(x) ;
  \tuint64 uint64(x) ;
  \tubyte uint8(x) ;
  }} // group types
}}
"
    );
    assert_eq!(ok(&["header", &store]), expected);
    // A subtree: a group, and an array alone with the dimensions it uses.
    let grid = ok(&["header", &store, "grid"]);
    assert!(grid.starts_with(&format!("zarr {store} /grid {{\ndimensions:\n\ttime = 4 ;")));
    assert_eq!(
        ok(&["header", &store, "/grid/t2m"]),
        format!(
            "zarr {store} /grid/t2m {{\ndimensions:\n\ttime = 4 ;\n\tlat = 3 ;\nvariables:\n\
             \tfloat t2m(time, lat) ;\n\t\tt2m:units = \"K\" ;\n\t\tt2m:_FillValue = -9999.f ;\n}}\n"
        )
    );
    let out = tool(&["header", &store, "nothing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no array or group at /nothing"));
}

#[test]
fn header_json_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let store = v3_store(dir.path());
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["header", "--json", &store, "grid"])).unwrap();
    let expected = serde_json::json!({
        "store": store,
        "path": "/grid",
        "root": {
            "name": "grid",
            "path": "/grid",
            "zarr_format": 3,
            "dimensions": [
                {"name": "time", "length": 4,
                 "other_lengths": [{"length": 5, "variable": "odd"}]},
                {"name": "_zdim_3", "length": 3},
                {"name": "lat", "length": 3},
            ],
            "variables": [
                {"name": "n", "path": "/grid/n", "type": "int64", "dtype": "<i8",
                 "shape": [4], "dimensions": ["time"], "missing_value": 9007199254740993u64,
                 "attributes": [{"name": "_FillValue", "type": "int64",
                                 "value": 9007199254740993u64}]},
                {"name": "odd", "path": "/grid/odd", "type": "ubyte", "dtype": "|u1",
                 "shape": [5, 3], "dimensions": ["time", "_zdim_3"], "missing_value": null,
                 "attributes": []},
                {"name": "scalar", "path": "/grid/scalar", "type": "double", "dtype": "<f8",
                 "shape": [], "dimensions": [], "missing_value": null,
                 "attributes": [{"name": "long_name", "type": "char", "value": "a scalar"}]},
                {"name": "t2m", "path": "/grid/t2m", "type": "float", "dtype": "<f4",
                 "shape": [4, 3], "dimensions": ["time", "lat"], "missing_value": -9999.0,
                 "attributes": [{"name": "units", "type": "char", "value": "K"},
                                {"name": "_FillValue", "type": "float", "value": -9999.0}]},
            ],
            "attributes": [],
            "groups": [],
        }
    });
    assert_eq!(doc, expected);
    // Attributes netCDF keeps as text keep their JSON; non-finite floats are strings.
    let root: serde_json::Value = serde_json::from_str(&ok(&["header", "--json", &store])).unwrap();
    let attrs = root["root"]["attributes"].as_array().unwrap();
    let find = |n: &str| attrs.iter().find(|a| a["name"] == n).unwrap().clone();
    assert_eq!(
        find("obj"),
        serde_json::json!({"name": "obj", "type": "json", "value": {"k": [1, "x"]}})
    );
    assert_eq!(
        find("nan"),
        serde_json::json!({"name": "nan", "type": "double", "value": "NaN"})
    );
    assert_eq!(
        find("floats"),
        serde_json::json!({"name": "floats", "type": "double", "value": [1.0, 2.5]})
    );
}

#[test]
fn header_of_a_v2_store_and_info_show_the_missing_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = s(&dir.path().join("v2.zarr")).to_string();
    ok(&["create", &store, "--group", "--format", "2"]);
    let arrays: [(&str, &str, &str, &str); 5] = [
        ("t", "<f8", "\"NaN\"", r#"{"_ARRAY_DIMENSIONS": ["time"]}"#),
        ("s", "|S4", "null", r#"{"_ARRAY_DIMENSIONS": ["time"]}"#),
        ("c", "|S1", "null", r#"{"_ARRAY_DIMENSIONS": ["time"]}"#),
        ("u", "<U3", "null", r#"{"_ARRAY_DIMENSIONS": ["time"]}"#),
        ("i", ">i2", "-1", "{}"),
    ];
    for (name, dtype, fill, attrs) in arrays {
        let fill = format!("--fill={fill}");
        ok(&[
            "create", &store, name, "--format", "2", "--shape", "3", "--dtype", dtype, &fill,
            "--attrs", attrs,
        ]);
    }
    let expected = format!(
        "zarr {store} {{
dimensions:
\ttime = 3 ;
\t_zdim_3 = 3 ;
\tstring4 = 4 ;
variables:
\tchar c(time) ;
\tshort i(_zdim_3) ;
\t\ti:_FillValue = -1s ;
\tchar s(time, string4) ;
\tdouble t(time) ;
\t\tt:_FillValue = NaN ;
\tstring u(time) ;
}}
"
    );
    assert_eq!(ok(&["header", &store]), expected);
    let info = ok(&["info", &store, "i"]);
    assert!(
        info.contains("fill value: -1\nmissing value: -1\ndimension names: none\n"),
        "{info}"
    );
    let info = ok(&["info", &store, "t"]);
    assert!(
        info.contains("missing value: \"NaN\"\ndimension names: time\n"),
        "{info}"
    );
    assert!(ok(&["info", &store, "s"]).contains("missing value: none\n"));
    let v: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", &store, "t"])).unwrap();
    assert_eq!(v["missing_value"], "NaN");
    assert_eq!(v["dimension_names"], serde_json::json!(["time"]));
}

/// A netCDF-4 dataset with every type NCZarr 4.9.0 writes and reads back, typed attributes,
/// fill values and nested groups. (ncdump 4.9.0 crashes on NCZarr scalars and ncgen 4.9.0
/// cannot write NCZarr strings, so neither is here.)
const CDL: &str = r#"netcdf full {
dimensions:
	time = 4 ;
	lat = 3 ;
	nchar = 5 ;
variables:
	float t2m(time, lat) ;
		t2m:units = "K" ;
		t2m:long_name = "2 m \"air\" temperature\n(K)" ;
		t2m:_FillValue = -9999.f ;
		t2m:valid_range = 180.f, 330.5f ;
	short tp(time, lat) ;
		tp:scale_factor = 0.1 ;
		tp:add_offset = 1.e-05 ;
		tp:_FillValue = -32767s ;
	byte b(lat) ;
		b:flag_values = -1b, 0b, 1b ;
	ubyte ub(lat) ;
		ub:flag_masks = 1UB, 2UB, 255UB ;
	ushort us(lat) ;
		us:_FillValue = 65535US ;
	int i(lat) ;
		i:valid_min = -2147483647 ;
	uint ui(lat) ;
		ui:big = 4000000000U ;
	int64 i8(time) ;
		i8:_FillValue = -9223372036854775806LL ;
	uint64 u8(time) ;
		u8:max = 18446744073709551615ULL ;
	double time(time) ;
		time:units = "days since 2000-01-01" ;
		time:huge = 1.e+300 ;
	char name(time, nchar) ;

// global attributes:
		:Conventions = "CF-1.8" ;
		:version = 2 ;
		:tiny = 1.5e-10f ;
group: forecast {
  dimensions:
  	step = 2 ;
  variables:
  	float t2m(step, lat) ;
  		t2m:units = "K" ;

  // group attributes:
  		:source = "model" ;
  group: members {
    dimensions:
    	member = 10 ;
    variables:
    	int m(member, step) ;
    }
  }
group: empty {
  }
}
"#;

#[test]
fn header_of_an_nczarr_store_is_what_ncdump_prints() {
    if !netcdf_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cdl = dir.path().join("full.cdl");
    std::fs::write(&cdl, CDL).unwrap();
    let zarr = dir.path().join("full.zarr");
    let url = format!("file://{}#mode=nczarr,file", s(&zarr));
    let status = Command::new("ncgen")
        .args(["-k", "nc4", "-o", &url])
        .arg(&cdl)
        .status()
        .unwrap();
    assert!(status.success(), "ncgen -o {url}");
    let ours = ok(&["header", s(&zarr)]);
    let theirs = ncdump(&zarr, "nczarr");
    assert_eq!(body(&ours), body(&theirs), "{ours}\n{theirs}");
    // Without xarray's _ARRAY_DIMENSIONS (mode noxarray) NCZarr's dimrefs name the
    // dimensions, in header and in the library (info).
    let bare = dir.path().join("noxarray.zarr");
    let url = format!("file://{}#mode=nczarr,noxarray,file", s(&bare));
    let status = Command::new("ncgen")
        .args(["-k", "nc4", "-o", &url])
        .arg(&cdl)
        .status()
        .unwrap();
    assert!(status.success(), "ncgen -o {url}");
    let t2m = std::fs::read_to_string(bare.join("t2m/.zattrs")).unwrap();
    assert!(!t2m.contains("_ARRAY_DIMENSIONS"), "{t2m}");
    assert_eq!(body(&ok(&["header", s(&bare)])), body(&theirs));
    let info = ok(&["info", s(&bare), "forecast/t2m"]);
    assert!(info.contains("dimension names: step, lat\n"), "{info}");
    assert!(!ours.to_lowercase().contains("_nczarr"));
    // --special: the virtual attributes ncdump -s prints, line for line.
    let special = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                [":_Storage ", ":_ChunkSizes ", ":_Endianness "]
                    .iter()
                    .any(|k| l.contains(k))
            })
            .map(String::from)
            .collect()
    };
    let url = format!("file://{}#mode=nczarr,file", s(&zarr));
    let out = Command::new("ncdump")
        .args(["-h", "-s", &url])
        .output()
        .unwrap();
    let theirs_s = special(&String::from_utf8(out.stdout).unwrap());
    let ours_s = special(&ok(&["header", "--special", s(&zarr)]));
    assert_eq!(ours_s, theirs_s);
    assert_eq!(ours_s.len(), 36, "{ours_s:?}");

    // NCZarr's own keys are no user attributes anywhere.
    let attrs = ok(&["attrs", "get", s(&zarr), "t2m"]);
    let attrs: serde_json::Value = serde_json::from_str(&attrs).unwrap();
    assert_eq!(
        attrs,
        serde_json::json!({"units": "K", "long_name": "2 m \"air\" temperature\n(K)",
            "_FillValue": -9999, "valid_range": [180, 330.5],
            "_ARRAY_DIMENSIONS": ["time", "lat"]})
    );
    let group: serde_json::Value =
        serde_json::from_str(&ok(&["info", "--json", s(&zarr)])).unwrap();
    let keys: Vec<&String> = group["attributes"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["Conventions", "version", "tiny", "_NCProperties"]);
    let info = ok(&["info", s(&zarr), "i8"]);
    assert!(
        info.contains("missing value: -9223372036854775806\ndimension names: time\n"),
        "{info}"
    );

    // A copy (in either format) does not carry them as attributes; a v2 copy records only
    // its missing value's type, which NCZarr needs.
    for format in ["2", "3"] {
        let copy = dir.path().join(format!("copy{format}.zarr"));
        ok(&["copy", s(&zarr), s(&copy), "--format", format]);
        for path in ["", "t2m", "forecast", "forecast/members/m"] {
            let attrs = ok(&["attrs", "get", s(&copy), path]);
            let mut raw = match format {
                "2" => std::fs::read_to_string(copy.join(path).join(".zattrs")).unwrap_or_default(),
                _ => std::fs::read_to_string(copy.join(path).join("zarr.json")).unwrap(),
            };
            if format == "2" && path == "t2m" {
                let mut doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
                let record = doc.as_object_mut().unwrap().remove("_NCZARR_ATTR");
                assert_eq!(
                    record,
                    Some(serde_json::json!({"types": {"_FillValue": "<f4"}}))
                );
                assert_eq!(doc["_FillValue"], serde_json::json!(-9999.0));
                raw = doc.to_string();
            }
            assert!(!raw.to_lowercase().contains("_nczarr_"), "{path}: {raw}");
            assert!(
                !attrs.to_lowercase().contains("_nczarr_"),
                "{path}: {attrs}"
            );
        }
        let out = tool(&["diff", s(&zarr), s(&copy)]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        if format == "2" {
            for path in ["", "t2m", "i8"] {
                let get = |store: &Path| -> serde_json::Value {
                    serde_json::from_str(&ok(&["attrs", "get", s(store), path])).unwrap()
                };
                let mut source = get(&zarr);
                // A float array's missing value is written back as a float.
                if path == "t2m" {
                    source["_FillValue"] = serde_json::json!(-9999.0);
                }
                assert_eq!(source, get(&copy), "{path}");
            }
            // netCDF-C writes no _ARRAY_DIMENSIONS in subgroups: the copy has them, from
            // NCZarr's dimrefs, so that xarray reads it.
            let attrs = ok(&["attrs", "get", s(&copy), "forecast/t2m"]);
            let attrs: serde_json::Value = serde_json::from_str(&attrs).unwrap();
            assert_eq!(
                attrs,
                serde_json::json!({"units": "K", "_ARRAY_DIMENSIONS": ["step", "lat"]})
            );
        }
        // netCDF's default int64 fill, which no double holds, is the copy's missing value.
        let header = ok(&["header", s(&copy), "i8"]);
        assert!(
            header.contains("\t\ti8:_FillValue = -9223372036854775806LL ;\n"),
            "{header}"
        );
    }
}

#[test]
fn header_of_a_v2_store_is_what_ncdump_prints_in_zarr_mode() {
    if !netcdf_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let zarr = dir.path().join("pure.zarr");
    let store = s(&zarr);
    ok(&[
        "create",
        store,
        "--group",
        "--format",
        "2",
        "--attrs",
        r#"{"title": "pure\tzarr", "n": [1, 2], "f": 1.5, "fl": [1.5, 2], "big": 9999999999,
            "neg": -300, "u": 200, "u16": 40000, "i32": 70000, "u32": 3000000000,
            "yes": true, "obj": {"k": [1, 2], "j": null}}"#,
    ]);
    let arrays: [(&str, &str, &str, &str, &str); 6] = [
        (
            "t",
            "4",
            "<f8",
            "null",
            r#"{"_ARRAY_DIMENSIONS": ["time"], "units": "days"}"#,
        ),
        (
            "v",
            "4,3",
            "<i2",
            "null",
            r#"{"_ARRAY_DIMENSIONS": ["time", "lat"], "scale_factor": 0.01}"#,
        ),
        ("anon", "7", ">u4", "null", "{}"),
        (
            "g/w",
            "4",
            "<i8",
            "null",
            r#"{"_ARRAY_DIMENSIONS": ["time"]}"#,
        ),
        (
            "g/b",
            "3",
            "|i1",
            "null",
            r#"{"_ARRAY_DIMENSIONS": ["lat"]}"#,
        ),
        // netCDF-C 4.9.0 does not show a Zarr fill value as _FillValue; xarray does.
        (
            "g/f",
            "4",
            "<f4",
            "-1",
            r#"{"_ARRAY_DIMENSIONS": ["time"]}"#,
        ),
    ];
    for (path, shape, dtype, fill, attrs) in arrays {
        let fill = format!("--fill={fill}");
        ok(&[
            "create", store, path, "--format", "2", "--shape", shape, "--dtype", dtype, &fill,
            "--attrs", attrs,
        ]);
    }
    let ours = ok(&["header", store]);
    let theirs = ncdump(&zarr, "zarr");
    let ours: Vec<&str> = body(&ours)
        .into_iter()
        .filter(|l| *l != "  \t\tf:_FillValue = -1.f ;")
        .collect();
    assert_eq!(ours, body(&theirs), "{theirs}");
}

#[test]
fn header_special_shows_how_arrays_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = s(&dir.path().join("sh.zarr")).to_string();
    ok(&[
        "create",
        &store,
        "a",
        "--shape",
        "8,6",
        "--dtype",
        ">i4",
        "--chunks",
        "2,3",
        "--shards",
        "4,6",
        "--dimension-names",
        "y,x",
        "--compressor",
        "null",
    ]);
    ok(&[
        "create",
        &store,
        "b",
        "--shape",
        "3",
        "--dtype",
        "uint8",
        "--format",
        "2",
        "--compressor",
        r#"{"id": "zlib", "level": 1}"#,
    ]);
    let expected = format!(
        "zarr {store} {{
dimensions:
\ty = 8 ;
\tx = 6 ;
\t_zdim_3 = 3 ;
variables:
\tint a(y, x) ;
\t\ta:_Storage = \"chunked\" ;
\t\ta:_ChunkSizes = 2, 3 ;
\t\ta:_Endianness = \"big\" ;
\t\t// a:_ShardSizes = 4, 6 ;
\t\t// a:_Codecs = [{{\"name\":\"sharding_indexed\",\"configuration\":{{\"chunk_shape\":[2,3],\"codecs\":[{{\"name\":\"bytes\",\"configuration\":{{\"endian\":\"big\"}}}}],\"index_codecs\":[{{\"name\":\"bytes\",\"configuration\":{{\"endian\":\"little\"}}}},{{\"name\":\"crc32c\"}}],\"index_location\":\"end\"}}}}] ;
\tubyte b(_zdim_3) ;
\t\tb:_Storage = \"chunked\" ;
\t\tb:_ChunkSizes = 3 ;
\t\t// b:_Codecs = {{\"filters\":null,\"compressor\":{{\"id\":\"zlib\",\"level\":1}}}} ;
}}
"
    );
    assert_eq!(ok(&["header", "-s", &store]), expected);
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["header", "--json", "--special", &store, "a"])).unwrap();
    let storage = &doc["root"]["variables"][0]["storage"];
    assert_eq!(storage["storage"], "chunked");
    assert_eq!(storage["chunks"], serde_json::json!([2, 3]));
    assert_eq!(storage["shards"], serde_json::json!([4, 6]));
    assert_eq!(storage["endianness"], "big");
    assert_eq!(storage["codecs"][0]["name"], "sharding_indexed");
    // Without --special there is no storage.
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["header", "--json", &store, "a"])).unwrap();
    assert!(doc["root"]["variables"][0].get("storage").is_none());
}

#[test]
fn header_of_a_v1_root_array_names_it_after_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("old.zarr");
    std::fs::create_dir(&store).unwrap();
    std::fs::write(
        store.join("meta"),
        r#"{"zarr_format": 1, "shape": [4], "chunks": [2], "dtype": "<i4",
            "compression": "zlib", "compression_opts": 1, "fill_value": 42, "order": "C"}"#,
    )
    .unwrap();
    std::fs::write(store.join("attrs"), r#"{"units": "m"}"#).unwrap();
    assert_eq!(
        ok(&["header", s(&store)]),
        format!(
            "zarr {} {{\ndimensions:\n\t_zdim_4 = 4 ;\nvariables:\n\tint old(_zdim_4) ;\n\
             \t\told:units = \"m\" ;\n\t\told:_FillValue = 42 ;\n}}\n",
            s(&store)
        )
    );
}

/// Names netCDF gives a meaning to or cannot hold (control characters, a newline, spaces,
/// quotes, a backslash, a leading digit, non-ASCII text, `/`, `%`, a leading `-`, `_`) in
/// dimensions, arrays, groups and attributes: `header` escapes them as ncdump does, each
/// declaration stays one line, ncgen accepts the whole header and `ncdump -h` of what it
/// makes prints the same names (ncdump 4.9 writes `%` bare, which ncgen itself refuses).
#[test]
fn header_names_are_escaped_as_ncdump_escapes_them() {
    if !netcdf_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.zarr");
    let names = [
        "ctl\u{1}x",
        "new\nline",
        "sp ace",
        "trail ",
        " lead",
        "q\"uo'te",
        "back\\slash",
        "9lead",
        "été✓",
        "sl/ash",
        "pct%",
        "-dash",
        "_",
        "tab\tx",
        "del\u{7f}",
    ];
    let numbered: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), i.into()))
        .collect();
    let ones = [1; 8];
    let array = "2 \"q\"é";
    let group = "3 g'rp";
    for (path, document) in [
        (
            "",
            serde_json::json!({"zarr_format": 3, "node_type": "group", "attributes": numbered}),
        ),
        (
            array,
            serde_json::json!({"zarr_format": 3, "node_type": "array", "shape": ones,
                "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": ones}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "dimension_names": names[..8], "attributes": numbered}),
        ),
        (
            group,
            serde_json::json!({"zarr_format": 3, "node_type": "group",
                "attributes": {"a/b": "x", "new\nline": "y"}}),
        ),
        (
            // In the root group too, its dimension "sp ace" of another length: named in a
            // comment, which must stay on its line.
            "z\nz",
            serde_json::json!({"zarr_format": 3, "node_type": "array", "shape": [2],
                "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "dimension_names": ["sp ace"], "attributes": {}}),
        ),
    ] {
        std::fs::create_dir_all(store.join(path)).unwrap();
        std::fs::write(store.join(path).join("zarr.json"), document.to_string()).unwrap();
    }
    let header = ok(&["header", s(&store)]);
    for line in [
        "\tctl\\%01x = 1 ;",
        "\tnew\\%0aline = 1 ;",
        "\tsp\\ ace = 1 ; // also 2 in z\\%0az",
        "\ttrail\\%20 = 1 ;",
        "\t_\\ lead = 1 ;",
        "\tq\\\"uo\\'te = 1 ;",
        "\tback\\\\slash = 1 ;",
        "\t\\9lead = 1 ;",
        "\tint \\2\\ \\\"q\\\"é(ctl\\%01x, new\\%0aline, sp\\ ace, trail\\%20, _\\ lead, \
         q\\\"uo\\'te, back\\\\slash, \\9lead) ;",
        "\t\t\\2\\ \\\"q\\\"é:été✓ = 8b ;",
        "\t\t:sl\\%2fash = 9b ;",
        "\t\t:pct\\% = 10b ;",
        "\t\t:_-dash = 11b ;",
        "\t\t:__ = 12b ;",
        "\t\t:tab\\%09x = 13b ;",
        "\t\t:del\\%7f = 14b ;",
        "group: \\3\\ g\\'rp {",
        "\t\t:a\\%2fb = \"x\" ;",
        "\t\t:new\\%0aline = \"y\" ;",
    ] {
        assert!(
            header.lines().any(|l| l.trim_start_matches(' ') == line),
            "{line:?} in\n{header}"
        );
    }
    let cdl = dir.path().join("h.cdl");
    std::fs::write(
        &cdl,
        format!("netcdf h {{\n{}", header.split_once('\n').unwrap().1),
    )
    .unwrap();
    let nc = dir.path().join("h.nc");
    let out = Command::new("ncgen")
        .args(["-k", "nc4", "-o"])
        .arg(&nc)
        .arg(&cdl)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ncgen: {}\n{header}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("ncdump").arg("-h").arg(&nc).output().unwrap();
    assert!(out.status.success());
    let theirs = String::from_utf8(out.stdout).unwrap();
    // The comment naming the other length is zarrtool's.
    let ours = header
        .replace("\\%", "%")
        .replace(" // also 2 in z%0az", "");
    assert_eq!(body(&theirs), body(&ours));
}
