//! `mem hook install` / `uninstall`: merging mewmem's hook entries into an agent's hook
//! configuration, keeping every other setting and hook: Claude Code's `settings.json`, or Codex
//! CLI's `hooks.json` ([`Agent`]).
//!
//! Both files have the same shape: `{"hooks": {"<Event>": [{"matcher": "...", "hooks":
//! [{"type": "command", "command": "...", "timeout": N}]}]}}` (Codex reads it from
//! `~/.codex/hooks.json` or `<repo>/.codex/hooks.json`, with the same event names and handler
//! fields as Claude Code). An entry is mewmem's when its command's last three words are
//! `hook <agent> <Event>` (`hook claude Stop`, `hook codex Stop`). Installing adds one group per
//! event (or updates mewmem's command in place), so running it twice changes nothing. The old
//! file is copied to `<name>.bak` (`.bak.2`, `.bak.3`... when taken) before it is replaced, and
//! the new one is written atomically (temporary file in the same folder, fsync, rename). Key
//! order and every unknown key are kept.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::hook::ClaudeEvent;

/// The agent whose hook configuration is changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code: `settings.json`, every [`ClaudeEvent`], commands `mem hook claude <Event>`.
    Claude,
    /// Codex CLI: `hooks.json`, commands `mem hook codex <Event>`, for the events of
    /// [`Agent::events`]. Codex has no `SessionEnd` in most versions (and caps it at a few
    /// seconds where it has one); `Stop` already brings the session record up to date after
    /// every turn.
    Codex,
}

impl Agent {
    /// The word of the hook command: `claude` or `codex`.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    /// The instruction files of `project`'s root that this client itself puts in the model's
    /// context, so that the SessionStart hook leaves them out (each would reach the model
    /// twice); measured with the pinned clients of the real-client suite
    /// (`crates/mem-cli/tests/real_clients.rs`, `docs/INTEGRATION.md`):
    ///
    /// - Claude Code 2.1.328 loads `CLAUDE.md`, and `AGENTS.md` when the folder has no
    ///   `CLAUDE.md` ("Contents of …/AGENTS.md");
    /// - Codex CLI 0.169.0 loads `AGENTS.override.md`, else `AGENTS.md` (as a user message
    ///   `# AGENTS.md instructions for …`).
    ///
    /// Only existing files are listed; `project/.mewcode/` and `~/.mewcode/` are mewmem's own
    /// places, which neither client reads.
    pub fn loads_itself(self, project: &Path) -> Vec<PathBuf> {
        let names: &[&str] = match self {
            Agent::Claude if project.join("CLAUDE.md").exists() => &["CLAUDE.md"],
            Agent::Claude => &["CLAUDE.md", "AGENTS.md"],
            Agent::Codex => &["AGENTS.override.md", "AGENTS.md"],
        };
        names
            .iter()
            .map(|n| project.join(n))
            .filter(|p| p.exists())
            .collect()
    }

    /// The events mewmem installs a hook for.
    pub fn events(self) -> &'static [ClaudeEvent] {
        match self {
            Agent::Claude => &ClaudeEvent::ALL,
            Agent::Codex => &[
                ClaudeEvent::SessionStart,
                ClaudeEvent::UserPromptSubmit,
                ClaudeEvent::PreCompact,
                ClaudeEvent::Stop,
            ],
        }
    }
}

/// One change to the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A hook entry was added for the event.
    Added(ClaudeEvent),
    /// mewmem's entry for the event had another command; it now has the new one.
    Updated(ClaudeEvent),
    /// mewmem's entry for the event was removed.
    Removed(ClaudeEvent),
}

/// What an install or uninstall did (or would do, in a dry run).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The settings file.
    pub path: PathBuf,
    /// The changes; empty when the file already is as wanted.
    pub changes: Vec<Change>,
    /// The file's new text (pretty JSON, two-space indent, newline at the end).
    pub text: String,
    /// Where the old file was copied, when it existed and was changed (not in a dry run).
    pub backup: Option<PathBuf>,
}

/// `true` when `command` is mewmem's hook command for `agent` and `event`.
fn is_ours(command: &str, agent: Agent, event: ClaudeEvent) -> bool {
    let words = shlex::split(command).unwrap_or_default();
    let n = words.len();
    n >= 3
        && words[n - 3] == "hook"
        && words[n - 2] == agent.as_str()
        && words[n - 1] == event.as_str()
}

/// The command line Claude Code runs for `event`: `<mem> hook claude <Event>`, with the binary
/// quoted for the shell when needed.
pub fn hook_command(mem: &str, event: ClaudeEvent) -> String {
    agent_hook_command(mem, Agent::Claude, event)
}

/// The command line `agent` runs for `event`: `<mem> hook <agent> <Event>`, with the binary
/// quoted for the shell when needed (both agents run it through a shell).
pub fn agent_hook_command(mem: &str, agent: Agent, event: ClaudeEvent) -> String {
    agent_hook_command_with(mem, &[], agent, event)
}

/// [`agent_hook_command`] with `global` options between the binary and `hook` (e.g.
/// `["--home", "/srv/me"]`: `<mem> --home /srv/me hook <agent> <Event>`), each word quoted for
/// the shell when needed.
pub fn agent_hook_command_with(
    mem: &str,
    global: &[String],
    agent: Agent,
    event: ClaudeEvent,
) -> String {
    let quote = |w: &str| shlex::try_quote(w).map_or_else(|_| w.to_owned(), |q| q.into_owned());
    let mut line = quote(mem);
    for word in global {
        line.push(' ');
        line.push_str(&quote(word));
    }
    format!("{line} hook {} {event}", agent.as_str())
}

/// Reads `path` as a settings object (`{}` when it does not exist).
fn read_settings(path: &Path) -> Result<Option<Map<String, Value>>> {
    let text = match mem_core::fsread::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("cannot read", path, e)),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(o)) => Ok(Some(o)),
        Ok(_) => Err(Error::Settings {
            path: path.to_owned(),
            reason: "not a JSON object; left untouched".to_owned(),
        }),
        Err(e) => Err(Error::Settings {
            path: path.to_owned(),
            reason: format!(
                "not valid JSON (line {}, column {}: {e}); left untouched",
                e.line(),
                e.column()
            ),
        }),
    }
}

/// The `hooks` object of the settings, created when missing.
fn hooks_of<'a>(
    settings: &'a mut Map<String, Value>,
    path: &Path,
) -> Result<&'a mut Map<String, Value>> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    hooks.as_object_mut().ok_or_else(|| Error::Settings {
        path: path.to_owned(),
        reason: "`hooks` is not an object; left untouched".to_owned(),
    })
}

/// The commands of the groups of one event, mutably: `(group index, hook index, hook object)`.
fn groups_of<'a>(
    hooks: &'a mut Map<String, Value>,
    event: ClaudeEvent,
    path: &Path,
) -> Result<Option<&'a mut Vec<Value>>> {
    match hooks.get_mut(event.as_str()) {
        None => Ok(None),
        Some(Value::Array(groups)) => Ok(Some(groups)),
        Some(_) => Err(Error::Settings {
            path: path.to_owned(),
            reason: format!("`hooks.{event}` is not a list; left untouched"),
        }),
    }
}

/// Adds (or updates) mewmem's entry for every event in the Claude Code settings file at
/// `path`: [`install_for`] with [`Agent::Claude`].
///
/// Errors: as [`install_for`].
pub fn install(path: &Path, mem: &str, dry_run: bool) -> Result<Plan> {
    install_for(Agent::Claude, path, mem, dry_run)
}

/// Adds (or updates) mewmem's entry for every event of `agent` ([`Agent::events`]) in the hook
/// configuration at `path` (Claude Code's `settings.json`, Codex's `hooks.json`; created when
/// missing). `mem` is the binary the agent should run (an absolute path is safest: the agent's
/// `PATH` may not be the shell's). With `dry_run`, nothing is written.
///
/// Errors: [`Error::Settings`] when the file is not a JSON object (or its `hooks` is not one):
/// it is never overwritten then; I/O errors.
pub fn install_for(agent: Agent, path: &Path, mem: &str, dry_run: bool) -> Result<Plan> {
    install_with(agent, path, mem, &[], dry_run)
}

/// [`install_for`] with `global` options in every command ([`agent_hook_command_with`]): the
/// hooks then run as the installer did (`--home X`). An entry of mewmem's with other options
/// is updated in place.
///
/// Errors: as [`install_for`].
pub fn install_with(
    agent: Agent,
    path: &Path,
    mem: &str,
    global: &[String],
    dry_run: bool,
) -> Result<Plan> {
    let existed = read_settings(path)?;
    let mut settings = existed.clone().unwrap_or_default();
    let hooks = hooks_of(&mut settings, path)?;
    let mut changes = Vec::new();
    for &event in agent.events() {
        let want = agent_hook_command_with(mem, global, agent, event);
        let mut found = false;
        if let Some(groups) = groups_of(hooks, event, path)? {
            for group in groups.iter_mut() {
                let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                    continue;
                };
                for hook in list.iter_mut() {
                    let Some(cmd) = hook.get("command").and_then(Value::as_str) else {
                        continue;
                    };
                    if !is_ours(cmd, agent, event) {
                        continue;
                    }
                    found = true;
                    if cmd != want {
                        hook["command"] = Value::String(want.clone());
                        hook["timeout"] = json!(event.timeout_secs());
                        changes.push(Change::Updated(event));
                    }
                }
            }
        }
        if !found {
            let group = json!({
                "hooks": [{
                    "type": "command",
                    "command": want,
                    "timeout": event.timeout_secs(),
                }]
            });
            match groups_of(hooks, event, path)? {
                Some(groups) => groups.push(group),
                None => {
                    hooks.insert(event.as_str().to_owned(), Value::Array(vec![group]));
                }
            }
            changes.push(Change::Added(event));
        }
    }
    finish(path, existed.is_some(), settings, changes, dry_run)
}

/// Removes mewmem's entries from the Claude Code settings file at `path`: [`uninstall_for`]
/// with [`Agent::Claude`].
///
/// Errors: as [`install_for`].
pub fn uninstall(path: &Path, dry_run: bool) -> Result<Plan> {
    uninstall_for(Agent::Claude, path, dry_run)
}

/// Removes `agent`'s mewmem entries (and the groups and events they leave empty) from the hook
/// configuration at `path`; every other hook stays. A missing file is left missing.
///
/// Errors: as [`install_for`].
pub fn uninstall_for(agent: Agent, path: &Path, dry_run: bool) -> Result<Plan> {
    let Some(mut settings) = read_settings(path)? else {
        return Ok(Plan {
            path: path.to_owned(),
            changes: Vec::new(),
            text: String::new(),
            backup: None,
        });
    };
    let mut changes = Vec::new();
    if settings.contains_key("hooks") {
        let hooks = hooks_of(&mut settings, path)?;
        for &event in agent.events() {
            let Some(groups) = groups_of(hooks, event, path)? else {
                continue;
            };
            for group in groups.iter_mut() {
                if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    let before = list.len();
                    list.retain(|h| {
                        !h.get("command")
                            .and_then(Value::as_str)
                            .is_some_and(|c| is_ours(c, agent, event))
                    });
                    for _ in list.len()..before {
                        changes.push(Change::Removed(event));
                    }
                }
            }
            groups.retain(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_none_or(|l| !l.is_empty())
            });
            if groups.is_empty() {
                hooks.remove(event.as_str());
            }
        }
        if hooks.is_empty() {
            settings.remove("hooks");
        }
    }
    finish(path, true, settings, changes, dry_run)
}

fn finish(
    path: &Path,
    existed: bool,
    settings: Map<String, Value>,
    changes: Vec<Change>,
    dry_run: bool,
) -> Result<Plan> {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(settings)).map_err(|e| Error::Settings {
            path: path.to_owned(),
            reason: format!("cannot encode: {e}"),
        })?;
    text.push('\n');
    let mut backup = None;
    if !changes.is_empty() && !dry_run {
        if existed {
            // The first free name: settings.json.bak, settings.json.bak.2, ... (never
            // overwrites an earlier backup).
            let name = format!(
                "{}.bak",
                path.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            let mut to = path.with_file_name(&name);
            let mut k = 2;
            while to.exists() {
                to = path.with_file_name(format!("{name}.{k}"));
                k += 1;
            }
            fs::copy(path, &to).map_err(|e| Error::io("cannot back up", path, e))?;
            backup = Some(to);
        }
        write_atomic(path, text.as_bytes())?;
    }
    Ok(Plan {
        path: path.to_owned(),
        changes,
        text,
        backup,
    })
}

/// Where a write to `path` lands: `path` itself, or, when it is a symlink (a dotfiles
/// `settings.json`), the file the chain of links ends at (dangling or not), so the link stays a
/// link and its target gets the new content.
fn link_target(path: &Path) -> Result<std::path::PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let to =
                    fs::read_link(&at).map_err(|e| Error::io("cannot read the link", &at, e))?;
                at = at.parent().unwrap_or_else(|| Path::new(".")).join(to);
            }
            _ => return Ok(at),
        }
    }
    Err(Error::io(
        "cannot follow",
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// Writes `bytes` to a temporary file beside `path` (beside the link's target when `path` is
/// a symlink: the link is written through, never replaced), syncs it and renames it over it
/// (creating the folder when needed).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let target = link_target(path)?;
    let path = target.as_path();
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = File::create(&tmp).map_err(|e| Error::io("cannot create", &tmp, e))?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| Error::io("cannot write", &tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| Error::io("cannot replace", path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_is_recognised_by_the_last_words_only() {
        let claude = Agent::Claude;
        assert!(is_ours("mem hook claude Stop", claude, ClaudeEvent::Stop));
        assert!(is_ours(
            "'/opt/my tools/mem' hook claude Stop",
            claude,
            ClaudeEvent::Stop
        ));
        assert!(!is_ours(
            "mem hook claude Stop",
            claude,
            ClaudeEvent::SessionEnd
        ));
        assert!(!is_ours(
            "other-tool hook claude",
            claude,
            ClaudeEvent::Stop
        ));
        assert!(!is_ours(
            "mem hook claude Stop",
            Agent::Codex,
            ClaudeEvent::Stop
        ));
        assert!(is_ours(
            "mem hook codex Stop",
            Agent::Codex,
            ClaudeEvent::Stop
        ));
        assert_eq!(
            hook_command("/opt/my tools/mem", ClaudeEvent::Stop),
            "'/opt/my tools/mem' hook claude Stop"
        );
        let with_home = agent_hook_command_with(
            "mem",
            &["--home".to_owned(), "/srv/my home".to_owned()],
            claude,
            ClaudeEvent::Stop,
        );
        assert_eq!(with_home, "mem --home '/srv/my home' hook claude Stop");
        assert!(is_ours(&with_home, claude, ClaudeEvent::Stop));
    }

    #[test]
    #[cfg(unix)]
    fn a_symlinked_settings_file_is_written_through_the_link() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dotfiles = dir.path().join("dotfiles");
        fs::create_dir_all(&dotfiles).unwrap_or_default();
        let real = dotfiles.join("claude-settings.json");
        fs::write(&real, "{\"model\": \"opus\"}\n").unwrap_or_default();
        let claude = dir.path().join(".claude");
        fs::create_dir_all(&claude).unwrap_or_default();
        let path = claude.join("settings.json");
        std::os::unix::fs::symlink("../dotfiles/claude-settings.json", &path)
            .unwrap_or_else(|e| panic!("{e}"));
        install(&path, "mem", false).unwrap_or_else(|e| panic!("{e}"));
        let meta = fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(meta.file_type().is_symlink(), "the link was replaced");
        let text = fs::read_to_string(&real).unwrap_or_default();
        assert!(text.contains("opus") && text.contains("hook"), "{text}");
        // No temporary file left beside the link or the target.
        for d in [&claude, &dotfiles] {
            let names: Vec<_> = fs::read_dir(d)
                .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
            assert!(
                names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
                "{names:?}"
            );
        }
    }

    #[test]
    fn install_keeps_other_hooks_and_is_idempotent_and_uninstall_restores() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join(".claude").join("settings.json");
        fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_default();
        let original = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "check-bash"
          }
        ]
      }
    ]
  }
}
"#;
        fs::write(&path, original).unwrap_or_default();
        let plan = install(&path, "mem", false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.changes.len(), 5);
        assert!(plan.backup.as_ref().is_some_and(|b| b.is_file()));
        let text = fs::read_to_string(&path).unwrap_or_default();
        assert!(text.contains("notify-send done") && text.contains("check-bash"));
        assert!(text.contains("\"model\": \"opus\""));
        let again = install(&path, "mem", false).unwrap_or_else(|e| panic!("{e}"));
        assert!(again.changes.is_empty());
        assert!(again.backup.is_none());
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), text);
        let moved = install(&path, "/usr/local/bin/mem", false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(moved.changes.len(), 5);
        assert!(
            moved
                .changes
                .iter()
                .all(|c| matches!(c, Change::Updated(_)))
        );
        let removed = uninstall(&path, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(removed.changes.len(), 5);
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), original);
    }

    #[test]
    fn each_client_leaves_out_the_files_it_loads_itself() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let names = |agent: Agent| -> Vec<String> {
            agent
                .loads_itself(p)
                .iter()
                .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert!(names(Agent::Claude).is_empty());
        assert!(names(Agent::Codex).is_empty());
        fs::write(p.join("AGENTS.md"), "a").unwrap();
        // AGENTS.md alone: both clients load it.
        assert_eq!(names(Agent::Claude), ["AGENTS.md"]);
        assert_eq!(names(Agent::Codex), ["AGENTS.md"]);
        // With a CLAUDE.md, Claude Code loads that one and not AGENTS.md.
        fs::write(p.join("CLAUDE.md"), "c").unwrap();
        assert_eq!(names(Agent::Claude), ["CLAUDE.md"]);
        assert_eq!(names(Agent::Codex), ["AGENTS.md"]);
        fs::write(p.join("AGENTS.override.md"), "o").unwrap();
        assert_eq!(names(Agent::Codex), ["AGENTS.override.md", "AGENTS.md"]);
    }

    #[test]
    fn codex_hooks_are_merged_beside_claude_ones_and_removed_alone() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join(".codex").join("hooks.json");
        fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_default();
        // A Codex hook on an event mewmem also uses, and (in the same file, as a shared hooks
        // file may hold) a Claude entry of mewmem's.
        let original = r#"{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup|resume",
        "hooks": [
          {
            "type": "command",
            "command": "python3 session_start.py",
            "statusMessage": "Loading"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "mem hook claude Stop",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
"#;
        fs::write(&path, original).unwrap_or_default();
        let plan = install_for(Agent::Codex, &path, "mem", false).unwrap_or_else(|e| panic!("{e}"));
        let added: Vec<_> = plan.changes.clone();
        assert_eq!(
            added,
            Agent::Codex
                .events()
                .iter()
                .map(|&e| Change::Added(e))
                .collect::<Vec<_>>()
        );
        let text = fs::read_to_string(&path).unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or_default();
        // The Claude entry is not taken for Codex's: Stop now has both.
        assert_eq!(v["hooks"]["Stop"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            v["hooks"]["SessionStart"][1]["hooks"][0]["command"],
            "mem hook codex SessionStart"
        );
        assert_eq!(v["hooks"]["SessionStart"][0]["matcher"], "startup|resume");
        assert!(v["hooks"].get("SessionEnd").is_none());
        let again =
            install_for(Agent::Codex, &path, "mem", false).unwrap_or_else(|e| panic!("{e}"));
        assert!(again.changes.is_empty());
        let removed = uninstall_for(Agent::Codex, &path, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(removed.changes.len(), 4);
        assert_eq!(fs::read_to_string(&path).unwrap_or_default(), original);
    }

    #[test]
    fn a_broken_settings_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("settings.json");
        fs::write(&path, "{\"hooks\": [").unwrap_or_default();
        let err = install(&path, "mem", false).err().map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("not valid JSON"));
        assert_eq!(
            fs::read_to_string(&path).unwrap_or_default(),
            "{\"hooks\": ["
        );
        fs::write(&path, "{\"hooks\": 3}").unwrap_or_default();
        assert!(install(&path, "mem", false).is_err());
    }
}
