//! Projects: identity (the git repository, else the directory), the `.omc/project.yaml` preset
//! (seed 003 "最佳实践": 项目配置) and language/framework detection from manifests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::ProjectRecord;

/// Where the preset lives, relative to the project root (seed 003).
pub const PRESET_PATH: &str = ".omc/project.yaml";

/// The largest preset read, in bytes (256 KiB).
pub const MAX_PRESET_BYTES: u64 = 256 * 1024;

/// How a project is identified and named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectIdentity {
    /// `git:<canonical common git dir>` (all worktrees of one repository share it) or
    /// `path:<canonical project dir>`.
    pub key: String,
    /// The repository's (or directory's) name.
    pub name: String,
    /// The canonical project directory.
    pub root: PathBuf,
}

/// Identifies the project at `dir`: the nearest enclosing git repository's common git dir
/// (resolving a worktree's `.git` file and its `commondir`), else the canonical `dir`.
///
/// # Errors
/// [`Error::Io`] when `dir` cannot be canonicalised.
pub fn identify(dir: &Path) -> Result<ProjectIdentity> {
    let root = dir
        .canonicalize()
        .map_err(|e| Error::io("resolve", dir, e))?;
    let mut cur = Some(root.as_path());
    while let Some(d) = cur {
        let dot_git = d.join(".git");
        if let Some(common) = common_git_dir(&dot_git) {
            let name = if common.file_name().is_some_and(|n| n == ".git") {
                common.parent().and_then(|p| p.file_name())
            } else {
                common.file_name()
            }
            .map(|n| n.to_string_lossy().trim_end_matches(".git").to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| dir_name(d));
            return Ok(ProjectIdentity {
                key: format!("git:{}", common.display()),
                name,
                root: d.to_path_buf(),
            });
        }
        cur = d.parent();
    }
    Ok(ProjectIdentity {
        key: format!("path:{}", root.display()),
        name: dir_name(&root),
        root,
    })
}

fn dir_name(d: &Path) -> String {
    d.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| d.display().to_string())
}

/// The common git dir behind a `.git` entry: the directory itself, or for a worktree's `.git`
/// file (`gitdir: <path>`) the dir named by that gitdir's `commondir` file.
fn common_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(dot_git).ok()?;
    if meta.is_dir() {
        return dot_git.canonicalize().ok();
    }
    let text = mem_core::fsread::read_to_string(dot_git).ok()?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    let gitdir = base.join(gitdir);
    let common = match mem_core::fsread::read_to_string(gitdir.join("commondir")) {
        Ok(c) => gitdir.join(c.trim()),
        Err(_) => gitdir,
    };
    common.canonicalize().ok()
}

/// `.omc/project.yaml`: the project preset (seed 003 ProjectPreference: 框架、语言、测试命令、
/// 自定义命令、备注). Every field is optional; unknown keys are refused (a typo would silently
/// do nothing otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectPreset {
    /// Display name (default: the repository's name).
    #[serde(default)]
    pub name: Option<String>,
    /// Framework (`FastAPI`).
    #[serde(default)]
    pub framework: Option<String>,
    /// Language (`Python`).
    #[serde(default)]
    pub language: Option<String>,
    /// Test command (`pytest -q`).
    #[serde(default)]
    pub test_command: Option<String>,
    /// Named commands.
    #[serde(default)]
    pub custom_commands: BTreeMap<String, String>,
    /// Notes: one string, or a list of strings.
    #[serde(default)]
    pub notes: Notes,
}

/// `notes:` as one string or a list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Notes {
    /// No notes.
    #[default]
    None,
    /// One block of text.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl Notes {
    /// The notes as a list; a single string becomes one item per non-empty line.
    pub fn items(&self) -> Vec<String> {
        match self {
            Notes::None => Vec::new(),
            Notes::One(s) => s
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            Notes::Many(v) => v.iter().map(|s| s.trim().to_owned()).collect(),
        }
    }
}

/// Reads `<root>/.omc/project.yaml`; `None` when there is none.
///
/// # Errors
/// [`Error::Malformed`] naming the file and line for invalid YAML, a wrong type or an unknown
/// key; [`Error::Io`] when it cannot be read or is larger than [`MAX_PRESET_BYTES`].
pub fn read_preset(root: &Path) -> Result<Option<ProjectPreset>> {
    let path = root.join(PRESET_PATH);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", &path, e)),
    };
    if !meta.is_file() {
        return Err(Error::Malformed {
            path,
            line: 0,
            message: "not a regular file".to_owned(),
        });
    }
    if meta.len() > MAX_PRESET_BYTES {
        return Err(Error::Malformed {
            path,
            line: 0,
            message: format!(
                "{} bytes; a preset may have at most {MAX_PRESET_BYTES}",
                meta.len()
            ),
        });
    }
    let bytes = mem_core::fsread::read(&path).map_err(|e| Error::io("read", &path, e))?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Malformed {
        path: path.clone(),
        line: 0,
        message: format!("not valid UTF-8 ({e})"),
    })?;
    parse_preset(&text, &path).map(Some)
}

/// Parses a preset's text; `path` names it in errors.
///
/// # Errors
/// [`Error::Malformed`] with the 1-based line of the problem.
pub fn parse_preset(text: &str, path: &Path) -> Result<ProjectPreset> {
    if text.trim().is_empty() {
        return Ok(ProjectPreset::default());
    }
    serde_saphyr::from_str::<ProjectPreset>(text).map_err(|e| {
        let line = e.location().map_or(0, |l| l.line() as usize);
        let message = e
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid YAML")
            .trim_start_matches("error: ")
            .to_owned();
        Error::Malformed {
            path: path.to_path_buf(),
            line,
            message,
        }
    })
}

/// What the manifests of a project say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detected {
    /// Main language.
    pub language: Option<String>,
    /// Framework, when a well-known one is a dependency.
    pub framework: Option<String>,
    /// The usual test command of the ecosystem.
    pub test_command: Option<String>,
}

/// (manifest, language, test command, [(dependency name, framework)]) — the first manifest
/// present wins; frameworks are checked in order, so the more specific comes first.
/// (manifest file, language, test command, [(dependency, framework)]).
type Manifest = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const MANIFESTS: &[Manifest] = &[
    (
        "Cargo.toml",
        "Rust",
        "cargo test",
        &[
            ("axum", "Axum"),
            ("actix-web", "Actix Web"),
            ("rocket", "Rocket"),
            ("tauri", "Tauri"),
            ("bevy", "Bevy"),
            ("clap", "Clap"),
        ],
    ),
    (
        "package.json",
        "JavaScript",
        "npm test",
        &[
            ("next", "React/Next.js"),
            ("nuxt", "Vue/Nuxt"),
            ("@angular/core", "Angular"),
            ("svelte", "Svelte"),
            ("react", "React"),
            ("vue", "Vue"),
            ("@nestjs/core", "NestJS"),
            ("express", "Express"),
        ],
    ),
    (
        "pyproject.toml",
        "Python",
        "pytest",
        &[
            ("fastapi", "FastAPI"),
            ("django", "Django"),
            ("flask", "Flask"),
            ("typer", "Typer"),
            ("click", "Click"),
        ],
    ),
    (
        "requirements.txt",
        "Python",
        "pytest",
        &[
            ("fastapi", "FastAPI"),
            ("django", "Django"),
            ("flask", "Flask"),
            ("typer", "Typer"),
            ("click", "Click"),
        ],
    ),
    (
        "setup.py",
        "Python",
        "pytest",
        &[
            ("fastapi", "FastAPI"),
            ("django", "Django"),
            ("flask", "Flask"),
        ],
    ),
    (
        "go.mod",
        "Go",
        "go test ./...",
        &[
            ("github.com/gin-gonic/gin", "Gin"),
            ("github.com/labstack/echo", "Echo"),
            ("github.com/gofiber/fiber", "Fiber"),
            ("github.com/spf13/cobra", "Cobra"),
        ],
    ),
    (
        "pom.xml",
        "Java",
        "mvn test",
        &[("spring-boot", "Spring Boot")],
    ),
    (
        "build.gradle.kts",
        "Kotlin",
        "./gradlew test",
        &[("spring-boot", "Spring Boot"), ("ktor", "Ktor")],
    ),
    (
        "build.gradle",
        "Java",
        "./gradlew test",
        &[("spring-boot", "Spring Boot")],
    ),
    (
        "Gemfile",
        "Ruby",
        "bundle exec rake test",
        &[("rails", "Rails"), ("sinatra", "Sinatra")],
    ),
    (
        "composer.json",
        "PHP",
        "composer test",
        &[("laravel/framework", "Laravel"), ("symfony/", "Symfony")],
    ),
    ("mix.exs", "Elixir", "mix test", &[(":phoenix", "Phoenix")]),
    ("CMakeLists.txt", "C++", "ctest", &[]),
];

/// Detects language, framework and test command from the manifests at `root` (first match of
/// manifest order: Cargo.toml, package.json, pyproject.toml, requirements.txt, setup.py,
/// go.mod, pom.xml, build.gradle(.kts), Gemfile, composer.json, mix.exs, CMakeLists.txt).
/// A dependency counts when its name appears as a whole word in the manifest. Unreadable
/// manifests are passed over.
pub fn detect(root: &Path) -> Detected {
    for (file, language, test, frameworks) in MANIFESTS {
        let Ok(text) = mem_core::fsread::read_to_string(root.join(file)) else {
            continue;
        };
        // Lowercased once: every dependency name is looked for in it.
        let lower = text.to_lowercase();
        let mut language = (*language).to_owned();
        if *file == "package.json"
            && (root.join("tsconfig.json").is_file() || has_word(&lower, "typescript"))
        {
            language = "TypeScript".to_owned();
        }
        let framework = frameworks
            .iter()
            .find(|(dep, _)| has_word(&lower, dep))
            .map(|(_, f)| (*f).to_owned());
        let test_command = if *file == "package.json" && !text.contains("\"test\"") {
            None
        } else {
            Some((*test).to_owned())
        };
        return Detected {
            language: Some(language),
            framework,
            test_command,
        };
    }
    Detected::default()
}

/// `word` in `lower` (text already lowercased, as `word` is), not inside a longer name
/// (neighbours are not alphanumerics, `-` or `_`).
fn has_word(lower: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    lower.match_indices(word).any(|(i, _)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + word.len()..].chars().next();
        (word.starts_with(|c: char| !is_name(c)) || !before.is_some_and(is_name))
            && (word.ends_with(|c: char| !is_name(c)) || !after.is_some_and(is_name))
    })
}

/// The project record for `dir`: identity, then the preset's fields, then detection for what
/// the preset leaves out. `now_ms` becomes `created_ms` and `last_used_ms`.
///
/// # Errors
/// As [`identify`] and [`read_preset`].
pub fn project_record(dir: &Path, now_ms: i64) -> Result<ProjectRecord> {
    let id = identify(dir)?;
    let preset = read_preset(&id.root)?.unwrap_or_default();
    let detected = detect(&id.root);
    Ok(ProjectRecord {
        key: id.key,
        name: preset.name.clone().unwrap_or(id.name),
        path: id.root.display().to_string(),
        language: preset.language.clone().or(detected.language),
        framework: preset.framework.clone().or(detected.framework),
        test_command: preset.test_command.clone().or(detected.test_command),
        custom_commands: preset.custom_commands.clone(),
        notes: preset.notes.items(),
        created_ms: now_ms,
        last_used_ms: now_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_preset(text: &str, expected: &str) {
        let shown = match parse_preset(text, Path::new("/p/.omc/project.yaml")) {
            Ok(p) => format!("{p:?}"),
            Err(e) => e.to_string(),
        };
        assert!(shown.contains(expected), "{shown}");
    }

    #[test]
    fn presets_parse_or_name_file_and_line() {
        check_preset(
            "framework: FastAPI\nlanguage: Python\ntest_command: pytest -q\ncustom_commands:\n  lint: ruff check .\nnotes:\n  - uses uv\n",
            "framework: Some(\"FastAPI\")",
        );
        check_preset("notes: |\n  one\n  two\n", "One(\"one\\ntwo\\n\")");
        check_preset("framework: [a, b]\n", "/p/.omc/project.yaml:1:");
        check_preset(
            "language: Python\ncustom_commands: 3\n",
            "/p/.omc/project.yaml:2:",
        );
        check_preset("language: Python\nframwork: x\n", "/p/.omc/project.yaml:2:");
        check_preset("a: [unclosed\n", "/p/.omc/project.yaml:");
    }

    #[test]
    fn detects_from_manifests() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\ndependencies = [\"fastapi>=0.1\", \"uvicorn\"]\n",
        )
        .unwrap();
        let d = detect(dir.path());
        assert_eq!(d.language.as_deref(), Some("Python"));
        assert_eq!(d.framework.as_deref(), Some("FastAPI"));
        let js = tempfile::tempdir().unwrap();
        std::fs::write(
            js.path().join("package.json"),
            r#"{"dependencies": {"next": "15", "react": "19", "next-auth": "1"}, "scripts": {"test": "vitest"}}"#,
        )
        .unwrap();
        std::fs::write(js.path().join("tsconfig.json"), "{}").unwrap();
        let d = detect(js.path());
        assert_eq!(d.language.as_deref(), Some("TypeScript"));
        assert_eq!(d.framework.as_deref(), Some("React/Next.js"));
        assert!(!has_word("\"nextjs-x\"", "next"));
        assert!(has_word("rails (7.1)", "rails"));
    }

    #[test]
    fn worktrees_of_one_repo_are_one_project() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(wt.join("sub")).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        let a = identify(&repo).unwrap();
        let b = identify(&wt.join("sub")).unwrap();
        assert_eq!(a.key, b.key);
        assert!(a.key.starts_with("git:"), "{}", a.key);
        assert_eq!(a.name, "repo");
        let plain = tempfile::tempdir().unwrap();
        let p = identify(plain.path()).unwrap();
        assert!(p.key.starts_with("path:"), "{}", p.key);
    }
}
