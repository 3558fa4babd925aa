//! A small fuzzing harness for stable Rust, and the fuzz targets' checked-in corpora.
//!
//! [`run`] feeds a target every file of its corpus (`corpus/<target>/`), then random inputs
//! until its budget is spent: one second under `cargo test`, as long as asked for with
//! `BAUXITE_FUZZ_SECONDS`. Random bytes almost never make a YAML file or an MCAP chunk that
//! gets past the first check, so each random input also runs as a list of edits (bit flips,
//! byte writes, cuts, copies, inserted tokens) to a corpus entry it picks ([`mutate`]),
//! which keeps the search near well-formed input, where the interesting bugs are.
//!
//! No fuzzing crate is used: the ones for stable Rust pin old versions of common crates
//! (bolero 0.13 pins `indexmap =2.11.2`, which would hold back eight of the workspace's
//! dependencies), and libFuzzer needs nightly. A failure names the target and the corpus
//! file, or the seed that replays the random input (`BAUXITE_FUZZ_REPLAY`).
#![deny(missing_docs)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The checked-in corpus of `target`, in file-name order, with the files' names.
pub fn corpus_files(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("corpus entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f.file_name().expect("a file").to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// The checked-in corpus of `target`, in file-name order.
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    corpus_files(target).into_iter().map(|(_, bytes)| bytes).collect()
}

/// Where the corpus of `target` lives: `crates/fuzz/corpus/<target>/`.
pub fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target)
}

/// How many random inputs a target runs after its corpus, and from which seed.
///
/// By default (what `cargo test` and CI run) the same [`Budget::DEFAULT_ITERATIONS`]
/// inputs from the same seed every time, however fast the machine: a test passes or
/// fails for its inputs, never by chance. A long run asks for time instead
/// (`BAUXITE_FUZZ_SECONDS`) and then draws a new seed each run, unless
/// `BAUXITE_FUZZ_SEED` fixes it; `BAUXITE_FUZZ_ITERATIONS` caps the inputs.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Time for random inputs, after the corpus.
    pub time: Duration,
    /// Random inputs at most.
    pub iterations: u64,
    /// The seed the inputs' seeds are drawn from.
    pub seed: u64,
}

impl Budget {
    /// Random inputs per target in a default run: about a second of the slowest target
    /// (the MCAP reader) on a quiet machine.
    pub const DEFAULT_ITERATIONS: u64 = 2000;
    /// The default runs' seed.
    pub const DEFAULT_SEED: u64 = 2026;

    /// The budget from the environment (see the type's documentation).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
        let seed = std::env::var("BAUXITE_FUZZ_SEED").ok().and_then(|s| s.parse().ok());
        match var("BAUXITE_FUZZ_SECONDS") {
            None => Self {
                time: Duration::MAX,
                iterations: var("BAUXITE_FUZZ_ITERATIONS").map_or(Self::DEFAULT_ITERATIONS, |n| n as u64),
                seed: seed.unwrap_or(Self::DEFAULT_SEED),
            },
            Some(seconds) => Self {
                time: Duration::from_secs_f64(seconds.clamp(0.0, 1e9)),
                iterations: var("BAUXITE_FUZZ_ITERATIONS").map_or(u64::MAX, |n| n as u64),
                seed: seed.unwrap_or_else(|| {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(1, |d| d.as_nanos() as u64)
                }),
            },
        }
    }
}

/// What one run of a target did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// Corpus files run.
    pub corpus: u64,
    /// Random inputs run (each also as edits to a corpus entry, so twice the checks).
    pub random: u64,
}

/// Largest random input, in bytes.
const MAX_LEN: usize = 4096;

/// Runs `check` on `target`'s corpus, then on random inputs and their edits of the corpus
/// (edits insert `tokens`; `check` is told the [`Mutation`] then) within `budget`. A panic in `check` fails the run, naming the
/// corpus file or the seed that replays the input (`BAUXITE_FUZZ_REPLAY=<seed>` runs just
/// that input). Prints and returns how many inputs were tried.
pub fn run(target: &str, tokens: &[&[u8]], budget: Budget, mut check: impl FnMut(&[u8], Option<&Mutation>)) -> Report {
    let files = corpus_files(target);
    let seeds: Vec<Vec<u8>> = files.iter().map(|(_, bytes)| bytes.clone()).collect();
    let mut attempt = |what: &str, input: &[u8], edits: Option<&Mutation>| {
        if catch_unwind(AssertUnwindSafe(|| check(input, edits))).is_err() {
            // Per process: runs in other worktrees must not read or remove each other's.
            let saved = std::env::temp_dir().join(format!("bauxite-fuzz-{target}-{}.failure", std::process::id()));
            let _ = std::fs::write(&saved, input);
            let shown = &input[..input.len().min(512)];
            panic!(
                "fuzz target {target} failed on {what} ({} bytes, saved to {}): {}",
                input.len(),
                saved.display(),
                shown.escape_ascii()
            );
        }
    };
    let started = Instant::now();
    if let Some(seed) = std::env::var("BAUXITE_FUZZ_REPLAY").ok().and_then(|s| s.parse().ok()) {
        random_case(target, &seeds, tokens, seed, &mut attempt);
        return Report { corpus: 0, random: 1 };
    }
    for (name, bytes) in &files {
        attempt(&format!("corpus/{target}/{name}"), bytes, None);
    }
    let mut master = Rng::new(budget.seed);
    let mut random = 0;
    while random < budget.iterations && started.elapsed() < budget.time {
        random_case(target, &seeds, tokens, master.next(), &mut attempt);
        random += 1;
    }
    let report = Report { corpus: files.len() as u64, random };
    println!(
        "fuzz {target}: {} corpus files, {random} random inputs (each also as edits to a corpus file) in {:.1} s, no failure",
        report.corpus,
        started.elapsed().as_secs_f64()
    );
    report
}

/// The random input of `seed`, as it is and as edits to a corpus entry.
fn random_case(
    target: &str,
    seeds: &[Vec<u8>],
    tokens: &[&[u8]],
    seed: u64,
    attempt: &mut impl FnMut(&str, &[u8], Option<&Mutation>),
) {
    let mut rng = Rng::new(seed);
    // Mostly short inputs: a length of up to 2^k bytes for a random k.
    let len = (rng.next() as usize % (1 << (rng.next() % 13))).min(MAX_LEN);
    let input: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
    let what = format!("the random input of BAUXITE_FUZZ_REPLAY={seed} (target {target})");
    attempt(&what, &input, None);
    if let Some(m) = mutate(seeds, tokens, &input) {
        attempt(&format!("{what}, as edits {:?} to corpus entry {}", m.edits, m.seed), &m.bytes, Some(&m));
    }
}

/// xorshift64*: fast, and reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// One edit of [`Mutation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Flip one bit.
    FlipBit,
    /// Overwrite one byte.
    SetByte,
    /// Remove up to 64 bytes.
    Delete,
    /// Copy up to 4 KiB of the input to another place (a duplicated record, chunk or key).
    Duplicate,
    /// Insert one of the target's tokens (hostile numbers, YAML punctuation).
    InsertToken,
    /// Cut the input short.
    Truncate,
}

const EDITS: [Edit; 6] =
    [Edit::FlipBit, Edit::SetByte, Edit::Delete, Edit::Duplicate, Edit::InsertToken, Edit::Truncate];

/// A corpus entry with edits applied, and what was done (for the targets' invariants).
#[derive(Clone, Debug)]
pub struct Mutation {
    /// The index of the corpus entry edited.
    pub seed: usize,
    /// The edited bytes.
    pub bytes: Vec<u8>,
    /// The edits, in order.
    pub edits: Vec<Edit>,
}

impl Mutation {
    /// Whether the only edit was one bit flip (a change every CRC must catch).
    pub fn is_one_bit_flip(&self) -> bool {
        self.edits == [Edit::FlipBit]
    }
}

/// Reads `input` as `[seed index] ([edit, position (u16, scaled to the entry's length),
/// argument (u16)])*` and applies it to `seeds[index % len]`; `tokens` are what
/// [`Edit::InsertToken`] inserts. `None` when there are no seeds or no input.
pub fn mutate(seeds: &[Vec<u8>], tokens: &[&[u8]], input: &[u8]) -> Option<Mutation> {
    let (&pick, mut ops) = input.split_first()?;
    if seeds.is_empty() {
        return None;
    }
    let seed = usize::from(pick) % seeds.len();
    let mut bytes = seeds[seed].clone();
    let mut edits = Vec::new();
    while let [kind, p0, p1, a0, a1, rest @ ..] = ops {
        ops = rest;
        let edit = EDITS[usize::from(*kind) % EDITS.len()];
        let scaled = |len: usize| (usize::from(u16::from_le_bytes([*p0, *p1])) * len) >> 16;
        let at = scaled(bytes.len());
        let arg = usize::from(u16::from_le_bytes([*a0, *a1]));
        match edit {
            Edit::FlipBit if at < bytes.len() => bytes[at] ^= 1 << (arg % 8),
            Edit::SetByte if at < bytes.len() => bytes[at] = arg as u8,
            Edit::Delete => {
                let end = (at + 1 + arg % 64).min(bytes.len());
                bytes.drain(at..end);
            }
            Edit::Duplicate => {
                let end = (at + 1 + arg % 4096).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = (arg.wrapping_mul(7919) % (bytes.len() + 1)).max(end);
                bytes.splice(to..to, copy);
            }
            Edit::InsertToken if !tokens.is_empty() => {
                let token = tokens[arg % tokens.len()];
                bytes.splice(at..at, token.iter().copied());
            }
            Edit::Truncate => bytes.truncate(at),
            _ => continue,
        }
        edits.push(edit);
    }
    Some(Mutation { seed, bytes, edits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_input_is_named_with_its_replay_seed() {
        let budget = Budget { time: Duration::from_secs(60), iterations: 10_000, seed: 7 };
        let failure = catch_unwind(|| run("profile", &[], budget, |input, _| assert!(!input.contains(&b'~'))));
        let message = *failure.expect_err("some input holds a `~`").downcast::<String>().unwrap();
        assert!(message.starts_with("fuzz target profile failed on "), "{message}");
        assert!(message.contains("corpus/profile/") || message.contains("BAUXITE_FUZZ_REPLAY="), "{message}");
        let saved = std::env::temp_dir().join(format!("bauxite-fuzz-profile-{}.failure", std::process::id()));
        assert!(std::fs::read(&saved).unwrap().contains(&b'~'), "the failing input is saved");
        std::fs::remove_file(saved).unwrap();
        let quiet = run("profile", &[], Budget { time: Duration::from_secs(60), iterations: 50, seed: 7 }, |_, _| {});
        assert_eq!(quiet.random, 50);
        assert!(quiet.corpus >= 3);
    }

    #[test]
    fn a_default_run_tries_the_same_inputs_every_time() {
        let inputs = || {
            let mut seen = Vec::new();
            let budget = Budget { time: Duration::MAX, iterations: 20, seed: Budget::DEFAULT_SEED };
            run("profile", &[], budget, |input, _| seen.push(input.to_vec()));
            seen
        };
        let first = inputs();
        assert!(first.len() > 20, "the corpus and the random inputs");
        assert_eq!(first, inputs());
    }

    #[test]
    fn edits_apply_where_the_input_says() {
        let seeds = vec![b"abcdefgh".to_vec()];
        // Flip bit 0 of the byte at position 0x8000/0x10000 of 8 = 4 ('e' -> 'd').
        let m = mutate(&seeds, &[], &[0, 0, 0x00, 0x80, 0, 0]).unwrap();
        assert_eq!((m.bytes.as_slice(), m.is_one_bit_flip()), (&b"abcddfgh"[..], true));
        // Insert the second token at 0, then cut at a quarter of the 10 bytes.
        let m = mutate(&seeds, &[b"X", b"YZ"], &[0, 4, 0, 0, 1, 0, 5, 0x00, 0x40, 0, 0]).unwrap();
        assert_eq!(m.bytes, b"YZ");
        assert_eq!(m.edits, [Edit::InsertToken, Edit::Truncate]);
        // Duplicate "cd" to after itself or later.
        let m = mutate(&seeds, &[], &[0, 3, 0x00, 0x40, 1, 0]).unwrap();
        assert_eq!(m.bytes.len(), 10);
        assert!(m.bytes.windows(4).any(|w| w == b"cdcd") || m.bytes.ends_with(b"cd"), "{:?}", m.bytes);
        assert!(mutate(&seeds, &[], &[]).is_none());
    }
}
