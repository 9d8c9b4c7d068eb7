//! `cordon mcp`'s stdio transport: rmcp's own line transport
//! ([`AsyncRwTransport`]) reads every message, behind a pre-check that answers what rmcp
//! would answer without an `id`.
//!
//! rmcp replies to well-formed JSON that is not a message with
//! `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}`: no `id`, even
//! when the request had one (`{"jsonrpc":"2.0","id":3}`), and its error type cannot say
//! `"id": null` (its `id` is left out when unknown). JSON-RPC 2.0 requires the request's
//! `id`, or `null` when it cannot be read (new-user pass: `{"jsonrpc":"2.0","id":3}` and
//! `[]` got replies without one). The pre-check parses each line with serde_json into
//! rmcp's own message type, as rmcp does; a line that is JSON and not a message (and not a
//! notification, which gets no reply) is answered here, and every other line is passed to
//! rmcp unchanged (dispatch stays rmcp's). Replies and rmcp's messages are written whole,
//! one line at a time, under one lock.

use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::sync::Mutex;

type Out = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// The transport: rmcp's, reading the lines the pre-check lets through; writing through
/// [`Checked::out`].
pub struct Checked {
    inner: AsyncRwTransport<RoleServer, tokio::io::DuplexStream, tokio::io::Sink>,
    out: Out,
}

impl Checked {
    /// Over `input` and `output` (stdin and stdout); spawns the pre-check on the current
    /// runtime.
    pub fn new(
        input: impl AsyncRead + Send + Unpin + 'static,
        output: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Checked {
        let out: Out = Arc::new(Mutex::new(Box::new(output)));
        let (passed, to_rmcp) = tokio::io::duplex(64 * 1024);
        tokio::spawn(precheck(
            tokio::io::BufReader::new(input),
            to_rmcp,
            Arc::clone(&out),
        ));
        // rmcp writes nothing through its own writer but its id-less replies, which the
        // pre-check leaves only for notifications (answered by nothing, as JSON-RPC says).
        Checked {
            inner: AsyncRwTransport::new_server(passed, tokio::io::sink()),
            out,
        }
    }
}

/// Writes `line` and a newline, whole, under the lock.
async fn write_line(out: &Out, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    let mut o = out.lock().await;
    o.write_all(&line).await?;
    o.flush().await
}

impl Transport<RoleServer> for Checked {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        let line = serde_json::to_vec(&item).map_err(std::io::Error::other);
        async move { write_line(&out, line?).await }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        self.out.lock().await.flush().await
    }
}

/// The reply to `line` when rmcp would answer it without the request's `id`: JSON, not a
/// message rmcp's type takes, not a notification. `None`: rmcp's to handle (a message; not
/// JSON, which is dropped; a notification).
fn reply_to(line: &[u8]) -> Option<Value> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let v: Value = serde_json::from_slice(line).ok()?;
    let why = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(_) => return None,
        Err(e) => e,
    };
    let why = match &v {
        Value::Object(o) if o.get("method").is_some_and(Value::is_string) => {
            if !o.contains_key("id") {
                return None;
            }
            why.to_string()
        }
        Value::Object(_) => "no `method` (a string) in it".to_string(),
        Value::Array(_) => "a batch (a JSON array): send one request per line".to_string(),
        _ => "not a JSON object".to_string(),
    };
    // The request's id when it can be read (a string or a number), else null.
    let id = match v.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    Some(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32600, "message": format!("invalid request: {why}")},
    }))
}

/// Reads lines from `input`; answers those [`reply_to`] answers, passes the rest to rmcp
/// (`to_rmcp`) as they came. A line longer than rmcp's limit is passed on unread (rmcp
/// drops it). Ends at the end of `input` (rmcp's reader then ends) or when rmcp is gone.
async fn precheck(
    mut input: impl AsyncBufRead + Send + Unpin,
    mut to_rmcp: tokio::io::DuplexStream,
    out: Out,
) {
    let limit = DEFAULT_MAX_LINE_LENGTH as u64 + 1;
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut input).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let whole = line.ends_with(b"\n");
        if whole {
            if let Some(reply) = reply_to(&line) {
                if let Ok(bytes) = serde_json::to_vec(&reply) {
                    if write_line(&out, bytes).await.is_err() {
                        return;
                    }
                }
                continue;
            }
        }
        if to_rmcp.write_all(&line).await.is_err() {
            return;
        }
        // Over the limit: the rest of the line goes through as it comes.
        let mut over = !whole && line.len() as u64 == limit;
        while over {
            line.clear();
            match (&mut input).take(limit).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            over = !line.ends_with(b"\n");
            if to_rmcp.write_all(&line).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reply_to;
    use serde_json::json;

    /// New-user pass: `{"jsonrpc":"2.0","id":3}` got an Invalid Request reply without its
    /// id, `[]` one without `"id": null`. Twin: a message, a notification and a line that
    /// is not JSON are left to rmcp.
    #[test]
    fn an_invalid_request_is_answered_with_its_id_or_null() {
        let r = reply_to(br#"{"jsonrpc":"2.0","id":3}"#).unwrap();
        assert_eq!(r["id"], 3, "{r}");
        assert_eq!(r["error"]["code"], -32600, "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("method"),
            "{r}"
        );
        for line in [&b"[]"[..], br#"{"foo":"bar"}"#, b"3", br#"{"id":{"a":1}}"#] {
            let r = reply_to(line).unwrap();
            assert!(r.as_object().unwrap().contains_key("id"), "{r}");
            assert_eq!(r["id"], json!(null), "{r}");
        }
        let r =
            reply_to(br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":7}"#).unwrap();
        assert_eq!(r["id"], "x", "{r}");
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"bogus/method"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","method":"x/y","params":7}"#,
            br#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
            b"not json",
            b"",
        ] {
            assert_eq!(reply_to(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
