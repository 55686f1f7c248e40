//! The stdio transport of the MCP server (`mem mcp`): newline-delimited JSON-RPC in which every input line gets
//! an answer or a reason not to (issue 27 item 15).
//!
//! `rmcp`'s own stdio transport drops a line that is not JSON without a reply, so a client that
//! sent a request waits forever, and it ends the server on a notification sent before
//! `initialize`. This transport reads stdin itself and writes through `rmcp`'s codec:
//! - A line longer than [`MAX_LINE_BYTES`] is answered -32700 (id null) and skipped without being
//!   buffered (at most [`MAX_LINE_BYTES`] bytes are held).
//! - A line that is not JSON (malformed, invalid UTF-8, a lone surrogate escape such as
//!   `\ud800`) is answered -32700; the id is the request's when the line, read leniently
//!   (invalid bytes and lone surrogates replaced), names one, else null.
//! - JSON that is not a JSON-RPC message is answered -32600 (invalid request) with its id where
//!   it has one; a notification (no id) that is not understood is dropped, as JSON-RPC says.
//! - Before `initialize`, a request other than `initialize`, `ping` and `server/discover` (or a
//!   stateless request carrying the protocol version and client capabilities in `_meta`) is
//!   answered -32600 "not initialized"; a notification or response is dropped.
//!
//! Replies are written in the order the lines arrived. The server keeps serving after each.

use std::collections::VecDeque;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, GetMeta, NumberOrString,
    ProtocolVersion, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::task::JoinHandle;

/// The longest input line (one JSON-RPC message), in bytes: 16 MiB, as `rmcp`'s own cap.
pub const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The line buffer's capacity kept between lines, in bytes.
const KEEP_LINE_CAPACITY: usize = 64 * 1024;

/// The UTF-8 byte order mark, which JSON readers may ignore (RFC 8259 §8.1).
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// `mem mcp`'s transport on stdin / stdout.
pub fn stdio() -> McpStdio<tokio::io::Stdin, tokio::io::Stdout> {
    McpStdio::new(tokio::io::stdin(), tokio::io::stdout())
}

/// A server transport on a reader (requests) and a writer (replies); see the module docs.
pub struct McpStdio<R: AsyncRead, W: AsyncWrite> {
    read: BufReader<R>,
    /// The line being read (kept across a cancelled `receive`).
    line: Vec<u8>,
    /// Skipping the rest of an over-long line until its newline.
    discarding: bool,
    /// Writes replies; its own reader is empty and never read.
    write: AsyncRwTransport<RoleServer, tokio::io::Empty, W>,
    /// Error replies of this transport not yet known to be written.
    pending: VecDeque<JoinHandle<()>>,
    /// An `initialize` request (or a stateless request) has been passed to the server.
    started: bool,
}

/// What to do with the bytes just looked at, once they are consumed.
enum Step {
    /// No newline yet: read on.
    More,
    /// The newline that ends a dropped line.
    EndDiscard,
    /// The line is complete in `line`.
    Whole,
    /// Over the cap, and its newline seen.
    TooLong,
    /// Over the cap, the rest to be skipped up to its newline.
    TooLongDiscard,
}

/// What one bounded line read gave.
enum Line {
    /// A whole line is in `line` (without its newline).
    Whole,
    /// The line was over [`MAX_LINE_BYTES`] and is being dropped.
    TooLong,
    /// End of input (a last line without a newline is dropped).
    Eof,
}

impl<R, W> McpStdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading requests from `read` and writing replies to `write`.
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: AsyncRwTransport::new(tokio::io::empty(), write),
            pending: VecDeque::new(),
            started: false,
        }
    }

    /// Reads one line into `self.line`, never holding more than [`MAX_LINE_BYTES`].
    /// Cancellation-safe: bytes are consumed only once copied into `self.line`.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let (used, step) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(Line::Eof);
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                let step = if self.discarding {
                    if newline.is_some() {
                        Step::EndDiscard
                    } else {
                        Step::More
                    }
                } else if self.line.len().saturating_add(take) > MAX_LINE_BYTES + 1 {
                    // Over the cap (the `+ 1` is the newline): nothing more is kept.
                    self.line.clear();
                    if newline.is_some() {
                        Step::TooLong
                    } else {
                        Step::TooLongDiscard
                    }
                } else {
                    let needed = self.line.len() + take;
                    if needed > self.line.capacity() {
                        // Grow by doubling, but never past the cap.
                        let want = needed.max(self.line.capacity() * 2).min(MAX_LINE_BYTES + 1);
                        self.line.reserve_exact(want - self.line.len());
                    }
                    self.line.extend_from_slice(&available[..take]);
                    if newline.is_some() {
                        Step::Whole
                    } else {
                        Step::More
                    }
                };
                (take, step)
            };
            self.read.consume(used);
            match step {
                Step::More => {}
                Step::EndDiscard => self.discarding = false,
                Step::Whole => {
                    self.line.pop();
                    if self.line.last() == Some(&b'\r') {
                        self.line.pop();
                    }
                    return Ok(Line::Whole);
                }
                Step::TooLong => return Ok(Line::TooLong),
                Step::TooLongDiscard => {
                    self.discarding = true;
                    return Ok(Line::TooLong);
                }
            }
        }
    }

    /// Queues an error reply (written in order, before anything this transport returns next).
    fn reply_error(&mut self, code: ErrorCode, message: String, id: Option<NumberOrString>) {
        tracing::info!("mem mcp: {message}");
        let send = self.write.send(ServerJsonRpcMessage::error(
            ErrorData::new(code, message, None),
            id,
        ));
        self.pending.push_back(tokio::spawn(async move {
            if let Err(e) = send.await {
                tracing::warn!("mem mcp: an error reply could not be written: {e}");
            }
        }));
    }

    /// Waits until every queued error reply is written. Cancellation-safe.
    async fn flush_replies(&mut self) {
        while let Some(handle) = self.pending.front_mut() {
            let _ = handle.await;
            self.pending.pop_front();
        }
    }

    /// Turns one whole line into a message for the server, or answers it here.
    fn decode(&mut self) -> Option<ClientJsonRpcMessage> {
        let line = self.line.strip_prefix(UTF8_BOM).unwrap_or(&self.line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let id = lenient_id(line);
                self.reply_error(
                    ErrorCode::PARSE_ERROR,
                    format!("parse error: the line is not JSON ({e})"),
                    id,
                );
                return None;
            }
        };
        let id = value
            .get("id")
            .and_then(|id| serde_json::from_value::<NumberOrString>(id.clone()).ok());
        let message = match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
            Ok(m) => m,
            Err(e) => {
                if value.is_object() && value.get("id").is_none() && value.get("method").is_some() {
                    tracing::debug!("mem mcp: dropped a notification that is not understood: {e}");
                } else {
                    self.reply_error(
                        ErrorCode::INVALID_REQUEST,
                        format!("invalid request: not a JSON-RPC 2.0 message ({e})"),
                        id,
                    );
                }
                return None;
            }
        };
        if self.started {
            return Some(message);
        }
        match message {
            ClientJsonRpcMessage::Request(req) => {
                let allowed = match &req.request {
                    ClientRequest::InitializeRequest(_) => {
                        self.started = true;
                        true
                    }
                    ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => true,
                    other => {
                        let stateless = other
                            .get_meta()
                            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                            .is_empty()
                            && other.get_meta().protocol_version().is_some();
                        self.started = stateless;
                        stateless
                    }
                };
                if allowed {
                    Some(ClientJsonRpcMessage::Request(req))
                } else {
                    self.reply_error(
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "not initialized: `{}` before `initialize`; an MCP client sends \
                             `initialize` first",
                            req.request.method()
                        ),
                        Some(req.id),
                    );
                    None
                }
            }
            other => {
                tracing::debug!("mem mcp: dropped a message before `initialize`: {other:?}");
                None
            }
        }
    }
}

/// The `id` of a line that is not JSON only because of its bytes: read with invalid UTF-8 and
/// lone surrogate escapes replaced by U+FFFD. `None` when it still does not parse.
fn lenient_id(line: &[u8]) -> Option<NumberOrString> {
    let text = String::from_utf8_lossy(line);
    let value = serde_json::from_str::<Value>(&text)
        .or_else(|_| serde_json::from_str::<Value>(&replace_surrogate_escapes(&text)))
        .ok()?;
    serde_json::from_value(value.get("id")?.clone()).ok()
}

/// `text` with every `\uD800`–`\uDFFF` escape (paired or not) replaced by `\uFFFD`. Only used to
/// recover the id of a line refused for its escapes, so replacing a valid pair does no harm.
fn replace_surrogate_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        let (before, escape) = rest.split_at(at);
        out.push_str(before);
        let hex = escape.get(2..6).unwrap_or_default();
        let is_surrogate = hex.len() == 4
            && u16::from_str_radix(hex, 16).is_ok_and(|u| (0xD800..=0xDFFF).contains(&u));
        // An escaped backslash before `u` is not an escape.
        let escaped_backslash = before.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1;
        if is_surrogate && !escaped_backslash {
            out.push_str("\\uFFFD");
            rest = &escape[6..];
        } else {
            out.push_str("\\u");
            rest = &escape[2..];
        }
    }
    out.push_str(rest);
    out
}

impl<R, W> Transport<RoleServer> for McpStdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.write.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            self.flush_replies().await;
            match self.read_line().await {
                Ok(Line::Whole) => {
                    let message = self.decode();
                    self.line.clear();
                    // Do not keep a large line's memory for the next, usually small, one.
                    self.line.shrink_to(KEEP_LINE_CAPACITY);
                    if let Some(message) = message {
                        return Some(message);
                    }
                }
                Ok(Line::TooLong) => {
                    self.line.shrink_to(KEEP_LINE_CAPACITY);
                    self.reply_error(
                        ErrorCode::PARSE_ERROR,
                        format!(
                            "parse error: a line over {} MiB was dropped unread",
                            MAX_LINE_BYTES / (1024 * 1024)
                        ),
                        None,
                    );
                }
                Ok(Line::Eof) => {
                    self.flush_replies().await;
                    return None;
                }
                Err(e) => {
                    tracing::error!("mem mcp: reading stdin failed: {e}");
                    self.flush_replies().await;
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.flush_replies().await;
        Transport::<RoleServer>::close(&mut self.write).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: &str) {
        assert_eq!(replace_surrogate_escapes(text), expected);
    }

    #[test]
    fn surrogate_escapes_are_replaced_and_others_kept() {
        check(r#""\ud800""#, r#""\uFFFD""#);
        check(r#""a\uDC00b""#, r#""a\uFFFDb""#);
        check(r#""\u00e9\ud83d\ude00""#, r#""\u00e9\uFFFD\uFFFD""#);
        check(r#""\\ud800""#, r#""\\ud800""#);
        check(r#""\u12""#, r#""\u12""#);
    }

    #[test]
    fn the_id_of_a_line_with_bad_bytes_is_recovered() {
        let id = lenient_id(br#"{"id":5,"q":"\ud800"}"#);
        assert_eq!(id, Some(NumberOrString::Number(5)));
        let id = lenient_id(b"{\"id\":\"x\",\"q\":\"\xff\"}");
        assert_eq!(id, Some(NumberOrString::String("x".into())));
        assert_eq!(lenient_id(b"{\"id\":5,"), None);
    }
}
