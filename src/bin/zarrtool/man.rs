//! The man page: clap_mangen's page of the command, then every subcommand's synopsis,
//! description and options (so the page is complete), EXIT STATUS and EXAMPLES. All of it
//! comes from the command's definitions; the examples are parsed by them in the tests, so
//! the page cannot drift from `--help`.

use std::io::Write;

/// Examples for the EXAMPLES section: the arguments after `zarrtool`, and what they do.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "info data.zarr temperature",
        "Describe the array temperature.",
    ),
    (
        "info --json data.zarr/temperature",
        "The same as JSON, the node given as a path into the store.",
    ),
    (
        "ls http://host/data.zarr",
        "List a consolidated hierarchy on a web server.",
    ),
    ("tree s3://bucket/data.zarr", "Draw a hierarchy on S3."),
    (
        "header data.zarr --special",
        "Print the hierarchy as ncdump -hs prints a netCDF file.",
    ),
    (
        "meta data.zarr temperature",
        "Print the array's metadata document.",
    ),
    ("attrs get data.zarr temperature", "Print its attributes."),
    (
        "attrs set data.zarr temperature units '\"K\"'",
        "Set one attribute to a JSON value.",
    ),
    (
        "attrs del data.zarr temperature units",
        "Delete one attribute.",
    ),
    (
        "dump -r 0:10,5,: data.zarr temperature",
        "Print the values of a region.",
    ),
    (
        "create data.zarr t2 --shape 100,100 --dtype '<f4' --chunks 10,10 --shards 50,50",
        "Create a sharded array.",
    ),
    (
        "import a.bin data.zarr a --dtype '>i4' --shape 4,5 --order f",
        "Import a raw binary file in Fortran order.",
    ),
    (
        "import data.nc out.zarr",
        "Import a netCDF file (builds with netCDF support).",
    ),
    (
        "export data.zarr a -o a.bin",
        "Export an array to a raw binary file.",
    ),
    (
        "copy in.zarr zip://out.zip --format 3 --rechunk 100,100 --json",
        "Copy to a zip file as Zarr v3, rechunked, with a JSON summary.",
    ),
    (
        "copy in.zarr icechunk:///data/repo --commit 'first import'",
        "Copy into an Icechunk repository and commit (builds with Icechunk).",
    ),
    (
        "log icechunk:///data/repo",
        "Print the repository's history, newest first.",
    ),
    (
        "tag icechunk:///data/repo v1",
        "Tag the newest snapshot of the branch main.",
    ),
    (
        "branch 'icechunk:///data/repo?tag=v1' dev",
        "Create a branch at a tag.",
    ),
    (
        "consolidate data.zarr",
        "Consolidate the hierarchy's metadata.",
    ),
    ("migrate old.zarr a", "Convert a v1 array to v2 in place."),
    (
        "rm data.zarr grp --dry-run",
        "Say what removing a group would delete.",
    ),
    ("mv data.zarr a b/a", "Move a node."),
    (
        "validate --json data.zarr",
        "Check every chunk; exit status 3 when a problem is found.",
    ),
    (
        "diff a.zarr b.zarr --attrs",
        "Compare two hierarchies by value and attributes.",
    ),
    ("version --features", "Print what this build supports."),
    ("completions bash", "Print the bash completion script."),
    ("man", "Print this page."),
];

/// The EXIT STATUS section's entries.
const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Success (also when the reader of standard output closed it early).",
    ),
    ("1", "An error; its message is on standard error."),
    ("2", "A usage error: unknown options or arguments."),
    ("3", "diff found differences, or validate found problems."),
];

/// Text quoted for roff: backslashes and hyphens escaped, a leading dot or quote guarded.
fn roff(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}

/// The page of the command `cmd` (its `clap` definition) in roff.
pub(crate) fn render(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    writeln!(out, ".SH \"COMMAND DETAILS\"")?;
    for sub in commands(cmd) {
        subcommand(&mut out, sub, "zarrtool")?;
    }
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in EXIT_STATUS {
        writeln!(out, ".TP\n{code}\n{}", roff(meaning))?;
    }
    writeln!(out, ".SH EXAMPLES")?;
    for (args, what) in EXAMPLES {
        writeln!(out, ".TP\n\\fBzarrtool {}\\fR\n{}", roff(args), roff(what))?;
    }
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// Appends the synopsis, description and options of `sub` (of the command `parent`) as a
/// subsection, then those of its own subcommands.
fn subcommand(out: &mut Vec<u8>, sub: &clap::Command, parent: &str) -> std::io::Result<()> {
    let name = format!("{parent} {}", sub.get_name());
    let page = clap_mangen::Man::new(sub.clone().bin_name(&name));
    writeln!(out, ".SS \"{name}\"")?;
    let mut part = Vec::new();
    page.render_synopsis_section(&mut part)?;
    page.render_description_section(&mut part)?;
    page.render_options_section(&mut part)?;
    // The sections' headings give way to the subsection's, leaving their paragraphs.
    let text = String::from_utf8_lossy(&part)
        .lines()
        .map(|line| match line.starts_with(".SH ") {
            true => ".PP",
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    writeln!(out, "{text}")?;
    for inner in commands(sub) {
        subcommand(out, inner, &name)?;
    }
    Ok(())
}

/// The subcommands of `cmd`, without the `help` that clap adds.
fn commands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|sub| sub.get_name() != "help")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[test]
    fn every_example_parses_and_every_command_has_one() {
        for (args, _) in EXAMPLES {
            let words = shlex_words(args);
            let parsed = crate::cli::Cli::try_parse_from(
                std::iter::once("zarrtool".to_string()).chain(words),
            );
            assert!(parsed.is_ok(), "zarrtool {args}: {:?}", parsed.err());
        }
        let cmd = crate::cli::Cli::command();
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            assert!(
                EXAMPLES
                    .iter()
                    .any(|(args, _)| args.split(' ').next() == Some(name)),
                "no example of {name}"
            );
        }
    }

    #[test]
    fn the_page_has_every_command_exit_status_and_examples() {
        let mut cmd = crate::cli::Cli::command();
        // As the command renders it: built, with clap's `help` subcommand.
        cmd.build();
        let page = String::from_utf8(render(&cmd).unwrap()).unwrap();
        assert!(!page.contains(".SS \"zarrtool help\""));
        for heading in [
            ".SH \"EXIT STATUS\"",
            ".SH EXAMPLES",
            ".SS \"zarrtool attrs set\"",
        ] {
            assert!(page.contains(heading), "{heading}");
        }
        for sub in commands(&cmd) {
            assert!(page.contains(&format!(".SS \"zarrtool {}\"", sub.get_name())));
        }
        assert!(page.contains("\\fBzarrtool info data.zarr temperature\\fR\nDescribe"));
    }

    /// `args` split into words as a shell would, for the examples' simple quoting ('…').
    fn shlex_words(args: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in args.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => words.push(std::mem::take(&mut word)),
                c => word.push(c),
            }
        }
        words.push(word);
        words
    }
}
