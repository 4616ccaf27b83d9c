//! `zarrtool` on Icechunk repositories: `copy --commit` into `icechunk:///PATH`, `log`,
//! `tag` and `branch`, then reading each snapshot, tag and branch back exactly; and the
//! refusals (a store without history, a tag that exists).
#![cfg(all(feature = "cli", feature = "icechunk"))]

use std::path::Path;

use crate::common;

use common::zarrtool::{fails, import_sample, ok, s};

/// A directory store holding the v3 array `a`: int32 0..20, shape 4x5, chunks 2x3.
fn source(dir: &Path) -> String {
    import_sample(dir, "a", &[]).1
}

/// The one line `zarrtool` printed: a snapshot id.
fn snapshot_id(stdout: &str) -> String {
    let id = stdout.strip_suffix('\n').expect("one line");
    assert_eq!(id.len(), 20, "a snapshot id: {stdout:?}");
    assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    id.to_string()
}

fn history(url: &str) -> Vec<serde_json::Value> {
    serde_json::from_str(&ok(&["log", "--json", url])).unwrap()
}

#[test]
fn copy_commit_log_tag_and_branch() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(dir.path());
    let want = ok(&["dump", &src, "a"]);
    assert_eq!(want.lines().next(), Some("0 1 2 3 4"));
    let repo = format!("icechunk://{}", s(&dir.path().join("repo")));

    let first = snapshot_id(&ok(&["copy", &src, &repo, "--commit", "copy a"]));
    assert_eq!(ok(&["dump", &repo, "a"]), want);
    assert_eq!(snapshot_id(&ok(&["tag", &repo, "v1"])), first);
    let second = snapshot_id(&ok(&[
        "copy",
        &src,
        &repo,
        "--from",
        "a",
        "--to",
        "b",
        "--commit",
        "copy a to b\nsecond line",
    ]));

    let log = ok(&["log", &repo]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert!(lines[0].starts_with(&format!("{second}  ")), "{log}");
    assert!(lines[0].ends_with("  copy a to b second line"), "{log}");
    assert!(lines[1].starts_with(&format!("{first}  ")), "{log}");
    assert!(lines[1].ends_with("  copy a"), "{log}");

    let main = history(&repo);
    assert_eq!(main.len(), 3);
    assert_eq!(main[0]["id"], second.as_str());
    assert_eq!(main[0]["parent"], first.as_str());
    assert_eq!(main[0]["message"], "copy a to b\nsecond line");
    assert_eq!(main[1]["id"], first.as_str());
    assert_eq!(main[2]["parent"], serde_json::Value::Null);
    let tagged = history(&format!("{repo}?tag=v1"));
    assert_eq!(tagged, main[1..].to_vec());

    // Every reference reads exactly what it held.
    assert_eq!(ok(&["dump", &format!("{repo}?tag=v1"), "a"]), want);
    assert_eq!(
        ok(&["dump", &format!("{repo}?snapshot={second}"), "b"]),
        want
    );
    let missing = fails(&["dump", &format!("{repo}?snapshot={first}"), "b"], 1);
    assert_eq!(missing, "zarrtool: not found: no array at \"b\"\n");

    assert_eq!(
        snapshot_id(&ok(&["branch", &format!("{repo}?tag=v1"), "dev"])),
        first
    );
    assert_eq!(history(&format!("{repo}?branch=dev")), main[1..].to_vec());
    // With --json the id is the summary's "snapshot".
    let summary: serde_json::Value = serde_json::from_str(&ok(&[
        "copy",
        &src,
        &format!("{repo}?branch=dev"),
        "--from",
        "a",
        "--to",
        "c",
        "--commit",
        "on dev",
        "--json",
    ]))
    .unwrap();
    assert_eq!(summary["nodes"][0]["path"], "/c");
    let third = summary["snapshot"].as_str().unwrap().to_string();
    assert_eq!(third.len(), 20);
    assert_eq!(ok(&["dump", &format!("{repo}?branch=dev"), "c"]), want);
    assert_eq!(
        history(&format!("{repo}?branch=dev"))[0]["parent"],
        first.as_str()
    );
    assert_eq!(
        history(&format!("{repo}?branch=dev"))[0]["id"],
        third.as_str()
    );
    assert_eq!(
        history(&repo)[0]["id"],
        second.as_str(),
        "main did not move"
    );
    let dev_only = fails(&["dump", &repo, "c"], 1);
    assert_eq!(dev_only, "zarrtool: not found: no array at \"c\"\n");

    let again = fails(&["tag", &repo, "v1"], 1);
    assert!(again.contains("v1"), "{again}");
}

#[test]
fn refuses_stores_without_history() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(dir.path());
    for args in [
        vec!["log", &src],
        vec!["tag", &src, "t"],
        vec!["branch", &src, "b"],
    ] {
        let err = fails(&args, 1);
        assert!(
            err.contains("not an Icechunk repository"),
            "{args:?}: {err}"
        );
    }
    let plain = dir.path().join("plain.zarr");
    let err = fails(&["copy", &src, s(&plain), "--commit", "m"], 1);
    assert!(err.contains("not an Icechunk repository"), "{err}");
    assert!(!plain.join("a").exists(), "nothing copied");
}

/// Runs zarrtool with `args`, killing it after 30 s; its exit code and stderr.
fn within_30_s(args: &[&str]) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = std::process::Command::new(common::zarrtool::exe())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run zarrtool");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait for zarrtool").is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().ok();
            child.wait().ok();
            panic!("zarrtool {args:?}: no answer after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("UTF-8 messages");
    (child.wait().expect("wait for zarrtool").code(), err)
}

#[test]
fn a_fifo_in_a_repository_fails_ls_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(dir.path());
    let path = dir.path().join("repo");
    let repo = format!("icechunk://{}", s(&path));
    ok(&["copy", &src, &repo, "--commit", "copy a"]);
    assert!(ok(&["ls", &repo]).contains('a'));
    // The branch file, then every snapshot in turn (the one it names is read).
    let mut files = vec!["repo".to_string()];
    for entry in std::fs::read_dir(path.join("snapshots")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        files.push(format!("snapshots/{name}"));
    }
    let mut refused = Vec::new();
    for file in &files {
        let at = path.join(file);
        let kept = std::fs::read(&at).unwrap();
        std::fs::remove_file(&at).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&at)
            .status()
            .unwrap();
        assert!(made.success());
        let (code, err) = within_30_s(&["ls", &repo]);
        if code != Some(0) {
            assert_eq!(code, Some(1), "{file}: {err}");
            assert!(err.contains(&format!("{file:?}")), "{file}: {err}");
            assert!(err.contains("not a regular file"), "{file}: {err}");
            refused.push(file.clone());
        }
        std::fs::remove_file(&at).unwrap();
        std::fs::write(&at, kept).unwrap();
    }
    // The branch file and the snapshot it names (not the repository's first one).
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert_eq!(refused[0], "repo");
}

#[test]
fn messages_name_the_tag_and_branch_but_no_other_query_value() {
    let dir = tempfile::tempdir().unwrap();
    let src = source(dir.path());
    let repo = format!("icechunk://{}", s(&dir.path().join("repo")));
    ok(&["copy", &src, &repo, "--commit", "copy a"]);
    ok(&["tag", &repo, "run 1"]);
    assert_eq!(
        ok(&["dump", &format!("{repo}?tag=run%201"), "a"]),
        ok(&["dump", &src, "a"])
    );
    let err = fails(&["dump", &format!("{repo}?tag=no%20such%20tag"), "a"], 1);
    assert!(err.contains("?tag=no%20such%20tag"), "{err}");
    let err = fails(
        &["dump", &format!("{repo}?branch=gone&token=s3cr3t"), "a"],
        1,
    );
    assert!(!err.contains("s3cr3t"), "{err}");
    assert_eq!(
        fails(&["log", &format!("{repo}?tag=v1&token=s3cr3t")], 1),
        format!(
            "zarrtool: invalid argument: \"{repo}?tag=v1&token=***\": unknown query \"token\" \
             (known: branch, tag, snapshot)\n"
        )
    );
    // A relative path is refused, saying the path must be absolute and how to write it.
    assert_eq!(
        fails(&["log", "icechunk:relpath?tag=v1&token=s3cr3t"], 1),
        "zarrtool: invalid argument: \"icechunk:relpath?tag=v1&token=***\": the repository \
         path must be absolute (icechunk:///abs/path, icechunk+s3://bucket/prefix)\n"
    );
    let err = fails(&["tag", &repo, ""], 1);
    assert!(err.contains("no URL could open it"), "{err}");
}
