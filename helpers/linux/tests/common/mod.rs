//! Shared by the integration tests: drive the real helper binary over pipes
//! and check that stdout carries nothing but well-formed frames.

#![allow(dead_code)]

pub mod xvfb;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BINARY: &str = env!("CARGO_BIN_EXE_deskhand-helper");

/// Whether tests that need an X display can run. With no DISPLAY this
/// returns false and says why, except under CI, where it panics: a CI run
/// that silently skips the display tests proves nothing.
pub fn have_display(test: &str) -> bool {
    if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{test} needs an X display, and CI is set but DISPLAY is not: run the tests under Xvfb (make rust-test does)");
    }
    eprintln!("skipping {test}: DISPLAY is not set (start Xvfb and a window manager to run it)");
    false
}

/// What the stdout reader saw.
#[derive(Debug)]
pub enum Output {
    Frame(Value),
    /// Bytes that are not a well-formed frame: always a failure.
    Garbage(String),
    Eof,
}

/// A running helper.
pub struct Helper {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Output>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
}

impl Helper {
    pub fn spawn(env: &[(&str, &str)]) -> Helper {
        let mut cmd = Command::new(BINARY);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("DESKHAND_HELPER_FAULTS")
            .env_remove("DESKHAND_HELPER_NO_SHM")
            .env("DESKHAND_HELPER_LOG", "debug");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {BINARY}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, frames) = mpsc::channel();
        thread::spawn(move || read_frames(BufReader::new(stdout), tx));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Helper {
            stdin: child.stdin.take(),
            child,
            frames,
            stderr,
            next_id: 0,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        // The helper may already have exited (that is what some tests
        // expect), so a broken pipe is not a failure here.
        let _ = stdin.write_all(bytes).and_then(|_| stdin.flush());
    }

    pub fn send_value(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend(body);
        self.send_raw(&frame);
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next thing the helper wrote, or None after `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Option<Output> {
        match self.frames.recv_timeout(timeout) {
            Ok(r) => Some(r),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Output::Eof),
        }
    }

    /// Sends a request and returns its response (panics on anything else).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send_value(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        match self.next(Duration::from_secs(30)) {
            Some(Output::Frame(v)) => {
                assert_eq!(v["id"], id, "response id for {method}: {v}");
                v
            }
            other => panic!(
                "{method}: got {other:?} instead of a response\nstderr:\n{}",
                self.stderr()
            ),
        }
    }

    /// Like `call`, but returns the result and panics on an error response.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let mut v = self.call(method, params);
        match v.get_mut("result") {
            Some(r) => r.take(),
            None => panic!("{method} failed: {v}\nstderr:\n{}", self.stderr()),
        }
    }

    pub fn handshake(&mut self) -> Value {
        self.result(
            "handshake",
            serde_json::json!({"protocol_versions": [1], "client": "tests"}),
        )
    }

    /// Waits for the helper to exit.
    pub fn wait(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.stdin = None;
        if self.wait(Duration::from_secs(2)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads strictly: every message must be `Content-Length: N\r\n\r\n` plus N
/// bytes of JSON, because the supervisor treats anything else as a fault.
fn read_frames<R: BufRead>(mut r: R, tx: mpsc::Sender<Output>) {
    loop {
        let mut header = Vec::new();
        match r.read_until(b'\n', &mut header) {
            Ok(0) => {
                let _ = tx.send(Output::Eof);
                return;
            }
            Ok(_) => {}
            Err(e) => {
                let _ = tx.send(Output::Garbage(format!("reading stdout: {e}")));
                return;
            }
        }
        let text = String::from_utf8_lossy(&header).into_owned();
        let len = text
            .strip_prefix("Content-Length: ")
            .and_then(|rest| rest.strip_suffix("\r\n"))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok());
        let Some(len) = len else {
            let mut rest = String::new();
            let _ = r.read_to_string(&mut rest);
            let _ = tx.send(Output::Garbage(format!("{text}{rest}")));
            return;
        };
        let mut blank = [0u8; 2];
        if r.read_exact(&mut blank).is_err() || &blank != b"\r\n" {
            let _ = tx.send(Output::Garbage(format!(
                "{text} not followed by a blank line"
            )));
            return;
        }
        let mut body = vec![0; len];
        if let Err(e) = r.read_exact(&mut body) {
            let _ = tx.send(Output::Garbage(format!(
                "frame body of {len} bytes cut short: {e}"
            )));
            return;
        }
        match serde_json::from_slice(&body) {
            Ok(v) => {
                if tx.send(Output::Frame(v)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Output::Garbage(format!(
                    "frame body is not JSON ({e}): {}",
                    String::from_utf8_lossy(&body)
                )));
                return;
            }
        }
    }
}

/// Checks `actual` against a transcript pattern (helpers/testdata/
/// transcripts/README.md) and names the first mismatch by its path.
pub fn matches(pattern: &Value, actual: &Value, path: &str) -> Result<(), String> {
    let fail = |want: &str| Err(format!("{path}: want {want}, got {}", shorten(actual)));
    match pattern {
        Value::String(p) if p.starts_with("$$") => {
            if actual.as_str() == Some(&p[1..]) {
                Ok(())
            } else {
                fail(&format!("{:?}", &p[1..]))
            }
        }
        Value::String(p) if p.starts_with('$') => {
            let ok = match p.as_str() {
                "$int" => is_int(actual),
                "$number" => actual.is_number(),
                "$string" => actual.is_string(),
                "$bool" => actual.is_boolean(),
                "$null" => actual.is_null(),
                "$any" => true,
                "$object" => actual.is_object(),
                "$array" => actual.is_array(),
                "$int_or_null" => actual.is_null() || is_int(actual),
                "$string_or_null" => actual.is_null() || actual.is_string(),
                "$object_or_null" => actual.is_null() || actual.is_object(),
                "$base64" => actual.as_str().is_some_and(is_base64),
                other => return Err(format!("{path}: unknown matcher {other:?} in the pattern")),
            };
            if ok {
                Ok(())
            } else {
                fail(p)
            }
        }
        Value::Object(p) if p.len() == 1 && p.contains_key("$each") => {
            let Value::Array(items) = actual else {
                return fail("an array");
            };
            for (i, item) in items.iter().enumerate() {
                matches(&p["$each"], item, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Value::Object(p) => {
            let Value::Object(a) = actual else {
                return fail("an object");
            };
            for (key, sub) in p {
                match a.get(key) {
                    Some(v) => matches(sub, v, &format!("{path}.{key}"))?,
                    None => {
                        return Err(format!(
                            "{path}: missing key {key:?} in {}",
                            shorten(actual)
                        ))
                    }
                }
            }
            Ok(())
        }
        Value::Array(p) => {
            let Value::Array(a) = actual else {
                return fail("an array");
            };
            if a.len() != p.len() {
                return fail(&format!("an array of {} items", p.len()));
            }
            for (i, (sub, v)) in p.iter().zip(a).enumerate() {
                matches(sub, v, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Value::Number(n) => match (n.as_f64(), actual.as_f64()) {
            (Some(want), Some(got)) if want == got => Ok(()),
            _ => fail(&n.to_string()),
        },
        other => {
            if other == actual {
                Ok(())
            } else {
                fail(&other.to_string())
            }
        }
    }
}

fn is_int(v: &Value) -> bool {
    v.is_i64() || v.is_u64()
}

fn is_base64(s: &str) -> bool {
    use base64::Engine as _;
    !s.is_empty() && base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

/// A value for a failure message, with long strings (image data) cut.
pub fn shorten(v: &Value) -> String {
    fn cut(v: &Value) -> Value {
        match v {
            Value::String(s) if s.len() > 120 => Value::String(format!(
                "{}… ({} bytes)",
                s.chars().take(60).collect::<String>(),
                s.len()
            )),
            Value::Array(a) => Value::Array(a.iter().map(cut).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), cut(v))).collect()),
            other => other.clone(),
        }
    }
    cut(v).to_string()
}

/// The time budget `make fuzz` gives each fuzz target.
pub mod fuzz {
    use std::time::Duration;

    /// DESKHAND_FUZZ_TIME as a duration, in Go's syntax (`90s`, `10m`,
    /// `1h`, `1m30s`) so one FUZZTIME serves the Go and Rust targets. None
    /// when unset: the tests then run their usual fixed number of cases.
    pub fn budget() -> Option<Duration> {
        let text = std::env::var("DESKHAND_FUZZ_TIME").ok()?;
        Some(parse(&text).unwrap_or_else(|| {
            panic!("DESKHAND_FUZZ_TIME={text:?} is not a duration: write it like 90s, 10m or 1h30m")
        }))
    }

    fn parse(text: &str) -> Option<Duration> {
        let mut total = Duration::ZERO;
        let mut rest = text.trim();
        if rest.is_empty() {
            return None;
        }
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            let n: u64 = rest[..digits].parse().ok()?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let unit = match &rest[..unit_len] {
                "ms" => Duration::from_millis(1),
                "s" => Duration::from_secs(1),
                "m" => Duration::from_secs(60),
                "h" => Duration::from_secs(3600),
                _ => return None,
            };
            total += unit * u32::try_from(n).ok()?;
            rest = &rest[unit_len..];
        }
        Some(total)
    }

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse("10"), None);
        assert_eq!(parse("1.5m"), None);
        assert_eq!(parse(""), None);
    }
}
