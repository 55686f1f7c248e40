//! Facts that change (stop 48): which stored entries an offline extraction updates or removes.
//! Look-alikes first (a second fact on the same topic, a one-off, a question, a plan, reported
//! speech, a negation, a part of the subject, pasted code, logs and quotes): each of these was
//! wrongly updated or removed by the first draft of `mem_llm::offline::update` and
//! `mem_auto`'s `retire` in a review (~240 probes) and must change nothing. Then plain changes
//! that must update or remove exactly the entry they are about. A second review's ~110 new
//! look-alikes in other domains (Go, Java, data, mobile, Chinese, limits after the value such as
//! "… anymore, only locally", remarks such as "pnpm 9 is out now") are here too.
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

/// The probes of `probes` that changed a stored entry, one line each.
fn nothing_changed_failures(probes: &[P]) -> Vec<String> {
    probes
        .iter()
        .filter_map(|p| {
            let c = changed(&run(p));
            (!c.is_empty()).then(|| format!("{}: {:?} changed {c:?}", p.name, p.msgs))
        })
        .collect()
}

/// The new texts of the entries an extraction updated.
fn new_texts(r: &ExtractReport) -> Vec<String> {
    r.files
        .iter()
        .flat_map(|f| f.updated.iter().map(|u| u.new.text.clone()))
        .collect()
}

/// Fails naming every probe of `probes` that changed a stored entry.
fn assert_nothing_changes(probes: &[P]) {
    let failures = nothing_changed_failures(probes);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
        // A second review: ~110 new look-alikes in other domains.
        P {
            name: "n01 py notebooks ruff",
            proj: &["Format Python with black."],
            user: &[],
            msgs: &["The notebooks are formatted with ruff now."],
            expect: None,
        },
        P {
            name: "n02 go lambdas",
            proj: &["Go 1.21 is required to build the CLI."],
            user: &[],
            msgs: &["The lambda functions are on Go 1.22 now."],
            expect: None,
        },
        P {
            name: "n03 rust nightly miri",
            proj: &["The Rust toolchain is pinned to 1.75 in rust-toolchain.toml."],
            user: &[],
            msgs: &["The nightly toolchain for miri is 2024-05-01 now."],
            expect: None,
        },
        P {
            name: "n04 android gradle",
            proj: &["Build the Java service with `./gradlew build`."],
            user: &[],
            msgs: &["The Android app builds with `./gradlew assembleRelease` now."],
            expect: None,
        },
        P {
            name: "n05 tf staging state",
            proj: &["Terraform state lives in the S3 bucket `tf-state-prod`."],
            user: &[],
            msgs: &["The staging Terraform state lives in `tf-state-stg` now."],
            expect: None,
        },
        P {
            name: "n06 weekly etl",
            proj: &["The nightly ETL job runs at 02:00 UTC."],
            user: &[],
            msgs: &["The weekly ETL job runs at 04:00 UTC now."],
            expect: None,
        },
        P {
            name: "n07 watchos target",
            proj: &["iOS deployment target is 15.0."],
            user: &[],
            msgs: &["The watchOS deployment target is 9.0 now."],
            expect: None,
        },
        P {
            name: "n08 team editor",
            proj: &[],
            user: &["I use VS Code."],
            msgs: &["My team uses JetBrains Fleet now."],
            expect: None,
        },
        P {
            name: "n09 commit lang",
            proj: &[],
            user: &["Reply in Chinese."],
            msgs: &["The commit messages are in English now."],
            expect: None,
        },
        P {
            name: "n10 zh cache",
            proj: &["数据库用 PostgreSQL 15。"],
            user: &[],
            msgs: &["缓存现在用 Redis 7。"],
            expect: None,
        },
        P {
            name: "n11 multi sentence other",
            proj: &["The dev API listens on port 8080.", "Logs go to stdout."],
            user: &[],
            msgs: &["Logs go to stdout as before. The metrics endpoint is on port 9090 now."],
            expect: None,
        },
        P {
            name: "n12 several facts one part",
            proj: &["Backend is Django 4.2 with Celery workers and Redis as broker."],
            user: &[],
            msgs: &["Celery beat now runs in its own container."],
            expect: None,
        },
        P {
            name: "n13 assistant says",
            proj: &["CI runs on GitHub Actions."],
            user: &[],
            msgs: &[
                "what does the pipeline look like",
                "A:CI runs on Buildkite now, per the config I just read.",
            ],
            expect: None,
        },
        P {
            name: "n14 friend team poetry",
            proj: &["Use poetry."],
            user: &[],
            msgs: &["A friend's team migrated from poetry to uv last month and loves it."],
            expect: None,
        },
        P {
            name: "n15 metrics port exposed",
            proj: &["Metrics are scraped on port 9090."],
            user: &[],
            msgs: &["We don't expose the metrics port 9090 to the internet anymore."],
            expect: None,
        },
        P {
            name: "n16 pg14 ci only",
            proj: &["Postgres 14 runs in docker compose for local dev."],
            user: &[],
            msgs: &["We don't run Postgres 14 in CI anymore, only locally."],
            expect: None,
        },
        P {
            name: "n17 sarcasm yarn",
            proj: &["Package manager is pnpm."],
            user: &[],
            msgs: &["Yeah right, the package manager is yarn now, and pigs fly."],
            expect: None,
        },
        P {
            name: "n18 cond in case",
            proj: &["The API gateway listens on port 8080."],
            user: &[],
            msgs: &["In case the API gateway is on 8443 now, update the proxy config."],
            expect: None,
        },
        P {
            name: "n19 cond assuming",
            proj: &["The frontend talks to the API at /api/v1."],
            user: &[],
            msgs: &["Assuming the API is at /api/v2 now, the frontend breaks."],
            expect: None,
        },
        P {
            name: "n20 past history pytest",
            proj: &["Tests run with pytest."],
            user: &[],
            msgs: &["We used to use nose, now tests run with pytest."],
            expect: None,
        },
        P {
            name: "n21 past jenkins actions",
            proj: &["CI runs on GitHub Actions."],
            user: &[],
            msgs: &[
                "We moved from Jenkins to GitHub Actions years ago, so the config is in .github/workflows.",
            ],
            expect: None,
        },
        P {
            name: "n22 typo other server",
            proj: &["The web server runs on port 8080."],
            user: &[],
            msgs: &["teh worker sever runs on port 9000 now"],
            expect: None,
        },
        P {
            name: "n23 zh backoffice react",
            proj: &["前端用 Vue 3 写的。"],
            user: &[],
            msgs: &["后台管理系统现在用 React 了。"],
            expect: None,
        },
        P {
            name: "n24 zh integration tox",
            proj: &["测试用 pytest 跑。"],
            user: &[],
            msgs: &["集成测试现在改成用 tox 跑了"],
            expect: None,
        },
        P {
            name: "n25 zh user comments",
            proj: &[],
            user: &["回答请用中文。"],
            msgs: &["这个项目的注释现在改成英文了。"],
            expect: None,
        },
        P {
            name: "n26 mixed redis sentinel",
            proj: &["Redis 用 6379 端口。"],
            user: &[],
            msgs: &["Redis 的 sentinel 现在跑在 26379 上。"],
            expect: None,
        },
        P {
            name: "n27 zh lint version",
            proj: &["Go 版本是 1.21。"],
            user: &[],
            msgs: &["lint 用的 golangci-lint 现在升级到 1.55 了。"],
            expect: None,
        },
        P {
            name: "n28 several facts django",
            proj: &["Python 3.11, Django 4.2, Postgres 15, Redis 7."],
            user: &[],
            msgs: &["We're on Django 5.0 and Postgres 16 now."],
            expect: None,
        },
        P {
            name: "n29 two ports one entry",
            proj: &["Frontend runs on port 3000 and the API on port 4000."],
            user: &[],
            msgs: &["The frontend runs on port 3001 now."],
            expect: None,
        },
        P {
            name: "n30 user shell rpi",
            proj: &[],
            user: &["I use zsh with oh-my-zsh."],
            msgs: &["On the raspberry pi the shell is bash now."],
            expect: None,
        },
        P {
            name: "n31 kotlin module",
            proj: &["The Android app is written in Kotlin."],
            user: &[],
            msgs: &["The shared module is Kotlin Multiplatform now."],
            expect: None,
        },
        P {
            name: "n32 helm chart version",
            proj: &["Helm chart version is 1.4.0."],
            user: &[],
            msgs: &["The ingress-nginx chart version is 4.8 now."],
            expect: None,
        },
        P {
            name: "n33 k8s namespace staging",
            proj: &["Production runs in the `payments` namespace."],
            user: &[],
            msgs: &["Staging runs in the `payments-stg` namespace now."],
            expect: None,
        },
        P {
            name: "n34 spark cluster",
            proj: &["Spark jobs run on EMR."],
            user: &[],
            msgs: &["The streaming Spark jobs run on Databricks now."],
            expect: None,
        },
        P {
            name: "n35 dbt models path",
            proj: &["dbt models live in `models/`."],
            user: &[],
            msgs: &["dbt seeds live in `data/seeds/` now."],
            expect: None,
        },
        P {
            name: "n36 java gc",
            proj: &["The service runs on Java 17."],
            user: &[],
            msgs: &["The batch service runs on Java 21 now."],
            expect: None,
        },
        P {
            name: "n37 go modules vendor",
            proj: &["Dependencies are vendored in `vendor/`."],
            user: &[],
            msgs: &["The tools dependencies are in `tools/go.mod` now."],
            expect: None,
        },
        P {
            name: "n38 rust edition crate",
            proj: &["The workspace uses Rust edition 2021."],
            user: &[],
            msgs: &["The proc-macro crate is on edition 2024 now."],
            expect: None,
        },
        P {
            name: "n39 cargo feature",
            proj: &["Build with `cargo build --release`."],
            user: &[],
            msgs: &["Benchmarks are built with `cargo bench` now."],
            expect: None,
        },
        P {
            name: "n40 mypy strict",
            proj: &["Type-check with mypy in strict mode."],
            user: &[],
            msgs: &["The scripts folder is checked with pyright now."],
            expect: None,
        },
        P {
            name: "n41 user reply style",
            proj: &[],
            user: &["Keep answers short, no bullet lists."],
            msgs: &["The design docs are long now, with bullet lists."],
            expect: None,
        },
        P {
            name: "n42 user explain",
            proj: &[],
            user: &["Explain changes before making them."],
            msgs: &["The changelog is generated by git-cliff now."],
            expect: None,
        },
        P {
            name: "n43 question no mark",
            proj: &["The API gateway listens on port 8080."],
            user: &[],
            msgs: &["quick question the gateway is on 8443 now right"],
            expect: None,
        },
        P {
            name: "n44 question zh",
            proj: &["数据库用 PostgreSQL 15。"],
            user: &[],
            msgs: &["数据库现在是 16 了吗"],
            expect: None,
        },
        P {
            name: "n45 hedge seems",
            proj: &["The dev database is on port 5432."],
            user: &[],
            msgs: &["Seems like the dev database is on port 5433 now."],
            expect: None,
        },
        P {
            name: "n46 hedge looks",
            proj: &["Redis runs on port 6379."],
            user: &[],
            msgs: &["Looks like Redis is on 6380 now, weird."],
            expect: None,
        },
        P {
            name: "n47 reported ci bot",
            proj: &["CI runs on GitHub Actions."],
            user: &[],
            msgs: &["The bot's message claims CI is on CircleCI now."],
            expect: None,
        },
        P {
            name: "n48 reported pm",
            proj: &["Releases go out on Tuesdays."],
            user: &[],
            msgs: &["Per the PM, releases go out on Thursdays now."],
            expect: None,
        },
        P {
            name: "n49 log pasted",
            proj: &["The dev server runs on port 8000."],
            user: &[],
            msgs: &["```\n[vite] dev server running at http://localhost:5173 now\n```"],
            expect: None,
        },
        P {
            name: "n50 quoted",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &[
                "> The default branch is `develop` now.\nthis is what the old README says, ignore it",
            ],
            expect: None,
        },
        P {
            name: "n51 one-off today",
            proj: &["The dev database is on port 5432."],
            user: &[],
            msgs: &["For today the dev database is on port 5433 now, I'm running two."],
            expect: None,
        },
        P {
            name: "n52 local machine only",
            proj: &["The dev database is on port 5432."],
            user: &[],
            msgs: &["On my machine the dev database is on port 5433 now."],
            expect: None,
        },
        P {
            name: "n53 branch only",
            proj: &["Node 18 is required."],
            user: &[],
            msgs: &["In this PR branch Node 20 is required now."],
            expect: None,
        },
        P {
            name: "n54 temporarily",
            proj: &["Deploys go to us-east-1."],
            user: &[],
            msgs: &["Deploys go to us-west-2 now, temporarily, while us-east-1 is down."],
            expect: None,
        },
        P {
            name: "n55 until",
            proj: &["Deploys go to us-east-1."],
            user: &[],
            msgs: &["Until Friday deploys go to eu-west-1 now."],
            expect: None,
        },
        P {
            name: "n56 emoji",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["🎉 pnpm 9 is out now 🎉"],
            expect: None,
        },
        P {
            name: "n57 version released",
            proj: &["Use Python 3.12."],
            user: &[],
            msgs: &["Python 3.13 is out now, nice."],
            expect: None,
        },
        P {
            name: "n58 negated moved",
            proj: &["The dev database is on port 5432."],
            user: &[],
            msgs: &["Nobody moved the dev database to 5433, it's on 5432."],
            expect: None,
        },
        P {
            name: "n59 negation haven't",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["We haven't switched to bun, pnpm is fine."],
            expect: None,
        },
        P {
            name: "n60 rollback",
            proj: &["The API uses Express 4."],
            user: &[],
            msgs: &["We tried moving the API to Fastify but rolled back."],
            expect: None,
        },
        P {
            name: "n61 tried reverted",
            proj: &["Lint with eslint."],
            user: &[],
            msgs: &["I replaced eslint with biome for an hour and reverted."],
            expect: None,
        },
        P {
            name: "n62 docs only",
            proj: &["Node 18 is required."],
            user: &[],
            msgs: &["The docs say Node 20 is required now but that's wrong."],
            expect: None,
        },
        P {
            name: "n63 old readme",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &["The old wiki page is gone, the default branch section was in it."],
            expect: None,
        },
        P {
            name: "n64 removed file not tool",
            proj: &["Run migrations with `alembic upgrade head`."],
            user: &[],
            msgs: &["I removed the old alembic migration 0042 from the branch."],
            expect: None,
        },
        P {
            name: "n65 dropped table",
            proj: &["Sessions are stored in Postgres."],
            user: &[],
            msgs: &["We dropped the sessions_old table from Postgres."],
            expect: None,
        },
        P {
            name: "n66 retired endpoint",
            proj: &["The API base path is /api/v1."],
            user: &[],
            msgs: &["We retired the /api/v1/legacy-export endpoint."],
            expect: None,
        },
        P {
            name: "n67 deprecated method",
            proj: &["Use requests for HTTP calls."],
            user: &[],
            msgs: &["requests' old session hooks are deprecated, careful."],
            expect: None,
        },
        P {
            name: "n68 gone file",
            proj: &["Config lives in `settings.yaml`."],
            user: &[],
            msgs: &["settings.local.yaml is gone, use env vars for overrides."],
            expect: None,
        },
        P {
            name: "n69 zh abandoned branch",
            proj: &["从 main 分支发布。"],
            user: &[],
            msgs: &["release-1.2 分支已经废弃了。"],
            expect: None,
        },
        P {
            name: "n70 zh no longer cache",
            proj: &["用 npm 安装依赖。"],
            user: &[],
            msgs: &["npm 的镜像源不再用淘宝的了。"],
            expect: None,
        },
        P {
            name: "n71 zh stopped feature",
            proj: &["Python 3.8 及以上。"],
            user: &[],
            msgs: &["3.8 的 CI 矩阵不用了，本地还支持。"],
            expect: None,
        },
        P {
            name: "n72 long ramble",
            proj: &["The API gateway listens on port 8080.", "Use poetry."],
            user: &[],
            msgs: &[
                "So I was thinking about the whole architecture thing again, and honestly the gateway is fine, it listens where it always did, and poetry is fine too, what bugs me is that the frontend folks keep pinging me about CORS and I don't have time, and the staging gateway is on 8443 now which confuses them, anyway can you look at the CORS middleware in gateway/cors.py and tell me what you think.",
            ],
            expect: None,
        },
        P {
            name: "n73 mixed zh en",
            proj: &["Frontend uses React 18."],
            user: &[],
            msgs: &["landing page 现在用 Astro 了，主站还是 React 18。"],
            expect: None,
        },
        P {
            name: "n74 entry only url",
            proj: &["https://grafana.internal/d/abc"],
            user: &[],
            msgs: &["The grafana dashboard is at https://grafana.example.com/d/xyz now."],
            expect: None,
        },
        P {
            name: "n75 entry only number",
            proj: &["8000"],
            user: &[],
            msgs: &["The metrics port is 9100 now."],
            expect: None,
        },
        P {
            name: "n76 empty entry",
            proj: &[""],
            user: &[],
            msgs: &["The dev server is on 3000 now."],
            expect: None,
        },
        P {
            name: "n77 rtl",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["השרת עובר עכשיו לפורט 3000 now is the time"],
            expect: None,
        },
        P {
            name: "n78 full width",
            proj: &["Redis（缓存）跑在 6379。"],
            user: &[],
            msgs: &["Redis（队列）现在跑在 6380，缓存不变。"],
            expect: None,
        },
        P {
            name: "n79 user editor plugin",
            proj: &[],
            user: &["I use neovim."],
            msgs: &["My neovim colorscheme is tokyonight now."],
            expect: None,
        },
        P {
            name: "n80 user lang other project",
            proj: &[],
            user: &["I write Python with type hints."],
            msgs: &["In this repo the Python code uses no type hints now, legacy code."],
            expect: None,
        },
        P {
            name: "n81 scoped for service",
            proj: &["Timeout for HTTP calls is 30s."],
            user: &[],
            msgs: &["Timeout for HTTP calls is 5s now in the payment service."],
            expect: None,
        },
        P {
            name: "n82 ci runner image",
            proj: &["CI runs on ubuntu-22.04 runners."],
            user: &[],
            msgs: &["The macOS CI runners are macos-14 now."],
            expect: None,
        },
        P {
            name: "n83 both servers",
            proj: &["The web server runs on port 8080."],
            user: &[],
            msgs: &["Both the web server and the admin run behind nginx now."],
            expect: None,
        },
        P {
            name: "n84 person left",
            proj: &["Infra questions go to @priya."],
            user: &[],
            msgs: &["@priya is on leave now, ping @omar until she's back."],
            expect: None,
        },
        P {
            name: "n85 no longer compiles",
            proj: &["Build with `make all`."],
            user: &[],
            msgs: &["`make all` no longer compiles on my mac."],
            expect: None,
        },
        P {
            name: "n87 future tense",
            proj: &["Python 3.10 is the floor."],
            user: &[],
            msgs: &["Python 3.12 becomes the floor in April."],
            expect: None,
        },
        P {
            name: "n88 wished",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["Wish we had switched to bun already."],
            expect: None,
        },
        P {
            name: "n89 would have",
            proj: &["The dev database is on port 5432."],
            user: &[],
            msgs: &["It would be nicer if the dev database moved to 5433."],
            expect: None,
        },
        P {
            name: "n90 assistant then ok",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &[
                "A:Note: the default branch is `trunk` now in the remote.",
                "ok",
            ],
            expect: None,
        },
        P {
            name: "n91 jira ticket",
            proj: &["Deploys go through ArgoCD."],
            user: &[],
            msgs: &["JIRA-412: deploys moved to Flux (proposal draft)"],
            expect: None,
        },
        P {
            name: "n92 changed subject similar",
            proj: &["The mobile app targets Android 14."],
            user: &[],
            msgs: &["The mobile web app targets Safari 17 now."],
            expect: None,
        },
        P {
            name: "n93 same value said again",
            proj: &["Kafka runs on port 9092."],
            user: &[],
            msgs: &["Yep, Kafka runs on port 9092 now, same as before."],
            expect: None,
        },
        P {
            name: "n94 history retire",
            proj: &["CI runs on GitHub Actions."],
            user: &[],
            msgs: &["We retired Jenkins in 2021; CI runs on GitHub Actions."],
            expect: None,
        },
        P {
            name: "b01 pnpm faster",
            proj: &["Use pnpm."],
            user: &[],
            msgs: &["pnpm is so much faster now since v9."],
            expect: None,
        },
        P {
            name: "b02 java legacy module",
            proj: &["Use Java 17."],
            user: &[],
            msgs: &["We're on Java 8 now for the legacy payments module."],
            expect: None,
        },
        P {
            name: "b03 node electron",
            proj: &["Use Node 20."],
            user: &[],
            msgs: &["We're stuck on node 16 now for electron."],
            expect: None,
        },
        P {
            name: "b04 neovim release",
            proj: &[],
            user: &["I use neovim."],
            msgs: &["neovim 0.10 is out now with built-in commenting."],
            expect: None,
        },
        P {
            name: "b05 helm worries",
            proj: &["Deploy with Helm."],
            user: &[],
            msgs: &["Helm is the least of my worries now."],
            expect: None,
        },
        P {
            name: "b06 prettier slower",
            proj: &["Format with prettier."],
            user: &[],
            msgs: &["prettier is slower now that we added the tailwind plugin."],
            expect: None,
        },
        P {
            name: "b07 pg replica",
            proj: &["Tests run against Postgres 15."],
            user: &[],
            msgs: &["We don't use Postgres 15 for the analytics replica anymore."],
            expect: None,
        },
        P {
            name: "b08 swagger sdk",
            proj: &["The API is documented with Swagger 2.0."],
            user: &[],
            msgs: &["We no longer use Swagger 2.0 in the mobile SDK docs."],
            expect: None,
        },
        P {
            name: "b09 redis fixtures",
            proj: &["Redis runs on port 6379."],
            user: &[],
            msgs: &["We dropped Redis 6379 from the unit test fixtures, they use fakeredis now."],
            expect: None,
        },
        P {
            name: "b10 ruff formatter",
            proj: &["Use ruff."],
            user: &[],
            msgs: &["ruff is a full formatter now, nice."],
            expect: None,
        },
        P {
            name: "b11 dark mode macos",
            proj: &[],
            user: &["I prefer dark mode."],
            msgs: &["dark mode is the default in macOS now."],
            expect: None,
        },
        P {
            name: "b12 kotlin stable",
            proj: &["Use Kotlin."],
            user: &[],
            msgs: &["Kotlin 2.0 is stable now."],
            expect: None,
        },
        P {
            name: "b13 go generics",
            proj: &["Use Go 1.22."],
            user: &[],
            msgs: &["Go has range-over-func now, 1.23 is nice."],
            expect: None,
        },
        P {
            name: "b14 zh user lang",
            proj: &[],
            user: &["回答请用中文。"],
            msgs: &["中文现在是团队的工作语言。"],
            expect: None,
        },
        P {
            name: "b15 terraform license",
            proj: &["Infra is managed with Terraform."],
            user: &[],
            msgs: &["Terraform is BSL-licensed now, legal is asking about OpenTofu."],
            expect: None,
        },
        P {
            name: "b16 mixed k8s retire scope",
            proj: &["Kubernetes 1.28 in prod."],
            user: &[],
            msgs: &["我们在 dev 集群不再用 1.28 了。"],
            expect: None,
        },
        P {
            name: "b17 node retire ci matrix",
            proj: &["Node 18 and 20 are supported."],
            user: &[],
            msgs: &["We dropped Node 18 from the nightly matrix to save minutes."],
            expect: None,
        },
        P {
            name: "p02 turkish dotted I",
            proj: &["İstanbul region server runs on port 8000."],
            user: &[],
            msgs: &["İSTANBUL REGION SERVER İS ON PORT 3000 NOW."],
            expect: None,
        },
        P {
            name: "p03 emoji entry",
            proj: &["🚀🚀🚀"],
            user: &["🙂"],
            msgs: &["🚀 is 🔥 now, no longer 🐢 anymore"],
            expect: None,
        },
        P {
            name: "p04 fullwidth keyed",
            proj: &["Ｎｏｄｅ 版本是 １８。"],
            user: &[],
            msgs: &["Ｎｏｄｅ 现在是 ２２ 了，不再用１８了！"],
            expect: None,
        },
        P {
            name: "p05 zero width rtl",
            proj: &["\u{200f}\u{202e}port 8000"],
            user: &[],
            msgs: &["\u{202e}port is 3000 now\u{200f}，moved from 8000 anymore"],
            expect: None,
        },
        P {
            name: "p06 only punct",
            proj: &["，。；：！？"],
            user: &[],
            msgs: &["，，，now is ；； moved to ：：：anymore？"],
            expect: None,
        },
    ];
    assert_nothing_changes(&probes);
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
        // A second review: changes in other domains.
        P {
            name: "k01 black to ruff",
            proj: &["Format Python with black."],
            user: &[],
            msgs: &["We switched from black to ruff format."],
            expect: Some("black"),
        },
        P {
            name: "k03 rust toolchain",
            proj: &["The Rust toolchain is pinned to 1.75."],
            user: &[],
            msgs: &["The Rust toolchain is pinned to 1.78 now."],
            expect: Some("Rust"),
        },
        P {
            name: "k07 ios target",
            proj: &["iOS deployment target is 15.0."],
            user: &[],
            msgs: &["iOS deployment target went up to 16.0."],
            expect: Some("iOS"),
        },
        P {
            name: "k08 vscode zed",
            proj: &[],
            user: &["I use VS Code."],
            msgs: &["I switched to Zed, no more VS Code."],
            expect: Some("VS Code"),
        },
        P {
            name: "k13 kafka topic",
            proj: &["Kafka topic for orders is `orders.v1`."],
            user: &[],
            msgs: &["The Kafka orders topic is `orders.v2` now."],
            expect: Some("orders.v1"),
        },
        P {
            name: "k16 yarn gone",
            proj: &["Use yarn."],
            user: &[],
            msgs: &["We don't use yarn anymore, it's pnpm."],
            expect: Some("yarn"),
        },
        P {
            name: "k21 tmux zellij",
            proj: &[],
            user: &["I use tmux."],
            msgs: &["I'm on zellij now, not tmux anymore."],
            expect: Some("tmux"),
        },
        P {
            name: "k23 api path",
            proj: &["The API base path is /api/v1."],
            user: &[],
            msgs: &["The API base path is /api/v2 now."],
            expect: Some("/api/v1"),
        },
        P {
            name: "k25 line length",
            proj: &["Max line length is 88."],
            user: &[],
            msgs: &["Max line length is 120 now."],
            expect: Some("88"),
        },
        P {
            name: "k29 java floor",
            proj: &["Java 11 is the minimum."],
            user: &[],
            msgs: &["We dropped Java 11; the minimum is 17 now."],
            expect: Some("Java 11"),
        },
        P {
            name: "k30 oncall",
            proj: &["Infra questions go to @priya."],
            user: &[],
            msgs: &["Infra questions go to @omar now, Priya changed teams."],
            expect: Some("@priya"),
        },
        P {
            name: "k32 k8s version",
            proj: &["The cluster runs Kubernetes 1.27."],
            user: &[],
            msgs: &["The cluster was upgraded to Kubernetes 1.29."],
            expect: Some("1.27"),
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

/// Corrections ("X, not Y"): before stop 49, every entry stating `Y` went, whatever the
/// correction was about. Each look-alike here removed a good entry then.
#[test]
fn a_correction_removes_only_the_entries_it_corrects() {
    let keep: &[P] = &[
        P {
            name: "c01 first-person report",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &["I switched to the feature branch now, not main."],
            expect: None,
        },
        P {
            name: "c02 other subject uses",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["Actually, the docs site uses yarn, not npm."],
            expect: None,
        },
        P {
            name: "c03 limit before the verb",
            proj: &["Run tests with `npm test`."],
            user: &[],
            msgs: &["No, for the e2e suite use playwright, not npm test."],
            expect: None,
        },
        P {
            name: "c04 a replica",
            proj: &["The database is PostgreSQL 14."],
            user: &[],
            msgs: &["No, the analytics replica is MySQL, not PostgreSQL."],
            expect: None,
        },
        P {
            name: "c05 staging",
            proj: &["Deploy with `./deploy.sh`."],
            user: &[],
            msgs: &["Actually, for staging use the GitHub workflow, not deploy.sh."],
            expect: None,
        },
        P {
            name: "c06 another endpoint",
            proj: &["The API listens on port 8080."],
            user: &[],
            msgs: &["Actually the metrics endpoint is 9090, not 8080."],
            expect: None,
        },
        P {
            name: "c07 the lambda",
            proj: &["Python version: 3.11."],
            user: &[],
            msgs: &["No, the lambda runs Python 3.9, not 3.11."],
            expect: None,
        },
        P {
            name: "c08 prod and staging",
            proj: &["Staging is at staging.example.com."],
            user: &[],
            msgs: &["No, prod is at example.com, not staging.example.com."],
            expect: None,
        },
        P {
            name: "c09 limit after the value",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["No, use yarn for the docs site, not npm."],
            expect: None,
        },
        P {
            name: "c10 progressive report",
            proj: &["Use npm."],
            user: &[],
            msgs: &["No no, I'm using yarn on my laptop, not npm."],
            expect: None,
        },
    ];
    let change: &[P] = &[
        P {
            name: "c21 use X not Y",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["No, use pnpm, not npm."],
            expect: Some("npm"),
        },
        P {
            name: "c22 here",
            proj: &["Use npm."],
            user: &[],
            msgs: &["No, use pnpm here, not npm."],
            expect: Some("npm"),
        },
        P {
            name: "c23 same subject",
            proj: &["Default branch is `main`."],
            user: &[],
            msgs: &["No, the default branch is develop, not main."],
            expect: Some("main"),
        },
        P {
            name: "c24 tests run with",
            proj: &["Run tests with jest."],
            user: &[],
            msgs: &["Actually, tests run with vitest, not jest."],
            expect: Some("jest"),
        },
        P {
            name: "c25 user preference",
            proj: &[],
            user: &["I use zsh."],
            msgs: &["No, I use fish now, not zsh."],
            expect: Some("zsh"),
        },
        P {
            name: "c26 user switched",
            proj: &[],
            user: &["I use zsh."],
            msgs: &["Actually I switched to fish, not zsh."],
            expect: Some("zsh"),
        },
        P {
            name: "c27 verbless",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["No, pnpm, not npm."],
            expect: Some("npm"),
        },
        P {
            name: "c29 instead of",
            proj: &["Format with black."],
            user: &[],
            msgs: &["No, we format with ruff format instead of black."],
            expect: Some("black"),
        },
        P {
            name: "c30 chinese",
            proj: &["Use npm."],
            user: &[],
            msgs: &["不对，用 pnpm，而不是 npm。"],
            expect: Some("npm"),
        },
    ];
    let mut failures = Vec::new();
    for p in keep.iter().chain(change) {
        let c = changed(&run(p));
        let ok = match p.expect {
            None => c.is_empty(),
            Some(want) => !c.is_empty() && c.iter().all(|t| t.contains(want)),
        };
        if !ok {
            failures.push(format!("{}: {:?} changed {c:?}", p.name, p.msgs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A tool taking the place of another of its kind ("We switched to pnpm." against "Package
/// manager: npm."), stop 49: `mem_llm::offline::kinds`.
#[test]
fn a_tool_replaced_by_another_of_its_kind() {
    let keep: &[P] = &[
        P {
            name: "t01 other subject",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["The docs site switched to pnpm."],
            expect: None,
        },
        P {
            name: "t02 scope",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["We use pnpm for the docs site now."],
            expect: None,
        },
        P {
            name: "t03 question",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["Should we switch to pnpm?"],
            expect: None,
        },
        P {
            name: "t04 remark",
            proj: &["Use npm."],
            user: &[],
            msgs: &["pnpm is so much faster now."],
            expect: None,
        },
        P {
            name: "t05 my side projects",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["I use pnpm now in my side projects."],
            expect: None,
        },
        P {
            name: "t06 both",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["We use both npm and pnpm now."],
            expect: None,
        },
        P {
            name: "t07 a bot",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["Renovate now uses pnpm."],
            expect: None,
        },
        P {
            name: "t08 also",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["We also run yarn for the legacy app now."],
            expect: None,
        },
        P {
            name: "t09 two tools",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["The old repo used yarn; this one is on pnpm now."],
            expect: None,
        },
        P {
            name: "t10 staging database",
            proj: &["Database: PostgreSQL."],
            user: &[],
            msgs: &["The staging database is MySQL now."],
            expect: None,
        },
        P {
            name: "t11 analytics",
            proj: &["The database is PostgreSQL."],
            user: &[],
            msgs: &["Our analytics uses MongoDB now."],
            expect: None,
        },
        P {
            name: "t12 instruction",
            proj: &["Unit tests: vitest."],
            user: &[],
            msgs: &["Now run jest with --watch."],
            expect: None,
        },
        P {
            name: "t13 ci image",
            proj: &[],
            user: &["I use zsh."],
            msgs: &["The CI image uses bash now."],
            expect: None,
        },
        P {
            name: "t14 this branch",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["Use yarn now, npm is broken on this branch."],
            expect: None,
        },
        P {
            name: "t15 another kind",
            proj: &["Package manager: npm."],
            user: &[],
            msgs: &["We switched to vitest."],
            expect: None,
        },
        P {
            name: "t16 two stored",
            proj: &["npm for the app, yarn for the docs."],
            user: &[],
            msgs: &["We use pnpm now."],
            expect: None,
        },
    ];
    let change: &[(P, &str)] = &[
        (
            P {
                name: "t21 switched",
                proj: &["Package manager: npm.", "Node 20."],
                user: &[],
                msgs: &["We switched to pnpm."],
                expect: Some("npm"),
            },
            "Package manager: pnpm.",
        ),
        (
            P {
                name: "t22 instruction entry",
                proj: &["Use npm."],
                user: &[],
                msgs: &["We use pnpm now."],
                expect: Some("npm"),
            },
            "Use pnpm.",
        ),
        (
            P {
                name: "t23 runner in parentheses",
                proj: &[
                    "Unit tests: `npm run test:unit` (Jest).",
                    "E2E tests: `npx cypress run`.",
                ],
                user: &[],
                msgs: &["Unit tests run on Vitest now."],
                expect: Some("Jest"),
            },
            "Unit tests run on Vitest now.",
        ),
        (
            P {
                name: "t25 editor",
                proj: &[],
                user: &["I use neovim."],
                msgs: &["My editor is Helix now."],
                expect: Some("neovim"),
            },
            "I use Helix.",
        ),
    ];
    let mut failures = Vec::new();
    failures.extend(nothing_changed_failures(keep));
    for (p, now) in change {
        let r = run(p);
        let c = changed(&r);
        let want = p.expect.expect("a change names its entry");
        let texts = new_texts(&r);
        let added: Vec<String> = r
            .files
            .iter()
            .flat_map(|f| f.added.iter().map(|a| a.text.clone()))
            .collect();
        if c.len() != 1 || !c[0].contains(want) || texts != [*now] || !added.is_empty() {
            failures.push(format!(
                "{}: {:?} changed {c:?} to {texts:?}, added {added:?}",
                p.name, p.msgs
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A third review (stop 49, 193 probes against the first drafts of the two rules above): each
/// of these changed a good entry then.
#[test]
fn look_alikes_of_the_third_review_change_nothing() {
    let probes: Vec<P> = vec![
        P {
            name: "k02 counterfactual",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["Had we switched to pnpm last year, we wouldn't have this lockfile mess."],
            expect: None,
        },
        P {
            name: "k03 they",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["I talked to the billing folks today. They switched to pnpm and love it."],
            expect: None,
        },
        P {
            name: "k04 the docs",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["We switched the docs to pnpm."],
            expect: None,
        },
        P {
            name: "k06 don't use now",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &[
                "A:Should I add a yarn.lock for the new workspace?",
                "No, we don't use yarn now.",
            ],
            expect: None,
        },
        P {
            name: "k11 a person",
            proj: &["CI: Jenkins.", "Releases are cut from `main`."],
            user: &[],
            msgs: &["Heads up: Travis is the release manager now, Priya moved to infra."],
            expect: None,
        },
        P {
            name: "k12 a person",
            proj: &["Unit tests: Jest (`npm test`).", "Releases are cut by Ben."],
            user: &[],
            msgs: &["Ava runs the releases now."],
            expect: None,
        },
        P {
            name: "k17 requests",
            proj: &[
                "HTTP client: axios.",
                "API base URL: https://api.acme.dev/v2.",
            ],
            user: &[],
            msgs: &["We use signed requests now."],
            expect: None,
        },
        P {
            name: "k19 the sessions",
            proj: &["Cache: memcached.", "Database: PostgreSQL."],
            user: &[],
            msgs: &["We moved the sessions to Redis."],
            expect: None,
        },
        P {
            name: "k20 one service",
            proj: &["Database: PostgreSQL.", "ORM: Prisma."],
            user: &[],
            msgs: &["We migrated the audit log service to MongoDB."],
            expect: None,
        },
        P {
            name: "k21 on CI",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["On CI we use pnpm now; locally nothing changes."],
            expect: None,
        },
        P {
            name: "k22 on servers",
            proj: &[],
            user: &["I use zsh.", "I prefer dark themes."],
            msgs: &["I use bash now when I ssh into the prod boxes."],
            expect: None,
        },
        P {
            name: "k40 one file",
            proj: &["Logging: pino.", "Error tracking: Sentry."],
            user: &[],
            msgs: &["`scripts/seed.ts` uses loguru now."],
            expect: None,
        },
        P {
            name: "k80 one workspace",
            proj: &[
                "Package manager: npm.",
                "Workspaces: `apps/web`, `apps/admin`, `packages/ui`.",
            ],
            user: &[],
            msgs: &["We moved the admin app over to yarn."],
            expect: None,
        },
        P {
            name: "k81 don't use",
            proj: &["Unit tests: Vitest.", "E2E tests: Playwright."],
            user: &[],
            msgs: &[
                "A:I'll add a jest.config.js for the new package.",
                "We don't use Jest now, delete that.",
            ],
            expect: None,
        },
        P {
            name: "k82 dont run",
            proj: &["CI: CircleCI.", "Deploy with `make deploy`."],
            user: &[],
            msgs: &["we dont run jenkins now"],
            expect: None,
        },
        P {
            name: "k83 no one",
            proj: &[],
            user: &["I use neovim.", "I prefer tabs."],
            msgs: &["No one uses vim now, it's all neovim or helix."],
            expect: None,
        },
        P {
            name: "k84 partner",
            proj: &["HTTP client: axios.", "API base URL: https://api.acme.dev."],
            user: &[],
            msgs: &["I checked the partner's Python client. They use httpx now."],
            expect: None,
        },
        P {
            name: "k85 it",
            proj: &["Unit tests: Jest.", "E2E tests: Cypress."],
            user: &[],
            msgs: &["I bumped `@acme/ui` to 4.0. It uses Vitest now."],
            expect: None,
        },
        P {
            name: "k53 agrees",
            proj: &[
                "Secrets live in Vault, never in the repo.",
                "Deploy with `make deploy`.",
            ],
            user: &[],
            msgs: &["No no, put the token in Vault, not the repo."],
            expect: None,
        },
        P {
            name: "k55 bug report",
            proj: &["Install deps with `pnpm install`.", "Node 20 is required."],
            user: &[],
            msgs: &["Nope, the postinstall hook ran `npm install` instead of `pnpm install`."],
            expect: None,
        },
        P {
            name: "k56 I meant",
            proj: &["Prod bucket: s3://acme-prod.", "Region: eu-west-1."],
            user: &[],
            msgs: &["No, I meant the staging bucket, not prod."],
            expect: None,
        },
        P {
            name: "k62 for the cache",
            proj: &[
                "Config is a plain object exported from `config.ts`.",
                "Use TypeScript strict mode.",
            ],
            user: &[],
            msgs: &["Actually, use a Map instead of an object for the cache."],
            expect: None,
        },
        P {
            name: "k64 we ran",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["No, we ran the benchmark with pnpm, not npm."],
            expect: None,
        },
        P {
            name: "k66 my own repos",
            proj: &["Indent with 2 spaces.", "Max line length 100."],
            user: &[],
            msgs: &["Actually I've always used tabs, not spaces, in my own repos."],
            expect: None,
        },
        P {
            name: "k68 zh docs site",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["不对，文档站点用 yarn，而不是 npm。"],
            expect: None,
        },
        P {
            name: "k95 first",
            proj: &["Deploys go to prod on merge.", "Node 20 is required."],
            user: &[],
            msgs: &["No, deploy to staging first, not prod."],
            expect: None,
        },
        P {
            name: "k98 I said",
            proj: &[
                "Prod DB host: db-prod.internal.",
                "Staging DB host: db-stg.internal.",
            ],
            user: &[],
            msgs: &["No, I said staging, not prod!"],
            expect: None,
        },
        P {
            name: "k99 experiment",
            proj: &["Cache: memcached.", "Database: PostgreSQL."],
            user: &[],
            msgs: &["Actually, I'd use Redis rather than memcached for this experiment."],
            expect: None,
        },
    ];
    assert_nothing_changes(&probes);
}

/// The third review's corrections that removed the wrong entries (a term cut at the first `.`),
/// false in-place rewrites, and a right side in the first person: each changes exactly the
/// entry named, and the text written is not a false one.
#[test]
fn third_review_changes_touch_only_their_entry() {
    let cases: &[(P, &str)] = &[
        (
            P {
                name: "k59 version term",
                proj: &[
                    "Python 3.11 is required.",
                    "Max retries: 3.",
                    "Lambda timeout: 3 minutes.",
                ],
                user: &[],
                msgs: &["No, use Python 3.12, not 3.11."],
                expect: Some("3.11"),
            },
            "",
        ),
        (
            P {
                name: "a43 dotted version",
                proj: &[
                    "Node 18.19 is required.",
                    "Max retries: 18.",
                    "Package manager: npm.",
                ],
                user: &[],
                msgs: &["Actually, Node 20.11, not 18.19."],
                expect: Some("18.19"),
            },
            "",
        ),
        (
            P {
                name: "k69 user narrower",
                proj: &["Package manager: npm.", "Node 20 is required."],
                user: &["I use npm for my side projects."],
                msgs: &["No, use pnpm here, not npm."],
                expect: Some("Package manager"),
            },
            "",
        ),
        (
            P {
                name: "g19 stale detail",
                proj: &["Package manager: pip (`requirements.txt`).", "Python 3.12."],
                user: &[],
                msgs: &["We switched to Poetry."],
                expect: Some("pip"),
            },
            "requirements.txt",
        ),
        (
            P {
                name: "g32 plugin",
                proj: &[],
                user: &["My shell is zsh with oh-my-zsh.", "I prefer dark themes."],
                msgs: &["I switched to fish."],
                expect: Some("zsh"),
            },
            "oh-my-zsh",
        ),
        (
            P {
                name: "g77 hosted service",
                proj: &["Database: MongoDB (Atlas).", "Cache: Redis."],
                user: &[],
                msgs: &["We moved to Postgres."],
                expect: Some("MongoDB"),
            },
            "Atlas",
        ),
        (
            P {
                name: "a38 version",
                proj: &["Package manager: NPM (npm@10).", "Node 20 is required."],
                user: &[],
                msgs: &["We switched to pnpm."],
                expect: Some("NPM"),
            },
            "@10",
        ),
    ];
    let mut failures = Vec::new();
    for (p, not_in) in cases {
        let r = run(p);
        let c = changed(&r);
        let want = p.expect.expect("a change names its entry");
        let texts = new_texts(&r);
        let false_text = !not_in.is_empty() && texts.iter().any(|t| t.contains(not_in));
        if c.len() != 1 || !c[0].contains(want) || false_text {
            failures.push(format!(
                "{}: {:?} changed {c:?} to {texts:?}",
                p.name, p.msgs
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A fourth review (stop 49, 173 new probes in other domains: embedded, ML, game dev, data,
/// Chinese, several messages): each of these changed a good entry before its fixes.
#[test]
fn look_alikes_of_the_fourth_review_change_nothing() {
    let probes: Vec<P> = vec![
        P {
            name: "L01 tag question",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["we're on pnpm now, right"],
            expect: None,
        },
        P {
            name: "L02 tag question",
            proj: &["Unit tests: Jest.", "E2E tests: Cypress."],
            user: &[],
            msgs: &["we use vitest now, don't we"],
            expect: None,
        },
        P {
            name: "L03 sarcasm",
            proj: &["CI: Jenkins.", "Deploy with `make deploy`."],
            user: &[],
            msgs: &["Sure, we use CircleCI now. In your dreams."],
            expect: None,
        },
        P {
            name: "L04 taken back",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &[
                "We switched to pnpm.",
                "wait no, that was the billing repo. this one is still on npm, sorry",
            ],
            expect: None,
        },
        P {
            name: "L08 the agent ran",
            proj: &["Install deps with `pnpm install`.", "Node 20 is required."],
            user: &[],
            msgs: &["No, you ran npm install, not pnpm install. Redo it."],
            expect: None,
        },
        P {
            name: "L11 limit after not Y",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["No, use yarn, not npm, for the docs site."],
            expect: None,
        },
        P {
            name: "L12 in CI",
            proj: &[
                "Tests run against Postgres 15.",
                "Redis 7 in docker compose.",
            ],
            user: &[],
            msgs: &["No, in CI the tests run against SQLite, not Postgres 15."],
            expect: None,
        },
        P {
            name: "L13 CI subject",
            proj: &[
                "Base images are pulled from Docker Hub.",
                "Registry credentials are in 1Password.",
            ],
            user: &[],
            msgs: &["CI uses the GHCR mirror instead of Docker Hub."],
            expect: None,
        },
        P {
            name: "L14 new code",
            proj: &["Unit tests: Jest.", "E2E tests: Playwright."],
            user: &[],
            msgs: &["Use vitest rather than jest for any new code."],
            expect: None,
        },
        P {
            name: "L15 new event bus",
            proj: &["Queue: RabbitMQ.", "Cache: Redis."],
            user: &[],
            msgs: &["We picked Kafka rather than RabbitMQ for the new event bus."],
            expect: None,
        },
        P {
            name: "L17 status",
            proj: &["Redis port: 6379.", "Postgres port: 5432."],
            user: &[],
            msgs: &["Redis is down now, restarting the container."],
            expect: None,
        },
        P {
            name: "L26 pasted diff",
            proj: &["We use npm.", "Node 20 is required."],
            user: &[],
            msgs: &["proposal for the README, not merged yet:\n-We use npm.\n+We use pnpm now.\n"],
            expect: None,
        },
        P {
            name: "L31 new boards",
            proj: &["Baud rate: 115200.", "MCU: STM32F411."],
            user: &[],
            msgs: &["The baud rate is 921600 now on the new boards."],
            expect: None,
        },
        P {
            name: "L32 only the sweep",
            proj: &["Batch size: 32.", "Learning rate: 3e-4."],
            user: &[],
            msgs: &["Batch size is 256 now, but only the big sweep."],
            expect: None,
        },
        P {
            name: "L39 user preference",
            proj: &["Lint: ESLint."],
            user: &["I prefer Jest for unit tests.", "I prefer tabs."],
            msgs: &["Unit tests run on Vitest now."],
            expect: None,
        },
        P {
            name: "L40 retired in CI",
            proj: &[
                "Postgres 14 runs in docker compose.",
                "Redis 7 in docker compose.",
            ],
            user: &[],
            msgs: &["We don't run Postgres 14 anymore in CI."],
            expect: None,
        },
        P {
            name: "L45 task order",
            proj: &[
                "Linter: ESLint.",
                "Run the linter before pushing.",
                "E2E tests: Playwright.",
            ],
            user: &[],
            msgs: &["No, run the e2e tests, not the linter."],
            expect: None,
        },
        P {
            name: "L47 we deploy staging",
            proj: &[
                "Deploys use Helm charts in `deploy/`.",
                "Prod deploys need a change ticket.",
            ],
            user: &[],
            msgs: &["No, we deploy staging with Argo, not Helm."],
            expect: None,
        },
        P {
            name: "L49 reverted",
            proj: &["Unit tests: Jest.", "E2E tests: Playwright."],
            user: &[],
            msgs: &[
                "We switched the unit tests to Vitest.",
                "ugh, reverted to Jest, Vitest broke the snapshot tests",
            ],
            expect: None,
        },
        P {
            name: "L54 sarcasm NOT",
            proj: &["Package manager: npm.", "Node 20 is required."],
            user: &[],
            msgs: &["Sure, we use Bun now. NOT."],
            expect: None,
        },
        P {
            name: "L64 remark",
            proj: &["Engine: Godot 4.2.", "Scripting: GDScript."],
            user: &[],
            msgs: &["Godot is a real engine now, not a toy."],
            expect: None,
        },
        P {
            name: "L69 the bug",
            proj: &[
                "Local overrides go in `config/dev.yaml`.",
                "Prod config: `config/prod.yaml`.",
            ],
            user: &[],
            msgs: &["No, use `config/prod.yaml`, not `config/dev.yaml`, the bug is in prod."],
            expect: None,
        },
        P {
            name: "L72 status",
            proj: &["Main branch: `main`.", "Release branches: `release/*`."],
            user: &[],
            msgs: &["The main branch is locked now, code freeze."],
            expect: None,
        },
        P {
            name: "L73 limit next",
            proj: &["E2E tests: Cypress.", "Unit tests: Jest."],
            user: &[],
            msgs: &["We switched to Playwright. Only in the admin app though."],
            expect: None,
        },
    ];
    assert_nothing_changes(&probes);
}

/// The fourth review's corrections that reached too far: a word inside `master-data` or
/// `docker-compose.yml`, a Makefile's tabs, the user's own preference against "we … here", a
/// right side that is itself a negation. Each changes exactly the entry named (or nothing).
#[test]
fn fourth_review_corrections_reach_only_their_entry() {
    let probes: Vec<P> = vec![
        P {
            name: "C34 master-data",
            proj: &[
                "Default branch: master.",
                "The `master-data` service owns SKU records.",
            ],
            user: &[],
            msgs: &["No, use main, not master."],
            expect: Some("Default branch"),
        },
        P {
            name: "C36 compose file",
            proj: &[
                "Container runtime: Docker.",
                "Compose file: `docker-compose.yml`.",
                "Node 20 is required.",
            ],
            user: &[],
            msgs: &["No, use podman, not docker."],
            expect: Some("Container runtime"),
        },
        P {
            name: "C44 makefile",
            proj: &[
                "Makefile recipes are indented with tabs.",
                "Python code is formatted with black.",
            ],
            user: &[],
            msgs: &["No, use 4 spaces instead of tabs."],
            expect: None,
        },
        P {
            name: "C69 the user's own",
            proj: &["Indent with 4 spaces.", "Max line length 100."],
            user: &["I prefer spaces."],
            msgs: &["No, we use tabs here, not spaces."],
            expect: Some("Indent with"),
        },
        P {
            name: "A10 two negations",
            proj: &["Package manager: npm.", "The legacy admin app uses yarn."],
            user: &[],
            msgs: &["No, not npm, not yarn, pnpm."],
            expect: None,
        },
    ];
    let mut failures = Vec::new();
    for p in &probes {
        let c = changed(&run(p));
        let ok = match p.expect {
            None => c.is_empty(),
            Some(want) => c.len() == 1 && c[0].contains(want),
        };
        if !ok {
            failures.push(format!("{}: {:?} changed {c:?}", p.name, p.msgs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Stop 49, after a fifth review measured the rules on 102 fresh probes (0 of 56 look-alikes
/// changed, 35 of 46 changes missed): a retirement of the thing an entry opens with, or of the
/// tool filling a setting, removes it; a sentence changing only a number keeps the entry's
/// words.
#[test]
fn retirements_of_the_thing_itself_and_numbers_in_place() {
    let removed: &[P] = &[
        P {
            name: "r01 opens with it",
            proj: &["Storybook runs with `pnpm storybook`.", "E2E: Playwright."],
            user: &[],
            msgs: &["We don't use Storybook anymore."],
            expect: Some("Storybook"),
        },
        P {
            name: "r02 tool of a setting",
            proj: &["Error tracking: Sentry.", "Logs: Datadog."],
            user: &[],
            msgs: &["We don't use Sentry anymore."],
            expect: Some("Sentry"),
        },
    ];
    let mut failures = Vec::new();
    for p in removed {
        let r = run(p);
        let gone: Vec<String> = r
            .files
            .iter()
            .flat_map(|f| f.removed.iter().map(|c| c.text.clone()))
            .collect();
        let want = p.expect.expect("names its entry");
        if gone.len() != 1 || !gone[0].contains(want) {
            failures.push(format!("{}: {:?} removed {gone:?}", p.name, p.msgs));
        }
    }
    let renumbered: &[(P, &str)] = &[
        (
            P {
                name: "n01 version",
                proj: &["Gradle version: 7.6.", "Java version: 17."],
                user: &[],
                msgs: &["Gradle is 8.7 now."],
                expect: Some("Gradle"),
            },
            "Gradle version: 8.7.",
        ),
        (
            P {
                name: "n02 port with a command",
                proj: &[
                    "The dev server runs on port 8000 (`npm run dev`).",
                    "Node 20 is required.",
                ],
                user: &[],
                msgs: &["The dev server is on port 3000 now."],
                expect: Some("8000"),
            },
            "The dev server runs on port 3000 (`npm run dev`).",
        ),
    ];
    for (p, now) in renumbered {
        let r = run(p);
        let c = changed(&r);
        let texts = new_texts(&r);
        if c.len() != 1 || !c[0].contains(p.expect.unwrap_or_default()) || texts != [*now] {
            failures.push(format!(
                "{}: {:?} changed {c:?} to {texts:?}",
                p.name, p.msgs
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
