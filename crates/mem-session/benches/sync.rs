//! Incremental transcript sync benchmark (`cargo bench -p mem-session --bench sync`).
//!
//! A Claude Code transcript of 1, 10 and 100 MB (realistic turns: a prompt, streamed assistant
//! lines with a tool call, a ~3 KB tool result, a closing answer) is imported whole once; then,
//! seven times, one new turn (4 lines) is appended to it and `import_into` runs again. The sync
//! must cost the same whatever the file's size. Set `MEM_BENCH_SIZES=1,10` (MB) to limit the
//! sizes. Results are printed as a Markdown table.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mem_session::SessionStore;
use mem_session::ingest::{IngestAction, import_into};
use serde_json::json;

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sync-bench");
    let _ = fs::create_dir_all(&dir);
    dir
}

/// The lines of one Claude Code turn, numbered `i`.
fn turn(i: usize) -> Vec<String> {
    let ts = "2026-11-30T00:00:00.000Z";
    let body: String = (0..40)
        .map(|k| format!("src/module_{k}/file_{i}.rs: fn handler_{k}() -> Result<()> {{ ok }}\n"))
        .collect();
    let tool = format!("toolu_{i:08}");
    let lines = [
        json!({"type":"user","uuid":format!("u{i}"),"parentUuid":null,"sessionId":"bench",
               "timestamp":ts,"cwd":"/work/p",
               "message":{"role":"user","content":format!("step {i}: run the tests and fix what fails")}}),
        json!({"type":"assistant","uuid":format!("a{i}"),"sessionId":"bench","timestamp":ts,
               "message":{"id":format!("msg_{i}a"),"role":"assistant","model":"m",
                          "content":[{"type":"tool_use","id":tool,"name":"Bash",
                                      "input":{"command":"cargo test --workspace"}}]}}),
        json!({"type":"user","uuid":format!("r{i}"),"sessionId":"bench","timestamp":ts,
               "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tool,
                                                    "content":body}]}}),
        json!({"type":"assistant","uuid":format!("b{i}"),"sessionId":"bench","timestamp":ts,
               "message":{"id":format!("msg_{i}b"),"role":"assistant","model":"m",
                          "content":[{"type":"text","text":"All tests pass now."}]}}),
    ];
    lines.iter().map(|v| format!("{v}\n")).collect()
}

/// Writes a transcript of about `mb` MB; returns how many turns it holds.
fn make_transcript(path: &Path, mb: u64) -> usize {
    let mut out = BufWriter::new(File::create(path).unwrap_or_else(|e| panic!("{e}")));
    let mut written = 0u64;
    let mut i = 0;
    while written < mb << 20 {
        for line in turn(i) {
            out.write_all(line.as_bytes()).unwrap_or_default();
            written += line.len() as u64;
        }
        i += 1;
    }
    out.flush().unwrap_or_default();
    i
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then do nothing heavy.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let sizes: Vec<u64> = std::env::var("MEM_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 10, 100]);
    println!("| transcript | whole import | sync after +1 turn (median of 7) | lines read |");
    println!("|---|---|---|---|");
    for mb in sizes {
        let dir = data_dir().join(format!("{mb}mb"));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_default();
        let src = dir.join("bench.jsonl");
        let turns = make_transcript(&src, mb);
        let store = SessionStore::for_project(&dir.join("project"));
        let t = Instant::now();
        import_into(&store, &src).unwrap_or_else(|e| panic!("{e}"));
        let whole = t.elapsed();
        let mut times = Vec::new();
        let mut lines = 0;
        for next in turns..turns + 7 {
            let mut f = OpenOptions::new()
                .append(true)
                .open(&src)
                .unwrap_or_else(|e| panic!("{e}"));
            for line in turn(next) {
                f.write_all(line.as_bytes()).unwrap_or_default();
            }
            drop(f);
            let t = Instant::now();
            let got = import_into(&store, &src).unwrap_or_else(|e| panic!("{e}"));
            times.push(t.elapsed());
            assert_eq!(got[0].action, IngestAction::Appended);
            lines = got[0].report.lines;
        }
        times.sort();
        let size = fs::metadata(&src).map(|m| m.len()).unwrap_or(0);
        println!(
            "| {:.0} MB | {:.0} ms | {:.2} ms | {lines} |",
            size as f64 / f64::from(1 << 20),
            whole.as_secs_f64() * 1000.0,
            times[times.len() / 2].as_secs_f64() * 1000.0
        );
    }
}
