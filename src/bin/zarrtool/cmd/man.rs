//! `zarrtool man`, the man pages: zarrtool(1) and one page per command at every level, as git and
//! clap_mangen name them (zarrtool-info(1), zarrtool-attrs(1), zarrtool-attrs-get(1)). Each
//! has clap_mangen's NAME, SYNOPSIS, DESCRIPTION and OPTIONS (and SUBCOMMANDS where the
//! command has them), then EXIT STATUS, EXAMPLES and SEE ALSO. All of it comes from the
//! command's definitions; the examples are parsed by them in the tests, so the pages cannot
//! drift from `--help`.

use crate::out::Out;
use std::io::Write;
use std::path::Path;

/// Examples for the EXAMPLES section: the arguments after `zarrtool`, and what they do.
const EXAMPLES: &[(&str, &str)] = &[
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
        "virtualize day-01.nc day-02.nc --concat time -o days.json",
        "Reference two days' netCDF files as one Zarr hierarchy (reference:///ABS/days.json).",
    ),
    (
        "virtualize run.nc -o icechunk:///data/views/run",
        "Commit a netCDF file's chunks to an Icechunk repository as virtual chunks.",
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
        "validate --repair data.zarr",
        "Check, and remove the temporary files of writers killed midway.",
    ),
    (
        "diff a.zarr b.zarr --attrs",
        "Compare two hierarchies by value and attributes.",
    ),
    ("version --features", "Print what this build supports."),
    ("completions bash", "Print the bash completion script."),
    ("man", "Print the page zarrtool(1)."),
    (
        "man --dir man1",
        "Write zarrtool.1 and one page per command into the directory man1.",
    ),
];

/// The EXIT STATUS section's entries, each with the commands whose pages show it (all when
/// empty; the main page shows every entry).
const EXIT_STATUS: &[(&str, &str, &[&str])] = &[
    (
        "0",
        "Success (also when the reader of standard output closed it early).",
        &[],
    ),
    ("1", "An error; its message is on standard error.", &[]),
    ("2", "A usage error: unknown options or arguments.", &[]),
    (
        "3",
        "diff found differences, or validate found problems.",
        &["diff", "validate"],
    ),
    (
        "129, 130, 143",
        "A netCDF export ended by SIGHUP, SIGINT or SIGTERM: its temporary file removed.",
        &["export"],
    ),
];

/// Text quoted for roff: backslashes and hyphens escaped, a leading dot or quote guarded.
fn roff(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}

/// `zarrtool man`: prints zarrtool(1) of the command line `cmd`, or with `dir` writes
/// every page into it.
pub fn run(cmd: &clap::Command, dir: Option<&Path>) -> zarr::Result<u8> {
    match dir {
        Some(dir) => write_pages(cmd, dir)?,
        None => {
            let text = main_page(cmd).map_err(|e| zarr::Error::io("rendering the man page", e))?;
            let mut out = Out::new();
            out.bytes(&text)?;
            out.finish()?;
        }
    }
    Ok(0)
}

/// Every page of the command `cmd` (its `clap` definition): the file name and its roff,
/// zarrtool.1 first, then each command's page before those of its own commands.
fn pages(cmd: &clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = without_help(cmd.clone());
    // Building names every command as its page does: `zarrtool-attrs-get`.
    cmd.build();
    let mut pages = vec![(page_name(&cmd), render(&cmd)?)];
    for sub in cmd.get_subcommands() {
        command_pages(sub, &[], &mut pages)?;
    }
    Ok(pages)
}

/// Writes every page of `cmd` into `dir` (created when missing), each under a temporary
/// name first and renamed into place, so no page is ever half-written.
fn write_pages(cmd: &clap::Command, dir: &Path) -> zarr::error::Result<()> {
    use zarr::error::Error;
    let pages = pages(cmd).map_err(|e| Error::io("rendering the man pages", e))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    for (name, text) in pages {
        let path = dir.join(&name);
        let partial = dir.join(format!(".{name}.partial"));
        std::fs::write(&partial, text).map_err(|e| Error::io(partial.display(), e))?;
        std::fs::rename(&partial, &path).map_err(|e| Error::io(path.display(), e))?;
    }
    Ok(())
}

/// The roff of the main page, zarrtool.1.
fn main_page(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let mut cmd = without_help(cmd.clone());
    cmd.build();
    render(&cmd)
}

/// `cmd` without the `help` command clap adds, at every level: it has no page.
fn without_help(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(cmd.disable_help_subcommand(true), |cmd, name| {
            cmd.mut_subcommand(name, without_help)
        })
}

/// The file name of the page of the built command `cmd`: `zarrtool-attrs-get.1`.
fn page_name(cmd: &clap::Command) -> String {
    format!("{}.1", reference_name(cmd))
}

/// The name pages refer to the built command `cmd` by: `zarrtool-attrs-get`.
fn reference_name(cmd: &clap::Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

/// A reference to the page named `name`, in roff, never hyphenated:
/// `\fB\%zarrtool\-info\fR(1)`.
fn reference(name: &str) -> String {
    format!("\\fB\\%{}\\fR(1)", roff(name))
}

/// The main page: the command's synopsis, description, options and commands, then EXIT
/// STATUS, every example and SEE ALSO naming every command's page.
fn render(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    exit_status(&mut out, None)?;
    examples(&mut out, &[])?;
    let mut names = Vec::new();
    every_command(cmd, &mut names);
    see_also(&mut out, &names)?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// Appends to `names` the reference names of every command below `cmd`, depth first.
fn every_command(cmd: &clap::Command, names: &mut Vec<String>) {
    for sub in cmd.get_subcommands() {
        names.push(reference_name(sub).to_string());
        every_command(sub, names);
    }
}

/// Appends the page of the built command `sub` (`parents` the names of the commands above
/// it, below zarrtool) to `pages`, then those of its own commands.
fn command_pages(
    sub: &clap::Command,
    parents: &[&str],
    pages: &mut Vec<(String, Vec<u8>)>,
) -> std::io::Result<()> {
    let path: Vec<&str> = parents.iter().copied().chain([sub.get_name()]).collect();
    let mut out = Vec::new();
    // The footer names the package, as the main page's does.
    let man = clap_mangen::Man::new(sub.clone())
        .source(format!("zarrtool {}", env!("CARGO_PKG_VERSION")));
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if sub.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    exit_status(&mut out, Some(path[0]))?;
    examples(&mut out, &path)?;
    // The main page, the page of the command above, and those of the commands below.
    let mut names = vec!["zarrtool".to_string()];
    if path.len() > 1 {
        names.push(format!("zarrtool-{}", parents.join("-")));
    }
    names.extend(sub.get_subcommands().map(|s| reference_name(s).to_string()));
    see_also(&mut out, &names)?;
    pages.push((page_name(sub), out));
    for inner in sub.get_subcommands() {
        command_pages(inner, &path, pages)?;
    }
    Ok(())
}

/// Appends EXIT STATUS: every entry (`command` None, the main page) or those of `command`.
fn exit_status(out: &mut Vec<u8>, command: Option<&str>) -> std::io::Result<()> {
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    let shown = EXIT_STATUS.iter().filter(|(_, _, only)| {
        command.is_none_or(|command| only.is_empty() || only.contains(&command))
    });
    for (code, meaning, _) in shown {
        writeln!(out, ".TP\n{code}\n{}", roff(meaning))?;
    }
    Ok(())
}

/// Appends EXAMPLES: those whose arguments start with the command words `path` (all of
/// them for an empty path).
fn examples(out: &mut Vec<u8>, path: &[&str]) -> std::io::Result<()> {
    writeln!(out, ".SH EXAMPLES")?;
    for (args, what) in examples_of(path) {
        writeln!(out, ".TP\n\\fBzarrtool {}\\fR\n{}", roff(args), roff(what))?;
    }
    Ok(())
}

/// The examples of the command words `path` (`["attrs", "get"]`): those whose arguments
/// start with them.
fn examples_of<'a>(
    path: &'a [&str],
) -> impl Iterator<Item = &'static (&'static str, &'static str)> + 'a {
    EXAMPLES.iter().filter(move |(args, _)| {
        let mut words = args.split(' ');
        path.iter().all(|word| words.next() == Some(*word))
    })
}

/// Appends SEE ALSO naming the pages `names`.
fn see_also(out: &mut Vec<u8>, names: &[String]) -> std::io::Result<()> {
    writeln!(out, ".SH \"SEE ALSO\"")?;
    let references: Vec<String> = names.iter().map(|name| reference(name)).collect();
    writeln!(out, "{}", references.join(",\n"))?;
    Ok(())
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
        let mut paths = Vec::new();
        for sub in commands(&cmd) {
            paths.push(vec![sub.get_name()]);
            for inner in commands(sub) {
                paths.push(vec![sub.get_name(), inner.get_name()]);
            }
        }
        for path in paths {
            assert!(
                examples_of(&path).next().is_some(),
                "no example of {path:?}"
            );
        }
    }

    #[test]
    fn every_page_has_its_sections_and_examples() {
        let pages = pages(&crate::cli::Cli::command()).unwrap();
        let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names[..3],
            ["zarrtool.1", "zarrtool-info.1", "zarrtool-ls.1"]
        );
        for name in ["zarrtool-attrs.1", "zarrtool-attrs-get.1", "zarrtool-man.1"] {
            assert!(names.contains(&name), "{name}");
        }
        assert!(!names.iter().any(|name| name.contains("help")));
        for (name, page) in &pages {
            let page = String::from_utf8(page.clone()).unwrap();
            for heading in [
                ".SH NAME",
                ".SH SYNOPSIS",
                ".SH DESCRIPTION",
                ".SH OPTIONS",
                ".SH \"EXIT STATUS\"",
                ".SH EXAMPLES\n.TP\n\\fBzarrtool ",
                ".SH \"SEE ALSO\"",
            ] {
                assert!(page.contains(heading), "{name}: {heading}");
            }
        }
        let get = String::from_utf8(
            pages[names
                .iter()
                .position(|n| *n == "zarrtool-attrs-get.1")
                .unwrap()]
            .1
            .clone(),
        )
        .unwrap();
        assert!(get.contains(".SH EXAMPLES\n.TP\n\\fBzarrtool attrs get data.zarr temperature\\fR\nPrint its attributes.\n.SH"), "{get}");
        assert!(
            get.contains(
                ".SH \"SEE ALSO\"\n\\fB\\%zarrtool\\fR(1),\n\\fB\\%zarrtool\\-attrs\\fR(1)\n"
            ),
            "{get}"
        );
        assert!(!get.contains("\n3\n"), "{get}");
        let diff = String::from_utf8(
            pages[names.iter().position(|n| *n == "zarrtool-diff.1").unwrap()]
                .1
                .clone(),
        )
        .unwrap();
        assert!(diff.contains(".TP\n3\ndiff found differences"), "{diff}");
    }

    /// The subcommands of `cmd`, without the `help` that clap adds when it builds.
    fn commands(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
        cmd.get_subcommands().filter(|sub| sub.get_name() != "help")
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
