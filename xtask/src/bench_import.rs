//! `cargo xtask bench import`: `mem session import` timed against a peer reader on the same
//! files, with peak resident memory.
//!
//! Builds, under `/tmp/mewmem-bench-import-<pid>/` (deleted at the end):
//! - a Claude Code folder (`claude/projects/c<k>/...`) of copies of the bundled transcripts
//!   (`fixtures/transcripts/claude`), each copy's file and folder names, `sessionId`s, message
//!   ids and request ids rewritten so every session is distinct, up to `MEM_BENCH_IMPORT_MB`
//!   (default 1024) MB;
//! - Codex rollouts (`codex/sessions/...`) copied from `fixtures/transcripts/codex` with their
//!   session ids rewritten, up to `MEM_BENCH_CODEX_MB` (default 100) MB;
//! - single Claude sessions of each size in `MEM_BENCH_SINGLE_MB` (default `100,250`) MB,
//!   made of the rewritten copies one after the other (message uuids and tool ids rewritten too,
//!   distinct in each copy as in a real long session).
//!
//! A size of 0 skips that input. `MEM_BENCH_REPEAT=N` runs each side N times, alternately, and
//! reports the fastest run of each; our peak RSS is the median over the runs (the allocator's
//! retained memory moves one run's peak by a few MiB), and with two sizes of single session or
//! more, a last line compares the smallest's median peak with the largest's. Besides wall time,
//! user + system CPU seconds are printed.
//!
//! Each input is imported by the release `mem` (or `MEM_BENCH_MEM`, a binary built already) into a fresh project, and read by ccusage
//! (`MEM_BENCH_PEER`, default `/tmp/ccusage/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage`;
//! install it with `npm install @ccusage/ccusage-linux-x64@20.0.24` in `/tmp/ccusage`) with
//! `claude session --json --offline` / `codex session --json --offline`, when installed. Wall
//! time and peak RSS come from `/usr/bin/time`; the 1-minute load average is printed with each
//! row (the machine is shared). Prints a Markdown table for `docs/BENCHMARKS.md`. A size of 0
//! skips that input (`MEM_BENCH_IMPORT_MB=0 MEM_BENCH_CODEX_MB=0 MEM_BENCH_SINGLE_MB=100,1024`
//! runs the single sessions alone); without the peer, mem's numbers are reported alone.
//!
//! Start it at least 5 minutes after deleting many files on the file system the projects are
//! made on (a previous run's, which deletes its projects at its end, counts): on ext4 without a
//! journal each new inode skips the ones freed in the last 60–300 s, which slows our side only
//! (two new files per session; the peer writes none): 27.6 % of a Codex import's samples right
//! after a delete (`docs/BENCHMARKS.md`). With `MEM_BENCH_KEEP`, delete the projects that earlier
//! runs kept there first (then wait those minutes): a page cache filled with them made our
//! writes (not the peer's: it writes nothing) up to ~40 % slower in this VM. Each input is
//! written back (`sync`) once built, before it is timed: left unwritten, it was waited for by
//! our durability writes (one reason the Codex row, timed right after its input was built,
//! read 3.7× where it read 2.6× alone).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::util::{cargo, repo_root, run_status};

const DEFAULT_PEER: &str = "/tmp/ccusage/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage";

fn env_mb(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs the import benchmark; `true` when every run worked.
pub fn run() -> Result<bool> {
    let root = repo_root();
    // MEM_BENCH_MEM: a `mem` binary built already (skips the release build).
    let mem = match std::env::var_os("MEM_BENCH_MEM") {
        Some(p) => PathBuf::from(p),
        None => {
            if !run_status(cargo().args(["build", "--release", "-p", "mem-cli"]))? {
                bail!("cargo build --release -p mem-cli failed");
            }
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("target"))
                .join("release/mem")
        }
    };
    let peer =
        PathBuf::from(std::env::var("MEM_BENCH_PEER").unwrap_or_else(|_| DEFAULT_PEER.into()));
    let peer = peer.is_file().then_some(peer);
    // MEM_BENCH_KEEP: a directory to build the inputs in and keep (reused by the next run with
    // the same sizes, for profiling); the default is a fresh directory deleted at the end.
    let keep = std::env::var_os("MEM_BENCH_KEEP").map(PathBuf::from);
    let work = keep.clone().unwrap_or_else(|| {
        PathBuf::from(format!("/tmp/mewmem-bench-import-{}", std::process::id()))
    });
    let result = run_in(&root, &mem, peer.as_deref(), &work, keep.is_some());
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    result
}

fn run_in(root: &Path, mem: &Path, peer: Option<&Path>, work: &Path, keep: bool) -> Result<bool> {
    // Everything is removed at the end, not between inputs: on ext4 without a journal (this
    // machine), creating files shortly (< 30 s) after thousands were deleted scans the
    // recently deleted inodes (`recently_deleted` was a quarter of an import's samples), which
    // would charge the next input's import with the previous one's clean-up.
    let mut trash: Vec<PathBuf> = Vec::new();
    let mut remove = |p: &Path| {
        if !keep {
            trash.push(p.to_owned());
        }
    };
    let claude_mb = env_mb("MEM_BENCH_IMPORT_MB", 1024);
    let codex_mb = env_mb("MEM_BENCH_CODEX_MB", 100);
    let singles: Vec<u64> = std::env::var("MEM_BENCH_SINGLE_MB")
        .unwrap_or_else(|_| "100,250".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .filter(|&mb: &u64| mb > 0)
        .collect();
    println!(
        "| input | mem import wall | mem CPU (user+sys) | mem peak RSS (median) | peer wall | peer CPU | \
         peer peak RSS | ratio (wall) | load (1 min) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut ok = true;

    // A size of 0 skips that input.
    if claude_mb > 0 {
        let claude = work.join("claude");
        let (files, bytes) = build_claude(root, &claude.join("projects"), claude_mb << 20)?;
        written_back()?;
        ok &= row(
            &format!("Claude Code folder, {} MB, {files} files", bytes >> 20),
            mem,
            &claude.join("projects"),
            &work.join("p1"),
            peer_run(peer, "claude", "CLAUDE_CONFIG_DIR", &claude),
        )?
        .ok;
        remove(&claude);
        remove(&work.join("p1"));
    }

    if codex_mb > 0 {
        let codex = work.join("codex");
        let (files, bytes) = build_codex(root, &codex.join("sessions/2025/01/01"), codex_mb << 20)?;
        written_back()?;
        ok &= row(
            &format!("Codex rollouts, {} MB, {files} files", bytes >> 20),
            mem,
            &codex.join("sessions"),
            &work.join("p2"),
            peer_run(peer, "codex", "CODEX_HOME", &codex),
        )?
        .ok;
        remove(&codex);
        remove(&work.join("p2"));
    }

    // (size in MB, median peak RSS in KiB) of each single session, for the flatness line.
    let mut single_rss: Vec<(u64, u64)> = Vec::new();
    for mb in singles.into_iter().filter(|&mb| mb > 0) {
        let dir = work.join(format!("single{mb}"));
        let project = dir.join("projects/one");
        std::fs::create_dir_all(&project)?;
        let bytes = build_single(root, &project.join("single.jsonl"), mb << 20)?;
        written_back()?;
        let done = row(
            &format!("one Claude Code session, {} MB", bytes >> 20),
            mem,
            &project.join("single.jsonl"),
            &work.join(format!("p3-{mb}")),
            peer_run(peer, "claude", "CLAUDE_CONFIG_DIR", &dir),
        )?;
        ok &= done.ok;
        single_rss.push((bytes >> 20, done.median_rss_kib));
        remove(&dir);
        remove(&work.join(format!("p3-{mb}")));
    }
    // By size, whatever the order of MEM_BENCH_SINGLE_MB.
    if let (Some(&(small_mb, small)), Some(&(large_mb, large))) = (
        single_rss.iter().min_by_key(|s| s.0),
        single_rss.iter().max_by_key(|s| s.0),
    ) && single_rss.len() > 1
    {
        println!(
            "\nSingle-session peak RSS, median of the runs: {small_mb} MB {:.1} MiB → {large_mb} \
             MB {:.1} MiB ({:+.1} %).",
            small as f64 / 1024.0,
            large as f64 / 1024.0,
            (large as f64 / small.max(1) as f64 - 1.0) * 100.0
        );
    }
    for p in trash {
        let _ = std::fs::remove_dir_all(p);
    }
    Ok(ok)
}

/// Writes back everything written so far (`sync`): the inputs just built are on the disk
/// before either side is timed, as a user's transcripts are. Left dirty, the first import's
/// durability writes would have waited for them (the peer writes nothing): 200 MiB written
/// just before made a 100 MB Codex import 0.99 s instead of 0.33 s when each batch synced the
/// whole file system.
fn written_back() -> Result<()> {
    if !run_status(&mut Command::new("sync"))? {
        bail!("sync failed");
    }
    Ok(())
}

/// What [`row`] measured of our side.
struct RowResult {
    /// Every run exited 0 or 3.
    ok: bool,
    /// The median of the runs' peak RSS, KiB.
    median_rss_kib: u64,
}

type PeerRun<'a> = (&'a Path, Vec<&'a str>, &'a str, PathBuf);

/// The peer's run on the same files, if it is installed: `<peer> <tool> session --json
/// --offline` with `home_var` set to `home` (where the tool looks for its transcripts).
fn peer_run<'a>(
    peer: Option<&'a Path>,
    tool: &'a str,
    home_var: &'a str,
    home: &Path,
) -> Option<PeerRun<'a>> {
    peer.map(|p| {
        (
            p,
            vec![tool, "session", "--json", "--offline"],
            home_var,
            home.to_owned(),
        )
    })
}

/// Times `mem session import input` in a fresh project and the peer on the same files; prints
/// one table row: each side's fastest run, and our median peak RSS over the runs.
fn row(
    label: &str,
    mem: &Path,
    input: &Path,
    project: &Path,
    peer: Option<PeerRun<'_>>,
) -> Result<RowResult> {
    let load = load_average();
    // MEM_BENCH_REPEAT=N: N alternate runs of each side (a fresh project for each of ours);
    // the fastest of each is reported.
    let repeat = env_mb("MEM_BENCH_REPEAT", 1).max(1);
    let mut ours: Option<Timed> = None;
    let mut theirs: Option<Timed> = None;
    let mut rss: Vec<u64> = Vec::new();
    let mut ok = true;
    let mut code = 0;
    let best = |a: Option<Timed>, b: Timed| Some(a.filter(|a| a.wall <= b.wall).unwrap_or(b));
    for k in 0..repeat {
        // A fresh project per run, removed by the caller at the end (with MEM_BENCH_KEEP, the
        // projects of earlier runs are kept: the next free name, never one already imported
        // into, which would time a re-import of unchanged sources).
        let project = (k..)
            .map(|n| project.join(format!("run{n}")))
            .find(|p| !p.exists())
            .unwrap_or_else(|| project.join("run"));
        std::fs::create_dir_all(&project)?;
        let mut cmd = Command::new(mem);
        cmd.args(["--project"])
            .arg(&project)
            .args(["session", "import"])
            .arg(input);
        let t = timed(cmd)?;
        // 0: all imported; 3: imported, with damaged lines (the bundled files have a few).
        if !matches!(t.code, 0 | 3) {
            ok = false;
            code = t.code;
        }
        rss.push(t.rss_kib);
        ours = best(ours, t);
        if let Some((bin, args, var, home)) = &peer {
            let mut cmd = Command::new(bin);
            cmd.args(args).env(var, home);
            let t = timed(cmd)?;
            if t.code != 0 {
                bail!(
                    "the peer {} exited with {} (is it executable?)",
                    bin.display(),
                    t.code
                );
            }
            theirs = best(theirs, t);
        }
    }
    let Some(ours) = ours else {
        return Ok(RowResult {
            ok: false,
            median_rss_kib: 0,
        });
    };
    rss.sort_unstable();
    // `rss` has a run at least (`ours` is one); of an even count, the mean of the middle two.
    let n = rss.len();
    let median_rss_kib = (rss[(n - 1) / 2] + rss[n / 2]) / 2;
    let fmt_s = |s: f64| format!("{s:.2} s");
    println!(
        "| {label} | {}{} | {} | {:.1} MiB | {} | {} | {} | {} | {load} |",
        fmt_s(ours.wall),
        if ok {
            String::new()
        } else {
            format!(" (exit {code})")
        },
        fmt_s(ours.cpu),
        median_rss_kib as f64 / 1024.0,
        theirs.map_or("not installed".into(), |t| fmt_s(t.wall)),
        theirs.map_or("-".into(), |t| fmt_s(t.cpu)),
        theirs.map_or("-".into(), |t| format!("{} MiB", t.rss_kib >> 10)),
        theirs.map_or("-".into(), |t| format!(
            "{:.1}×",
            ours.wall / t.wall.max(0.001)
        )),
    );
    Ok(RowResult { ok, median_rss_kib })
}

/// One timed run.
#[derive(Debug, Clone, Copy)]
struct Timed {
    code: i32,
    /// Wall seconds.
    wall: f64,
    /// User + system CPU seconds.
    cpu: f64,
    /// Peak resident set, KiB.
    rss_kib: u64,
}

/// Runs `cmd` under `/usr/bin/time`: exit code, wall and CPU seconds, peak RSS.
fn timed(cmd: Command) -> Result<Timed> {
    let out = std::env::temp_dir().join(format!("mewmem-bench-time-{}", std::process::id()));
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%e %M %U %S", "-o"])
        .arg(&out)
        .arg(program)
        .args(args)
        .envs(envs)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("/usr/bin/time")?;
    let text = std::fs::read_to_string(&out)?;
    let _ = std::fs::remove_file(&out);
    let last = text.lines().last().unwrap_or_default();
    let mut parts = last.split_whitespace();
    let mut num = || -> f64 { parts.next().and_then(|s| s.parse().ok()).unwrap_or(0.0) };
    let wall = num();
    let rss_kib = num() as u64;
    let cpu = num() + num();
    Ok(Timed {
        code: status.code().unwrap_or(-1),
        wall,
        cpu,
        rss_kib,
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

/// The bundled `.jsonl` files under `dir`, recursive, with their paths relative to `dir`.
fn jsonl_files(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let rel = p.strip_prefix(dir).map(Path::to_owned).unwrap_or_default();
                out.push((p, rel));
            }
        }
    }
    out.sort();
    out
}

/// One Claude Code file rewritten for copy `k`: session ids, message ids and request ids
/// made distinct.
fn rewrite_claude(text: &str, k: usize) -> String {
    text.replace("\"sessionId\":\"", &format!("\"sessionId\":\"c{k}-"))
        .replace("\"id\":\"msg_", &format!("\"id\":\"msg_c{k}_"))
        .replace(
            "\"requestId\":\"req_",
            &format!("\"requestId\":\"req_c{k}_"),
        )
}

/// Rewrites message uuids and tool ids, made distinct for each copy (as those of a real long
/// session are: the state an import keeps per id grows with them).
struct IdRewriter {
    uuid: regex::Regex,
    tool: regex::Regex,
}

impl IdRewriter {
    fn new() -> Result<IdRewriter> {
        Ok(IdRewriter {
            uuid: regex::Regex::new(
                r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{6}",
            )?,
            tool: regex::Regex::new(r"(toolu_|call_)([A-Za-z0-9]{6,})")?,
        })
    }

    /// `text` for copy `k`: the first six hex digits of each uuid's last group become `k`,
    /// and `toolu_` / `call_` ids get a `k<k>x` prefix.
    fn rewrite(&self, text: &str, k: usize) -> String {
        let text = self
            .uuid
            .replace_all(text, |c: &regex::Captures<'_>| format!("{}{k:06x}", &c[1]));
        self.tool
            .replace_all(&text, |c: &regex::Captures<'_>| {
                format!("{}k{k}x{}", &c[1], &c[2])
            })
            .into_owned()
    }
}

/// A relative path made distinct for copy `k`: every folder and file stem gets `-c<k>`, except
/// `subagents` folders and `agent-*` files (whose parent comes from the folder or `sessionId`).
fn rename(rel: &Path, k: usize) -> PathBuf {
    let mut out = PathBuf::new();
    let n = rel.components().count();
    for (i, c) in rel.components().enumerate() {
        let name = c.as_os_str().to_string_lossy().into_owned();
        let keep = name == "subagents" || name.starts_with("agent-");
        let renamed = if keep {
            name
        } else if i + 1 == n {
            match name.strip_suffix(".jsonl") {
                Some(stem) => format!("{stem}-c{k}.jsonl"),
                None => name,
            }
        } else {
            format!("{name}-c{k}")
        };
        out.push(renamed);
    }
    out
}

fn build_claude(root: &Path, dest: &Path, target: u64) -> Result<(usize, u64)> {
    let files = jsonl_files(&root.join("fixtures/transcripts/claude"));
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .filter_map(|(p, rel)| Some((rel.clone(), std::fs::read_to_string(p).ok()?)))
        .collect();
    let (mut bytes, mut count, mut k) = (0u64, 0usize, 0usize);
    while bytes < target {
        for (rel, text) in &texts {
            let path = dest.join(format!("c{k}")).join(rename(rel, k));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let body = rewrite_claude(text, k);
            bytes += body.len() as u64;
            count += 1;
            std::fs::write(&path, body)?;
        }
        k += 1;
    }
    Ok((count, bytes))
}

fn build_single(root: &Path, dest: &Path, target: u64) -> Result<u64> {
    use std::io::Write;
    let files = jsonl_files(&root.join("fixtures/transcripts/claude"));
    // Main session files only (no subagents), each a valid Claude Code transcript.
    let texts: Vec<String> = files
        .iter()
        .filter(|(_, rel)| {
            rel.components().count() <= 2 && !rel.to_string_lossy().contains("agent-")
        })
        .filter_map(|(p, _)| std::fs::read_to_string(p).ok())
        .filter(|t| t.trim_start().starts_with("{\"") && t.lines().nth(1).is_some())
        .collect();
    let ids = IdRewriter::new()?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(dest)?);
    let (mut bytes, mut k) = (0u64, 0usize);
    while bytes < target {
        for text in &texts {
            let body = ids.rewrite(&rewrite_claude(text, k), k);
            out.write_all(body.as_bytes())?;
            if !body.ends_with('\n') {
                out.write_all(b"\n")?;
            }
            bytes += body.len() as u64 + 1;
        }
        k += 1;
    }
    out.flush()?;
    Ok(bytes)
}

fn build_codex(root: &Path, dest: &Path, target: u64) -> Result<(usize, u64)> {
    std::fs::create_dir_all(dest)?;
    let files = jsonl_files(&root.join("fixtures/transcripts/codex"));
    let texts: Vec<(String, String, Option<String>)> = files
        .iter()
        .filter_map(|(p, rel)| {
            let text = std::fs::read_to_string(p).ok()?;
            let first: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
            let id = first
                .pointer("/payload/id")
                .or_else(|| first.get("id"))
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            let stem = rel.file_stem()?.to_string_lossy().into_owned();
            Some((stem, text, id))
        })
        .collect();
    let (mut bytes, mut count, mut k) = (0u64, 0usize, 0usize);
    while bytes < target {
        for (stem, text, id) in &texts {
            let body = match id {
                Some(id) if id.len() > 8 => {
                    let new = format!("{}{:08x}", &id[..id.len() - 8], k);
                    text.replace(id.as_str(), &new)
                }
                _ => text.clone(),
            };
            let name = format!("rollout-2025-01-01T00-00-00-{stem}-c{k}.jsonl");
            bytes += body.len() as u64;
            count += 1;
            std::fs::write(dest.join(name), body)?;
        }
        k += 1;
    }
    Ok((count, bytes))
}
