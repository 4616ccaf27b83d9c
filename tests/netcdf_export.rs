//! `zarrtool export` to netCDF-4 and the netCDF → Zarr → netCDF round trip, compared by
//! `ncdump`'s whole output; and NCZarr's view of what `zarrtool import` writes in Zarr v2.
//! Run when the binary under test exports netCDF (`zarrtool version --features`), and must
//! run when `ZARR_TEST_NETCDF=1`; they need Debian's netcdf-bin (ncgen, ncdump).
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use crate::common;

use common::zarrtool::{exe, ncgen, s, tool};

/// Runs zarrtool expecting success with nothing printed.
fn quiet(args: &[&str]) {
    let out = tool(args);
    assert!(
        out.status.success(),
        "zarrtool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"", "zarrtool {args:?}");
    assert_eq!(out.stderr, b"", "zarrtool {args:?}");
}

/// Runs zarrtool expecting failure (status 1, nothing on stdout); returns its stderr.
fn fails(args: &[&str]) -> String {
    common::zarrtool::fails(args, 1)
}

/// The `netcdf:` line of `zarrtool version --features` when the binary exports netCDF
/// files. With ZARR_TEST_NETCDF=1 (set by the test scripts when the build has the netcdf
/// feature) a binary without it is a failure.
fn netcdf_line() -> Option<String> {
    let out = tool(&["version", "--features"]);
    let line = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find(|l| l.starts_with("netcdf: import") && l.contains("export to netCDF-4"))
        .map(str::to_string);
    if line.is_none() && std::env::var("ZARR_TEST_NETCDF").as_deref() == Ok("1") {
        panic!("ZARR_TEST_NETCDF=1 but {} has no netCDF export", exe());
    }
    line
}

/// `ncdump` of `target` (a file, or an NCZarr URL) with `args` before it, after its first
/// line (which names the file).
fn ncdump(args: &[&str], target: &str) -> String {
    let out = Command::new("ncdump")
        .args(args)
        .arg(target)
        .output()
        .expect("ncdump (Debian's netcdf-bin) runs");
    assert!(
        out.status.success(),
        "ncdump {target}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    assert!(
        first.starts_with("netcdf ") && first.ends_with(" {"),
        "{first}"
    );
    rest.to_string()
}

/// Replaces the one occurrence of `from` in `text` by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} in\n{text}");
    text.replacen(from, to, 1)
}

/// A CF netCDF-4 file: an unlimited time with bounds, a scalar grid mapping, a float with
/// a _FillValue, a packed short, flags, char and string variables, a subgroup using a
/// dimension of the root and one of its own, global attributes of several types with a
/// quote and non-ASCII text. Variables, dimensions and `_FillValue` are in the order
/// export writes them (names in order, dimensions as first used, `_FillValue` first):
/// Zarr keeps no order of members, so the round trip's is the names'.
const CF_CDL: &str = r#"netcdf cf {
dimensions:
	time = UNLIMITED ; // (2 currently)
	lat = 2 ;
	lon = 3 ;
	station = 2 ;
	string8 = 8 ;
	nv = 2 ;
variables:
	int crs ;
		crs:grid_mapping_name = "latitude_longitude" ;
		crs:semi_major_axis = 6378137. ;
		crs:inverse_flattening = 298.257223563 ;
	ubyte flags(time, lat, lon) ;
		flags:long_name = "quality flags" ;
		flags:flag_values = 0UB, 1UB, 2UB ;
		flags:flag_meanings = "clear cloudy snow" ;
	string label(station) ;
		label:long_name = "station label" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
		lat:standard_name = "latitude" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
		lon:standard_name = "longitude" ;
	char station_name(station, string8) ;
		station_name:cf_role = "timeseries_id" ;
	float t2m(time, lat, lon) ;
		t2m:_FillValue = -999.f ;
		t2m:units = "K" ;
		t2m:grid_mapping = "crs" ;
		t2m:valid_range = 150.f, 350.f ;
	double time(time) ;
		time:units = "days since 2000-01-01" ;
		time:calendar = "standard" ;
		time:bounds = "time_bnds" ;
	double time_bnds(time, nv) ;
	short tp(time, lat, lon) ;
		tp:scale_factor = 0.001f ;
		tp:add_offset = 0.5f ;
		tp:units = "m" ;
		tp:valid_min = -32000s ;

// global attributes:
		:Conventions = "CF-1.8" ;
		:title = "Round \"trip\" ✓ Zürich Ω" ;
		:version = 3 ;
		:resolution = 0.25f ;
		string :keywords = "temperature", "précipitation" ;
		:big = 5000000000LL ;
data:

 crs = 0 ;

 flags =
  0, 1, 2,
  2, 1, 0,
  255, 0, 1,
  1, 1, 1 ;

 label = "Zürich", "a \"q\"" ;

 lat = 45.5, 46 ;

 lon = 7.25, 8, 8.75 ;

 station_name =
  "ZRH",
  "GVA_01" ;

 t2m =
  280.5, _, 281.25,
  279, 278.5, _,
  _, 282, 283.5,
  284, 285.125, 286 ;

 time = 0, 1 ;

 time_bnds =
  -0.5, 0.5,
  0.5, 1.5 ;

 tp =
  0, 100, -200,
  _, 32000, -32000,
  5, 6, 7,
  8, 9, 10 ;

group: obs {
  dimensions:
  	level = 2 ;
  variables:
  	int count(station) ;
  		count:_FillValue = -1 ;
  		count:long_name = "observation count" ;
  	double pressure(level) ;
  		pressure:units = "hPa" ;
  		pressure:positive = "down" ;

  // group attributes:
  		:source = "in situ" ;
  data:

   count = 3, _ ;

   pressure = 850, 500 ;
  } // group obs
}
"#;

/// netCDF → Zarr (v2 and v3) → netCDF gives back the same ncdump output, every
/// attribute's type included; without --unlimited the time dimension is fixed, the one
/// difference.
#[test]
fn cf_file_round_trips_through_zarr_v2_and_v3() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(dir.path(), "cf", "nc4", CF_CDL);
    let original = ncdump(&[], s(&nc));
    // ncdump prints the file as it was written (the CDL is in ncdump's form).
    assert_eq!(original, CF_CDL.split_once('\n').unwrap().1);
    for format in ["2", "3"] {
        let store = dir.path().join(format!("v{format}.zarr"));
        quiet(&["import", s(&nc), s(&store), "--format", format]);
        // The numeric attributes' netCDF types, recorded as NCZarr records them, in v2 only:
        // xarray shows a v3 array's record as an attribute.
        // (`attrs get` leaves NCZarr's keys out: the stored document is read.)
        let attrs: serde_json::Value = match format {
            "2" => serde_json::from_slice(&std::fs::read(store.join("tp/.zattrs")).unwrap()),
            _ => serde_json::from_slice::<serde_json::Value>(
                &std::fs::read(store.join("tp/zarr.json")).unwrap(),
            )
            .map(|doc| doc["attributes"].clone()),
        }
        .unwrap();
        let record = match format {
            "2" => serde_json::json!({"types": {"scale_factor": "<f4", "add_offset": "<f4",
                                                "valid_min": "<i2"}}),
            _ => serde_json::Value::Null,
        };
        assert_eq!(attrs["_NCZARR_ATTR"], record, "v{format}");
        let back = dir.path().join(format!("back{format}.nc"));
        quiet(&["export", s(&store), "-o", s(&back), "--unlimited", "time"]);
        // v3 arrays' numeric attributes come back with JSON's types (integers int, other
        // numbers double); groups keep theirs in both formats.
        let mut expected = original.clone();
        if format == "3" {
            for (from, to) in [
                ("flag_values = 0UB, 1UB, 2UB ;", "flag_values = 0, 1, 2 ;"),
                ("valid_range = 150.f, 350.f ;", "valid_range = 150., 350. ;"),
                ("scale_factor = 0.001f ;", "scale_factor = 0.001 ;"),
                ("add_offset = 0.5f ;", "add_offset = 0.5 ;"),
                ("valid_min = -32000s ;", "valid_min = -32000 ;"),
            ] {
                expected = replace_once(&expected, from, to);
            }
        }
        assert_eq!(ncdump(&[], s(&back)), expected, "Zarr v{format}");
        let original = &expected;
        // Zarr has no unlimited dimensions: without --unlimited, time is a fixed one.
        let fixed = dir.path().join(format!("fixed{format}.nc"));
        quiet(&["export", s(&store), "-o", s(&fixed)]);
        assert_eq!(
            ncdump(&[], s(&fixed)),
            replace_once(
                original,
                "time = UNLIMITED ; // (2 currently)",
                "time = 2 ;"
            ),
            "Zarr v{format}"
        );
    }
}

/// What a round trip does not keep, each difference spelled out: the order of variables
/// (names'), a one-dimensional `char` variable's dimension (its string length, named
/// `string<n>`) and a single `string` attribute (`char` text), in either format (a NaN
/// `_FillValue` survives both).
#[test]
fn documented_round_trip_differences() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(
        dir.path(),
        "d",
        "nc4",
        "netcdf d {\ndimensions:\n\tx = 3 ;\nvariables:\n\tint z(x) ;\n\tchar c(x) ;\n\
         \tfloat a(x) ;\n\t\ta:_FillValue = NaNf ;\n\t\tstring a:one = \"only\" ;\n\
         data:\n\n z = 1, 2, 3 ;\n\n c = \"ab\" ;\n\n a = 1, _, 3 ;\n}\n",
    );
    let back = |format: &str| {
        let store = dir.path().join(format!("d{format}.zarr"));
        quiet(&["import", s(&nc), s(&store), "--format", format]);
        let back = dir.path().join(format!("d{format}.nc"));
        quiet(&["export", s(&store), "-o", s(&back)]);
        ncdump(&[], s(&back))
    };
    let v3 = "dimensions:\n\tx = 3 ;\n\tstring3 = 3 ;\nvariables:\n\tfloat a(x) ;\n\
              \t\ta:_FillValue = NaNf ;\n\t\ta:one = \"only\" ;\n\tchar c(string3) ;\n\
              \tint z(x) ;\ndata:\n\n a = 1, _, 3 ;\n\n c = \"ab\" ;\n\n z = 1, 2, 3 ;\n}\n";
    assert_eq!(back("3"), v3);
    assert_eq!(back("2"), v3);
}

/// Chunks, deflate and shuffle as netCDF reports them (`ncdump -s`); one array exported
/// alone; --deflate 0 and --no-shuffle.
#[test]
fn chunking_compression_and_one_array() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(dir.path(), "cf", "nc4", CF_CDL);
    let store = dir.path().join("v3.zarr");
    quiet(&["import", s(&nc), s(&store), "--chunks", "2,1,2"]);
    let one = dir.path().join("tp.nc");
    quiet(&["export", s(&store), "tp", "-o", s(&one)]);
    let special = |file: &Path| -> String {
        ncdump(&["-s", "-h"], s(file))
            .lines()
            // The dimensions, the variable and its special attributes.
            .filter(|l| l.contains("tp:_") || !l.contains(':'))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(
        special(&one),
        "\ttime = 2 ;\n\tlat = 2 ;\n\tlon = 3 ;\n\tshort tp(time, lat, lon) ;\n\
         \t\ttp:_Storage = \"chunked\" ;\n\t\ttp:_ChunkSizes = 2, 1, 2 ;\n\
         \t\ttp:_Shuffle = \"true\" ;\n\t\ttp:_DeflateLevel = 4 ;\n\
         \t\ttp:_Endianness = \"little\" ;\n\n}\n"
    );
    let plain = dir.path().join("plain.nc");
    quiet(&["export", s(&store), "tp", "-o", s(&plain), "--deflate", "0"]);
    assert!(!special(&plain).contains("_DeflateLevel"));
    let unshuffled = dir.path().join("unshuffled.nc");
    quiet(&[
        "export",
        s(&store),
        "tp",
        "-o",
        s(&unshuffled),
        "--deflate",
        "9",
        "--no-shuffle",
    ]);
    let text = special(&unshuffled);
    assert!(text.contains("tp:_DeflateLevel = 9 ;") && !text.contains("_Shuffle"));
    // The same values either way.
    let data = |file: &Path| {
        ncdump(&["-v", "tp"], s(file))
            .split_once("data:")
            .unwrap()
            .1
            .to_string()
    };
    assert_eq!(data(&one), data(&plain));
    assert_eq!(data(&one), data(&unshuffled));
}

/// Attributes without NCZarr's types take the type their JSON says; unnamed dimensions
/// are named after their array.
#[test]
fn attribute_types_from_json() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    quiet(&[
        "create",
        "--group",
        store,
        "--attrs",
        r#"{"i": 5, "f": 0.5, "l": ["a", "b"], "b": true, "o": {"k": 1}, "n": [1, 2.5],
            "big": [1, 5000000000], "e": []}"#,
    ]);
    quiet(&[
        "create", store, "u", "--shape", "2", "--dtype", "<u8", "--fill", "7",
    ]);
    quiet(&["attrs", "set", store, "u", "_FillValue", "7"]);
    let nc = dir.path().join("a.nc");
    quiet(&["export", store, "-o", s(&nc)]);
    assert_eq!(
        ncdump(&[], s(&nc)),
        "dimensions:\n\tu_dim0 = 2 ;\nvariables:\n\tuint64 u(u_dim0) ;\n\
         \t\tu:_FillValue = 7ULL ;\n\n// global attributes:\n\t\t:i = 5 ;\n\t\t:f = 0.5 ;\n\
         \t\tstring :l = \"a\", \"b\" ;\n\t\t:b = \"true\" ;\n\t\t:o = \"{\\\"k\\\":1}\" ;\n\
         \t\t:n = 1., 2.5 ;\n\t\t:big = 1LL, 5000000000LL ;\n\t\t:e = \"[]\" ;\n\
         data:\n\n u = _, _ ;\n}\n"
    );
}

/// Big-endian items, shards (netCDF chunks are the inner chunks) and an empty array (its
/// dimension of length 0 is unlimited: netCDF has no other of that length; netCDF chooses
/// its chunks).
#[test]
fn byte_orders_shards_and_empty_arrays() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    quiet(&["create", "--group", store]);
    let raw = dir.path().join("be.bin");
    let be: Vec<u8> = (1i32..=5).flat_map(|v| v.to_be_bytes()).collect();
    std::fs::write(&raw, be).unwrap();
    quiet(&[
        "import",
        s(&raw),
        store,
        "be",
        "--dtype",
        ">i4",
        "--shape",
        "5",
        "--chunks",
        "2",
    ]);
    let raw = dir.path().join("sh.bin");
    let sh: Vec<u8> = (0..8)
        .flat_map(|v| (v as f64 / 4.0).to_le_bytes())
        .collect();
    std::fs::write(&raw, sh).unwrap();
    quiet(&[
        "import",
        s(&raw),
        store,
        "sh",
        "--dtype",
        "<f8",
        "--shape",
        "8",
        "--chunks",
        "2",
        "--shards",
        "4",
    ]);
    quiet(&["create", store, "empty", "--shape", "0,3", "--dtype", "<i2"]);
    let nc = dir.path().join("o.nc");
    quiet(&["export", store, "-o", s(&nc)]);
    assert_eq!(
        ncdump(&["-s"], s(&nc))
            .lines()
            .filter(|l| !l.contains("\t\t:_") && !l.contains("_Endianness"))
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
        "dimensions:\n\tbe_dim0 = 5 ;\n\tempty_dim0 = UNLIMITED ; // (0 currently)\n\tempty_dim1 = 3 ;\n\tsh_dim0 = 8 ;\n\
         variables:\n\tint be(be_dim0) ;\n\t\tbe:_Storage = \"chunked\" ;\n\
         \t\tbe:_ChunkSizes = 2 ;\n\t\tbe:_Shuffle = \"true\" ;\n\t\tbe:_DeflateLevel = 4 ;\n\
         \tshort empty(empty_dim0, empty_dim1) ;\n\t\tempty:_Storage = \"chunked\" ;\n\
         \t\tempty:_ChunkSizes = 1, 3 ;\n\
         \tdouble sh(sh_dim0) ;\n\t\tsh:_Storage = \"chunked\" ;\n\t\tsh:_ChunkSizes = 2 ;\n\
         \t\tsh:_Shuffle = \"true\" ;\n\t\tsh:_DeflateLevel = 4 ;\n\n\
         // global attributes:\ndata:\n\n be = 1, 2, 3, 4, 5 ;\n\n sh = 0, 0.25, 0.5, 0.75, 1, \
         1.25, 1.5, 1.75 ;\n}\n"
    );
}

/// 64-bit integers keep their fill values exactly (netCDF's defaults are beyond a
/// double's integers), in both formats; a string array's `_FillValue` attribute is left
/// out rather than refused.
#[test]
fn int64_fills_are_exact_and_string_fills_are_left_out() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(
        dir.path(),
        "big",
        "nc4",
        "netcdf big {\ndimensions:\n\tx = 3 ;\nvariables:\n\
         \tint64 i(x) ;\n\t\ti:_FillValue = -9223372036854775806LL ;\n\
         \tint64 m(x) ;\n\t\tm:_FillValue = 9223372036854775807LL ;\n\
         \tuint64 u(x) ;\n\t\tu:_FillValue = 18446744073709551614ULL ;\n\
         data:\n\n i = -9223372036854775807, _, 5 ;\n\n m = _, 1, 2 ;\n\n\
         \tu = 18446744073709551615, _, 0 ;\n}\n",
    );
    let original = ncdump(&[], s(&nc));
    for fill in [
        "i:_FillValue = -9223372036854775806LL ;",
        "m:_FillValue = 9223372036854775807LL ;",
        "u:_FillValue = 18446744073709551614ULL ;",
    ] {
        assert!(original.contains(fill), "{fill} in\n{original}");
    }
    for format in ["2", "3"] {
        let store = dir.path().join(format!("v{format}.zarr"));
        quiet(&["import", s(&nc), s(&store), "--format", format]);
        let back = dir.path().join(format!("back{format}.nc"));
        quiet(&["export", s(&store), "-o", s(&back)]);
        assert_eq!(ncdump(&[], s(&back)), original, "Zarr v{format}");
    }
    // A v3 string array with xarray's `_FillValue` attribute.
    let store = dir.path().join("str.zarr");
    std::fs::create_dir_all(store.join("s")).unwrap();
    std::fs::write(
        store.join("zarr.json"),
        r#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#,
    )
    .unwrap();
    std::fs::write(
        store.join("s/zarr.json"),
        r#"{"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "string",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": "",
            "codecs": [{"name": "vlen-utf8"}], "attributes": {"_FillValue": ""}}"#,
    )
    .unwrap();
    let out = dir.path().join("str.nc");
    quiet(&["export", s(&store), "-o", s(&out)]);
    let text = ncdump(&["-h"], s(&out));
    assert!(
        text.contains("\tstring s(s_dim0) ;") && !text.contains("_FillValue"),
        "{text}"
    );
}

/// What netCDF cannot hold is refused before anything is written; an existing file is
/// replaced only with --overwrite, and never by a half-written one.
#[test]
fn refusals_write_nothing() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.zarr");
    let store = s(&store);
    quiet(&["create", "--group", store]);
    quiet(&["create", store, "a", "--shape", "3", "--dtype", "<i4"]);
    quiet(&["create", store, "sub/b", "--shape", "2", "--dtype", "bool"]);
    let nc = dir.path().join("out.nc");
    let out = s(&nc);
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        fails(&["export", store, "-o", out]),
        "zarrtool: unsupported: array /sub/b: netCDF has no type for |b1 items (it stores \
         integers, float32, float64, fixed-width byte strings and strings)\n"
    );
    assert_eq!(listing(), ["s.zarr"]);
    for dtype in ["<f2", "<c8", "<M8[s]", "<U3"] {
        quiet(&[
            "create",
            store,
            "c",
            "--shape",
            "2",
            "--dtype",
            dtype,
            "--overwrite",
        ]);
        let err = fails(&["export", store, "c", "-o", out]);
        assert!(
            err.starts_with("zarrtool: unsupported: array /c: netCDF has no type"),
            "{err}"
        );
    }
    assert_eq!(
        fails(&["export", store, "a", "-o", out, "--unlimited", "time"]),
        "zarrtool: invalid argument: --unlimited time: no exported array has a dimension of \
         that name\n"
    );
    assert_eq!(
        fails(&["export", store, "a", "-o", out, "-r", "0:1"]),
        "zarrtool: invalid argument: a netCDF export writes whole arrays to a file: --region, \
         --order and -o - are for raw files (--format raw)\n"
    );
    let inside = format!("{store}/a/x.nc");
    let err = fails(&["export", store, "-o", &inside]);
    assert!(err.contains("the file lies in the array exported"), "{err}");
    assert_eq!(listing(), ["s.zarr"]);
    // An existing file: kept without --overwrite, replaced with it.
    std::fs::write(&nc, b"keep").unwrap();
    assert_eq!(
        fails(&["export", store, "a", "-o", out]),
        format!("zarrtool: already exists: {out:?} exists: give --overwrite to replace it\n")
    );
    assert_eq!(std::fs::read(&nc).unwrap(), b"keep");
    let err = fails(&["export", store, "-o", out, "--overwrite"]);
    assert!(err.contains("array /c"), "{err}");
    assert_eq!(std::fs::read(&nc).unwrap(), b"keep");
    quiet(&["export", store, "a", "-o", out, "--overwrite"]);
    assert_eq!(
        ncdump(&[], out),
        "dimensions:\n\ta_dim0 = 3 ;\nvariables:\n\tint a(a_dim0) ;\ndata:\n\n a = 0, 0, 0 ;\n}\n"
    );
    assert_eq!(listing(), ["out.nc", "s.zarr"]);
    // Dimensions of one name and two lengths in a group; a value its recorded type cannot
    // hold.
    let other = dir.path().join("o.zarr");
    let other = s(&other);
    quiet(&["create", "--group", other]);
    quiet(&[
        "create",
        other,
        "x1",
        "--shape",
        "2",
        "--dtype",
        "<i4",
        "--dimension-names",
        "n",
    ]);
    quiet(&[
        "create",
        other,
        "x2",
        "--shape",
        "3",
        "--dtype",
        "<i4",
        "--dimension-names",
        "n",
    ]);
    let o_nc = dir.path().join("o.nc");
    assert_eq!(
        fails(&["export", other, "-o", s(&o_nc)]),
        "zarrtool: invalid argument: array /x2: dimension \"n\" has length 3, but 2 for \
         another array of the group: a netCDF dimension has one length\n"
    );
    quiet(&["rm", other, "x2"]);
    quiet(&["attrs", "set", other, "x1", "v", "300"]);
    quiet(&[
        "attrs",
        "set",
        other,
        "x1",
        "_NCZARR_ATTR",
        r#"{"types": {"v": "<i1"}}"#,
    ]);
    assert_eq!(
        fails(&["export", other, "-o", s(&o_nc)]),
        "zarrtool: out of range: array /x1: attribute \"v\": 300 is not a value of its \
         type <i1\n"
    );
    // A name netCDF refuses once the file is being written: the file is removed.
    quiet(&["attrs", "del", other, "x1", "_NCZARR_ATTR"]);
    quiet(&[
        "create",
        other,
        "y",
        "--shape",
        "2",
        "--dtype",
        "<i4",
        "--dimension-names",
        "a/b",
    ]);
    assert_eq!(
        fails(&["export", other, "-o", s(&o_nc)]),
        format!(
            "zarrtool: storage error: netCDF {:?}: dimension \"a/b\" of group /: NetCDF: Name \
             contains illegal characters\n",
            s(&o_nc)
        )
    );
    assert_eq!(listing(), ["o.zarr", "out.nc", "s.zarr"]);
    // A raw file is still the default for other names, and --format raw for .nc ones.
    let raw = dir.path().join("a.nc");
    quiet(&["export", store, "a", "-o", s(&raw), "--format", "raw"]);
    assert_eq!(std::fs::read(&raw).unwrap(), [0u8; 12]);
}

/// A file NCZarr 4.9.0 reads (see the guide's netCDF page for what it cannot): no scalars,
/// strings, char arrays or unlimited dimensions, a subgroup using only the root's
/// dimensions.
const NCZARR_CDL: &str = r#"netcdf nz {
dimensions:
	time = 2 ;
	lat = 2 ;
	lon = 3 ;
	station = 2 ;
variables:
	ubyte flags(time, lat, lon) ;
		flags:flag_values = 0UB, 1UB, 2UB ;
		flags:flag_meanings = "clear cloudy snow" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
	float t2m(time, lat, lon) ;
		t2m:_FillValue = -999.f ;
		t2m:units = "K" ;
		t2m:valid_range = 150.f, 350.f ;
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	short tp(time, lat, lon) ;
		tp:scale_factor = 0.001f ;
		tp:add_offset = 0.5f ;
		tp:valid_min = -32000s ;

// global attributes:
		:title = "NCZarr \"view\" ✓" ;
		:version = 3 ;
		:resolution = 0.25f ;
		:big = 5000000000LL ;
data:

 flags =
  0, 1, 2,
  2, 1, 0,
  1, 0, 1,
  1, 1, 1 ;

 lat = 45.5, 46 ;

 lon = 7.25, 8, 8.75 ;

 t2m =
  280.5, _, 281.25,
  279, 278.5, 280,
  277, 282, 283.5,
  284, 285.125, 286 ;

 time = 0, 1 ;

 tp =
  0, 100, -200,
  -1, 32000, -32000,
  5, 6, 7,
  8, 9, 10 ;

group: obs {
  variables:
  	int count(station) ;
  		count:long_name = "observation count" ;

  // group attributes:
  		:source = "in situ" ;
  data:

   count = 3, 4 ;
  } // group obs
}
"#;

/// NCZarr (netCDF-C 4.9.0, `mode=zarr`) reads an uncompressed Zarr v2 hierarchy zarrtool
/// imported as netCDF wrote it, attribute types included (from `_NCZARR_ATTR`), except the
/// missing value: it takes `_FillValue` from an attribute only, not from `fill_value`.
#[test]
fn nczarr_reads_the_v2_import() {
    let Some(line) = netcdf_line() else {
        return;
    };
    // What NCZarr reads and how differs between versions: this is 4.9.0's.
    if !line.contains("(libnetcdf 4.9.0)") {
        eprintln!("NCZarr view not checked: {line}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nc = ncgen(dir.path(), "nz", "nc4", NCZARR_CDL);
    let original = ncdump(&[], s(&nc));
    assert_eq!(original, NCZARR_CDL.split_once('\n').unwrap().1);
    let store = dir.path().join("nz.zarr");
    quiet(&[
        "import",
        s(&nc),
        s(&store),
        "--format",
        "2",
        "--compressor",
        "null",
    ]);
    let url = format!("file://{}#mode=zarr,file", s(&store));
    // The `_FillValue` attribute, typed in `_NCZARR_ATTR`, makes NCZarr's view the original.
    assert_eq!(ncdump(&[], &url), original);
    // The same store exported is the original again, but for where `station` is defined:
    // in the group of the first array using it, since Zarr does not say.
    let back = dir.path().join("back.nc");
    quiet(&["export", s(&store), "-o", s(&back)]);
    let moved = replace_once(&original, "\tstation = 2 ;\n", "");
    let moved = replace_once(
        &moved,
        "group: obs {\n  variables:",
        "group: obs {\n  dimensions:\n  \tstation = 2 ;\n  variables:",
    );
    assert_eq!(ncdump(&[], s(&back)), moved);
}

/// Writes a Zarr v3 array of int32 (raw little-endian chunks) at `name` in the store
/// `store` (a group made when missing): `shape`, `chunks`, the fill value and attributes
/// as JSON text, and the chunks stored as (key under `c/`, values).
fn v3_int32(store: &Path, name: &str, meta: (&str, &str, &str, &str), chunks: &[(&str, &[i32])]) {
    let (shape, chunk_shape, fill, attributes) = meta;
    std::fs::create_dir_all(store.join(name).join("c")).unwrap();
    std::fs::write(
        store.join("zarr.json"),
        r#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#,
    )
    .unwrap();
    std::fs::write(
        store.join(name).join("zarr.json"),
        format!(
            r#"{{"zarr_format": 3, "node_type": "array", "shape": {shape},
                "data_type": "int32", "chunk_grid": {{"name": "regular",
                "configuration": {{"chunk_shape": {chunk_shape}}}}},
                "chunk_key_encoding": {{"name": "default"}}, "fill_value": {fill},
                "codecs": [{{"name": "bytes", "configuration": {{"endian": "little"}}}}],
                "attributes": {attributes}}}"#
        ),
    )
    .unwrap();
    for (key, values) in chunks {
        let path = store.join(name).join("c").join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).unwrap();
    }
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Chunks not stored are left to netCDF's fill when it is the array's fill value (the
/// variable's `_FillValue`, or netCDF's default), else written with the array's fill
/// value: either way every value reads back as the array reads it. An unlimited dimension
/// keeps its length when its last chunks are not stored.
#[test]
fn chunks_not_stored_read_back_as_the_fill_value() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stored: &[(&str, &[i32])] = &[("1", &[1, 2]), ("3", &[3, 4])];
    // (fill value, attributes, the data ncdump shows, the size of the file's data when
    // only the stored chunks are written, else None)
    let cases = [
        // netCDF's default fill for int: left unwritten, shown as `_`.
        ("-2147483647", "{}", "_, _, 1, 2, _, _, 3, 4, _, _", true),
        // Another fill value without _FillValue: written, read back as 0.
        ("0", "{}", "0, 0, 1, 2, 0, 0, 3, 4, 0, 0", false),
        // _FillValue the fill value: left unwritten, `_` being 7.
        (
            "7",
            r#"{"_FillValue": 7}"#,
            "_, _, 1, 2, _, _, 3, 4, _, _",
            true,
        ),
        // _FillValue other than the fill value: the fill value written.
        (
            "5",
            r#"{"_FillValue": 9}"#,
            "5, 5, 1, 2, 5, 5, 3, 4, 5, 5",
            false,
        ),
    ];
    for (i, (fill, attrs, data, left)) in cases.iter().enumerate() {
        let store = dir.path().join(format!("s{i}.zarr"));
        v3_int32(&store, "a", ("[10]", "[2]", fill, attrs), stored);
        let nc = dir.path().join(format!("s{i}.nc"));
        quiet(&["export", s(&store), "-o", s(&nc)]);
        let text = ncdump(&["-v", "a"], s(&nc));
        let shown = text.split("data:\n\n").nth(1).unwrap();
        assert_eq!(
            shown,
            format!(" a = {data} ;\n}}\n"),
            "fill {fill}, {attrs}"
        );
        // Written or not, the fill values cost nothing with --max-fill 0 only when left.
        let other = dir.path().join(format!("t{i}.nc"));
        let out = tool(&["export", s(&store), "-o", s(&other), "--max-fill", "0"]);
        assert_eq!(out.status.success(), *left, "fill {fill}, {attrs}");
        if !left {
            assert_eq!(
                String::from_utf8(out.stderr).unwrap(),
                format!(
                    "zarrtool: invalid argument: array /a: 24 bytes of its elements are in no \
                     stored chunk and read as its fill value {fill}, which netCDF would not \
                     give back unwritten (the variable's fill is netCDF's default or its \
                     _FillValue): writing them (24 bytes in all) would pass --max-fill 0. \
                     Give a larger --max-fill, or set the array's _FillValue attribute to \
                     its fill value so that netCDF fills them\n"
                )
            );
            assert!(!other.exists());
        }
    }
    // An unlimited dimension whose last chunks are not stored keeps its length.
    let store = dir.path().join("u.zarr");
    v3_int32(
        &store,
        "a",
        (
            "[10]",
            "[2]",
            "-2147483647",
            r#"{"_ARRAY_DIMENSIONS": ["t"]}"#,
        ),
        &[("1", &[1, 2])],
    );
    std::fs::write(
        store.join("a/zarr.json"),
        std::fs::read_to_string(store.join("a/zarr.json"))
            .unwrap()
            .replace(
                r#""attributes": {"_ARRAY_DIMENSIONS": ["t"]}"#,
                r#""dimension_names": ["t"], "attributes": {}"#,
            ),
    )
    .unwrap();
    let nc = dir.path().join("u.nc");
    quiet(&["export", s(&store), "-o", s(&nc), "--unlimited", "t"]);
    let text = ncdump(&[], s(&nc));
    assert!(
        text.contains("\tt = UNLIMITED ; // (10 currently)\n"),
        "{text}"
    );
    assert!(
        text.contains(" a = _, _, 1, 2, _, _, _, _, _, _ ;\n"),
        "{text}"
    );
}

/// A 300-byte store declaring 2^40 elements and storing no chunk: exported at once into a
/// small file when netCDF's fill is the array's, refused before anything is written
/// (naming the size) when the 4 TiB of fill values would have to be written.
#[test]
fn huge_arrays_without_chunks_cost_what_is_stored() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.zarr");
    v3_int32(
        &huge,
        "a",
        ("[1099511627776]", "[1048576]", "-2147483647", "{}"),
        &[],
    );
    let nc = dir.path().join("huge.nc");
    let started = std::time::Instant::now();
    quiet(&["export", s(&huge), "-o", s(&nc)]);
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let size = std::fs::metadata(&nc).unwrap().len();
    assert!(size < 100_000, "{size} bytes");
    assert!(
        ncdump(&["-h"], s(&nc)).contains("\ta_dim0 = 1099511627776 ;\n"),
        "{}",
        ncdump(&["-h"], s(&nc))
    );
    let zero = dir.path().join("zero.zarr");
    v3_int32(&zero, "a", ("[1099511627776]", "[1048576]", "0", "{}"), &[]);
    let out = dir.path().join("zero.nc");
    let err = fails(&["export", s(&zero), "-o", s(&out)]);
    assert!(
        err.starts_with(
            "zarrtool: invalid argument: array /a: 4398046511104 bytes of its elements are \
             in no stored chunk"
        ) && err.contains("would pass --max-fill 1073741824."),
        "{err}"
    );
    assert_eq!(names_in(dir.path()), ["huge.nc", "huge.zarr", "zero.zarr"]);
}

/// SIGTERM, SIGINT or SIGHUP during an export removes the temporary file and ends with
/// 128 + the signal's number; the file an `--overwrite` would have replaced is unchanged.
/// A signal ignored when the export starts stays ignored.
#[cfg(unix)]
#[test]
fn interrupted_exports_leave_no_file() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 4 MB of values that do not compress, in 400 chunks.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let values: Vec<u8> = (0..1_000_000)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x as i32).to_le_bytes()
        })
        .collect();
    let raw = dir.path().join("a.bin");
    std::fs::write(&raw, values).unwrap();
    let store = dir.path().join("s.zarr");
    common::zarrtool::succeeds(&[
        "import",
        s(&raw),
        s(&store),
        "a",
        "--dtype",
        "<i4",
        "--shape",
        "1000,1000",
        "--chunks",
        "50,50",
    ]);
    let target = dir.path().join("out.nc");
    std::fs::write(&target, b"the old file").unwrap();
    let signal = |name: &str, pid: u32| {
        let status = Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{name} {pid}");
    };
    // (signal, exit status; None: ignored when the export starts, as under nohup)
    let runs = [
        ("TERM", Some(143)),
        ("INT", Some(130)),
        ("HUP", Some(129)),
        ("HUP", None),
    ];
    for (name, code) in runs {
        let mut command = Command::new(exe());
        command
            .args(["export", s(&store), "-o", s(&target), "--overwrite"])
            .args(["--deflate", "9"])
            .stderr(std::process::Stdio::null());
        let ignore_hup = code.is_none();
        // The signals' handling as the test needs it, whatever the test runner's is (a
        // background job ignores SIGINT).
        // SAFETY: only signal(2), async-signal-safe, between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    let ignored = ignore_hup && sig == libc::SIGHUP;
                    libc::signal(
                        sig,
                        if ignored {
                            libc::SIG_IGN
                        } else {
                            libc::SIG_DFL
                        },
                    );
                }
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        // Stopped as soon as its temporary file is there: the signal comes mid-export.
        let temp = format!(".out.nc.{}.tmp", child.id());
        let started = std::time::Instant::now();
        while !dir.path().join(&temp).exists() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the export ended before its temporary file was seen"
            );
            assert!(started.elapsed().as_secs() < 60, "no {temp}");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        signal("STOP", child.id());
        assert!(
            dir.path().join(&temp).exists(),
            "{temp} gone before the signal"
        );
        signal(name, child.id());
        signal("CONT", child.id());
        let status = child.wait().unwrap();
        if code.is_none() {
            // Ignored: the export went on and replaced the file.
            assert!(status.success(), "ignored SIG{name}: {status:?}");
            assert!(ncdump(&["-h"], s(&target)).contains("\tint a(a_dim0, a_dim1) ;\n"));
            assert_eq!(names_in(dir.path()), ["a.bin", "out.nc", "s.zarr"]);
            continue;
        }
        assert_eq!(status.code(), code, "SIG{name}: {status:?}");
        assert_eq!(
            names_in(dir.path()),
            ["a.bin", "out.nc", "s.zarr"],
            "SIG{name}"
        );
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"the old file",
            "SIG{name}"
        );
    }
}

/// The files of a store: each path in the store and its bytes.
type Files<'a> = Vec<(&'a str, Vec<u8>)>;

/// Writes the documents and chunks `files` of a store.
fn write_store(store: &Path, files: &[(&str, Vec<u8>)]) {
    for (path, bytes) in files {
        let path = store.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// Floats, strings and chars: chunks not stored read back from the netCDF file as the array reads
/// them, whether left to netCDF's fill (float32 at netCDF's default) or written (Zarr v2's
/// NaN; strings always, netCDF-C failing to read strings never written).
#[test]
fn chunks_not_stored_read_back_as_the_fill_value_for_floats_and_strings() {
    if netcdf_line().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let floats = |values: &[f64], size: usize| -> Vec<u8> {
        values
            .iter()
            .flat_map(|&v| match size {
                4 => (v as f32).to_le_bytes().to_vec(),
                _ => v.to_le_bytes().to_vec(),
            })
            .collect()
    };
    let v3 = |data_type: &str, fill: &str, codec: &str| {
        format!(
            r#"{{"zarr_format": 3, "node_type": "array", "shape": [6], "data_type": "{data_type}",
                "chunk_grid": {{"name": "regular", "configuration": {{"chunk_shape": [2]}}}},
                "chunk_key_encoding": {{"name": "default"}}, "fill_value": {fill},
                "codecs": [{codec}], "attributes": {{}}}}"#
        )
        .into_bytes()
    };
    let group = br#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#.to_vec();
    let bytes = r#"{"name": "bytes", "configuration": {"endian": "little"}}"#;
    let vlen = r#"{"name": "vlen-utf8"}"#;
    // numcodecs' variable-length layout: the count, then each item's length and bytes.
    let strings = b"\x02\x00\x00\x00\x02\x00\x00\x00ab\x01\x00\x00\x00c".to_vec();
    // (store, its files, the variable, the data ncdump shows, left to netCDF's fill)
    let cases: [(&str, Files, &str, &str, bool); 4] = [
        (
            "nan",
            vec![
                (".zgroup", br#"{"zarr_format": 2}"#.to_vec()),
                (
                    "f/.zarray",
                    br#"{"zarr_format": 2, "shape": [6], "chunks": [2], "dtype": "<f8",
                         "compressor": null, "fill_value": "NaN", "filters": null,
                         "order": "C"}"#
                        .to_vec(),
                ),
                ("f/1", floats(&[1.5, 2.5], 8)),
            ],
            "f",
            "NaN, NaN, 1.5, 2.5, NaN, NaN",
            false,
        ),
        (
            "default",
            vec![
                ("zarr.json", group.clone()),
                ("f/zarr.json", v3("float32", "9.969209968386869e36", bytes)),
                ("f/c/1", floats(&[1.5, 2.5], 4)),
            ],
            "f",
            "_, _, 1.5, 2.5, _, _",
            true,
        ),
        (
            "empty",
            vec![
                ("zarr.json", group.clone()),
                ("s/zarr.json", v3("string", "\"\"", vlen)),
                ("s/c/1", strings.clone()),
            ],
            "s",
            // "" is netCDF's fill for strings: ncdump shows it as `_`.
            "_, _, \"ab\", \"c\", _, _",
            false,
        ),
        (
            "zz",
            vec![
                ("zarr.json", group.clone()),
                ("s/zarr.json", v3("string", "\"zz\"", vlen)),
                ("s/c/1", strings.clone()),
            ],
            "s",
            "\"zz\", \"zz\", \"ab\", \"c\", \"zz\", \"zz\"",
            false,
        ),
    ];
    for (name, files, var, data, left) in cases {
        let store = dir.path().join(format!("{name}.zarr"));
        write_store(&store, &files);
        let nc = dir.path().join(format!("{name}.nc"));
        quiet(&["export", s(&store), "-o", s(&nc)]);
        let text = ncdump(&["-v", var], s(&nc));
        let shown = text.split("data:\n\n").nth(1).unwrap();
        assert_eq!(shown, format!(" {var} = {data} ;\n}}\n"), "{name}");
        let other = dir.path().join(format!("{name}-0.nc"));
        let out = tool(&["export", s(&store), "-o", s(&other), "--max-fill", "0"]);
        assert_eq!(out.status.success(), left, "{name}");
    }
    // Fixed-width byte strings, netCDF's fill \0 being Zarr's "": left to netCDF.
    let store = dir.path().join("char.zarr");
    write_store(
        &store,
        &[
            (".zgroup", br#"{"zarr_format": 2}"#.to_vec()),
            (
                "c/.zarray",
                br#"{"zarr_format": 2, "shape": [6], "chunks": [2], "dtype": "|S2",
                     "compressor": null, "fill_value": "", "filters": null, "order": "C"}"#
                    .to_vec(),
            ),
            ("c/1", b"abcd".to_vec()),
        ],
    );
    let nc = dir.path().join("char.nc");
    quiet(&["export", s(&store), "-o", s(&nc), "--max-fill", "0"]);
    let text = ncdump(&["-v", "c"], s(&nc));
    assert_eq!(
        text.split("data:\n\n").nth(1).unwrap(),
        " c =\n  \"\",\n  \"\",\n  \"ab\",\n  \"cd\",\n  \"\",\n  \"\" ;\n}\n"
    );
}
