//! Big hierarchies: a tree of 10,000 one-chunk arrays in 100 groups, in Zarr v2 and v3, with
//! and without consolidated metadata. Each case opens the root, lists every member
//! recursively, opens every array and reads one element, and prints the time next to the
//! physical limit measured in the same run (reading every metadata document and listing
//! every directory with plain file calls), and beside zarr-python 3 doing the same walk on
//! the same tree when `ZARR_BENCH_PYTHON` names a Python with zarr 3 installed.
//!
//! Run: `cargo bench --bench bench_tree [-- DIR] [--small]` (DIR defaults to a new
//! directory under target/; `--small` builds 10 groups of 100). Figures are printed, never
//! asserted.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use zarr::dtype::ElementType;
use zarr::meta::consolidated::{consolidate, ConsolidatedStore};
use zarr::meta::Order;
use zarr::node::{ArrayBuilder, Group, Mode, NodeKind};
use zarr::store::{FilesystemStore, Store};

/// Builds the tree: `groups` groups `g0..` under the root, each with `per_group` arrays.
fn build(dir: &Path, format: i32, groups: usize, per_group: usize) {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(dir, true, true).unwrap());
    let root = Group::open_as(
        store.clone(),
        "",
        Mode::Overwrite,
        zarr::meta::Format::from_number(format.into()).unwrap(),
    )
    .unwrap();
    let mut builder = ArrayBuilder::new(vec![4], ElementType::Float32);
    builder.zarr_format(format).unwrap();
    builder.chunks(vec![4]);
    builder.compressor(serde_json::Value::Null);
    let data: Vec<u8> = [1.5f32, 2.5, 3.5, 4.5]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    for g in 0..groups {
        let group = root.open_group(&format!("g{g}"), Mode::Append).unwrap();
        for a in 0..per_group {
            let array = group
                .create_array(&format!("a{a}"), &builder, Mode::Overwrite)
                .unwrap();
            array
                .write(&[0], &[4], ElementType::Float32, Order::C, &data)
                .unwrap();
        }
    }
}

/// Opens the root, lists everything, opens every array and reads its first element;
/// returns the number of arrays read.
fn walk(store: Arc<dyn Store>) -> usize {
    let root = Group::open(store, "", Mode::Read).unwrap();
    let mut arrays = 0;
    let mut pending = vec![root];
    while let Some(group) = pending.pop() {
        for (name, kind) in group.members().unwrap() {
            match kind {
                NodeKind::Group => pending.push(group.open_group(&name, Mode::Read).unwrap()),
                NodeKind::Array => {
                    let array = group.open_array(&name, Mode::Read).unwrap();
                    let mut one = [0u8; 4];
                    array
                        .read(&[0], &[1], ElementType::Float32, Order::C, &mut one)
                        .unwrap();
                    assert_eq!(f32::from_ne_bytes(one), 1.5);
                    arrays += 1;
                }
                NodeKind::None => {}
            }
        }
    }
    arrays
}

/// The floor: list every directory and read every metadata document with plain calls.
fn plain_walk(dir: &Path) -> usize {
    let mut documents = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                pending.push(path);
            } else if [".zarray", ".zgroup", ".zattrs", "zarr.json"].contains(&name.as_str()) {
                std::hint::black_box(std::fs::read(&path).unwrap());
                documents += 1;
            } else if name == "0" || name == "c" {
                std::hint::black_box(std::fs::read(&path).unwrap());
            }
        }
    }
    documents
}

/// zarr-python 3's walk of the same tree (seconds), if a Python with zarr 3 is given.
fn zarr_python(python: &str, dir: &Path, consolidated: bool) -> Option<f64> {
    let script = r#"
import sys, time, zarr
path, consolidated = sys.argv[1], sys.argv[2] == "1"
t = time.perf_counter()
root = zarr.open_consolidated(path, mode="r") if consolidated else zarr.open_group(path, mode="r")
n = 0
for name, node in root.members(max_depth=None):
    if isinstance(node, zarr.Array):
        assert node[0] == 1.5
        n += 1
print(time.perf_counter() - t, n)
"#;
    let out = Command::new(python)
        .args([
            "-c",
            script,
            &dir.to_string_lossy(),
            if consolidated { "1" } else { "0" },
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("zarr-python: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn best(runs: usize, mut f: impl FnMut() -> usize) -> (f64, usize) {
    let mut n = 0;
    let t = (0..runs)
        .map(|_| {
            let t = Instant::now();
            n = f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (t, n)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let small = args.iter().any(|a| a == "--small");
    let base = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench_tree"));
    let (groups, per_group) = if small { (10, 100) } else { (100, 100) };
    let python = std::env::var("ZARR_BENCH_PYTHON").ok();
    println!(
        "bench_tree: {groups} groups x {per_group} arrays, open root + list + open every array + read one element"
    );
    println!(
        "{:<24} {:>10} {:>12} {:>12} {:>14}",
        "case", "libzarr s", "floor s", "zarr-py s", "libzarr/zp"
    );
    let mut rows = Vec::new();
    for format in [2, 3] {
        let dir = base.join(format!("v{format}"));
        let _ = std::fs::remove_dir_all(&dir);
        build(&dir, format, groups, per_group);
        for consolidated in [false, true] {
            let store: Arc<dyn Store> = Arc::new(FilesystemStore::open(&dir, true, false).unwrap());
            if consolidated {
                consolidate(store.as_ref(), "").unwrap();
            }
            let (t, n) = best(3, || {
                let inner: Arc<dyn Store> =
                    Arc::new(FilesystemStore::open(&dir, false, false).unwrap());
                let store: Arc<dyn Store> = if consolidated {
                    Arc::new(ConsolidatedStore::open(inner, "").unwrap())
                } else {
                    inner
                };
                walk(store)
            });
            assert_eq!(n, groups * per_group);
            let (floor, _) = best(3, || plain_walk(&dir));
            let peer = python
                .as_deref()
                .and_then(|p| zarr_python(p, &dir, consolidated));
            let label = format!(
                "v{format}{}",
                if consolidated { " consolidated" } else { "" }
            );
            match peer {
                Some(p) => println!(
                    "{label:<24} {t:>10.3} {floor:>12.3} {p:>12.3} {:>13.2}x",
                    p / t
                ),
                None => println!(
                    "{label:<24} {t:>10.3} {floor:>12.3} {:>12} {:>14}",
                    "-", "-"
                ),
            }
            rows.push(format!(
                "ROW|tree of {} arrays, {label} (s)|{t:.3}|zarr-python {}|{floor:.3}|{}|",
                groups * per_group,
                peer.map_or("n/a".into(), |p| format!("{p:.3}")),
                peer.map_or("n/a".into(), |p| format!("{:.2}", p / t))
            ));
        }
    }
    for row in rows {
        println!("{row}");
    }
}
