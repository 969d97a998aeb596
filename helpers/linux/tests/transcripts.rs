//! Replays every protocol transcript in helpers/testdata/transcripts/
//! against the real helper binary (format: that directory's README.md).
//! Transcripts that need a display run only when DISPLAY is set, and fail
//! when CI is set without one.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{matches, shorten, Helper, Output};
use serde_json::Value;

/// How long one step may wait for an answer or an exit (debug builds
/// encode full-screen PNGs slowly).
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

fn transcripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transcripts")
}

#[test]
fn every_transcript() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(transcripts_dir())
        .expect("reading helpers/testdata/transcripts")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "expected the transcript set, found {} files",
        files.len()
    );
    let mut ran = 0;
    let mut skipped = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let transcript: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}.json is not JSON: {e}"));
        if let Some(platforms) = transcript["platforms"].as_array() {
            if !platforms.iter().any(|p| p == "linux-x11") {
                continue; // another helper's transcript
            }
        }
        if transcript["needs_display"].as_bool().unwrap_or(false) && !common::have_display(&name) {
            skipped.push(name);
            continue;
        }
        replay(&name, &transcript);
        ran += 1;
    }
    eprintln!("replayed {ran} transcripts; skipped {skipped:?}");
}

fn replay(name: &str, transcript: &Value) {
    let env: Vec<(String, String)> = transcript["env"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().expect("env values are strings").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut helper = Helper::spawn(&env_refs);
    let steps = transcript["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no steps"));
    let mut exited = false;
    for (i, step) in steps.iter().enumerate() {
        let here = format!("{name} step {i}");
        let fail = |helper: &Helper, why: String| -> ! {
            panic!(
                "{here}: {why}\nstep: {}\nhelper stderr:\n{}",
                shorten(step),
                helper.stderr()
            )
        };
        assert!(!exited, "{here}: a step after the helper exited");
        if let Some(message) = step.get("send") {
            helper.send_value(message);
        }
        if let Some(raw) = step.get("send_raw") {
            helper.send_raw(raw.as_str().expect("send_raw is a string").as_bytes());
        }
        if step.get("close_stdin").and_then(Value::as_bool) == Some(true) {
            helper.close_stdin();
        }
        if let Some(pattern) = step.get("expect") {
            match helper.next(STEP_TIMEOUT) {
                Some(Output::Frame(actual)) => {
                    if let Err(why) = matches(pattern, &actual, "$") {
                        fail(
                            &helper,
                            format!(
                                "response does not match: {why}\nresponse: {}",
                                shorten(&actual)
                            ),
                        );
                    }
                }
                Some(other) => fail(&helper, format!("expected a response, got {other:?}")),
                None => fail(&helper, format!("no response within {STEP_TIMEOUT:?}")),
            }
        }
        if let Some(code) = step.get("expect_exit") {
            let code = code.as_i64().expect("expect_exit is an integer");
            match helper.wait(STEP_TIMEOUT) {
                Some(status) if status.code() == Some(code as i32) => {}
                Some(status) => fail(
                    &helper,
                    format!("helper exited with {status}, want status {code}"),
                ),
                None => fail(
                    &helper,
                    format!("helper still running after {STEP_TIMEOUT:?}, want exit {code}"),
                ),
            }
            expect_no_more_output(&mut helper, &here);
            exited = true;
        }
    }
    if !exited {
        // Every transcript also checks the end: EOF on stdin means exit 0.
        helper.close_stdin();
        match helper.wait(Duration::from_secs(5)) {
            Some(status) if status.success() => {}
            other => panic!(
                "{name}: after stdin closed the helper gave {other:?}, want exit 0\nstderr:\n{}",
                helper.stderr()
            ),
        }
        expect_no_more_output(&mut helper, name);
    }
}

fn expect_no_more_output(helper: &mut Helper, here: &str) {
    match helper.next(Duration::from_secs(5)) {
        Some(Output::Eof) => {}
        other => panic!(
            "{here}: unexpected output after the last expected response: {other:?}\nstderr:\n{}",
            helper.stderr()
        ),
    }
}

#[test]
fn pattern_matcher() {
    use serde_json::json;
    let actual = json!({"id": 3, "result": {"data": "aGVsbG8=", "n": 2.5, "list": [1, 2], "s": "$x", "none": null}});
    let good = [
        json!({"id": 3}),
        json!({"result": {"data": "$base64", "n": "$number", "list": [1, "$int"], "none": "$null"}}),
        json!({"result": {"list": {"$each": "$int"}, "s": "$$x", "none": "$int_or_null"}}),
        json!({"result": "$object", "id": "$any"}),
        json!({"id": 3.0}),
    ];
    for p in &good {
        assert!(
            matches(p, &actual, "$").is_ok(),
            "{p} should match: {:?}",
            matches(p, &actual, "$")
        );
    }
    let bad = [
        json!({"id": 4}),
        json!({"missing": "$any"}),
        json!({"result": {"list": [1]}}),
        json!({"result": {"list": {"$each": "$string"}}}),
        json!({"result": {"n": "$int"}}),
        json!({"result": {"s": "$string_or_null", "data": "$object"}}),
        json!({"result": {"s": "$x"}}),
        json!({"result": {"data": "$unknown_matcher"}}),
        json!({"result": {"none": "$object"}}),
    ];
    for p in &bad {
        assert!(matches(p, &actual, "$").is_err(), "{p} should not match");
    }
    assert!(matches(&json!("$base64"), &json!("not base64!"), "$").is_err());
    assert!(matches(&json!("$base64"), &json!(""), "$").is_err());
}
