//! Issue 27 item 19 through the binary: a team learning Alice added in her project is listed,
//! opened (`mem memory show`, MCP `memory_get`) and forgotten (MCP `memory_forget`) from Bob's
//! project of the same team; a member of another team sees none of it.
//!
//! Needs a server: `MEM_TEST_PG_URL=postgresql://...` (`.ci/postgres.sh start` prints one).
//! Without it the test says so on stderr and passes; with `MEM_REQUIRE_PG=1` a missing server
//! is a failure instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt, service::RunningService};
use serde_json::{Value, json};

const MEM: &str = env!("CARGO_BIN_EXE_mem");

/// PostgreSQL: `MEM_TEST_PG_URL`, or the test is skipped (a failure with `MEM_REQUIRE_PG=1`).
fn server() -> Option<String> {
    mem_core::testing::pg_url_or_skip(env!("CARGO_CRATE_NAME"))
}

/// One member: a project folder, a home, and the store settings.
struct Member {
    project: PathBuf,
    home: PathBuf,
    env: Vec<(&'static str, String)>,
}

impl Member {
    fn new(root: &Path, name: &str, team: &str, url: &str, schema: &str) -> Member {
        let project = root.join(format!("proj-{name}"));
        let home = root.join(format!("home-{name}"));
        std::fs::create_dir_all(project.join(".mewcode")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        Member {
            project,
            home,
            env: vec![
                ("MEM_STORE_URL", url.to_owned()),
                ("MEM_STORE_AUTHOR", name.to_owned()),
                ("MEM_STORE_TEAM", team.to_owned()),
                ("MEM_STORE_SCHEMA", schema.to_owned()),
            ],
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new(MEM);
        for (k, _) in std::env::vars() {
            if k.starts_with("MEM_") {
                c.env_remove(k);
            }
        }
        c.arg("--project")
            .arg(&self.project)
            .arg("--home")
            .arg(&self.home)
            .env("HOME", &self.home)
            .env("NO_COLOR", "1");
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "mem {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    async fn client(&self) -> RunningService<RoleClient, ()> {
        let mut cmd = tokio::process::Command::from(self.command());
        cmd.arg("mcp");
        let transport = TokioChildProcess::new(cmd).unwrap_or_else(|e| panic!("spawn: {e}"));
        ().serve(transport)
            .await
            .unwrap_or_else(|e| panic!("handshake: {e}"))
    }
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &'static str, a: Value) -> CallToolResult {
    let Value::Object(a) = a else {
        panic!("not an object: {a}")
    };
    let a: JsonObject = a;
    c.call_tool(CallToolRequestParams::new(tool).with_arguments(a))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_learning_opens_and_is_forgotten_through_mcp_from_another_project_of_the_team() {
    let Some(url) = server() else { return };
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let schema = format!(
        "t_team_mcp_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos()
    );
    let alice = Member::new(root.path(), "alice", "core", &url, &schema);
    let bob = Member::new(root.path(), "bob", "core", &url, &schema);
    let carol = Member::new(root.path(), "carol", "other", &url, &schema);

    let added = alice.ok(&[
        "memory",
        "add",
        "release steps",
        "Tag the release, then run make publish-artifacts",
        "--scope",
        "team",
    ]);
    let id = added
        .split_whitespace()
        .find(|w| w.starts_with('L') && w[1..].chars().all(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no id in {added}"))
        .to_owned();

    // Bob's project of the same team: listed, shown, and got through MCP.
    let found = bob.ok(&["memory", "search", "publish-artifacts"]);
    assert!(found.contains(&id), "{found}");
    let shown = bob.ok(&["memory", "show", &id]);
    assert!(shown.contains("make publish-artifacts"), "{shown}");
    let c = bob.client().await;
    let got = call(&c, "memory_get", json!({"ids": [id]})).await;
    assert_ne!(got.is_error, Some(true), "{}", text(&got));
    assert!(
        text(&got).contains("make publish-artifacts"),
        "{}",
        text(&got)
    );

    // Another team sees none of it.
    let other = carol.run(&["memory", "show", &id]);
    assert!(!other.status.success());
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("no memory"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    let cc = carol.client().await;
    let none = call(&cc, "memory_get", json!({"ids": [id]})).await;
    assert!(
        !text(&none).contains("publish-artifacts"),
        "{}",
        text(&none)
    );
    cc.cancel().await.unwrap_or_else(|e| panic!("{e}"));

    // Bob forgets it through MCP: gone for Alice too.
    let forgot = call(
        &c,
        "memory_forget",
        json!({"id": id, "reason": "outdated release process"}),
    )
    .await;
    assert_ne!(forgot.is_error, Some(true), "{}", text(&forgot));
    c.cancel().await.unwrap_or_else(|e| panic!("{e}"));
    let after = alice.ok(&["memory", "search", "publish-artifacts"]);
    assert!(!after.contains(&id), "{after}");
}
