//! A DISPLAY whose number no X server can have (`:64999`: its TCP port,
//! 6000 + 64999, is past 65535) is refused with an error naming it, by the
//! helper binary as built for tests (a debug build, where x11rb's port
//! arithmetic would panic), and the helper keeps serving.

mod common;

use std::time::Duration;

use common::{Helper, Output};
use serde_json::json;

#[test]
fn display_number_past_the_last_tcp_port_is_refused_cleanly() {
    for display in [":64999", ":59536.0"] {
        let mut helper = Helper::spawn(&[("DISPLAY", display), ("DESKHAND_HELPER_BACKEND", "x11")]);

        let hs = helper.handshake();
        let why = hs["display_error"].as_str().unwrap_or_default().to_owned();
        assert!(
            why.contains(&format!("DISPLAY={display}")) && why.contains("65535") && why.contains("DISPLAY=:0"),
            "handshake display_error with DISPLAY={display} = {why:?}, want it to name the display, the port limit and what to set\nstderr:\n{}",
            helper.stderr()
        );

        // Every X method gets the same clear error, again and again: the
        // helper does not crash on its retry either.
        for _ in 0..2 {
            let v = helper.call("displays", json!({}));
            assert_eq!(
                v["error"]["data"]["code"], "display_unavailable",
                "displays with DISPLAY={display} = {v}, want display_unavailable"
            );
            let message = v["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(display) && message.contains("at most 59535"),
                "displays error with DISPLAY={display} = {message:?}, want the display and the highest number"
            );
        }

        helper.close_stdin();
        let status = helper.wait(Duration::from_secs(10));
        assert!(
            status.is_some_and(|s| s.success()),
            "helper with DISPLAY={display} ended {status:?}, want status 0 on EOF\nstderr:\n{}",
            helper.stderr()
        );
        assert!(
            !helper.stderr().contains("panicked"),
            "helper with DISPLAY={display} panicked:\n{}",
            helper.stderr()
        );
        assert!(matches!(
            helper.next(Duration::from_secs(5)),
            Some(Output::Eof) | None
        ));
    }
}
