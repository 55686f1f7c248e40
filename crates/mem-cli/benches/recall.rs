//! Wall time of `mem recall` as a new process per turn, the way a hook or a script runs it
//! (`cargo bench -p mem-cli --bench recall`): `mem --project P --home H recall --offline --json
//! QUERY` over 200 notes (the labelled recall set's notes, `fixtures/recall/eval`, repeated under
//! new file names up to 200 in the project, the user notes in the home), for four kinds of
//! message (a short question, a long rambling one, Chinese with ASCII identifiers, a pasted error
//! of 40 lines). Per kind, 21 runs; `mem --version` (process start and exit only) runs in the
//! same loop as the floor. The first run fills the scan cache (`.mewcode/cache/`) and is
//! reported apart. The notes' modification times are set an hour back, as a user's notes are:
//! a file changed within the scan cache's racy window (2 s) is read again on every turn, so a
//! just-copied set would time the uncached path for the whole loop. Reported: p50 and max per kind, p50 minus the floor's p50, and the 1-minute
//! load average. Offline: no model, no network. The generated data is deleted at the end.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Sets `path`'s modification time an hour back (a note written before this turn).
fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(old))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn recall(project: &Path, home: &Path, query: &str) -> Duration {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mem"))
        .arg("--json")
        .arg("--project")
        .arg(project)
        .arg("--home")
        .arg(home)
        .args(["recall", "--offline", "--"])
        .arg(query)
        .env_remove("MEM_LLM_PROVIDER")
        .env("MEM_LOG", "off")
        .stderr(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let elapsed = t.elapsed();
    assert!(out.status.success());
    elapsed
}

/// `mem --version`: the cost of starting and ending the process.
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

fn load() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn sorted(mut v: Vec<Duration>) -> Vec<Duration> {
    v.sort();
    v
}

/// The `*.md` files of the labelled set: (user notes, project notes).
fn sources() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/recall/eval");
    let md = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md") && !p.ends_with("MEMORY.md"))
            .collect();
        v.sort();
        v
    };
    let user = md(&root.join("home/.mewcode/memory"));
    let mut project = Vec::new();
    let mut projects: Vec<PathBuf> = fs::read_dir(root.join("projects"))
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    projects.sort();
    for p in projects {
        project.extend(md(&p.join(".mewcode/memory")));
    }
    (user, project)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("recall-bench");
    let _ = fs::remove_dir_all(&root);
    let project = root.join("project");
    let home = root.join("home");
    let (user, notes) = sources();
    let home_dir = home.join(".mewcode/memory");
    let project_dir = project.join(".mewcode/memory");
    fs::create_dir_all(&home_dir).unwrap_or_else(|e| panic!("{e}"));
    fs::create_dir_all(&project_dir).unwrap_or_else(|e| panic!("{e}"));
    for f in &user {
        let to = home_dir.join(f.file_name().unwrap_or_default());
        fs::copy(f, &to).unwrap_or_else(|e| panic!("{e}"));
        age(&to);
    }
    let project_notes = 200 - user.len();
    for i in 0..project_notes {
        let src = &notes[i % notes.len()];
        let stem = src.file_stem().and_then(|s| s.to_str()).unwrap_or("note");
        let to = project_dir.join(format!("{stem}_{i:03}.md"));
        fs::copy(src, &to).unwrap_or_else(|e| panic!("{e}"));
        age(&to);
    }
    let trace: String = (0..40)
        .map(|k| {
            format!(
                "    at handler_{k} (src/routes/orders_{k}.ts:{}:17)\n",
                10 + k
            )
        })
        .collect();
    let queries = [
        (
            "short question",
            "how do I run the test suite locally?".to_owned(),
        ),
        (
            "long rambling (4 clauses)",
            "so the product team wants the shipping email to also include the tracking link, \
             I have no idea where those emails are built or how they get sent, could you walk \
             me through it and then make the change, and also check the tests"
                .to_owned(),
        ),
        (
            "Chinese with identifiers",
            "num_workers 设成 16 的时候 job 被 kill 了，exit code 137，怎么办".to_owned(),
        ),
        (
            "pasted error, 40 lines",
            format!("TypeError: cannot read properties of undefined\n{trace}what is wrong here?"),
        ),
    ];
    // The first run: the scan cache is written.
    let first = recall(&project, &home, &queries[0].1);
    let load_before = load();
    let mut floors = Vec::new();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); queries.len()];
    for _ in 0..21 {
        floors.push(floor());
        for (k, (_, q)) in queries.iter().enumerate() {
            times[k].push(recall(&project, &home, q));
        }
    }
    let load_after = load();
    let floors = sorted(floors);
    let floor_p50 = ms(floors[floors.len() / 2]);
    println!(
        "`mem recall --offline` as a new process, 200 notes ({} user, {project_notes} project), \
         21 runs per kind; load average {load_before} before, {load_after} after",
        user.len()
    );
    println!("first run (scan cache written): {:.1} ms", ms(first));
    println!("| message | p50 | max | p50 − floor |");
    println!("|---|---|---|---|");
    for ((kind, _), t) in queries.iter().zip(times) {
        let t = sorted(t);
        let p50 = ms(t[t.len() / 2]);
        println!(
            "| {kind} | {p50:.1} ms | {:.1} ms | {:.1} ms |",
            ms(t[t.len() - 1]),
            p50 - floor_p50
        );
    }
    println!(
        "| floor: `mem --version` | {floor_p50:.1} ms | {:.1} ms | – |",
        ms(floors[floors.len() - 1])
    );
    let _ = fs::remove_dir_all(&root);
}
