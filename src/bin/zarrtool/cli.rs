//! The command-line definitions (also the source of the completions and the man page).

use clap::{Parser, Subcommand, ValueEnum};

/// Inspect, convert, copy and check Zarr v1/v2/v3 stores: directories, zip files and
/// object stores (s3://, gs://, az://, http(s)://), addressed by path or URL.
#[derive(Debug, Parser)]
#[command(
    name = "zarrtool",
    version,
    long_version = crate::cmd::version::long_version(),
    about,
    max_term_width = 100
)]
pub struct Cli {
    /// Worker threads for chunk work (default: the number of cores).
    #[arg(short = 'j', long = "jobs", global = true, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(subcommand)]
    pub command: Command,
}

/// A node in a store: the store's path or URL and the node's path inside it.
#[derive(Debug, clap::Args)]
pub struct NodeArg {
    /// The store: a directory, zip://FILE (or FILE.zip), memory://, or an object store URL.
    pub store: String,
    /// The node's path inside the store (the root when omitted).
    #[arg(default_value = "")]
    pub path: String,
}

/// How `dump` prints values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// One line per run of the last dimension, values separated by spaces.
    Text,
    /// As text, comma-separated, strings quoted.
    Csv,
    /// The elements' bytes in C order and native byte order.
    Raw,
}

/// The kind of file `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The items of one array (or a region), back to back.
    Raw,
    /// A netCDF-4 file of a hierarchy or an array (needs the netcdf feature).
    Netcdf4,
}

/// Element order in a raw binary file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FileOrder {
    /// Row-major (the last dimension varies fastest).
    C,
    /// Column-major (the first dimension varies fastest).
    F,
}

/// The layout settings shared by `create`, `import` and `copy`.
#[derive(Debug, clap::Args, Default)]
pub struct Layout {
    /// Chunk shape, comma-separated (`100,100`); or a rectilinear chunk grid (Zarr v3) as
    /// JSON, per dimension a list of edges and `[edge, count]` pairs or one edge length
    /// (`[[10,20,30],100]`, `[[[5,2],7],4]`).
    #[arg(long, value_name = "SHAPE")]
    pub chunks: Option<String>,
    /// Shard shape, comma-separated, a multiple of the chunk shape (Zarr v3).
    #[arg(long, value_name = "SHAPE")]
    pub shards: Option<String>,
    /// Bytes-to-bytes codecs as JSON: one configuration, a list, or null for none, each in
    /// numcodecs' form or Zarr v3's (`{"id":"zstd","level":3}`,
    /// `{"name":"zstd","configuration":{"level":3}}`). A list may start with Zarr v3 array
    /// codecs (`scale_offset`, `cast_value`, `bitround`, `reshape`, `numcodecs.<filter>`),
    /// which become the array's filters.
    #[arg(long, visible_alias = "codec", value_name = "JSON")]
    pub compressor: Option<String>,
    /// Zarr format of new arrays: 2 or 3.
    #[arg(long, value_name = "2|3")]
    pub format: Option<i32>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Describe an array (or a group): format, shape, chunks, shards, type, codecs, sizes.
    Info {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// List the hierarchy recursively with shapes and types.
    Ls {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Draw the hierarchy as a tree with shapes and types.
    Tree {
        #[command(flatten)]
        node: NodeArg,
    },
    /// Print the groups, dimensions, variables and attributes of a store (or of the node's
    /// subtree) as `ncdump -h` prints a netCDF file (CDL), reading metadata only.
    /// Dimensions come from NCZarr's records, else from dimension names and shapes (an
    /// unnamed one is `_zdim_<length>`); attribute types from NCZarr's records, else as
    /// netCDF-C infers them from JSON; `_FillValue` is the CF missing value in the
    /// variable's type. --json prints the same as JSON: {"store", "path", "root": group},
    /// a group {"name", "path", "zarr_format", "dimensions": [{"name", "length",
    /// "other_lengths"?}], "variables", "attributes", "groups"}, a variable {"name",
    /// "path", "type", "dtype", "shape", "dimensions", "missing_value", "attributes"}, an
    /// attribute {"name", "type", "value"} (type "json" for values netCDF keeps as text);
    /// with --special a variable also has "storage": {"storage", "chunks", "shards",
    /// "endianness", "codecs"}.
    Header {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
        /// Also show how each variable is stored, as `ncdump -s` does: the virtual
        /// attributes _Storage, _ChunkSizes and _Endianness, and as comments the shard
        /// shape and the codecs.
        #[arg(long, short = 's')]
        special: bool,
    },
    /// Print a node's metadata document as stored. --json wraps it: {"path", "node_type",
    /// "zarr_format", "document"}.
    Meta {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print, set or delete attributes.
    Attrs {
        #[command(subcommand)]
        action: AttrsAction,
    },
    /// Print the values of an array region.
    Dump {
        #[command(flatten)]
        node: NodeArg,
        /// The region: per dimension an index, START:STOP or `:` (`0:10,5,:`).
        #[arg(long, short = 'r')]
        region: Option<String>,
        /// Output format.
        #[arg(long, short = 'f', value_enum, default_value = "text")]
        format: DumpFormat,
        /// Print TEXT instead of each value equal to the array's CF missing value (its
        /// _FillValue, as `header` shows it): `_` as ncdump prints, or `''` for empty CSV
        /// fields. Text and CSV only.
        #[arg(long, value_name = "TEXT")]
        missing: Option<String>,
    },
    /// Create an array (or with --group a group).
    Create {
        #[command(flatten)]
        node: NodeArg,
        /// Create a group instead of an array.
        #[arg(long, conflicts_with_all = ["shape", "dtype"])]
        group: bool,
        /// The shape, comma-separated.
        #[arg(long, required_unless_present = "group")]
        shape: Option<String>,
        /// The data type: a numpy type string (`<f8`, `|S8`; `f8` is native) or a Zarr v3
        /// name (`float32`).
        #[arg(long, required_unless_present = "group")]
        dtype: Option<String>,
        /// The fill value as JSON.
        #[arg(long, value_name = "JSON")]
        fill: Option<String>,
        /// Dimension names, comma-separated.
        #[arg(long, value_name = "NAMES")]
        dimension_names: Option<String>,
        /// Attributes as a JSON object.
        #[arg(long, value_name = "JSON")]
        attrs: Option<String>,
        /// Replace whatever is at the path.
        #[arg(long)]
        overwrite: bool,
        /// Say what would be created (or replaced) without writing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        layout: Layout,
    },
    /// Create an array from a raw binary file (with --dtype and --shape), or a hierarchy
    /// from a netCDF-3, netCDF-4 or HDF5 file: every netCDF group a group, every variable
    /// an array with its dimension names, attributes and fill value (needs a build with
    /// netCDF support). A netCDF variable keeps its chunk shape unless --chunks (and
    /// --shards) give one for the variables of their rank.
    Import {
        /// The file (`-` for standard input, raw binary only).
        file: String,
        #[command(flatten)]
        node: NodeArg,
        /// The raw file's element type, with its byte order (`<i4`, `>f8`, `float32`; `f8`
        /// without one is native).
        #[arg(long, requires = "shape")]
        dtype: Option<String>,
        /// The raw file's shape, comma-separated.
        #[arg(long, requires = "dtype")]
        shape: Option<String>,
        /// The raw file's element order [default: c].
        #[arg(long, value_enum, requires = "dtype")]
        order: Option<FileOrder>,
        /// Replace whatever is at the path.
        #[arg(long)]
        overwrite: bool,
        /// Say what would be created (or replaced) without writing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        layout: Layout,
    },
    /// Write an array (or a region) to a raw binary file in the array's stored type, or a
    /// hierarchy (or an array) to a netCDF-4 file.
    Export {
        #[command(flatten)]
        node: NodeArg,
        /// The output file (`-` for standard output, raw only).
        #[arg(long, short = 'o')]
        output: String,
        /// The file's format [default: netcdf4 for a name ending in .nc, else raw].
        #[arg(long, value_enum)]
        format: Option<ExportFormat>,
        /// The region (as for dump; raw only).
        #[arg(long, short = 'r')]
        region: Option<String>,
        /// The file's element order (raw only).
        #[arg(long, value_enum, default_value = "c")]
        order: FileOrder,
        /// netCDF: make the dimension NAME unlimited (repeatable).
        #[arg(long, value_name = "NAME")]
        unlimited: Vec<String>,
        /// netCDF: the deflate level of chunked variables, 0 for none.
        #[arg(long, value_name = "0-9", default_value_t = 4,
              value_parser = clap::value_parser!(u8).range(0..=9))]
        deflate: u8,
        /// netCDF: deflate without the shuffle filter.
        #[arg(long)]
        no_shuffle: bool,
        /// netCDF: replace an existing file.
        #[arg(long)]
        overwrite: bool,
        /// netCDF: the most bytes of fill values written for chunks not stored where
        /// netCDF's fill for the variable is not the array's fill value (K, M, G, T: powers
        /// of 1024); a larger export is refused before anything is written.
        #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
        max_fill: u64,
    },
    /// Write kerchunk references (JSON, Zarr v2) to the values of netCDF-3 and
    /// netCDF-4/HDF5 files where they lie, so that the files read as a Zarr hierarchy
    /// (`reference:///PATH`) without a copy: groups, attributes, dimension names and fill
    /// values as `import` makes them; chunks as the files store them (needs a build with
    /// netCDF support). Several files are concatenated along --concat.
    Virtualize {
        /// The netCDF or HDF5 files, in the order they follow one another.
        #[arg(required = true)]
        files: Vec<String>,
        /// The reference file to write.
        #[arg(long, short = 'o')]
        output: String,
        /// The dimension that the files follow one another along (`time`).
        #[arg(long, value_name = "DIM")]
        concat: Option<String>,
        /// Replace an existing reference file.
        #[arg(long)]
        overwrite: bool,
    },
    /// Copy an array or a tree between any stores, optionally rechunked, resharded,
    /// recompressed or converted to another format. Interrupted copies resume: chunks
    /// already in the target are not written again.
    Copy {
        /// The source store.
        source: String,
        /// The target store.
        target: String,
        /// The source node's path.
        #[arg(long, default_value = "")]
        from: String,
        /// The target node's path.
        #[arg(long, default_value = "")]
        to: String,
        /// New chunk shape, comma-separated, for every array copied of its rank (others
        /// keep theirs); or a rectilinear chunk grid (Zarr v3) as JSON edges per dimension
        /// (`[[10,20,30],100]`), as `--chunks`. `NAME:SHAPE` gives one array its own
        /// (`'t2m:1,4,5;tp:1,10,10'`, or the option repeated): NAME is the array's path
        /// relative to the copied node, or its last segment when no other copied array ends
        /// in it.
        #[arg(long, value_name = "SHAPE")]
        rechunk: Vec<String>,
        /// Shard shape (Zarr v3), for every array copied of its rank, or per array as
        /// `--rechunk` (`NAME:SHAPE`), a multiple of the chunk shape. Without it a sharded
        /// array keeps its shards, and a --rechunk they do not hold whole chunks of is
        /// refused (give --shards, or --no-shards).
        #[arg(long, value_name = "SHAPE")]
        shards: Vec<String>,
        /// Store the copies' chunks unsharded, a sharded source's too.
        #[arg(long, conflicts_with = "shards")]
        no_shards: bool,
        /// Bytes-to-bytes codecs as JSON (a configuration, a list, or null), in numcodecs'
        /// form or Zarr v3's; a list's leading Zarr v3 array codecs (`scale_offset`,
        /// `cast_value`, …) replace the source's filters.
        #[arg(long, visible_alias = "codec", value_name = "JSON")]
        compressor: Option<String>,
        /// The target format: 2 or 3.
        #[arg(long, value_name = "2|3")]
        format: Option<i32>,
        /// Replace what is at the target instead of resuming into it.
        #[arg(long)]
        overwrite: bool,
        /// Say what would be copied without writing.
        #[arg(long)]
        dry_run: bool,
        /// Print what was copied (or with --dry-run would be) as JSON: {"source": {"store",
        /// "path"}, "target": {"store", "path"}, "dry_run", "nodes": [{"node_type":
        /// "group", "path", "created"} or {"node_type": "array", "from", "path",
        /// "zarr_format", "shape", "chunks", "shards", "chunks_total", "shards_total",
        /// "resumed"}]}, with "snapshot" (the new snapshot's id) after --commit.
        #[arg(long)]
        json: bool,
        /// Commit the copy with this message (the target an Icechunk repository,
        /// icechunk:///PATH), printing the new snapshot's id.
        #[arg(long, value_name = "MESSAGE")]
        commit: Option<String>,
    },
    /// Print the history of an Icechunk repository (icechunk:///PATH, ?branch=NAME, ?tag=NAME
    /// or ?snapshot=ID), newest first: id, time and message per snapshot.
    Log {
        /// The repository's URL.
        url: String,
        /// Print JSON: [{"id", "parent", "time", "message"}, ...].
        #[arg(long)]
        json: bool,
    },
    /// Tag the snapshot an Icechunk repository URL reads (its branch's newest by default);
    /// prints the snapshot's id.
    Tag {
        /// The repository's URL.
        url: String,
        /// The new tag's name.
        name: String,
    },
    /// Create a branch at the snapshot an Icechunk repository URL reads; prints the
    /// snapshot's id.
    Branch {
        /// The repository's URL.
        url: String,
        /// The new branch's name.
        name: String,
    },
    /// Consolidate the metadata of a hierarchy.
    Consolidate {
        #[command(flatten)]
        node: NodeArg,
        /// Say what would be consolidated without writing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Convert a v1 array to v2 in place.
    Migrate {
        #[command(flatten)]
        node: NodeArg,
        /// Say what would change without writing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Delete a node and everything below it.
    Rm {
        #[command(flatten)]
        node: NodeArg,
        /// Say what would be deleted without deleting.
        #[arg(long)]
        dry_run: bool,
    },
    /// Move a node inside a store.
    Mv {
        /// The store.
        store: String,
        /// The node's path.
        from: String,
        /// Its new path.
        to: String,
        /// Say what would move without moving.
        #[arg(long)]
        dry_run: bool,
    },
    /// Decode every chunk and check metadata, checksums, orphan chunks, chunks outside the
    /// array, consolidated metadata gone stale and temporary files left by killed writers.
    /// Exits with 3 when a problem is found. --json prints {"store", "path", "nodes",
    /// "arrays", "problems": [{"path", "problem"}], "stale_consolidated": [group path],
    /// "removed": [temporary file]}.
    Validate {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
        /// Remove the temporary files that killed writers left in a directory store: those
        /// whose process is not running on this host and that have not changed for 10
        /// minutes (others are left alone).
        #[arg(long)]
        repair: bool,
    },
    /// Compare two arrays or trees by value (codecs and chunking may differ). Exits with 3
    /// when they differ. --json prints {"left": {"store", "path"}, "right": {"store",
    /// "path"}, "same", "differences": [{"path", "difference"}]}.
    Diff {
        /// The first store.
        left: String,
        /// The second store.
        right: String,
        /// The node's path in the first store.
        #[arg(long, default_value = "")]
        left_path: String,
        /// The node's path in the second store.
        #[arg(long, default_value = "")]
        right_path: String,
        /// Also compare attributes.
        #[arg(long)]
        attrs: bool,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Print the version and, with --features, what this build supports.
    Version {
        /// List the build's features.
        #[arg(long)]
        features: bool,
    },
    /// Print a shell completion script.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page zarrtool(1) (roff), or with --dir write every page.
    ///
    /// With --dir: zarrtool.1 and one page per command (zarrtool-info.1, zarrtool-attrs.1,
    /// zarrtool-attrs-get.1, ...), each with its options, EXIT STATUS and EXAMPLES.
    Man {
        /// Write every page into this directory (created when missing) instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// `attrs` subcommands.
#[derive(Debug, Subcommand)]
pub enum AttrsAction {
    /// Print all attributes as JSON. --json wraps them: {"path", "node_type",
    /// "attributes"}.
    Get {
        #[command(flatten)]
        node: NodeArg,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Set one attribute to a JSON value. --json prints the attributes it leaves (with
    /// --dry-run, would leave) as `attrs get --json` does: {"path", "node_type",
    /// "attributes"}.
    Set {
        /// The store.
        store: String,
        /// The node's path (`""` or `/` for the root).
        path: String,
        /// The attribute's name.
        key: String,
        /// Its value as JSON.
        value: String,
        /// Say what would change without writing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Delete one attribute. --json prints the attributes it leaves (with --dry-run, would
    /// leave) as `attrs get --json` does: {"path", "node_type", "attributes"}.
    Del {
        /// The store.
        store: String,
        /// The node's path (`""` or `/` for the root).
        path: String,
        /// The attribute's name.
        key: String,
        /// Say whether it exists without deleting it.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON for scripts.
        #[arg(long)]
        json: bool,
    },
}

/// A size in bytes: digits, optionally followed by K, M, G or T (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, shift) = match text.char_indices().last() {
        Some((at, unit)) if unit.is_ascii_alphabetic() => {
            let shift = match unit.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("{text:?}: the unit is K, M, G or T")),
            };
            (&text[..at], shift)
        }
        _ => (text, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{text:?} is not a size in bytes (digits, then K, M, G or T)"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("12k"), Ok(12 << 10));
        assert_eq!(parse_size("3T"), Ok(3 << 40));
        assert_eq!(
            parse_size("12Q"),
            Err("\"12Q\": the unit is K, M, G or T".into())
        );
        for bad in ["", "G", "-1", "1.5G", "99999999T"] {
            assert_eq!(
                parse_size(bad),
                Err(format!(
                    "{bad:?} is not a size in bytes (digits, then K, M, G or T)"
                )),
                "{bad}"
            );
        }
    }
}
