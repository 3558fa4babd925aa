//! The Debian package and its systemd units (issue 14 item 2): the example configs it ships
//! parse; as root, `cargo deb` builds it from the tested binary, its file list is exactly the
//! expected one, `systemd-analyze verify` accepts the installed units, the installed binary
//! runs, its `down` cleans up after a killed shaper in a network namespace, and purging removes
//! everything.
//!
//! The root test needs `cargo-deb` (`scripts/install-deps` installs it as root), `dpkg` and
//! `systemd-analyze`; without them it skips, and under `CI=true` it fails instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use bauxite_sys::{ChildGuard, Netns, root_or_skip, unique_name};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const PACKAGE: &str = "bauxite";
const INSTALLED: &str = "/usr/bin/bauxite";
const UNITS: [&str; 3] = ["bauxite@.service", "bauxite-bridge.service", "bauxite-reflect.service"];

#[test]
fn the_shipped_example_configs_are_valid() {
    let etc = repo().join("packaging/etc");
    bauxite_core::load_profile(&etc.join("example.yaml")).expect("example.yaml");
    let bridge = bauxite_bridge::load(&etc.join("bridge.yaml")).expect("bridge.yaml");
    assert_eq!(bridge.metrics, None, "metrics stay off until asked for");
    let env = std::fs::read_to_string(etc.join("reflect.env")).unwrap();
    assert!(env.lines().any(|l| l.starts_with("BAUXITE_REFLECT_ARGS=")), "{env}");
}

fn run(what: &str, cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The man pages the package ships: every page `scripts/gen-reference` wrote.
fn man_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(repo().join("packaging/man"))
        .expect("packaging/man")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert!(pages.contains(&"bauxite.1".to_string()) && pages.contains(&"bauxite-up.1".to_string()), "{pages:?}");
    pages
}

/// The example profiles (`examples/profiles/*.yaml`, checked by the example_profiles test).
fn example_profiles() -> Vec<String> {
    let names: Vec<String> = std::fs::read_dir(repo().join("examples/profiles"))
        .expect("examples/profiles")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.len() >= 4 && names.iter().all(|n| n.ends_with(".yaml")), "{names:?}");
    names
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every installed man page renders with `man -l` (its NAME names the command), and the bash
/// completion registers itself for `bauxite`.
fn the_installed_man_pages_and_completions_work() {
    for page in man_pages() {
        let dir = Path::new("/usr/share/man/man1");
        let path = [dir.join(format!("{page}.gz")), dir.join(&page)].into_iter().find(|p| p.exists());
        let path = path.unwrap_or_else(|| panic!("{page} is not installed"));
        let out = run("man -l", Command::new("man").arg("-l").arg(&path).env("MANWIDTH", "80").env("MANPAGER", "cat"));
        let rendered = text(&out);
        let name = page.trim_end_matches(".1");
        assert!(rendered.contains("NAME") && rendered.contains(name), "man -l {}: {rendered}", path.display());
    }
    let script = "source /usr/share/bash-completion/completions/bauxite && complete -p bauxite";
    let out = run("bash completion", Command::new("bash").args(["-c", script]));
    assert!(text(&out).contains("bauxite"), "{}", text(&out));
}

/// Whether the tools are here; panics under CI=true if not.
fn tools_or_skip(test: &str) -> bool {
    let missing: Vec<&str> =
        [("cargo-deb", &["deb", "--version"][..]), ("dpkg", &[]), ("systemd-analyze", &[]), ("man", &[])]
            .into_iter()
            .filter(|(tool, args)| {
                let mut cmd = if *tool == "cargo-deb" { Command::new(cargo()) } else { Command::new(tool) };
                let args: &[&str] = if args.is_empty() { &["--version"] } else { args };
                !cmd.args(args).output().is_ok_and(|o| o.status.success())
            })
            .map(|(tool, _)| tool)
            .collect();
    if missing.is_empty() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} needs {missing:?} (scripts/install-deps installs them), and CI=true: not a skip");
    }
    eprintln!("skipping {test}: missing {missing:?}; run scripts/install-deps as root");
    false
}

/// The lines of `systemd-analyze verify`'s output that are about Bauxite's units. It also
/// loads every unit on the machine that ours name or that share a target with them, and
/// prints what it dislikes in those, each line starting with that unit file's path (Debian's
/// `irtt` package: `/lib/systemd/system/irtt.service:9: Special user nobody configured, this
/// is not safe!`). Those are another package's business; every other line counts, whether it
/// names our file, our unit, or nothing.
fn own_warnings(output: &str) -> Vec<&str> {
    let foreign = |line: &str| {
        line.starts_with('/')
            && line.split_once(':').is_some_and(|(path, _)| {
                !Path::new(path).file_name().and_then(|f| f.to_str()).is_some_and(|f| f.starts_with(PACKAGE))
            })
    };
    output.lines().filter(|l| !l.trim().is_empty() && !foreign(l)).collect()
}

#[test]
fn only_our_units_warnings_count() {
    let output = "/lib/systemd/system/irtt.service:9: Special user nobody configured, this is not safe!\n\
        /lib/systemd/system/bauxite@eth0.service:12: Unknown key name 'Foo' in section 'Service', ignoring.\n\
        \n\
        bauxite-reflect.service: Command /usr/bin/bauxite is not executable: No such file or directory\n\
        Failed to load unit: something without a path\n";
    assert_eq!(
        own_warnings(output),
        [
            "/lib/systemd/system/bauxite@eth0.service:12: Unknown key name 'Foo' in section 'Service', ignoring.",
            "bauxite-reflect.service: Command /usr/bin/bauxite is not executable: No such file or directory",
            "Failed to load unit: something without a path",
        ]
    );
    assert!(own_warnings("/lib/systemd/system/irtt.service:9: not safe\n").is_empty());
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn installed() -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", PACKAGE])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// Purges the package when the test ends, however it ends.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        let _ = Command::new("dpkg").args(["--purge", PACKAGE]).output();
    }
}

/// Builds the package from the binary this test run built (`--no-build`, the dev profile,
/// stripped, gzip: about 3 s instead of a release build's minutes).
fn build_deb(out: &Path) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_bauxite"));
    let target_dir = bin.parent().and_then(Path::parent).expect("target/<profile>/bauxite");
    run(
        "cargo deb",
        Command::new(cargo())
            .current_dir(repo())
            .env("CARGO_TARGET_DIR", target_dir)
            .args(["deb", "-p", "bauxite", "--no-build", "--profile", "dev", "--strip", "-Z", "gz", "--fast", "-o"])
            .arg(out),
    );
    let debs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "{debs:?}");
    debs[0].clone()
}

/// The files (not directories) in the package, as absolute paths.
fn file_list(deb: &Path) -> Vec<String> {
    let out = run("dpkg-deb -c", Command::new("dpkg-deb").arg("-c").arg(deb));
    let mut files: Vec<String> = text(&out)
        .lines()
        .filter(|l| !l.starts_with('d'))
        .filter_map(|l| l.split_whitespace().last())
        .map(|p| p.trim_start_matches('.').to_string())
        .collect();
    files.sort();
    files
}

/// Starts the installed `bauxite up` on `iface` in `ns`, waits until it runs, then kills it
/// (SIGKILL: no cleanup of its own), as a crashed service would be.
fn crash_a_shaper(ns: &Netns, iface: &str) {
    let mut daemon = ChildGuard::new(
        ns.command(INSTALLED, &["up", "--iface", iface, "--rate", "10mbit"]).spawn().expect("start bauxite up"),
        Duration::from_secs(10),
    );
    // A loaded 2-core machine attaches in well under a second; 30 s only bounds a hang.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = ns.command(INSTALLED, &["status", "--iface", iface, "--json"]).output().unwrap();
        if text(&out).contains("\"daemon\": \"running\"") {
            break;
        }
        assert!(daemon.try_wait().unwrap().is_none(), "bauxite up exited: {}", String::from_utf8_lossy(&out.stderr));
        assert!(Instant::now() < deadline, "bauxite up did not come up");
        std::thread::sleep(Duration::from_millis(100));
    }
    daemon.kill().unwrap();
}

#[test]
fn the_deb_installs_verified_units_and_a_binary_whose_down_cleans_up() {
    let test = "packaging_deb";
    if !root_or_skip(test) || !tools_or_skip(test) {
        return;
    }
    if installed() {
        let why = format!("a `{PACKAGE}` package is installed here, and the test would replace and purge it");
        assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "{test}: {why}, and CI=true: not a skip");
        eprintln!("skipping {test}: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(unique_name("deb"));
    std::fs::create_dir_all(&dir).unwrap();
    let deb = build_deb(&dir);

    let mut expected: Vec<String> = [
        "/usr/bin/bauxite",
        "/usr/share/doc/bauxite/README.md",
        "/usr/share/doc/bauxite/copyright",
        "/etc/bauxite/example.yaml",
        "/etc/bauxite/bridge.yaml",
        "/etc/bauxite/reflect.env",
        "/usr/share/doc/bauxite/profile.md",
        "/usr/share/doc/bauxite/metrics.md",
        "/usr/share/bash-completion/completions/bauxite",
        "/usr/share/zsh/vendor-completions/_bauxite",
        "/usr/share/fish/vendor_completions.d/bauxite.fish",
    ]
    .into_iter()
    .map(String::from)
    .chain(UNITS.iter().map(|u| format!("/lib/systemd/system/{u}")))
    .chain(man_pages().iter().map(|page| format!("/usr/share/man/man1/{page}")))
    .chain(example_profiles().iter().map(|name| format!("/usr/share/doc/bauxite/examples/{name}")))
    .collect();
    expected.sort();
    // cargo-deb gzips man pages, as Debian policy asks; either form is the same page.
    let files: Vec<String> = file_list(&deb).into_iter().map(|f| f.trim_end_matches(".gz").to_string()).collect();
    assert_eq!(files, expected);
    let control = text(&run("dpkg-deb -f", Command::new("dpkg-deb").arg("-f").arg(&deb).args(["Package", "Depends"])));
    assert!(control.contains("Package: bauxite") && control.contains("iproute2"), "{control}");

    let _purge = Purge;
    run("dpkg -i", Command::new("dpkg").arg("-i").arg(&deb));
    let version = text(&run("bauxite --version", Command::new(INSTALLED).arg("--version")));
    assert_eq!(version.trim(), format!("bauxite {}", env!("CARGO_PKG_VERSION")));
    the_installed_man_pages_and_completions_work();

    // The installed units, the template as an instance; warnings (an unknown key, say) count.
    let units: Vec<String> =
        ["bauxite@eth0.service", UNITS[1], UNITS[2]].iter().map(|u| format!("/lib/systemd/system/{u}")).collect();
    let verify = run("systemd-analyze verify", Command::new("systemd-analyze").arg("verify").args(&units));
    let output = String::from_utf8_lossy(&verify.stderr);
    let warnings = own_warnings(&output);
    assert!(warnings.is_empty(), "systemd-analyze verify: {warnings:?}");
    let template = std::fs::read_to_string("/lib/systemd/system/bauxite@.service").unwrap();
    for line in [
        "ExecStart=/usr/bin/bauxite up --iface %i --config /etc/bauxite/%i.yaml",
        "ExecStopPost=/usr/bin/bauxite down --iface %i",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "AmbientCapabilities=CAP_NET_ADMIN CAP_BPF CAP_PERFMON",
        "NoNewPrivileges=yes",
        "Restart=on-failure",
    ] {
        assert!(template.lines().any(|l| l == line), "no `{line}` in bauxite@.service");
    }

    // What ExecStopPost does after a crash: the installed `down` removes what a killed shaper
    // left on an interface in a namespace made for this test.
    let ns = Netns::create(&unique_name("pkg")).unwrap();
    let iface = "bxpkg0";
    ns.ip(&["link", "add", iface, "type", "veth", "peer", "name", "bxpkg1"]).unwrap();
    ns.ip(&["link", "set", iface, "up"]).unwrap();
    ns.ip(&["link", "set", "bxpkg1", "up"]).unwrap();
    crash_a_shaper(&ns, iface);
    let down = text(&run("bauxite down", &mut ns.command(INSTALLED, &["down", "--iface", iface])));
    assert!(down.starts_with(&format!("bauxite on {iface}: ")), "{down}");
    let again = text(&run("bauxite down", &mut ns.command(INSTALLED, &["down", "--iface", iface])));
    assert_eq!(again.trim(), format!("nothing of Bauxite's was on {iface}"));
    let qdisc = ns.tc(&["qdisc", "show", "dev", iface]).unwrap();
    assert!(!qdisc.contains("htb"), "{qdisc}");

    run("dpkg --purge", Command::new("dpkg").args(["--purge", PACKAGE]));
    assert!(!installed());
    for gone in [INSTALLED, "/etc/bauxite", "/lib/systemd/system/bauxite@.service"] {
        assert!(!Path::new(gone).exists(), "{gone} left after purge");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
