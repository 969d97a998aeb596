//! deskhand-helper: deskhand's Linux capture helper.
//!
//! Usage: deskhand-helper [--version] [--help] [--keep-clipboard]
//!
//! It speaks JSON-RPC 2.0 with Content-Length framing on stdin/stdout
//! (helpers/PROTOCOL.md) and logs to stderr. Environment:
//! DISPLAY, DESKHAND_HELPER_LOG (debug|info|warn|error),
//! DESKHAND_HELPER_NO_SHM=1, DESKHAND_HELPER_FAULTS=1 (tests only).

use std::io::{self, BufWriter};
use std::process::ExitCode;

use deskhand_helper::dispatch::{Dispatcher, HELPER_VERSION};
use deskhand_helper::server::{Config, Server};
use deskhand_helper::wayland;
use deskhand_helper::{log, log_debug, log_error};

const USAGE: &str = "\
deskhand-helper: deskhand's Linux capture helper (X11 and wlroots Wayland)

Usage: deskhand-helper [--version] [--help] [--keep-clipboard]

Started by deskhand, it answers JSON-RPC 2.0 requests framed with
Content-Length headers on stdin and writes responses to stdout, as described
in helpers/PROTOCOL.md. Logs go to stderr. It exits when stdin closes.

With --keep-clipboard it is the clipboard keeper deskhand starts as it
exits (on X11, or on Wayland when the backend rules below pick it): it reads {\"clipboard\": text, \"primary\": text} (each optional)
on stdin, owns those selections, writes \"ready\" to stdout, and serves
them until other applications have taken both (helpers/PROTOCOL.md).

Environment:
  DISPLAY                    the X display to serve
  WAYLAND_DISPLAY            the Wayland display, served (backend wayland-wlr,
                             or kde-kwin on KWin) when DISPLAY is unset
  XDG_CURRENT_DESKTOP        with WAYLAND_DISPLAY and no DISPLAY, GNOME picks
                             the gnome-mutter backend (Mutter's D-Bus APIs;
                             only in a helper built with --features mutter)
  DESKHAND_HELPER_BACKEND    wayland (or kde), mutter or x11, to choose the backend
                             outright
  DESKHAND_HELPER_LOG        debug, info (default), warn or error
  DESKHAND_HELPER_NO_SHM=1   read pixels with GetImage instead of MIT-SHM
  DESKHAND_HELPER_FAULTS=1   answer the test-only fault.* methods
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    if let Some(arg) = args.next() {
        return match arg.as_str() {
            "--version" | "-V" => {
                println!("deskhand-helper {HELPER_VERSION}");
                ExitCode::SUCCESS
            }
            "--keep-clipboard" => keep_clipboard(),
            "--help" | "-h" => {
                print!("{USAGE}");
                ExitCode::SUCCESS
            }
            other => {
                eprintln!("deskhand-helper: unknown argument {other:?}\n\n{USAGE}");
                ExitCode::from(2)
            }
        };
    }

    log::init_from_env();
    name_process();
    die_with_parent();
    log_debug!(
        "deskhand-helper {HELPER_VERSION} starting (pid {})",
        std::process::id()
    );

    let mut stdout = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let stdin = io::BufReader::with_capacity(64 * 1024, io::stdin());
    let served = match backend() {
        Chosen::X11 => Dispatcher::new(Server::new(Config::from_env())).serve(stdin, &mut stdout),
        Chosen::Wayland => {
            wayland::Server::new().and_then(|b| Dispatcher::new(b).serve(stdin, &mut stdout))
        }
        #[cfg(feature = "mutter")]
        Chosen::Mutter => {
            Dispatcher::new(deskhand_helper::mutter::Server::default()).serve(stdin, &mut stdout)
        }
        #[cfg(not(feature = "mutter"))]
        Chosen::Mutter => Dispatcher::new(deskhand_helper::dispatch::Absent {
            platform: "linux-wayland",
            why: "this deskhand-helper was built without GNOME support (cargo feature mutter)",
        })
        .serve(stdin, &mut stdout),
    };
    match served {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let mut message = format!("deskhand-helper: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            log_error!("{message}");
            ExitCode::FAILURE
        }
    }
}

enum Chosen {
    X11,
    Wayland,
    Mutter,
}

/// The backend to serve: `DESKHAND_HELPER_BACKEND` decides when set
/// (`wayland` or its synonym `kde`, `mutter`, anything else X11), else a
/// session with WAYLAND_DISPLAY and no DISPLAY is Wayland's, GNOME's
/// when XDG_CURRENT_DESKTOP names it.
fn backend() -> Chosen {
    if wayland::gnome_chosen() {
        Chosen::Mutter
    } else if wayland::chosen() {
        Chosen::Wayland
    } else {
        Chosen::X11
    }
}

/// The keeper mode (see `deskhand_helper::keeper`): it must outlive
/// deskhand, so unlike serving it does not die with its parent.
fn keep_clipboard() -> ExitCode {
    let wayland = deskhand_helper::wayland::chosen();
    let (status, keeper) = deskhand_helper::keeper::run(wayland, io::stdin().lock(), io::stdout());
    quiet();
    if let Some(keeper) = keeper {
        keeper.wait_until_taken();
    }
    ExitCode::from(status)
}

/// Points stdin, stdout and stderr at /dev/null once the keeper has
/// answered.
fn quiet() {
    // Nothing more is written anywhere: the parent stops reading.
    // SAFETY: open and dup2 take a C string and fds and touch no memory
    // of ours.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// Asks the kernel to kill the helper when deskhand dies, so a crashed
/// supervisor never leaves a helper holding the X connection.
/// Names the process deskhand-helper: deskhand starts the helper from the
/// descriptor it verified (`/proc/self/fd/3`), which would leave the
/// kernel's name for it "3", and `pgrep deskhand-helper` finding nothing.
fn name_process() {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16
    // bytes, which the literal is.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"deskhand-helper".as_ptr(), 0, 0, 0) };
}

fn die_with_parent() {
    let parent = std::os::unix::process::parent_id();
    // SAFETY: prctl(PR_SET_PDEATHSIG) takes a signal number and touches no
    // memory of ours.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc != 0 {
        log_error!(
            "prctl(PR_SET_PDEATHSIG): {}; the helper will outlive a crashed parent",
            io::Error::last_os_error()
        );
    }
    // The parent may have died before prctl took effect.
    if std::os::unix::process::parent_id() != parent {
        log_error!("parent process {parent} exited during startup; exiting");
        std::process::exit(1);
    }
}
