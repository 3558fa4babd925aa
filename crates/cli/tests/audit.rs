//! `bauxite audit` on files that cannot be audited: exit 2 and a message naming the
//! file, never a panic (recordings that fail their checks exit 1: see tests/demo.rs).

use std::process::Command;

#[test]
fn a_file_that_cannot_be_audited_exits_2_naming_it() {
    let dir = std::env::temp_dir().join(format!("bauxite-audit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("garbage.mcap", b"definitely not MCAP".to_vec(), "not an MCAP file"),
        ("empty.mcap", Vec::new(), "not an MCAP file"),
    ];
    for (name, bytes, message) in cases {
        let file = dir.join(name);
        std::fs::write(&file, bytes).unwrap();
        let run = Command::new(env!("CARGO_BIN_EXE_bauxite")).arg("audit").arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(name) && stderr.contains(message), "{name}: {stderr}");
    }
    let missing = dir.join("missing.mcap");
    let run = Command::new(env!("CARGO_BIN_EXE_bauxite")).arg("audit").arg(&missing).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("missing.mcap"));
    std::fs::remove_dir_all(dir).ok();
}
