//! The subcommands, one module each: `run` in each does what the command does. They build
//! on the helpers in the modules beside `cmd` (opening stores and nodes, output, values,
//! layouts), which never use a command.

mod attrs;
mod branch;
mod completions;
mod consolidate;
mod copy;
mod create;
mod diff;
mod dump;
mod export;
mod header;
mod import;
mod info;
mod log;
mod ls;
mod man;
mod meta;
mod migrate;
mod mv;
mod rm;
mod tag;
mod tree;
mod validate;
pub mod version;
mod virtualize;

use crate::cli::Command;
use zarr::Result;

/// Runs one subcommand (`cmd` is the command line's definition, for the completions and
/// the man pages); returns the exit status.
pub fn run(mut command: Command, cmd: &mut clap::Command) -> Result<u8> {
    crate::locate::locate(&mut command)?;
    match command {
        Command::Info { node, json } => info::run(&node, json),
        Command::Ls { node, json } => ls::run(&node, json),
        Command::Tree { node } => tree::run(&node),
        Command::Header {
            node,
            json,
            special,
        } => header::run(&node, json, special),
        Command::Meta { node, json } => meta::run(&node, json),
        Command::Attrs { action } => attrs::run(action),
        Command::Dump {
            node,
            region,
            format,
            missing,
        } => dump::run(&node, region.as_deref(), format, missing.as_deref()),
        Command::Create {
            node,
            group,
            shape,
            dtype,
            fill,
            dimension_names,
            attrs,
            overwrite,
            dry_run,
            layout,
        } => create::run(
            &node,
            group,
            shape.as_deref(),
            dtype.as_deref(),
            fill.as_deref(),
            dimension_names.as_deref(),
            attrs.as_deref(),
            overwrite,
            dry_run,
            &layout,
        ),
        Command::Import {
            file,
            node,
            dtype,
            shape,
            order,
            overwrite,
            dry_run,
            layout,
        } => import::run(
            &file,
            &node,
            dtype.as_deref(),
            shape.as_deref(),
            order,
            overwrite,
            dry_run,
            &layout,
        ),
        Command::Export {
            node,
            output,
            format,
            region,
            order,
            unlimited,
            deflate,
            no_shuffle,
            overwrite,
            max_fill,
        } => export::run(
            &node,
            &output,
            format,
            region.as_deref(),
            order,
            unlimited,
            deflate,
            no_shuffle,
            overwrite,
            max_fill,
        ),
        Command::Virtualize {
            files,
            output,
            concat,
            overwrite,
        } => virtualize::run(&files, &output, concat.as_deref(), overwrite),
        Command::Copy {
            source,
            target,
            from,
            to,
            rechunk,
            shards,
            no_shards,
            compressor,
            format,
            overwrite,
            dry_run,
            json,
            commit,
        } => {
            let settings = copy::CopySettings::parse(
                &rechunk,
                &shards,
                no_shards,
                compressor.as_deref(),
                format,
            )?;
            let run = copy::CopyRun {
                overwrite,
                dry_run,
                json,
                commit,
            };
            copy::run((&source, &from), (&target, &to), &settings, run)
        }
        Command::Log { url, json } => log::run(&url, json),
        Command::Tag { url, name } => tag::run(&url, &name),
        Command::Branch { url, name } => branch::run(&url, &name),
        Command::Consolidate { node, dry_run } => consolidate::run(&node, dry_run),
        Command::Migrate { node, dry_run } => migrate::run(&node, dry_run),
        Command::Rm { node, dry_run } => rm::run(&node, dry_run),
        Command::Mv {
            store,
            from,
            to,
            dry_run,
        } => mv::run(&store, &from, &to, dry_run),
        Command::Validate { node, json, repair } => validate::run(&node, json, repair),
        Command::Diff {
            left,
            right,
            left_path,
            right_path,
            attrs,
            json,
        } => diff::run((&left, &left_path), (&right, &right_path), attrs, json),
        Command::Version { features } => version::run(features),
        Command::Completions { shell } => completions::run(cmd, shell),
        Command::Man { dir } => man::run(cmd, dir.as_deref()),
    }
}
