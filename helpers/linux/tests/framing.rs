//! Property tests of the frame decoder and of the request handler: no input
//! makes them panic, and whatever is encoded decodes to the same bodies.
//! `make fuzz` runs each property for FUZZTIME instead of a fixed number
//! of cases.

use deskhand_helper::dispatch::Dispatcher;
use deskhand_helper::protocol::{encode_frame, FrameError, FrameReader, MAX_REQUEST_BYTES};
use deskhand_helper::server::{Config, Server};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError, TestRunner};
use std::time::Instant;

mod common;

/// Decodes every frame in `input`, returning the bodies and how it ended.
fn decode_all(input: &[u8], cap: usize) -> (Vec<Vec<u8>>, Option<FrameError>) {
    let mut reader = FrameReader::new(input, cap);
    let mut frames = Vec::new();
    let mut body = Vec::new();
    // Every successful read consumes at least the header's 4 bytes, so this
    // bound can only trip on a decoder that stops making progress.
    for _ in 0..=input.len() {
        match reader.read_frame(&mut body) {
            Ok(true) => frames.push(body.clone()),
            Ok(false) => return (frames, None),
            Err(e) => return (frames, Some(e)),
        }
    }
    panic!("the decoder made no progress on {} bytes", input.len());
}

/// Bytes that look like frame headers often enough to get past the first
/// checks, mixed with anything at all.
fn header_ish() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop_oneof![
        Just(b"Content-Length: ".to_vec()),
        Just(b"content-length:".to_vec()),
        Just(b"Content-Type: application/json".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\r\n\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b":".to_vec()),
        "[0-9]{1,25}".prop_map(|s| s.into_bytes()),
        Just(
            br#"{"jsonrpc":"2.0","id":1,"method":"handshake","params":{"protocol_versions":[1]}}"#
                .to_vec()
        ),
        prop::collection::vec(any::<u8>(), 0..40),
    ];
    prop::collection::vec(pieces, 0..30).prop_map(|v| v.concat())
}

/// Runs a property for its usual number of cases or, under `make fuzz`
/// (DESKHAND_FUZZ_TIME set), with fresh random seeds until the time is up.
/// A failing case's seed is kept in framing.proptest-regressions, next to
/// this file, and replayed first on every later run.
fn check<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let config = || ProptestConfig {
        cases: 2000,
        source_file: Some(file!()),
        // Not proptest's default, which looks for src/lib.rs above this
        // file and finds none: integration tests live outside src/.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/framing.proptest-regressions"
        )))),
        ..ProptestConfig::default()
    };
    let deadline = common::fuzz::budget().map(|b| Instant::now() + b);
    let mut cases = 0u64;
    loop {
        let config = config();
        cases += u64::from(config.cases);
        if let Err(e) = TestRunner::new(config).run(&strategy, &test) {
            panic!("{e}");
        }
        if deadline.map_or(true, |d| Instant::now() >= d) {
            break;
        }
    }
    if deadline.is_some() {
        eprintln!("ran {cases} cases");
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    check(prop::collection::vec(any::<u8>(), 0..4096), |input| {
        decode_all(&input, MAX_REQUEST_BYTES);
        Ok(())
    });
}

#[test]
fn header_like_bytes_never_panic() {
    check(header_ish(), |input| {
        let (frames, _) = decode_all(&input, 64);
        for f in frames {
            prop_assert!(f.len() <= 64);
        }
        Ok(())
    });
}

#[test]
fn encode_then_decode_round_trips() {
    check(
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..2048), 0..12),
        |bodies| {
            let stream: Vec<u8> = bodies.iter().flat_map(|b| encode_frame(b)).collect();
            let (frames, err) = decode_all(&stream, MAX_REQUEST_BYTES);
            prop_assert!(err.is_none(), "error {:?}", err);
            prop_assert_eq!(frames, bodies);
            Ok(())
        },
    );
}

#[test]
fn a_cut_stream_ends_cleanly_or_as_truncated() {
    check(
        (
            prop::collection::vec(prop::collection::vec(any::<u8>(), 0..256), 1..6),
            any::<prop::sample::Index>(),
        ),
        |(bodies, cut)| {
            let stream: Vec<u8> = bodies.iter().flat_map(|b| encode_frame(b)).collect();
            let at = cut.index(stream.len() + 1);
            let (frames, err) = decode_all(&stream[..at], MAX_REQUEST_BYTES);
            // Whole frames before the cut come out intact.
            prop_assert_eq!(&frames[..], &bodies[..frames.len()]);
            match err {
                None | Some(FrameError::Truncated { .. }) => {}
                Some(other) => prop_assert!(false, "cut at {} gave {:?}", at, other),
            }
            Ok(())
        },
    );
}

#[test]
fn bodies_over_the_cap_are_refused_unread() {
    check(65usize..100_000, |len| {
        let header = format!("Content-Length: {len}\r\n\r\n");
        let (frames, err) = decode_all(header.as_bytes(), 64);
        prop_assert!(frames.is_empty());
        let refused =
            matches!(err, Some(FrameError::TooLarge { len: l, cap: 64 }) if l == len as u64);
        prop_assert!(refused, "got {:?}", err);
        Ok(())
    });
}

#[test]
fn any_body_gets_one_json_rpc_answer_or_none() {
    check(prop::collection::vec(any::<u8>(), 0..512), |body| {
        let mut server = offline_server();
        let outcome = server.handle(&body);
        prop_assert!(outcome.raw.is_none());
        if let Some(reply) = outcome.reply {
            let v: serde_json::Value = serde_json::from_slice(&reply).expect("replies are JSON");
            prop_assert_eq!(&v["jsonrpc"], "2.0");
            prop_assert!(v.get("result").is_some() != v.get("error").is_some());
        }
        Ok(())
    });
}

fn offline_server() -> Dispatcher<Server> {
    deskhand_helper::log::set_level(deskhand_helper::log::Level::Error);
    let mut server = Dispatcher::new(Server::new(Config {
        // Not a parseable display name: fails at once, without a socket.
        display: Some("/nonexistent/deskhand-fuzz:0".into()),
        no_shm: true,
    }));
    server.faults = false;
    server
}
