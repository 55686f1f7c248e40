//! Running one case: temp dirs, commands, snapshots, transcript, comparison.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::Outcome;
use super::case::{self, Placeholders};
use super::normalize::{Normalizer, trim_trailing_whitespace};

/// A command that runs longer than this is killed and the case fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Environment variable prefixes removed so a golden never reaches a model or the network
/// (`MEM_` too: the harness sets the one it wants, `MEM_LOG=off`; `CODEX_`: `CODEX_HOME` moves
/// where `mem hook install --agent codex` writes).
const REMOVED_ENV_PREFIXES: [&str; 5] = ["MEM_", "OPENAI_", "ANTHROPIC_", "MEWMEM_", "CODEX_"];

/// Runs the case in `case_dir` with the binary `mem` and compares (or writes) `expected.txt`.
pub fn run_case(mem: &Path, root: &Path, case_dir: &Path, bless: bool) -> Result<Outcome> {
    let spec = case::parse(&std::fs::read_to_string(case_dir.join("cmd"))?)?;
    let tmp = tempfile::Builder::new().prefix("mem-golden-").tempdir()?;
    let tmp_root = tmp.path().canonicalize()?;
    let project = tmp_root.join("project");
    let home = tmp_root.join("home");
    for (name, dest) in [("project", &project), ("home", &home)] {
        let src = case_dir.join(name);
        if src.is_dir() {
            copy_tree(&src, dest)?;
        } else {
            std::fs::create_dir_all(dest)?;
        }
    }
    let placeholders = Placeholders {
        root: root.to_path_buf(),
        case: case_dir.to_path_buf(),
        project: project.clone(),
        home: home.clone(),
    };

    let mut transcript = String::new();
    for cmd in &spec.commands {
        let args = case::arguments(cmd, &placeholders)?;
        let mut command = Command::new(mem);
        command.args(&args).current_dir(&project);
        set_env(&mut command, &home);
        let run = run_with_timeout(command, COMMAND_TIMEOUT)?;
        transcript.push_str(&format!("$ {}\n", cmd.text));
        push_output(&mut transcript, &run.stdout);
        if !run.stderr.is_empty() {
            transcript.push_str("[stderr]\n");
            push_output(&mut transcript, &run.stderr);
        }
        match run.status {
            Status::Exited(0) => {}
            Status::Exited(code) => transcript.push_str(&format!("[exit {code}]\n")),
            Status::Signal => transcript.push_str("[killed by a signal]\n"),
            Status::TimedOut => transcript.push_str("[timed out: killed]\n"),
        }
    }
    for pattern in &spec.files {
        snapshot(&mut transcript, &tmp_root, pattern)?;
    }

    let normalizer = Normalizer::new(&project, &home, root)?;
    let actual = normalizer.normalize(&transcript);
    let expected_path = case_dir.join("expected.txt");
    let expected = match std::fs::read(&expected_path) {
        Ok(bytes) => Some(trim_trailing_whitespace(&String::from_utf8_lossy(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).context(format!("cannot read {}", expected_path.display())),
    };
    match expected {
        None => {
            std::fs::write(&expected_path, &actual)?;
            Ok(Outcome::New)
        }
        Some(e) if e == actual => Ok(Outcome::Passed),
        Some(_) if bless => {
            std::fs::write(&expected_path, &actual)?;
            Ok(Outcome::Updated)
        }
        Some(e) => Ok(Outcome::Failed(diff(&e, &actual))),
    }
}

/// The environment of every command: inherited, less anything that could reach a model, plus
/// the fixed values that make output stable.
fn set_env(command: &mut Command, home: &Path) {
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if REMOVED_ENV_PREFIXES.iter().any(|p| k.starts_with(p)) {
            command.env_remove(&key);
        }
    }
    command
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("MEM_LOG", "off")
        .env("TZ", "UTC")
        .env("COLUMNS", "100")
        .stdin(Stdio::null());
}

/// Appends command output; text that does not end with a newline gets one, followed by a line
/// saying so, so the transcript stays exact.
fn push_output(out: &mut String, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    out.push_str(&String::from_utf8_lossy(bytes));
    if !bytes.ends_with(b"\n") {
        out.push_str("\n[no newline at end]\n");
    }
}

/// Appends `=== path ===` + content for every file matching `pattern` under `tmp_root`.
fn snapshot(out: &mut String, tmp_root: &Path, pattern: &str) -> Result<()> {
    let full = tmp_root.join(pattern);
    let mut paths: Vec<PathBuf> = glob::glob(&full.to_string_lossy())
        .with_context(|| format!("bad `files:` glob {pattern}"))?
        .filter_map(Result::ok)
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        out.push_str(&format!("=== {pattern} ===\n[no file matches]\n"));
    }
    for path in paths {
        let rel = path.strip_prefix(tmp_root).unwrap_or(&path);
        out.push_str(&format!("=== {} ===\n", rel.to_string_lossy()));
        let bytes = std::fs::read(&path)?;
        match std::str::from_utf8(&bytes) {
            Ok(_) => push_output(out, &bytes),
            Err(_) => out.push_str(&format!("[binary, {} bytes]\n", bytes.len())),
        }
    }
    Ok(())
}

/// Copies a directory tree; symlinks are recreated as symlinks (not followed).
pub(crate) fn copy_tree(src: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let from = entry.path();
        let to = dest.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&from)?;
            symlink(&target, &to)?;
        } else if kind.is_dir() {
            copy_tree(&from, &to)?;
        } else {
            std::fs::copy(&from, &to).with_context(|| format!("cannot copy {}", from.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, link)
        .with_context(|| format!("cannot create symlink {}", link.display()))
}

#[cfg(not(unix))]
fn symlink(_target: &Path, link: &Path) -> Result<()> {
    bail!(
        "cannot recreate symlink {} on this platform",
        link.display()
    )
}

/// How a command ended.
enum Status {
    Exited(i32),
    Signal,
    TimedOut,
}

/// Captured output of a command.
struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: Status,
}

/// Runs `command` with piped output, killing it after `timeout`.
fn run_with_timeout(mut command: Command, timeout: Duration) -> Result<Run> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {command:?}"))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break match s.code() {
                Some(code) => Status::Exited(code),
                None => Status::Signal,
            };
        }
        if start.elapsed() > timeout {
            child.kill()?;
            child.wait()?;
            break Status::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let join = |h: std::thread::JoinHandle<Vec<u8>>| match h.join() {
        Ok(v) => Ok(v),
        Err(_) => bail!("output reader thread panicked"),
    };
    Ok(Run {
        stdout: join(out)?,
        stderr: join(err)?,
        status,
    })
}

/// A unified diff from `expected` to `actual`.
fn diff(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("expected.txt", "actual")
        .to_string()
}
