//! Session search benchmark (`cargo bench -p mem-session --bench search`; issue 29: search over
//! 1 GB of imported sessions, p50 <= 50 ms).
//!
//! Writes session files (mewmem `.jsonl` records, the shape an import leaves) totalling
//! `MEM_BENCH_SEARCH_MB` megabytes (default 1024) in 2 MB sessions: turns of a user prompt, an
//! assistant answer with a tool call (a command and a path), a tool result (most are raw output
//! above the indexed size, some short), drawn from a Zipf-like vocabulary of 30,000 words with
//! some Chinese text. Then builds the index from nothing ([`SessionIndex::refresh`]), times an
//! incremental refresh after one appended turn, and runs 48 queries of six kinds (rare word, two
//! words, common word, file path, Chinese, no match), each 5 times, in process, printing p50
//! and p90 per kind and overall as a Markdown table. The data stays in the target's tmp dir
//! for reruns (`MEM_BENCH_SEARCH_FRESH=1` rebuilds it).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mem_session::{SessionIndex, SessionQuery, SessionStore};
use serde_json::json;

/// A small deterministic generator (xorshift), so every run indexes the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A word rank in 0..n, small ranks far more often (about Zipf's law).
    fn zipf(&mut self, n: u64) -> u64 {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64).powf(u) as u64).saturating_sub(1).min(n - 1)
    }
}

const VOCAB: u64 = 30_000;
const COMMON: &[&str] = &[
    "the", "to", "and", "a", "of", "in", "is", "it", "that", "for", "we", "this", "with", "on",
];
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ser", "tan", "vo", "dre", "qui", "zen", "pra", "lu", "nor", "fi", "gal",
    "bex", "tor", "wy", "che", "sul", "ran",
];
const CJK: &[&str] = &[
    "缓存",
    "数据库",
    "迁移",
    "测试",
    "部署",
    "配置",
    "索引",
    "日志",
    "接口",
    "权限",
];

fn word(rank: u64) -> String {
    if (rank as usize) < COMMON.len() {
        return COMMON[rank as usize].to_owned();
    }
    let mut r = rank;
    let mut w = String::new();
    loop {
        w.push_str(SYLLABLES[(r % SYLLABLES.len() as u64) as usize]);
        r /= SYLLABLES.len() as u64;
        if r == 0 {
            break;
        }
    }
    w
}

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = Vec::with_capacity(words);
    for _ in 0..words {
        if rng.next().is_multiple_of(40) {
            s.push(CJK[(rng.next() % CJK.len() as u64) as usize].to_owned());
        } else {
            s.push(word(rng.zipf(VOCAB)));
        }
    }
    s.join(" ")
}

fn turn_lines(rng: &mut Rng, i: usize) -> Vec<String> {
    let ts = format!("2026-11-{:02}T10:{:02}:00Z", 1 + i % 28, i % 60);
    let tool = format!("t{i}");
    let path = format!("src/{}/{}.rs", word(rng.zipf(VOCAB)), word(rng.zipf(VOCAB)));
    let output = if rng.next().is_multiple_of(5) {
        sentence(rng, 30)
    } else {
        // Raw output above the indexed size.
        sentence(rng, 900)
    };
    vec![
        json!({"type":"user","timestamp":ts,"message":{"role":"user","content":[{"type":"text","text":sentence(rng, 25)}]}}).to_string(),
        json!({"type":"assistant","timestamp":ts,"message":{"role":"assistant","content":[
            {"type":"text","text":sentence(rng, 60)},
            {"type":"tool_use","id":tool,"name":"Bash","input":{"command":format!("cargo test -p {} {}", word(rng.zipf(VOCAB)), path)}}]}}).to_string(),
        json!({"type":"tool_result","timestamp":ts,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":tool,"content":output}]}}).to_string(),
    ]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let megabytes: u64 = std::env::var("MEM_BENCH_SEARCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("search-bench-{megabytes}"));
    let fresh = std::env::var_os("MEM_BENCH_SEARCH_FRESH").is_some();
    let store = SessionStore::for_project(&root);
    if fresh || !root.join(".done").exists() {
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(store.dir()).unwrap_or_else(|e| panic!("bench dir: {e}"));
        let started = Instant::now();
        let mut rng = Rng(0x9e3779b97f4a7c15);
        let mut written: u64 = 0;
        let mut session = 0;
        let mut turn = 0;
        while written < megabytes << 20 {
            let path = store.jsonl_path(&format!("bench-{session:05}"));
            let mut f =
                BufWriter::new(File::create(&path).unwrap_or_else(|e| panic!("session file: {e}")));
            let mut bytes = 0;
            while bytes < 2 << 20 {
                for line in turn_lines(&mut rng, turn) {
                    bytes += line.len() as u64 + 1;
                    writeln!(f, "{line}").unwrap_or_else(|e| panic!("write: {e}"));
                }
                turn += 1;
            }
            f.flush().unwrap_or_else(|e| panic!("flush: {e}"));
            written += bytes;
            session += 1;
        }
        let _ = fs::remove_file(SessionIndex::path_for(&store));
        let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("index: {e}"));
        let gen_time = started.elapsed();
        let t = Instant::now();
        let report = index
            .refresh(&store)
            .unwrap_or_else(|e| panic!("refresh: {e}"));
        eprintln!(
            "wrote {session} sessions ({} MB) in {:.1} s; indexed {} messages in {:.1} s",
            written >> 20,
            gen_time.as_secs_f64(),
            report.added,
            t.elapsed().as_secs_f64()
        );
        fs::write(root.join(".done"), b"").unwrap_or_else(|e| panic!("marker: {e}"));
    }
    let mut index = SessionIndex::open(&store).unwrap_or_else(|e| panic!("index: {e}"));
    index
        .refresh(&store)
        .unwrap_or_else(|e| panic!("refresh: {e}"));
    let db_bytes = fs::metadata(SessionIndex::path_for(&store)).map_or(0, |m| m.len());
    let data_bytes: u64 = fs::read_dir(store.dir())
        .unwrap_or_else(|e| panic!("dir: {e}"))
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();

    // One appended turn: the incremental refresh reads only it.
    let ids = store.ids().unwrap_or_else(|e| panic!("ids: {e}"));
    let last = store.jsonl_path(ids.last().unwrap_or_else(|| panic!("no session")));
    let mut rng = Rng(42);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(&last)
        .unwrap_or_else(|e| panic!("append: {e}"));
    for line in turn_lines(&mut rng, 1) {
        writeln!(f, "{line}").unwrap_or_else(|e| panic!("write: {e}"));
    }
    drop(f);
    let t = Instant::now();
    let r = index
        .refresh(&store)
        .unwrap_or_else(|e| panic!("refresh: {e}"));
    let refresh_time = t.elapsed();
    assert_eq!(r.read, 1);

    let mut rng = Rng(7);
    let mut kinds: Vec<(&str, Vec<String>)> = vec![
        (
            "rare word",
            (0..8).map(|_| word(5_000 + rng.next() % 20_000)).collect(),
        ),
        (
            "two words",
            (0..8)
                .map(|_| {
                    format!(
                        "{} {}",
                        word(100 + rng.next() % 2_000),
                        word(100 + rng.next() % 2_000)
                    )
                })
                .collect(),
        ),
        (
            "common word",
            (0..8)
                .map(|i| format!("{} {}", COMMON[i % COMMON.len()], word(15 + i as u64)))
                .collect(),
        ),
        (
            "file path",
            (0..8)
                .map(|_| format!("src/{}/", word(rng.zipf(VOCAB))))
                .collect(),
        ),
        (
            "chinese",
            CJK.iter().take(8).map(|s| s.to_string()).collect(),
        ),
        (
            "no match",
            (0..8).map(|i| format!("zzqx{i}nothing")).collect(),
        ),
    ];
    println!(
        "session search, {} MB of sessions ({} files), index {} MB; incremental refresh after one turn: {}",
        data_bytes >> 20,
        ids.len(),
        db_bytes >> 20,
        ms(refresh_time)
    );
    println!();
    println!("| queries | p50 | p90 | hits (mean) |");
    println!("|---|---|---|---|");
    let mut all = Vec::new();
    for (kind, queries) in &mut kinds {
        let mut times = Vec::new();
        let mut hits = 0;
        for q in queries.iter() {
            for _ in 0..5 {
                let query = SessionQuery {
                    text: q.clone(),
                    limit: 10,
                    ..SessionQuery::default()
                };
                let t = Instant::now();
                let found = index
                    .search(&query)
                    .unwrap_or_else(|e| panic!("search: {e}"));
                times.push(t.elapsed());
                hits += found.len();
            }
        }
        times.sort();
        println!(
            "| {kind} | {} | {} | {:.1} |",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.9)),
            hits as f64 / times.len() as f64
        );
        all.extend(times);
    }
    all.sort();
    println!(
        "| all ({}) | {} | {} | |",
        all.len(),
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.9))
    );
}
