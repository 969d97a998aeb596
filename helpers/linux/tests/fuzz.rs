//! Fuzz-style test over the seed corpus in helpers/testdata/fuzz/: every
//! seed and thousands of deterministic mutations of the seeds go through
//! the helper's decoder and dispatcher in process; the unmutated seeds also
//! go through the real binary. Nothing may panic, stdout may carry only
//! well-formed frames of JSON-RPC responses, and the exit status must be 0
//! or 2. `make fuzz` keeps mutating, with fresh random seeds, for
//! FUZZTIME.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use deskhand_helper::dispatch::Dispatcher;
use deskhand_helper::server::{Config, Server};
use serde_json::Value;

const MUTATIONS_PER_SEED: usize = 300;

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fuzz");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("reading helpers/testdata/fuzz")
        .map(|e| e.unwrap().path())
        // Plain files only: the Go side may keep its own corpus layout in
        // subdirectories.
        .filter(|p| p.is_file() && p.extension().map_or(true, |x| x != "md"))
        .collect();
    files.sort();
    let seeds: Vec<_> = files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    assert!(
        seeds
            .iter()
            .filter(|(name, _)| name.starts_with("rust-"))
            .count()
            >= 10,
        "the rust- seeds are missing from helpers/testdata/fuzz"
    );
    seeds
}

/// Splits helper output into frames, failing on anything else.
fn parse_output(out: &[u8]) -> Result<Vec<Value>, String> {
    let mut rest = out;
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let end = rest
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| {
                format!(
                    "no header end in {:?}",
                    String::from_utf8_lossy(&rest[..rest.len().min(80)])
                )
            })?;
        let header = std::str::from_utf8(&rest[..end]).map_err(|e| e.to_string())?;
        let len: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("bad header {header:?}"))?;
        let body = rest
            .get(end + 4..end + 4 + len)
            .ok_or_else(|| format!("frame of {len} bytes cut short"))?;
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("body is not JSON: {e}"))?;
        if v["jsonrpc"] != "2.0"
            || (v.get("result").is_some() == v.get("error").is_some())
            || v.get("id").is_none()
        {
            return Err(format!("not a JSON-RPC response: {v}"));
        }
        frames.push(v);
        rest = &rest[end + 4 + len..];
    }
    Ok(frames)
}

/// Deterministic xorshift, so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(v.len() + 1);
                v.insert(i, rng.next() as u8);
            }
            2 if !v.is_empty() => {
                let i = rng.below(v.len());
                v.remove(i);
            }
            3 => v.truncate(rng.below(v.len() + 1)),
            4 => {
                // Splice in part of another seed.
                let at = rng.below(v.len() + 1);
                let from = rng.below(other.len() + 1);
                let to = from + rng.below(other.len() - from + 1);
                v.splice(at..at, other[from..to].iter().copied());
            }
            5 => {
                // Interesting bytes at a random place.
                let tokens: [&[u8]; 6] = [
                    b"\r\n",
                    b"\r\n\r\n",
                    b"Content-Length: 0",
                    b"{}",
                    b"\"\\u0000\"",
                    b"9999999",
                ];
                let t = tokens[rng.below(tokens.len())];
                let at = rng.below(v.len() + 1);
                v.splice(at..at, t.iter().copied());
            }
            _ if !v.is_empty() => {
                // Replace a digit run's last digit, to shift lengths.
                let i = rng.below(v.len());
                if v[i].is_ascii_digit() {
                    v[i] = b'0' + rng.below(10) as u8;
                }
            }
            _ => {}
        }
    }
    v
}

fn serve_in_process(input: &[u8]) -> (u8, Vec<u8>) {
    deskhand_helper::log::set_level(deskhand_helper::log::Level::Error);
    let mut server = Dispatcher::new(Server::new(Config {
        display: Some("/nonexistent/deskhand-fuzz:0".into()),
        no_shm: true,
    }));
    server.faults = false;
    let mut out = Vec::new();
    let code = server
        .serve(std::io::Cursor::new(input.to_vec()), &mut out)
        .expect("serving from memory cannot fail on I/O");
    (code, out)
}

/// Feeds one input through the in-process server and checks what came out.
fn check_one(name: &str, round: usize, input: &[u8]) -> Result<(), String> {
    let (code, out) = serve_in_process(input);
    if code != 0 && code != 2 {
        return Err(format!("{name} mutation {round}: exit status {code}"));
    }
    parse_output(&out).map(drop).map_err(|why| {
        format!(
            "{name} mutation {round}: bad output: {why}\ninput: {:?}",
            String::from_utf8_lossy(input)
        )
    })
}

/// Keeps an input that failed as a new seed, so every later run (and the
/// binary test) replays it.
fn keep_as_seed(input: &[u8]) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    input.hash(&mut h);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/fuzz")
        .join(format!("rust-found-{:016x}.bin", h.finish()));
    std::fs::write(&path, input).expect("writing the failing input to the corpus");
    path
}

/// The seeds and MUTATIONS_PER_SEED deterministic mutations of each; under
/// `make fuzz` (DESKHAND_FUZZ_TIME set), more rounds with fresh random
/// seeds until the time is up, keeping any failing input as a new seed.
#[test]
fn seeds_and_mutations_in_process() {
    let seeds = seeds();
    let deadline = common::fuzz::budget().map(|b| Instant::now() + b);
    let mut rng_seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut cases = 0;
    loop {
        let mut rng = Rng(rng_seed);
        for (i, (name, seed)) in seeds.iter().enumerate() {
            let other = &seeds[(i + 1) % seeds.len()].1;
            for round in 0..=MUTATIONS_PER_SEED {
                let input = if round == 0 {
                    seed.clone()
                } else {
                    mutate(&mut rng, seed, other)
                };
                if let Err(why) = check_one(name, round, &input) {
                    if deadline.is_some() {
                        let kept = keep_as_seed(&input);
                        panic!(
                            "{why}\n(rng seed {rng_seed:#x}; kept as {})",
                            kept.display()
                        );
                    }
                    panic!("{why}");
                }
                cases += 1;
            }
        }
        match deadline {
            Some(d) if Instant::now() < d => {
                rng_seed = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1;
            }
            _ => break,
        }
    }
    eprintln!("fed {cases} inputs from {} seeds", seeds.len());
}

#[test]
fn seeds_through_the_binary() {
    for (name, seed) in seeds() {
        let mut child = Command::new(common::BINARY)
            .env_remove("DESKHAND_HELPER_FAULTS")
            // No X server: the seeds test the protocol layer, fast.
            .env("DISPLAY", "/nonexistent/deskhand-fuzz:0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The helper may exit before reading everything (exit 2); ignore
        // the broken pipe that causes.
        let _ = stdin.write_all(&seed);
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(2),
            "{name}: exit {:?}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let frames =
            parse_output(&out.stdout).unwrap_or_else(|why| panic!("{name}: bad stdout: {why}"));
        if code == Some(2) {
            // Framing was lost: the last answer says so, with id null.
            let last = frames
                .last()
                .unwrap_or_else(|| panic!("{name}: exit 2 without an answer"));
            assert_eq!(last["id"], Value::Null, "{name}: {last}");
            let c = last["error"]["code"].as_i64();
            assert!(c == Some(-32700) || c == Some(-32600), "{name}: {last}");
        }
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            let level = line.split(' ').next().unwrap_or("");
            assert!(
                ["DEBUG", "INFO", "WARN", "ERROR"].contains(&level),
                "{name}: stderr line without a level: {line:?}"
            );
        }
    }
}
