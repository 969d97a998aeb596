//! Private X servers for the tests that need a screen of their own, and
//! display numbers that stay theirs while the server comes and goes.
//!
//! `Xvfb -displayfd` takes the lowest free display number. That is safe for
//! a server that lives as long as its test, but a number freed by stopping a
//! server is exactly the one the next `-displayfd` server takes, whether it
//! belongs to another test thread or to another process on the machine. A
//! test that stops and restarts a server on the same number therefore
//! reserves one with [`ReservedDisplay`] instead: far above the numbers
//! `-displayfd` servers reach, and held with a file lock against every other
//! test that reserves one.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Where reserved numbers start. `-displayfd` servers count up from 0, so
/// they would need hundreds of servers running to get here.
const RESERVED_FROM: u32 = 600;
const RESERVED_TO: u32 = 1000;

/// A display number no other test uses while this is alive, whether a
/// server is running on it or not.
pub struct ReservedDisplay {
    number: u32,
    // Held, not read: the lock is released when the file is closed.
    _lock: File,
}

impl ReservedDisplay {
    /// Reserves the first free number from [`RESERVED_FROM`] up: one no
    /// other test holds and no X server (ours or anyone's) uses.
    pub fn new() -> ReservedDisplay {
        for number in RESERVED_FROM..RESERVED_TO {
            let path = std::env::temp_dir().join(format!("deskhand-test-display-{number}.lock"));
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
            // SAFETY: flock on a descriptor this function owns; the lock
            // goes with the file when it is closed.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                continue;
            }
            if in_use(number) {
                continue;
            }
            return ReservedDisplay {
                number,
                _lock: file,
            };
        }
        panic!("no free display number from :{RESERVED_FROM} to :{RESERVED_TO}: stop stale Xvfb servers");
    }

    /// The display name, like `:600`.
    pub fn name(&self) -> String {
        format!(":{}", self.number)
    }
}

/// Whether an X server holds `number`: its lock file, its socket, or one
/// that answers (servers in another mount namespace leave no files here).
fn in_use(number: u32) -> bool {
    Path::new(&format!("/tmp/.X{number}-lock")).exists()
        || Path::new(&format!("/tmp/.X11-unix/X{number}")).exists()
        || x11rb::connect(Some(&format!(":{number}"))).is_ok()
}

/// A private Xvfb, stopped on drop.
pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Xvfb {
    /// Starts `Xvfb` on a free display it picks itself. None (with a note)
    /// if Xvfb is not installed, except under CI, where that is a failure.
    pub fn start(screen: &str) -> Option<Xvfb> {
        let child = Command::new("Xvfb")
            .args(["-displayfd", "1"])
            .args(server_args(screen))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI is set but Xvfb cannot start: {e}"
                );
                eprintln!("skipping: cannot start Xvfb ({e})");
                return None;
            }
        };
        let (child, number) = ready(child);
        let number = number.unwrap_or_else(|| panic!("Xvfb did not report its display number"));
        Some(Xvfb {
            child,
            display: format!(":{number}"),
        })
    }

    /// Starts `Xvfb` on a reserved display, and returns once it accepts
    /// connections: Xvfb writes the number to `-displayfd` only then, so
    /// this never mistakes another server for ours.
    pub fn start_on(display: &ReservedDisplay, screen: &str) -> Xvfb {
        let name = display.name();
        let log = log_path(display);
        let child = Command::new("Xvfb")
            .arg(&name)
            .args(["-displayfd", "1"])
            .args(server_args(screen))
            .stdout(Stdio::piped())
            .stderr(File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("starting Xvfb {name}: {e}"));
        let (child, number) = ready(child);
        if number.as_deref() == Some(&name[1..]) {
            let _ = std::fs::remove_file(&log);
        } else {
            panic!(
                "Xvfb {name} did not come up (it reported {number:?}); its log, {}:\n{}",
                log.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        Xvfb {
            child,
            display: name,
        }
    }

    /// Stops the server the way a session ends: SIGTERM, then wait.
    pub fn stop(mut self) {
        self.terminate();
    }

    fn terminate(&mut self) {
        // SAFETY: signalling our own child process by its pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }

    /// Runs `program` against this server and asserts it succeeds.
    pub fn run(&self, program: &str, args: &[&str]) {
        let status = Command::new(program)
            .args(args)
            .env("DISPLAY", &self.display)
            .stdout(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("running {program}: {e}"));
        assert!(status.success(), "{program} {args:?} failed: {status}");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.terminate();
        }
    }
}

fn server_args(screen: &str) -> [&str; 6] {
    ["-noreset", "-nolisten", "tcp", "-screen", "0", screen]
}

fn log_path(display: &ReservedDisplay) -> PathBuf {
    std::env::temp_dir().join(format!(
        "deskhand-test-xvfb-{}-{}.log",
        display.number,
        std::process::id()
    ))
}

/// Waits for the number Xvfb writes to `-displayfd` once it is ready; None
/// if it exited first.
fn ready(mut child: Child) -> (Child, Option<String>) {
    let mut line = String::new();
    let read = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
    let number = line.trim();
    match read {
        Ok(_) if !number.is_empty() => {
            let number = number.to_owned();
            (child, Some(number))
        }
        _ => (child, None),
    }
}
