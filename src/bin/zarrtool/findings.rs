//! What `validate` and `diff` report: their exit status when they find something, and
//! each finding as JSON.

use serde_json::{json, Value};

/// Exit status for differences or problems found.
pub const FOUND: u8 = 3;

/// A finding about the node shown as `shown` as JSON: `{"path": shown, field: text}`, the
/// text without the `shown: ` that leads it in the lines printed.
pub fn finding(shown: &str, line: &str, field: &str) -> Value {
    let text = line
        .strip_prefix(shown)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(line);
    json!({ "path": shown, field: text })
}
