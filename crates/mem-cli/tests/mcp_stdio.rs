//! `mem mcp` driven by raw bytes on its stdin (issue 27 item 15): every line that is not a
//! JSON-RPC message gets a JSON-RPC error reply (-32700 with id null, or the id where it can be
//! recovered) and the server keeps serving; a request before `initialize` is answered "not
//! initialized"; a line over the 16 MiB cap is answered without being buffered.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde_json::{Value, json};

const MEM: &str = env!("CARGO_BIN_EXE_mem");
/// How long a reply may take before the test calls it a hang.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// A `mem mcp` child with raw pipes, its stdout lines parsed on a thread.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Value>,
}

impl Server {
    fn start(project: &Path, home: &Path) -> Self {
        let mut c = Command::new(MEM);
        c.arg("--project")
            .arg(project)
            .arg("--home")
            .arg(home)
            .arg("mcp");
        for (k, _) in std::env::vars() {
            if k.starts_with("MEM_") || k.starts_with("OPENAI_") || k.starts_with("ANTHROPIC_") {
                c.env_remove(k);
            }
        }
        c.env("HOME", home).env("MEM_LOG", "off");
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, replies) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            replies,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        stdin
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("write: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    fn send(&mut self, v: &Value) {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next message on stdout; panics (the server hangs) after [`REPLY_TIMEOUT`].
    fn reply(&self, what: &str) -> Value {
        match self.replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => panic!("no reply to {what}: the client would hang"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("server exited before replying to {what}")
            }
        }
    }

    fn initialize(&mut self, id: i64) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        );
        let r = self.reply("initialize");
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["result"]["serverInfo"]["name"], "mewmem", "{r}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// A `memory_search` call that must succeed: the server still serves.
    fn still_serves(&mut self, id: i64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "flamingo"}}}));
        let r = self.reply("tools/call memory_search");
        assert_eq!(r["id"], id, "{r}");
        assert!(r["result"].is_object(), "not a result: {r}");
        assert_ne!(r["result"]["isError"], true, "{r}");
    }

    /// Peak resident set size of the server, in KiB (Linux `VmHWM`).
    fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (project, home) = (root.path().join("project"), root.path().join("home"));
    std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    (root, project, home)
}

fn assert_error(r: &Value, code: i64, id: &Value, what: &str) {
    assert_eq!(r["jsonrpc"], "2.0", "{what}: {r}");
    assert_eq!(r["error"]["code"], code, "{what}: {r}");
    assert_eq!(&r["id"], id, "{what}: {r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{what}: {r}"
    );
}

#[test]
fn a_request_before_initialize_is_answered_not_initialized_and_the_server_goes_on() {
    let (_root, project, home) = dirs();
    let mut s = Server::start(&project, &home);
    // A tools/call, a tools/list and a notification before `initialize`.
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "x"}}}));
    let r = s.reply("tools/call before initialize");
    assert_error(&r, -32600, &json!(1), "tools/call before initialize");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not initialized"), "{r}");
    s.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
    let r = s.reply("tools/list before initialize");
    assert_error(&r, -32600, &json!("list"), "tools/list before initialize");
    // A ping is allowed before initialize.
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    let r = s.reply("ping");
    assert_eq!(r["id"], 2, "{r}");
    assert!(r["result"].is_object(), "{r}");
    // Garbage before initialize is answered too.
    s.send_raw(b"{not json\n");
    let r = s.reply("garbage before initialize");
    assert_error(&r, -32700, &Value::Null, "garbage before initialize");
    s.initialize(3);
    s.still_serves(4);
}

#[test]
fn every_unparseable_line_gets_an_error_reply_and_the_server_keeps_serving() {
    let (_root, project, home) = dirs();
    let mut s = Server::start(&project, &home);
    s.initialize(1);
    // (what, raw line, expected code, expected id). The id is recovered where the line is
    // JSON but for its bytes (invalid UTF-8, a lone surrogate escape).
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        ("malformed JSON", b"{\"jsonrpc\": \"2.0\", \"id\": 7,".to_vec(), -32700, Value::Null),
        ("not JSON at all", b"hello there".to_vec(), -32700, Value::Null),
        ("a truncated string", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi".to_vec(), -32700, Value::Null),
        (
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_search\",\"arguments\":{\"query\":\"\xff\xfe\"}}}".to_vec(),
            -32700,
            json!(8),
        ),
        ("invalid UTF-8 alone", b"\xc3\x28\xa0\xa1".to_vec(), -32700, Value::Null),
        (
            "a lone \\ud800 escape",
            br#"{"jsonrpc":"2.0","id":"s9","method":"tools/call","params":{"name":"memory_search","arguments":{"query":"\ud800"}}}"#.to_vec(),
            -32700,
            json!("s9"),
        ),
        (
            "a lone low \\udc00 escape",
            br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"a\udc00b"}}}"#.to_vec(),
            -32700,
            json!(10),
        ),
        ("JSON that is not a message", b"[1, 2, 3]".to_vec(), -32600, Value::Null),
        ("a number", b"42".to_vec(), -32600, Value::Null),
        (
            "a request without a method",
            br#"{"jsonrpc":"2.0","id":11}"#.to_vec(),
            -32600,
            json!(11),
        ),
    ];
    let mut next = 100;
    for (what, mut line, code, id) in cases {
        line.push(b'\n');
        s.send_raw(&line);
        let r = s.reply(what);
        assert_error(&r, code, &id, what);
        s.still_serves(next);
        next += 1;
    }
    // Several bad lines in one write, then a good one: one reply each, in order.
    s.send_raw(b"{\n}{\n\xff\n");
    for what in ["`{`", "`}{`", "`\\xff`"] {
        let r = s.reply(what);
        assert_error(&r, -32700, &Value::Null, what);
    }
    s.still_serves(next);
}

#[test]
fn a_line_over_16_mib_is_answered_without_being_buffered() {
    let (_root, project, home) = dirs();
    let mut s = Server::start(&project, &home);
    s.initialize(1);
    let before = s.peak_rss_kib();
    // 256 MiB without a newline, in chunks, then the newline: far over the 16 MiB cap.
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..256 {
        s.send_raw(&chunk);
    }
    s.send_raw(b"\n");
    let r = s.reply("a 256 MiB line");
    assert_error(&r, -32700, &Value::Null, "a 256 MiB line");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("16 MiB")),
        "{r}"
    );
    s.still_serves(2);
    // A JSON request just over the cap: refused the same way, its id not recovered.
    let mut big = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":""#.to_vec();
    big.resize(16 * 1024 * 1024 + 10, b'q');
    big.extend_from_slice(b"\"}}}\n");
    s.send_raw(&big);
    let r = s.reply("a 16 MiB + 10 bytes request");
    assert_error(&r, -32700, &Value::Null, "a 16 MiB + 10 bytes request");
    s.still_serves(4);
    // The line was not buffered: the peak RSS grows by the cap (and the allocator's slack),
    // not by the 256 MiB sent (measured: about 50 MiB).
    if let (Some(before), Some(after)) = (before, s.peak_rss_kib()) {
        assert!(
            after < before + 96 * 1024,
            "peak RSS grew from {before} KiB to {after} KiB"
        );
    }
}
