//! Facts that change (stop 48): which stored entries an offline extraction updates or removes.
//! Look-alikes first (a second fact on the same topic, a one-off, a question, a plan, reported
//! speech, a negation, a part of the subject, pasted code, logs and quotes): each of these was
//! wrongly updated or removed by the first draft of `mem_llm::offline::update` and
//! `mem_auto`'s `retire` in a review (~240 probes) and must change nothing. Then plain changes
//! that must update or remove exactly the entry they are about.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use mem_auto::{ExtractOptions, ExtractReport, extract_session};
use mem_core::Message;
use mem_llm::OfflineEngine;

mod common;
use common::Project;

const DEV: &str = "The dev server runs on port 8000 (`npm run dev`).";

/// One probe: the project's and the user's entries before, the messages (`A:` marks the
/// assistant's), and the text of the entry that must change (`None`: nothing may change).
struct P {
    name: &'static str,
    proj: &'static [&'static str],
    user: &'static [&'static str],
    msgs: &'static [&'static str],
    expect: Option<&'static str>,
}

fn run(p: &P) -> ExtractReport {
    let project = Project::new();
    std::fs::create_dir_all(project.root.join(".mewcode")).unwrap();
    std::fs::create_dir_all(project.home.join(".mewcode")).unwrap();
    let file = |heading: &str, entries: &[&str]| {
        let mut text = format!("### {heading}\n");
        for e in entries {
            text.push_str(&format!("- {e}\n"));
        }
        text
    };
    std::fs::write(
        project.root.join(".mewcode/memories.md"),
        file("项目知识", p.proj),
    )
    .unwrap();
    std::fs::write(
        project.home.join(".mewcode/memories.md"),
        file("用户偏好", p.user),
    )
    .unwrap();
    let messages: Vec<Message> = p
        .msgs
        .iter()
        .map(|m| match m.strip_prefix("A:") {
            Some(a) => Message::assistant(a),
            None => Message::user(*m),
        })
        .collect();
    let id = project.session(&messages);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(extract_session(
        &project.auto(),
        &project.store(),
        &id,
        &OfflineEngine,
        &ExtractOptions::new(Utc::now()),
    ))
    .unwrap()
}

/// The entries updated or removed by the extraction, as they were before.
fn changed(r: &ExtractReport) -> Vec<String> {
    r.files
        .iter()
        .flat_map(|f| {
            f.updated
                .iter()
                .map(|u| u.old.text.clone())
                .chain(f.removed.iter().map(|c| c.text.clone()))
        })
        .collect()
}

#[test]
fn look_alikes_of_a_change_change_nothing() {
    let probes: Vec<P> = vec![
        P {
            name: "w01 api server port",
            proj: &[DEV],
            user: &[],
            msgs: &["The API server runs on port 9000 now."],
            expect: None,
        },
        P {
            name: "w02 storybook server",
            proj: &[DEV],
            user: &[],
            msgs: &["We also run the storybook server on port 6006 now."],
            expect: None,
        },
        P {
            name: "w03 integration tests",
            proj: &["Run unit tests with `cargo test`."],
            user: &[],
            msgs: &["Integration tests now run with `cargo nextest run`."],
            expect: None,
        },
        P {
            name: "w04 staging server port",
            proj: &["The dev server runs on port 8000."],
            user: &[],
            msgs: &["The staging server runs on port 8001 now."],
            expect: None,
        },
        P {
            name: "w05 pnpm audit",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["We now also run pnpm audit in CI."],
            expect: None,
        },
        P {
            name: "w06 makefile tabs",
            proj: &[],
            user: &["I prefer tabs over spaces."],
            msgs: &["The Makefile now needs tabs, spaces break it."],
            expect: None,
        },
        P {
            name: "w09 redis second",
            proj: &["Redis runs on port 6379 in docker compose."],
            user: &[],
            msgs: &["We now also run a second Redis for the queue on port 6380."],
            expect: None,
        },
        P {
            name: "w10 node docs",
            proj: &["Node 18 is required."],
            user: &[],
            msgs: &["We moved the docs site to Node 20."],
            expect: None,
        },
        P {
            name: "w11 py notebooks",
            proj: &["Python 3.11 for the backend."],
            user: &[],
            msgs: &["The ML notebooks moved to Python 3.12 now."],
            expect: None,
        },
        P {
            name: "w12 timeouts e2e",
            proj: &["Timeouts are 30 seconds."],
            user: &[],
            msgs: &["Timeouts are 60 seconds now for the e2e suite."],
            expect: None,
        },
        P {
            name: "w13 server port generic",
            proj: &["Server port is 8000."],
            user: &[],
            msgs: &["The metrics server port is 9100 now."],
            expect: None,
        },
        P {
            name: "w16 two reviewers",
            proj: &["Backend reviews: @tomasz"],
            user: &[],
            msgs: &["@ifeoma now also reviews backend changes."],
            expect: None,
        },
        P {
            name: "w17 mobile minsdk",
            proj: &["minSdk is 24 for the main app."],
            user: &[],
            msgs: &["The wear app's minSdk went up to 30."],
            expect: None,
        },
        P {
            name: "w19 db test pg",
            proj: &["Postgres 14 runs in docker compose."],
            user: &[],
            msgs: &["The test database runs Postgres 16 in docker compose now."],
            expect: None,
        },
        P {
            name: "w20 lint staged",
            proj: &["Lint with `npm run lint` before committing."],
            user: &[],
            msgs: &["lint-staged now runs prettier before committing too."],
            expect: None,
        },
        P {
            name: "w21 second deploy",
            proj: &["Deploy to staging with `make deploy-staging`."],
            user: &[],
            msgs: &["Deploys to production now go through `make deploy-prod` and ArgoCD."],
            expect: None,
        },
        P {
            name: "w22 zh second server",
            proj: &["开发服务器端口是 8000。"],
            user: &[],
            msgs: &["测试服务器现在用 9000 端口。"],
            expect: None,
        },
        P {
            name: "w23 zh frontend backend",
            proj: &["前端项目用 pnpm 管理依赖。"],
            user: &[],
            msgs: &["后端项目现在用 uv 管理依赖。"],
            expect: None,
        },
        P {
            name: "w24 zh two envs",
            proj: &["生产环境数据库是 PostgreSQL 14。"],
            user: &[],
            msgs: &["测试环境数据库现在是 PostgreSQL 16。"],
            expect: None,
        },
        P {
            name: "w27 proxy no 's",
            proj: &[DEV],
            user: &[],
            msgs: &["The dev server proxy now points to port 8081."],
            expect: None,
        },
        P {
            name: "w28 dev db",
            proj: &[DEV],
            user: &[],
            msgs: &["The dev database runs on port 5433 now."],
            expect: None,
        },
        P {
            name: "n01 now run",
            proj: &[DEV],
            user: &[],
            msgs: &["Now run the dev server on 8000 and check the logs."],
            expect: None,
        },
        P {
            name: "n02 now e2e",
            proj: &["E2E tests: `npx cypress run`."],
            user: &[],
            msgs: &["OK now run the e2e tests with npx cypress run --spec login."],
            expect: None,
        },
        P {
            name: "n03 failing now",
            proj: &["E2E tests: `npx cypress run`."],
            user: &[],
            msgs: &["The e2e tests are failing now, cypress run times out."],
            expect: None,
        },
        P {
            name: "n04 doesnt start anymore",
            proj: &["Start the dev server with `npm run dev`."],
            user: &[],
            msgs: &["The dev server doesn't start anymore after the last merge."],
            expect: None,
        },
        P {
            name: "n05 crashes now",
            proj: &[DEV],
            user: &[],
            msgs: &["The dev server crashes now when I hit port 8000 with curl."],
            expect: None,
        },
        P {
            name: "n08 slow now",
            proj: &["Unit tests: `npm test`."],
            user: &[],
            msgs: &["Unit tests take forever now with npm test, can you look."],
            expect: None,
        },
        P {
            name: "n09 zh now fix",
            proj: &["开发服务器端口是 8000。"],
            user: &[],
            msgs: &["现在开发服务器 8000 端口报错了，帮我看看。"],
            expect: None,
        },
        P {
            name: "n10 hot reload",
            proj: &["Hot reload works with `npm run dev`."],
            user: &[],
            msgs: &["Hot reload doesn't work anymore with npm run dev."],
            expect: None,
        },
        P {
            name: "n11 now lets",
            proj: &["Lint with `npm run lint` before committing."],
            user: &[],
            msgs: &["Now lint everything with npm run lint and commit."],
            expect: None,
        },
        P {
            name: "n12 error now",
            proj: &[DEV],
            user: &[],
            msgs: &["I'm getting EADDRINUSE on port 8000 now from the dev server."],
            expect: None,
        },
        P {
            name: "n13 no longer compiles",
            proj: &["Build with `cargo build --release`."],
            user: &[],
            msgs: &["cargo build --release no longer compiles on my machine."],
            expect: None,
        },
        P {
            name: "n14 moved file",
            proj: &["Config lives in `config/app.toml`."],
            user: &[],
            msgs: &["I moved the config test into tests/config_app.rs."],
            expect: None,
        },
        P {
            name: "q02 does it run",
            proj: &[DEV],
            user: &[],
            msgs: &["does the dev server run on 3000 now"],
            expect: None,
        },
        P {
            name: "q06 zh question ne",
            proj: &["开发服务器端口是 8000。"],
            user: &[],
            msgs: &["开发服务器现在用哪个端口，3000 还是 8000"],
            expect: None,
        },
        P {
            name: "p03 lets",
            proj: &[DEV],
            user: &[],
            msgs: &["Let's move the dev server to port 3000 now."],
            expect: None,
        },
        P {
            name: "p06 proposal",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["Proposal: package manager switched to pnpm in Q3."],
            expect: None,
        },
        P {
            name: "p08 zh want",
            proj: &["包管理器用 npm。"],
            user: &[],
            msgs: &["我想以后包管理器换成 pnpm。"],
            expect: None,
        },
        P {
            name: "r02 apparently",
            proj: &[DEV],
            user: &[],
            msgs: &["Apparently the dev server runs on port 3000 now."],
            expect: None,
        },
        P {
            name: "r03 according",
            proj: &[DEV],
            user: &[],
            msgs: &["According to the README the dev server runs on 3000 now."],
            expect: None,
        },
        P {
            name: "r05 heard",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["I heard the package manager switched to bun."],
            expect: None,
        },
        P {
            name: "r06 zh said",
            proj: &["开发服务器端口是 8000。"],
            user: &[],
            msgs: &["小王说开发服务器现在改成 3000 端口了。"],
            expect: None,
        },
        P {
            name: "r07 ticket",
            proj: &[DEV],
            user: &[],
            msgs: &["The ticket says: dev server moved to port 3000."],
            expect: None,
        },
        P {
            name: "r08 claims",
            proj: &[DEV],
            user: &[],
            msgs: &["The docs claim the dev server runs on port 3000 now but that's wrong."],
            expect: None,
        },
        P {
            name: "g03 wasnt renamed",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &["The default branch wasn't renamed, it's still main, ignore the old wiki."],
            expect: None,
        },
        P {
            name: "g07 still now",
            proj: &[DEV],
            user: &[],
            msgs: &["Yes, the dev server is still on port 8000 now, nothing moved."],
            expect: None,
        },
        P {
            name: "g10 isnt gone",
            proj: &["Redis runs on port 6379 in docker compose."],
            user: &[],
            msgs: &["Redis isn't gone, it is still in docker compose on 6379 now."],
            expect: None,
        },
        P {
            name: "g12 deprecated upstream",
            proj: &["The project supports Python 3.8 and up."],
            user: &[],
            msgs: &["Python 3.8 is deprecated upstream but we still support it."],
            expect: None,
        },
        P {
            name: "o06 zh give up rebase",
            proj: &["合并前先 rebase 到 main。"],
            user: &[],
            msgs: &["放弃 rebase 吧，直接 merge 到 main。"],
            expect: None,
        },
        P {
            name: "o07 this branch",
            proj: &["Unit tests: `npm test`."],
            user: &[],
            msgs: &["On this branch unit tests run with `npm run test:ci` now."],
            expect: None,
        },
        P {
            name: "b02 of the",
            proj: &[DEV],
            user: &[],
            msgs: &["The HMR websocket of the dev server is on port 24678 now."],
            expect: None,
        },
        P {
            name: "b03 neovim lsp",
            proj: &[],
            user: &["I use neovim."],
            msgs: &["I now use the neovim LSP for Rust."],
            expect: None,
        },
        P {
            name: "b04 neovim plugin mgr",
            proj: &[],
            user: &["I use neovim."],
            msgs: &["My neovim plugin manager is lazy.nvim now."],
            expect: None,
        },
        P {
            name: "b05 e2e ci",
            proj: &["E2E tests: `npx cypress run`."],
            user: &[],
            msgs: &["E2E tests in CI now run with `--record` too."],
            expect: None,
        },
        P {
            name: "b06 zsh theme",
            proj: &[],
            user: &["My shell is zsh."],
            msgs: &["My zsh prompt is starship now."],
            expect: None,
        },
        P {
            name: "b07 pnpm version",
            proj: &["Package manager: pnpm."],
            user: &[],
            msgs: &["The package manager version is pinned to pnpm 9 now."],
            expect: None,
        },
        P {
            name: "t02 tests dont hit",
            proj: &[DEV],
            user: &[],
            msgs: &["Tests don't hit the dev server on port 8000 anymore, they use a mock server."],
            expect: None,
        },
        P {
            name: "t05 dropped column",
            proj: &["The users table has a `legacy_id` column."],
            user: &[],
            msgs: &["We dropped the legacy_id index, the column stays."],
            expect: None,
        },
        P {
            name: "t08 replaced logo",
            proj: &["Frontend is React 18."],
            user: &[],
            msgs: &["I replaced the 18px logo in the frontend header."],
            expect: None,
        },
        P {
            name: "t11 deprecated in favour of entry",
            proj: &["Lint with eslint."],
            user: &[],
            msgs: &["tslint is now deprecated in favour of eslint."],
            expect: None,
        },
        P {
            name: "t12 X gone in favor",
            proj: &["Build images with `docker build -t app .`"],
            user: &[],
            msgs: &["The old app-base image is gone, docker build uses distroless now."],
            expect: None,
        },
        P {
            name: "t13 node 16 gh",
            proj: &["CI uses Node 16."],
            user: &[],
            msgs: &["Node 16 actions are deprecated on GitHub, so the checkout step warns."],
            expect: None,
        },
        P {
            name: "t14 renamed to entry value",
            proj: &["Default branch: main."],
            user: &[],
            msgs: &["We renamed the old release branch to main-release."],
            expect: None,
        },
        P {
            name: "t15 switched from for one service",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["The docs package switched from npm to bun."],
            expect: None,
        },
        P {
            name: "t16 got rid of subpart",
            proj: &["Deploy with `./scripts/deploy.sh prod`."],
            user: &[],
            msgs: &["I got rid of the prod flag check inside deploy.sh."],
            expect: None,
        },
        P {
            name: "t20 no secrets",
            proj: &["Store secrets in `.env.local`."],
            user: &[],
            msgs: &["Don't put secrets in .env.local anymore for the CI job, use the vault there."],
            expect: None,
        },
        P {
            name: "c03 log paste",
            proj: &[DEV],
            user: &[],
            msgs: &[
                "  VITE v5.0.0  ready in 300 ms\n  ➜  Local:   http://localhost:5173/\n  dev server running now at port 5173\n",
            ],
            expect: None,
        },
        P {
            name: "c04 code paste",
            proj: &[DEV],
            user: &[],
            msgs: &[
                "```js\n// dev server moved to port 3000 now\nexport default { server: { port: 3000 } }\n```",
            ],
            expect: None,
        },
        P {
            name: "c05 quoting assistant",
            proj: &[DEV],
            user: &[],
            msgs: &["> The dev server is on port 3000 now.\nwhy did you write that?"],
            expect: None,
        },
        P {
            name: "c06 commit msg paste",
            proj: &[DEV],
            user: &[],
            msgs: &["commit message: \"chore: dev server moved to port 3000\""],
            expect: None,
        },
        P {
            name: "c07 grep output",
            proj: &["Unit tests: `npm test`."],
            user: &[],
            msgs: &["src/test.ts:12: // unit tests now use npm test --watch"],
            expect: None,
        },
        P {
            name: "z06 long ramble2",
            proj: &["E2E tests: `npx cypress run`."],
            user: &[],
            msgs: &[
                "ok so the e2e tests were flaky last week, I spent the morning on it, turns out cypress run was picking up the wrong baseUrl, I patched it now and they pass.",
            ],
            expect: None,
        },
        P {
            name: "f01 yes same",
            proj: &[DEV],
            user: &[],
            msgs: &["Yes, the dev server runs on port 8000 now."],
            expect: None,
        },
        P {
            name: "f02 right same",
            proj: &["Package manager: pnpm."],
            user: &[],
            msgs: &["Right, pnpm is the package manager now and always."],
            expect: None,
        },
        P {
            name: "x04 panic paren",
            proj: &["Redis runs on port 6379."],
            user: &[],
            msgs: &["Redis（本地）port 6380 now."],
            expect: None,
        },
        P {
            name: "v02 hypothetical zh",
            proj: &["包管理器用 npm。"],
            user: &[],
            msgs: &["要不包管理器换成 pnpm 试试"],
            expect: None,
        },
        P {
            name: "v04 user file cross",
            proj: &[],
            user: &["I prefer pytest for tests."],
            msgs: &["In this repo the tests moved to tests/unit now, still pytest."],
            expect: None,
        },
        P {
            name: "v06 retire exact subpath",
            proj: &["Config lives in `config/app.toml`."],
            user: &[],
            msgs: &["The [legacy] section of config/app.toml is gone."],
            expect: None,
        },
        P {
            name: "v07 renamed inside file",
            proj: &["Deploy with `./scripts/deploy.sh prod`."],
            user: &[],
            msgs: &["I renamed a variable inside deploy.sh."],
            expect: None,
        },
        P {
            name: "v11 bumped dep",
            proj: &["Use axios 1.6 for HTTP."],
            user: &[],
            msgs: &["I bumped axios-mock-adapter to 2.0 now."],
            expect: None,
        },
        P {
            name: "v13 moved ticket",
            proj: &["Backend reviews: @tomasz"],
            user: &[],
            msgs: &["I moved the backend review ticket to @tomasz's column."],
            expect: None,
        },
        P {
            name: "v14 docker gone",
            proj: &["Postgres runs in docker compose."],
            user: &[],
            msgs: &["The postgres container is gone after docker compose down, bring it back up."],
            expect: None,
        },
    ];
    let mut failures = Vec::new();
    for p in &probes {
        let c = changed(&run(p));
        if !c.is_empty() {
            failures.push(format!("{}: {:?} changed {c:?}", p.name, p.msgs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_change_replaces_exactly_the_entry_it_is_about() {
    let probes: Vec<P> = vec![
        P {
            name: "s01 port now",
            proj: &[DEV],
            user: &[],
            msgs: &["The dev server is on port 3000 now."],
            expect: Some("dev server"),
        },
        P {
            name: "s02 moved to",
            proj: &[DEV],
            user: &[],
            msgs: &["We moved the dev server to port 5173."],
            expect: Some("dev server"),
        },
        P {
            name: "s04 e2e playwright",
            proj: &["E2E tests: `npx cypress run`.", "Unit tests: `npm test`."],
            user: &[],
            msgs: &["e2e is Playwright now, `npx playwright test`."],
            expect: Some("E2E"),
        },
        P {
            name: "s11 branch trunk",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &["The default branch is `trunk` now."],
            expect: Some("Default branch"),
        },
        P {
            name: "s13 minsdk",
            proj: &["minSdk is 24"],
            user: &[],
            msgs: &["minSdk went up to 26."],
            expect: Some("minSdk"),
        },
        P {
            name: "s14 minsdk now",
            proj: &["minSdk is 24"],
            user: &[],
            msgs: &["minSdk is 26 now."],
            expect: Some("minSdk"),
        },
        P {
            name: "s16 python floor",
            proj: &["The project supports Python 3.8 and up."],
            user: &[],
            msgs: &["We dropped Python 3.8, the floor is 3.10 now."],
            expect: Some("Python"),
        },
        P {
            name: "s18 reviewer",
            proj: &["Backend reviews: @tomasz", "Frontend reviews: @sana"],
            user: &[],
            msgs: &["Backend reviews go to @ifeoma now."],
            expect: Some("Backend"),
        },
        P {
            name: "s22 ci moved",
            proj: &["CI runs on Travis."],
            user: &[],
            msgs: &["CI moved from Travis to GitHub Actions."],
            expect: Some("Travis"),
        },
        P {
            name: "s26 zh node",
            proj: &["Node 版本固定为 18"],
            user: &[],
            msgs: &["我们已经迁移到 Node 22 了。"],
            expect: Some("Node"),
        },
        P {
            name: "s27 tabs",
            proj: &[],
            user: &["I prefer tabs over spaces."],
            msgs: &["I use spaces now, not tabs."],
            expect: Some("tabs"),
        },
        P {
            name: "s28 no longer",
            proj: &["We use Jest for unit tests."],
            user: &[],
            msgs: &["We no longer use Jest, unit tests run on Vitest."],
            expect: Some("Jest"),
        },
        P {
            name: "s33 docs tool",
            proj: &["Docs are built with Sphinx."],
            user: &[],
            msgs: &["We moved the docs off Sphinx to MkDocs."],
            expect: Some("Sphinx"),
        },
        P {
            name: "z01 zh comma keyed",
            proj: &["Node 版本固定为 18"],
            user: &[],
            msgs: &["好的，现在 node 22 了。"],
            expect: Some("Node"),
        },
        P {
            name: "d01 two servers one changes",
            proj: &[
                "The dev server runs on port 8000.",
                "The admin server runs on port 8001.",
            ],
            user: &[],
            msgs: &["The admin server is on 9001 now."],
            expect: Some("admin"),
        },
        P {
            name: "d03 two reviewers",
            proj: &["Backend reviews: @tomasz", "Frontend reviews: @sana"],
            user: &[],
            msgs: &["Frontend reviews go to @lee now."],
            expect: Some("Frontend"),
        },
        P {
            name: "d04 retire 8000 two",
            proj: &[
                "The dev server runs on port 8000.",
                "The metrics exporter listens on 8000 in prod.",
            ],
            user: &[],
            msgs: &["The dev server isn't on 8000 anymore."],
            expect: Some("dev server"),
        },
        P {
            name: "d05 two python",
            proj: &[
                "The library supports Python 3.8 and up.",
                "CI tests Python 3.8 to 3.12.",
            ],
            user: &[],
            msgs: &["The library dropped Python 3.8."],
            expect: Some("library"),
        },
        P {
            name: "d07 redis sessions",
            proj: &[
                "Redis runs on port 6379 in docker compose.",
                "Sessions are stored in Redis.",
            ],
            user: &[],
            msgs: &["We don't use Redis for sessions anymore, they're in Postgres now."],
            expect: Some("Sessions"),
        },
        P {
            name: "m05 no more travis",
            proj: &["CI runs on Travis."],
            user: &[],
            msgs: &["No more Travis, CI is on GitHub Actions now."],
            expect: Some("Travis"),
        },
        P {
            name: "m12 editor now",
            proj: &[],
            user: &["I use neovim."],
            msgs: &["I use helix now instead of neovim."],
            expect: Some("neovim"),
        },
        P {
            name: "m14 node bump",
            proj: &["Node 18 is required."],
            user: &[],
            msgs: &["Node 20 is required now."],
            expect: Some("Node 18"),
        },
        P {
            name: "m15 python floor now",
            proj: &["Minimum Python is 3.8."],
            user: &[],
            msgs: &["Minimum Python is 3.10 now."],
            expect: Some("3.8"),
        },
    ];
    let mut failures = Vec::new();
    for p in &probes {
        let want = p.expect.expect("a probe of a change names its entry");
        let c = changed(&run(p));
        if !c.iter().any(|t| t.contains(want)) || c.iter().any(|t| !t.contains(want)) {
            failures.push(format!(
                "{}: {:?} changed {c:?}, want {want:?}",
                p.name, p.msgs
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
