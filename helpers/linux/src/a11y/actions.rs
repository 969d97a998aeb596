//! Action names, for toolkits whose `GetActions` leaves them empty.
//!
//! at-spi2-atk fills `GetActions` with each action's *localized* name.
//! Chromium (checked with 156 on Debian 12) gives no localized names, so
//! every entry is `("", "", "")`, while `GetName(i)` answers "press",
//! "activate", "check", "showContextMenu"… The names the protocol reports
//! and `a11y_act` matches are then the `GetName` ones, read for the empty
//! entries only, so toolkits that fill `GetActions` cost no extra calls.

use std::time::Duration;

use futures_lite::future;

use super::bus::{self, CallError, Obj, Route};
use super::tree::ACTION;

/// The element's action names in index order: `GetActions`, with each
/// empty name replaced by `GetName(index)` (still empty when that fails).
pub async fn names(
    route: &Route,
    obj: &Obj,
    limit: Duration,
) -> std::result::Result<Vec<String>, CallError> {
    let list =
        bus::call::<_, Vec<(String, String, String)>>(route, obj, ACTION, "GetActions", &(), limit)
            .await?;
    let mut names: Vec<String> = list.into_iter().map(|(name, _, _)| name).collect();
    if names.iter().all(|n| !n.is_empty()) {
        return Ok(names);
    }
    let missing: Vec<usize> = (0..names.len()).filter(|&i| names[i].is_empty()).collect();
    let reads = missing.iter().map(|&i| async move {
        bus::call::<_, String>(route, obj, ACTION, "GetName", &(i as i32,), limit)
            .await
            .unwrap_or_default()
    });
    let mut filled = Vec::with_capacity(missing.len());
    for read in reads {
        filled.push(read);
    }
    let filled = join_all(filled).await;
    for (i, name) in missing.into_iter().zip(filled) {
        names[i] = name;
    }
    Ok(names)
}

/// Awaits every future concurrently (the calls go out together on the one
/// connection) and returns their outputs in order.
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut out = Vec::with_capacity(futures.len());
    let mut pending: Vec<_> = futures.into_iter().map(Box::pin).collect();
    // Few actions per element (Chromium: two); pairwise zip keeps it simple.
    while !pending.is_empty() {
        if pending.len() >= 2 {
            let b = pending.remove(1);
            let a = pending.remove(0);
            let (x, y) = future::zip(a, b).await;
            out.push(x);
            out.push(y);
        } else {
            out.push(pending.remove(0).await);
        }
    }
    out
}
