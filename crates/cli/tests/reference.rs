//! The documentation made from the code: the checked-in reference pages, man pages and
//! completions are exactly what `bauxite reference` writes from this binary, and every link
//! of README and the guide resolves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (this crate is `crates/cli`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository root")
}

/// Every file under `dir`, by its path relative to `dir`.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.map(|e| e.expect("a directory entry")) {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).expect("a readable file");
                out.insert(path.strip_prefix(root).expect("under the root").to_path_buf(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn the_checked_in_reference_is_what_the_code_generates() {
    let out = std::env::temp_dir().join(format!("bauxite-reference-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_bauxite"))
        .args(["reference", "--out"])
        .arg(&out)
        .status()
        .expect("running bauxite reference");
    assert!(status.success(), "bauxite reference failed");
    let mut drift = Vec::new();
    for dir in ["docs/reference", "packaging/man", "packaging/completions"] {
        let generated = tree(&out.join(dir));
        let checked_in = tree(&repo().join(dir));
        assert!(!generated.is_empty(), "bauxite reference wrote nothing under {dir}");
        for (path, bytes) in &generated {
            match checked_in.get(path) {
                None => drift.push(format!("{dir}/{} is missing", path.display())),
                Some(old) if old != bytes => drift.push(format!("{dir}/{} differs", path.display())),
                Some(_) => {}
            }
        }
        for path in checked_in.keys().filter(|p| !generated.contains_key(*p)) {
            drift.push(format!("{dir}/{} is no longer generated", path.display()));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(drift.is_empty(), "the reference drifted from the code; run scripts/gen-reference:\n{}", drift.join("\n"));
}

/// The generated pages say what the code says: a key, a default and an option picked from
/// each, so that a generator that wrote empty tables would fail.
#[test]
fn the_reference_pages_hold_keys_defaults_and_options() {
    let profile = std::fs::read_to_string(repo().join("docs/reference/profile.md")).expect("profile.md");
    assert!(profile.contains("## `auto_rate`"), "{profile}");
    assert!(profile.contains("| `probe_hold` | `duration` | `\"1s\"` |"), "{profile}");
    assert!(profile.contains("| `headroom` | number | `0.95` | 0.5 to 1.0 |"), "{profile}");
    let cli = std::fs::read_to_string(repo().join("docs/reference/cli.md")).expect("cli.md");
    assert!(cli.contains("## `bauxite up`"), "{cli}");
    assert!(cli.contains("| `--attach <auto\\|tcx\\|clsact>` | `auto` |"), "{cli}");
    assert!(cli.contains("## `bauxite sim robot`"), "{cli}");
    assert!(!cli.contains("link-reap"), "a hidden command is documented: {cli}");
}

/// A relative link of a Markdown file: the target path (empty for the file itself) and the
/// anchor, if any.
fn relative_links(text: &str) -> Vec<(String, Option<String>)> {
    let mut links = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            rest = &after[end..];
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p.to_string(), Some(a.to_string())),
                None => (target.to_string(), None),
            };
            links.push((path, anchor));
        }
    }
    links
}

/// The anchors mdBook and GitHub give a file's headings.
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        out.push(
            heading
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_lowercase().next().unwrap_or(c)),
                    _ => None,
                })
                .collect(),
        );
    }
    out
}

#[test]
fn every_link_of_readme_and_the_guide_resolves() {
    let root = repo();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    files.extend(
        tree(&root.join("docs"))
            .into_keys()
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .map(|p| root.join("docs").join(p)),
    );
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (path, anchor) in relative_links(&text) {
            let target = if path.is_empty() { file.clone() } else { file.parent().expect("a parent").join(&path) };
            let shown = format!(
                "{}: {path}{}",
                file.strip_prefix(&root).unwrap_or(file).display(),
                anchor.as_ref().map(|a| format!("#{a}")).unwrap_or_default()
            );
            if !target.exists() {
                broken.push(format!("{shown}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor.filter(|_| target.extension().is_some_and(|e| e == "md")) {
                let text = std::fs::read_to_string(&target).expect("a readable page");
                if !anchors(&text).contains(&anchor) {
                    broken.push(format!("{shown}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_finds_links_and_anchors() {
    let text = "see [a](docs/a.md#the-part) and [b](https://x.org) and [c](#local)\n```\n[no](x.md)\n```\n";
    assert_eq!(
        relative_links(text),
        vec![("docs/a.md".into(), Some("the-part".into())), (String::new(), Some("local".into()))]
    );
    assert_eq!(anchors("# The part\n## `auto_rate.probe_hold`\n"), vec!["the-part", "auto_rateprobe_hold"]);
}

/// Every chapter of the guide is in its table of contents, so `mdbook build` renders it.
#[test]
fn every_page_of_the_guide_is_in_its_summary() {
    let docs = repo().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).expect("docs/SUMMARY.md");
    let listed: Vec<String> = relative_links(&summary).into_iter().map(|(p, _)| p).collect();
    let missing: Vec<String> = tree(&docs)
        .into_keys()
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p != Path::new("SUMMARY.md"))
        .map(|p| p.display().to_string())
        .filter(|p| !listed.contains(p))
        .collect();
    assert!(missing.is_empty(), "pages missing from docs/SUMMARY.md: {missing:?}");
}

/// `mdbook`, on PATH or where `cargo install` puts it (`scripts/install-deps`).
fn mdbook() -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    [Some(PathBuf::from("mdbook")), cargo_home.map(|h| h.join("bin/mdbook"))]
        .into_iter()
        .flatten()
        .find(|m| Command::new(m).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// The guide builds: every chapter of SUMMARY.md exists (`create-missing = false`), and the
/// generated reference pages are part of it.
#[test]
fn the_guide_builds_with_mdbook() {
    let Some(mdbook) = mdbook() else {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "mdbook is missing (scripts/install-deps installs it), and CI=true: not a skip"
        );
        eprintln!("skipping the_guide_builds_with_mdbook: no mdbook; run scripts/install-deps");
        return;
    };
    let out = std::env::temp_dir().join(format!("bauxite-book-{}", std::process::id()));
    let run = Command::new(mdbook)
        .arg("build")
        .arg(repo().join("docs"))
        .arg("--dest-dir")
        .arg(&out)
        .output()
        .expect("mdbook build");
    let built = out.join("reference/profile.html").exists() && out.join("index.html").exists();
    let _ = std::fs::remove_dir_all(&out);
    assert!(run.status.success(), "mdbook build failed:\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(built, "mdbook build wrote no reference/profile.html or index.html");
}
