//! Session store benchmarks (`cargo bench -p mem-session`, also run by `cargo xtask bench`).
//!
//! Measures, each in a fresh child process so peak memory (VmHWM) belongs to one case:
//! - resume of sessions of 1 MB, 10 MB, 100 MB and 1 GB whose last boundary leaves a ~1 MB tail;
//! - append throughput (records/s) against a raw buffered write of the same bytes;
//! - token counting throughput (MB/s) on prose, code and base64-like text.
//!
//! Set `MEM_BENCH_SIZES=1,10` (MB) to limit the sizes. Results are printed as a Markdown table.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mem_core::{ContentBlock, Message, Role, TokenCounter};
use mem_session::{SessionRecord, SessionStore, make_compact_boundary};
use serde_json::json;

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("session-bench");
    let _ = fs::create_dir_all(&dir);
    dir
}

fn peak_rss_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

/// A realistic turn: a user request, an assistant tool call, a ~3 KB tool result.
fn turn(i: usize) -> [SessionRecord; 3] {
    let id = format!("toolu_{i:08}");
    let body: String = (0..40)
        .map(|k| format!("src/module_{k}/file_{i}.rs: fn handler_{k}() -> Result<()> {{ ok }}\n"))
        .collect();
    [
        SessionRecord::message(
            Message::user(format!("step {i}: run the tests and fix what fails")),
            Some("2026-11-30T00:00:00Z".into()),
        ),
        SessionRecord::message(
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::text("Running them."),
                    ContentBlock::tool_use(
                        &id,
                        "Bash",
                        json!({"command": "cargo test --workspace"}),
                    ),
                ],
            ),
            Some("2026-11-30T00:00:01Z".into()),
        ),
        SessionRecord::message(
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result(&id, body, false)],
            ),
            Some("2026-11-30T00:00:02Z".into()),
        ),
    ]
}

/// Writes (once) a session of about `mb` MB: history, one boundary, then a ~`tail_mb` MB tail.
fn make_session(mb: u64, tail_mb: u64) -> (SessionStore, String) {
    let dir = if tail_mb == 1 {
        data_dir().join(format!("resume-{mb}mb"))
    } else {
        data_dir().join(format!("resume-{mb}mb-tail{tail_mb}mb"))
    };
    let store = SessionStore::at(&dir);
    let id = "bench".to_owned();
    let path = store.jsonl_path(&id);
    if path.is_file() && store.meta_path(&id).is_file() {
        return (store, id);
    }
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_default();
    let mut out = BufWriter::new(File::create(&path).unwrap_or_else(|e| panic!("{e}")));
    let target = mb << 20;
    let tail = tail_mb << 20;
    let mut written = 0u64;
    let mut i = 0;
    let mut line = Vec::new();
    let mut push = |r: &SessionRecord, written: &mut u64, out: &mut BufWriter<File>| {
        line.clear();
        serde_json::to_writer(&mut line, r).unwrap_or_default();
        line.push(b'\n');
        out.write_all(&line).unwrap_or_default();
        *written += line.len() as u64;
    };
    while written + tail < target {
        for r in turn(i) {
            push(&r, &mut written, &mut out);
        }
        i += 1;
    }
    let kept: Vec<Message> = turn(i).into_iter().filter_map(|r| r.message).collect();
    push(
        &make_compact_boundary(
            "Summary of the work so far.",
            kept,
            Some("2026-11-30T00:00:03Z".into()),
        ),
        &mut written,
        &mut out,
    );
    i += 1;
    while written < target {
        for r in turn(i) {
            push(&r, &mut written, &mut out);
        }
        i += 1;
    }
    out.flush().unwrap_or_default();
    drop(out);
    // Build the meta once so resume measures the steady state.
    let _ = store.meta(&id);
    (store, id)
}

fn child_resume(mb: u64) {
    let (store, id) = make_session(mb, 1);
    let size = fs::metadata(store.jsonl_path(&id))
        .map(|m| m.len())
        .unwrap_or(0);
    let base_rss = peak_rss_kib();
    let mut times = Vec::new();
    let mut msgs = 0;
    let mut read = 0;
    for _ in 0..7 {
        let t = Instant::now();
        let r = store.resume(&id).unwrap_or_else(|e| panic!("{e}"));
        times.push(t.elapsed());
        msgs = r.messages.len();
        read = r.replay_bytes;
    }
    times.sort();
    println!(
        "RESULT resume {} {} {} {} {} {}",
        size,
        read,
        msgs,
        times[times.len() / 2].as_micros(),
        peak_rss_kib(),
        base_rss
    );
}

/// A session of `2 × tail_mb` MB whose last boundary leaves a `tail_mb` MB tail: resume (median
/// of 5) against reading the same tail once (the bytes read and parsed into records, nothing
/// else).
fn child_tail(tail_mb: u64) {
    use std::io::{BufReader, Read, Seek, SeekFrom};
    let (store, id) = make_session(2 * tail_mb, tail_mb);
    let path = store.jsonl_path(&id);
    let mut resume = Vec::new();
    let mut offset = 0;
    let mut msgs = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let r = store.resume(&id).unwrap_or_else(|e| panic!("{e}"));
        resume.push(t.elapsed());
        offset = r.replay_offset;
        msgs = r.messages.len();
    }
    let mut once = Vec::new();
    let mut records = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let mut file = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
        file.seek(SeekFrom::Start(offset)).unwrap_or_default();
        let reader = BufReader::with_capacity(1 << 16, file.take(u64::MAX));
        records = 0;
        for ev in mem_session::JsonlReader::starting_at(reader, &path, 1, offset) {
            if let mem_session::JsonlEvent::Value(v) = ev
                && serde_json::from_value::<SessionRecord>(v.value).is_ok()
            {
                records += 1;
            }
        }
        once.push(t.elapsed());
    }
    resume.sort();
    once.sort();
    let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "RESULT tail {size} {} {msgs} {records} {} {}",
        size - offset,
        resume[2].as_micros(),
        once[2].as_micros()
    );
}

fn child_append(n: usize) {
    let dir = data_dir().join("append");
    let _ = fs::remove_dir_all(&dir);
    let records: Vec<SessionRecord> = (0..n).flat_map(turn).collect();
    let store = SessionStore::at(&dir);
    let mut w = store
        .open_or_create("bench")
        .unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    for r in &records {
        w.append_records(std::slice::from_ref(r))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // The last meta write is part of the appends' cost.
    w.flush_meta().unwrap_or_else(|e| panic!("{e}"));
    let ours = t.elapsed();
    drop(w);
    // Appends leave the token count pending: the first reader that reports it counts it.
    let t = Instant::now();
    let meta = store.meta("bench").unwrap_or_else(|e| panic!("{e}"));
    let first_read = t.elapsed();
    assert!(meta.tokens_pending_from.is_none() && meta.token_count > 0);
    let bytes = fs::metadata(store.jsonl_path("bench"))
        .map(|m| m.len())
        .unwrap_or(0);
    let raw_path = dir.join("raw.jsonl");
    let t = Instant::now();
    let mut raw = BufWriter::new(File::create(&raw_path).unwrap_or_else(|e| panic!("{e}")));
    let mut line = Vec::new();
    for r in &records {
        line.clear();
        serde_json::to_writer(&mut line, r).unwrap_or_default();
        line.push(b'\n');
        raw.write_all(&line).unwrap_or_default();
    }
    raw.flush().unwrap_or_default();
    drop(raw);
    let buffered = t.elapsed();
    println!(
        "RESULT append {} {} {} {} {}",
        records.len(),
        bytes,
        ours.as_micros(),
        buffered.as_micros(),
        first_read.as_micros()
    );
}

fn child_tokens() {
    let counter = TokenCounter::default();
    let _ = counter.count("warm up the dictionaries");
    let prose =
        "The agent reads the repository, runs the tests, and explains what it changed and why. "
            .repeat(60_000);
    let code =
        "fn main() { let x: Vec<u32> = (0..10).map(|i| i * 2).collect(); println!(\"{x:?}\"); }\n"
            .repeat(60_000);
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b64: String = (0..5_000_000)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            alphabet[(s % 64) as usize] as char
        })
        .collect();
    // Real text: every bundled transcript (JSON lines of prose, code, tool output), as one string.
    let mut real = String::new();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts");
    for entry in walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            real.push_str(&String::from_utf8_lossy(
                &fs::read(entry.path()).unwrap_or_default(),
            ));
        }
    }
    for (name, text) in [
        ("real-transcripts", &real),
        ("repeated-prose", &prose),
        ("repeated-code", &code),
        ("base64", &b64),
    ] {
        let t = Instant::now();
        let n = counter.count(text);
        let el = t.elapsed();
        println!("RESULT tokens {name} {} {n} {}", text.len(), el.as_micros());
    }
}

fn run_child(args: &[&str]) -> Vec<String> {
    let exe = std::env::current_exe().unwrap_or_default();
    let out = Command::new(exe)
        .env("MEM_BENCH_CHILD", args.join(" "))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    if !out.status.success() {
        panic!(
            "bench child {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT ").map(str::to_owned))
        .collect()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn main() {
    if let Ok(child) = std::env::var("MEM_BENCH_CHILD") {
        let parts: Vec<&str> = child.split_whitespace().collect();
        match parts.as_slice() {
            ["make", mb] => {
                make_session(mb.parse().unwrap_or(1), 1);
            }
            ["tail", mb] => child_tail(mb.parse().unwrap_or(30)),
            ["resume", mb] => child_resume(mb.parse().unwrap_or(1)),
            ["append", n] => child_append(n.parse().unwrap_or(1000)),
            ["tokens"] => child_tokens(),
            _ => panic!("unknown bench child {child}"),
        }
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then do nothing heavy.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // MEM_BENCH_ONLY=resume,tail,append,tokens runs only those sections.
    let only = std::env::var("MEM_BENCH_ONLY").ok();
    let run = |section: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|s| s == section))
    };
    if run("tail") {
        let tail: u64 = std::env::var("MEM_BENCH_TAIL_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(30);
        println!("## Resume of a {tail} MB tail against reading it once (median of 5)\n");
        println!(
            "| session file | tail | messages replayed | resume | read + parse once | ratio |"
        );
        println!("|---|---|---|---|---|---|");
        for line in run_child(&["tail", &tail.to_string()]) {
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [file, read, msgs, _records, resume, once] = f.as_slice() {
                println!(
                    "| {:.0} MB | {:.1} MB | {msgs} | {:.1} ms | {:.1} ms | {:.2}× |",
                    mb(*file),
                    mb(*read),
                    ms(*resume),
                    ms(*once),
                    *resume as f64 / (*once).max(1) as f64
                );
            }
        }
        println!();
    }
    if run("resume") {
        let sizes: Vec<u64> = std::env::var("MEM_BENCH_SIZES")
            .ok()
            .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_else(|| vec![1, 10, 100, 1024]);
        println!(
            "## Resume (last boundary leaves a ~1 MB tail; median of 7; peak RSS of the process)\n"
        );
        println!("| session file | tail read | messages replayed | resume time | peak RSS |");
        println!("|---|---|---|---|---|");
        for size in &sizes {
            // Generate (once, cached) in its own process so the resume process's peak RSS is its own.
            run_child(&["make", &size.to_string()]);
            for line in run_child(&["resume", &size.to_string()]) {
                let f: Vec<u64> = line
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|x| x.parse().ok())
                    .collect();
                if let [file, read, msgs, us, rss, _] = f.as_slice() {
                    println!(
                        "| {:.0} MB | {:.2} MB | {msgs} | {:.2} ms | {:.1} MB |",
                        mb(*file),
                        mb(*read),
                        ms(*us),
                        *rss as f64 / 1024.0
                    );
                }
            }
        }
    }
    if run("append") {
        let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let lines = run_child(&["append", "3000"]);
        println!(
            "\n## Append (one record per call: lock, write, meta rename) vs a raw buffered write\n"
        );
        println!(
            "load average, 1 min, before the run: {}\n",
            load.split_whitespace().next().unwrap_or("?")
        );
        println!(
            "| records | bytes | mewmem append | records/s | raw BufWriter | records/s | ratio | \
             first meta read (counts the deferred tokens) |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for line in lines {
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [n, bytes, ours, raw, first_read] = f.as_slice() {
                let rate = |us: u64| *n as f64 / Duration::from_micros(us.max(1)).as_secs_f64();
                println!(
                    "| {n} | {:.1} MB | {:.1} ms | {:.0} | {:.1} ms | {:.0} | {:.1}× | {:.1} ms |",
                    mb(*bytes),
                    ms(*ours),
                    rate(*ours),
                    ms(*raw),
                    rate(*raw),
                    *ours as f64 / (*raw).max(1) as f64,
                    ms(*first_read)
                );
            }
        }
    }
    if run("tokens") {
        println!("\n## Token counting (o200k_base, bpe-openai)\n");
        println!("| text | size | tokens | time | MB/s |");
        println!("|---|---|---|---|---|");
        for line in run_child(&["tokens"]) {
            let parts: Vec<&str> = line.split_whitespace().collect();
            if let ["tokens", name, bytes, n, us] = parts.as_slice() {
                let (bytes, us): (u64, u64) = (bytes.parse().unwrap_or(0), us.parse().unwrap_or(1));
                println!(
                    "| {name} | {:.1} MB | {n} | {:.1} ms | {:.1} |",
                    mb(bytes),
                    ms(us),
                    mb(bytes) / Duration::from_micros(us.max(1)).as_secs_f64()
                );
            }
        }
    }
}
