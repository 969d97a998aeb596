//! What sway's IPC adds to the wlr protocols: each view's pid and place on
//! screen (wlr-foreign-toplevel gives neither), and the scratchpad, sway's
//! stand-in for minimising (sway ignores set_minimized).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use serde_json::Value;

use crate::types::Rect;

/// One sway view (a leaf container that shows a client).
#[derive(Clone, Debug)]
pub struct View {
    pub con_id: i64,
    pub pid: Option<u32>,
    pub app_id: String,
    pub title: String,
    pub rect: Rect,
    pub visible: bool,
    pub focused: bool,
}

const MAGIC: &[u8] = b"i3-ipc";
const RUN_COMMAND: u32 = 0;
const GET_TREE: u32 = 4;

/// The IPC socket, from `$SWAYSOCK`.
pub fn socket() -> Option<String> {
    std::env::var("SWAYSOCK").ok().filter(|s| !s.is_empty())
}

fn call(kind: u32, payload: &str) -> Result<Value, String> {
    let path = socket().ok_or("SWAYSOCK is not set")?;
    let mut s = UnixStream::connect(&path).map_err(|e| format!("connecting to {path}: {e}"))?;
    let mut msg = MAGIC.to_vec();
    msg.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    msg.extend_from_slice(&kind.to_ne_bytes());
    msg.extend_from_slice(payload.as_bytes());
    s.write_all(&msg)
        .map_err(|e| format!("writing to sway: {e}"))?;
    let mut head = [0u8; 14];
    s.read_exact(&mut head)
        .map_err(|e| format!("reading sway's reply: {e}"))?;
    if &head[..6] != MAGIC {
        return Err("sway's reply has no i3-ipc magic".into());
    }
    let len = u32::from_ne_bytes([head[6], head[7], head[8], head[9]]) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)
        .map_err(|e| format!("reading sway's reply: {e}"))?;
    serde_json::from_slice(&body).map_err(|e| format!("parsing sway's reply: {e}"))
}

/// Every view in the tree, scratchpad included, in tree order.
pub fn views() -> Result<Vec<View>, String> {
    let tree = call(GET_TREE, "")?;
    let mut out = Vec::new();
    walk(&tree, &mut out);
    Ok(out)
}

fn walk(node: &Value, out: &mut Vec<View>) {
    let children = ["nodes", "floating_nodes"]
        .iter()
        .filter_map(|k| node.get(*k).and_then(Value::as_array))
        .flatten()
        .collect::<Vec<_>>();
    let is_view = node.get("pid").and_then(Value::as_u64).is_some()
        && matches!(
            node.get("type").and_then(Value::as_str),
            Some("con" | "floating_con")
        );
    if is_view {
        let r = node.get("rect").cloned().unwrap_or(Value::Null);
        let int = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
        let app_id = node
            .get("app_id")
            .and_then(Value::as_str)
            .or_else(|| {
                node.pointer("/window_properties/class")
                    .and_then(Value::as_str)
            })
            .unwrap_or("")
            .to_owned();
        out.push(View {
            con_id: int(node, "id"),
            pid: node.get("pid").and_then(Value::as_u64).map(|p| p as u32),
            app_id,
            title: node
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            rect: Rect {
                x: int(&r, "x") as i32,
                y: int(&r, "y") as i32,
                width: int(&r, "width").max(0) as u32,
                height: int(&r, "height").max(0) as u32,
            },
            visible: node
                .get("visible")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            focused: node
                .get("focused")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        });
    }
    for child in children {
        walk(child, out);
    }
}

/// Runs a sway command, failing with sway's own error.
pub fn command(cmd: &str) -> Result<(), String> {
    let reply = call(RUN_COMMAND, cmd)?;
    for r in reply.as_array().into_iter().flatten() {
        if r.get("success").and_then(Value::as_bool) != Some(true) {
            return Err(format!(
                "sway refused {cmd:?}: {}",
                r.get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
            ));
        }
    }
    Ok(())
}
