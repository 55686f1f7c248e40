//! Wall time of `mem hook claude ...` as Claude Code runs it: a new process per event, payload on
//! stdin (`cargo bench -p mem-cli --bench hooks`).
//!
//! The project holds 200 memory notes, 10,000 learnings in the tier store (imported from an
//! archive) and a Claude Code transcript of `MEM_BENCH_MB` MB (default 100), imported (and its
//! messages extracted) once by a first `Stop`. Then, 11 times each: `SessionStart` (instructions,
//! memories.md, Tier 0 of the 10,000 learnings), `UserPromptSubmit` (recall over the 200 notes,
//! offline selector) and `Stop` after the transcript grew by one turn (incremental sync +
//! offline extraction of the new messages only); then `SessionStart` 11 times more with the
//! remembered Tier 0 token count deleted before each run (the vocabulary loaded every time).
//! The learnings are ~190 characters, so Tier 0 has more bytes than its 500-token budget and is
//! counted (once, then remembered). Reported: p50 and max, process start included,
//! beside a floor measured in the same loop (`mem --version`: process start and exit only) and
//! the 1-minute load average. Offline: no model, no network. The generated data is deleted at
//! the end.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

fn turn(i: usize) -> Vec<String> {
    let ts = "2026-11-30T00:00:00.000Z";
    let body: String = (0..40)
        .map(|k| format!("src/module_{k}/file_{i}.rs: fn handler_{k}() -> Result<()> {{ ok }}\n"))
        .collect();
    let tool = format!("toolu_{i:08}");
    [
        json!({"type":"user","uuid":format!("u{i}"),"sessionId":"bench","timestamp":ts,
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
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

fn hook(project: &Path, home: &Path, event: &str, payload: &serde_json::Value) -> Duration {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mem"))
        .args(["--project"])
        .arg(project)
        .arg("--home")
        .arg(home)
        .args(["hook", "claude", event])
        .env_remove("MEM_LLM_PROVIDER")
        .env("MEM_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    t.elapsed()
}

/// `mem --version`: the cost of starting and ending the process, the floor of every hook.
fn floor() -> Duration {
    let t = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_mem"))
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    t.elapsed()
}

/// The 1-minute load average (`/proc/loadavg`), or `?` where there is none.
fn load() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn p50(v: &[Duration]) -> f64 {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    format!(
        "{:.1} ms | {:.1} ms",
        v[v.len() / 2].as_secs_f64() * 1000.0,
        v[v.len() - 1].as_secs_f64() * 1000.0
    )
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mb: u64 = std::env::var("MEM_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hook-bench");
    let _ = fs::remove_dir_all(&root);
    let project = root.join("project");
    let home = root.join("home");
    fs::create_dir_all(project.join(".mewcode/memory")).unwrap_or_default();
    fs::create_dir_all(&home).unwrap_or_default();
    for i in 0..200 {
        let text = format!(
            "---\nname: Note {i} about module {i}\ndescription: How module {i} handles its errors and tests\ntype: project\n---\nModule {i} returns typed errors; its tests run with `cargo test -p module-{i}`.\n"
        );
        fs::write(
            project.join(format!(".mewcode/memory/note_{i:03}.md")),
            text,
        )
        .unwrap_or_default();
    }
    // 10,000 learnings (user-wide: visible in the project), imported as one archive.
    let learnings: Vec<serde_json::Value> = (0..10_000i64)
        .map(|i| {
            let category = ["error", "best-practice", "general"][(i % 3) as usize];
            json!({"id": i + 1, "title": format!("Lesson {i} about subsystem {}", i % 97),
                   "content": format!("Subsystem {} fails when its cache {i} is cold; warm it with `make \
                       warm-cache SUBSYSTEM={}` and check the hit ratio on the dashboard before \
                       running the integration tests again.", i % 97, i % 97),
                   "category": category,
                   "tags": [format!("s{}", i % 97)], "context": null, "project_key": null,
                   "created_ms": 1_780_000_000_000i64 + i * 60_000,
                   "last_used_ms": 1_780_000_000_000i64 + i * 60_000})
        })
        .collect();
    let archive = root.join("learnings.json");
    fs::write(
        &archive,
        json!({"format": "mewmem-memory-archive", "version": 1, "learnings": learnings})
            .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_mem"))
        .arg("--project")
        .arg(&project)
        .arg("--home")
        .arg(&home)
        .args(["memory", "import"])
        .arg(&archive)
        .env("HOME", &home)
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
    let import_ms = t.elapsed().as_secs_f64() * 1000.0;
    let transcript = root.join("bench.jsonl");
    let mut out = BufWriter::new(File::create(&transcript).unwrap_or_else(|e| panic!("{e}")));
    let mut written = 0u64;
    let mut turns = 0;
    while written < mb << 20 {
        for line in turn(turns) {
            out.write_all(line.as_bytes()).unwrap_or_default();
            written += line.len() as u64;
        }
        turns += 1;
    }
    out.flush().unwrap_or_default();
    drop(out);
    let stop = json!({"session_id":"bench","transcript_path":transcript,"hook_event_name":"Stop","stop_hook_active":false});
    // The first import of the whole transcript (once per session in real use).
    let first = hook(&project, &home, "Stop", &stop);
    let mut start_times = Vec::new();
    let mut prompt_times = Vec::new();
    let mut stop_times = Vec::new();
    let mut floor_times = Vec::new();
    let load_before = load();
    for k in 0..11 {
        floor_times.push(floor());
        let start = json!({"session_id":"bench","transcript_path":transcript,
            "hook_event_name":"SessionStart","source":"startup"});
        start_times.push(hook(&project, &home, "SessionStart", &start));
        let prompt = json!({"session_id":"bench","transcript_path":transcript,
            "hook_event_name":"UserPromptSubmit",
            "prompt": format!("how are errors of module {} tested?", k * 7)});
        prompt_times.push(hook(&project, &home, "UserPromptSubmit", &prompt));
        let mut f = OpenOptions::new()
            .append(true)
            .open(&transcript)
            .unwrap_or_else(|e| panic!("{e}"));
        for line in turn(turns + k) {
            f.write_all(line.as_bytes()).unwrap_or_default();
        }
        drop(f);
        stop_times.push(hook(&project, &home, "Stop", &stop));
    }
    // SessionStart without the remembered Tier 0 count: every run loads the vocabulary.
    let cache = home.join(".mewcode/tiers/cache/token-counts");
    let mut cold_times = Vec::new();
    for _ in 0..11 {
        let _ = fs::remove_file(&cache);
        let start = json!({"session_id":"bench","transcript_path":transcript,
            "hook_event_name":"SessionStart","source":"startup"});
        cold_times.push(hook(&project, &home, "SessionStart", &start));
    }
    println!(
        "transcript {mb} MB, 200 notes, 10,000 learnings (import: {import_ms:.0} ms); first Stop \
         (whole import + extraction of every message): {:.0} ms\n",
        first.as_secs_f64() * 1000.0
    );
    let base = p50(&floor_times);
    println!(
        "load average (1 min) {load_before} before, {} after; floor `mem --version` p50 {base:.1} ms\n",
        load()
    );
    println!(
        "p50 / floor: SessionStart {:.1}x, UserPromptSubmit {:.1}x, Stop {:.1}x\n",
        p50(&start_times) / base,
        p50(&prompt_times) / base,
        p50(&stop_times) / base
    );
    println!("| hook | p50 | max |");
    println!("|---|---|---|");
    println!(
        "| (floor) `mem --version` | {} |",
        stats(floor_times.clone())
    );
    println!(
        "| SessionStart (instructions, memories.md, Tier 0 of 10,000 learnings) | {} |",
        stats(start_times)
    );
    println!(
        "| SessionStart, Tier 0 count not remembered (cache deleted before each run) | {} |",
        stats(cold_times)
    );
    println!(
        "| UserPromptSubmit (recall, 200 notes) | {} |",
        stats(prompt_times)
    );
    println!(
        "| Stop (+1 turn: sync + extraction) | {} |",
        stats(stop_times)
    );
    // The 100 MB of generated data is not kept.
    let _ = fs::remove_dir_all(&root);
}
