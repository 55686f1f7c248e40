//! Support for the workspace's tests (not part of the library's API).

use std::io::Write as _;

/// The environment variable naming the PostgreSQL server of the tests.
pub const PG_URL_VAR: &str = "MEM_TEST_PG_URL";

/// The PostgreSQL server for a test: `MEM_TEST_PG_URL` (`.ci/postgres.sh start` prints one).
/// Without it the test is skipped: `None`, a line on stderr, and one line
/// `<test_binary>::<test name>` appended to the file `$MEM_PG_SKIP_LOG` when that is set
/// (`cargo xtask ci` counts and reports them).
///
/// # Panics
/// When `MEM_REQUIRE_PG=1` and no server is set: a skipped PostgreSQL test is then a failure.
pub fn pg_url_or_skip(test_binary: &str) -> Option<String> {
    if let Ok(url) = std::env::var(PG_URL_VAR)
        && !url.trim().is_empty()
    {
        return Some(url);
    }
    assert!(
        std::env::var("MEM_REQUIRE_PG").map_or(true, |v| v != "1"),
        "MEM_REQUIRE_PG=1 but {PG_URL_VAR} is not set: no PostgreSQL server"
    );
    // Straight to the stderr handle: the test harness captures `eprintln!`.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED (PostgreSQL): {PG_URL_VAR} is not set; start a server with \
         `.ci/postgres.sh start` and export the URL it prints"
    );
    if let Some(log) = std::env::var_os("MEM_PG_SKIP_LOG") {
        let name = std::thread::current().name().unwrap_or("?").to_owned();
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{test_binary}::{name}");
        }
    }
    None
}
