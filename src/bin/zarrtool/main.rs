//! `zarrtool`: inspect, convert, copy and check Zarr stores from the command line.
//!
//! Data and `--json` go to stdout; messages and progress to stderr. Exit status: 0 success,
//! 1 error, 2 usage, 3 differences (`diff`) or problems found (`validate`); 129, 130, 143:
//! a netCDF export ended by a signal. A reader that closes standard output early (`| head`)
//! ends the command quietly with status 0.

mod attr_diff;
mod cli;
mod cmd;
mod describe;
mod findings;
mod layout;
mod locate;
mod missing;
mod nczarr;
#[cfg(feature = "netcdf")]
mod netcdf;
mod nodes;
mod out;
mod overlap;
mod per_array;
mod progress;
mod raw;
mod refresh;
mod repo;
mod source;
mod stale;
mod strays;
mod summary;
mod target;
mod values;

use clap::{CommandFactory, Parser};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    if let Some(threads) = args.jobs {
        if let Err(e) = zarr::io::pool::set_num_threads(threads) {
            eprintln!("zarrtool: {e}");
            return ExitCode::from(1);
        }
    }
    match cmd::run(args.command, &mut cli::Cli::command()) {
        Ok(code) => ExitCode::from(code),
        // The reader of standard output has gone: nothing more to say, and no one to say it to.
        Err(_) if out::pipe_closed() => ExitCode::SUCCESS,
        Err(e) => {
            // Messages may quote a URL as it was given: never its password or signature.
            eprintln!("zarrtool: {}", zarr::store::mask_urls(&e.to_string()));
            ExitCode::from(1)
        }
    }
}
