#!/usr/bin/env bash
# Live model tests (mem-llm): starts llama.cpp's HTTP server with a small instruct model on
# loopback (shared/tools/local-llm.sh, offline, registry packages only), then runs all three jobs
# through both provider APIs (/v1/chat/completions with json_schema, /v1/messages) end to end,
# an agent loop through the mewmem facade over two sessions (tests/live_agent.rs), and
# `mem llm check --call` against it. Stops the server if this script started it.
#
# Then the embedding client against llama.cpp's /v1/embeddings (.ci/local-embed.sh) and the
# recall eval lexical vs hybrid; then the two quality evals with the model as the engine (`cargo xtask eval extract --model`,
# `cargo xtask eval recall --live --split test`): their numbers are reported, not gating (a 135M CPU model is
# far below the offline engines; the offline evals run with `cargo xtask eval`, and their test-split
# numbers are in docs/BENCHMARKS.md).
#
# env: LIVE_LLM_MODEL (smol, default | qwen), LOCAL_LLM (path of local-llm.sh),
#      LIVE_EVAL_SAMPLE (conversations / queries per eval, default 12; 0 = the whole sets, which
#      takes ~1 min per conversation with smol on one loaded core), CARGO_TARGET_DIR as usual.
#      Cold (fresh cache): see the timing line it prints.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The workplace's shared tool when it is there, else the copy kept beside this script.
TOOL=${LOCAL_LLM:-$ROOT/../shared/tools/local-llm.sh}
[ -x "$TOOL" ] || TOOL=$ROOT/.ci/local-llm.sh
MODEL=${LIVE_LLM_MODEL:-smol}

started=0
"$TOOL" status >/dev/null 2>&1 || started=1
cleanup() { if [ "$started" = 1 ]; then "$TOOL" stop || true; fi; }
trap cleanup EXIT

t0=$(date +%s)
URL=$("$TOOL" start "$MODEL" | tail -n 1)
echo "live-llm: $MODEL server at $URL, up after $(( $(date +%s) - t0 )) s"

cd "$ROOT"
t1=$(date +%s)
# One server thread: run the tests one at a time.
MEM_LIVE_LLM_URL="$URL" cargo test -p mem-llm --test live -- --ignored --test-threads=1
echo "live-llm: live tests took $(( $(date +%s) - t1 )) s"

# Embeddings: llama.cpp's /v1/embeddings with all-MiniLM-L6-v2 (.ci/local-embed.sh, registry
# packages only), the client end to end; the server is stopped if this script started it.
EMBED=$ROOT/.ci/local-embed.sh
embed_started=0
"$EMBED" status >/dev/null 2>&1 || embed_started=1
EMBED_URL=$("$EMBED" start | tail -n 1)
MEM_LIVE_EMBED_URL="$EMBED_URL" cargo test -p mem-llm --test live_embed -- --ignored
# Lexical vs hybrid recall on both splits (reported, not gating; see docs/BENCHMARKS.md).
t_e=$(date +%s)
cargo xtask eval recall --embed "$EMBED_URL" \
  || echo "live-llm: recall eval (lexical vs hybrid) missed the test targets (reported, not gating)"
echo "live-llm: hybrid recall eval took $(( $(date +%s) - t_e )) s"
if [ "$embed_started" = 1 ]; then "$EMBED" stop || true; fi

# The agent loop end to end through the mewmem facade: two sessions, compaction, extraction,
# Tier 0 and recall (crates/mewmem/tests/live_agent.rs).
t2=$(date +%s)
MEM_LIVE_LLM_URL="$URL" cargo test -p mewmem --test live_agent -- --ignored --test-threads=1 --nocapture
echo "live-llm: live agent loop took $(( $(date +%s) - t2 )) s"

# The CLI's configuration path: environment variables only, no config file.
env -u OPENAI_API_KEY MEM_LLM_PROVIDER=openai OPENAI_BASE_URL="$URL/v1" MEM_LLM_MODEL=local \
  cargo run -q -p mem-cli -- llm check --call
env -u ANTHROPIC_API_KEY MEM_LLM_PROVIDER=anthropic ANTHROPIC_BASE_URL="$URL" MEM_LLM_MODEL=local \
  cargo run -q -p mem-cli -- llm check --call
# The quality evals through the model (the CLI's configuration path, as above).
SAMPLE=${LIVE_EVAL_SAMPLE:-12}
t2=$(date +%s)
env -u OPENAI_API_KEY MEM_LLM_PROVIDER=openai OPENAI_BASE_URL="$URL/v1" MEM_LLM_MODEL=local \
  cargo xtask eval extract --model --sample "$SAMPLE" \
  || echo "live-llm: extract eval with the local model missed the offline targets (reported, not gating)"
echo "live-llm: extract eval took $(( $(date +%s) - t2 )) s"
t3=$(date +%s)
env -u OPENAI_API_KEY MEM_LLM_PROVIDER=openai OPENAI_BASE_URL="$URL/v1" MEM_LLM_MODEL=local \
  cargo xtask eval recall --live --split test --sample "$SAMPLE" \
  || echo "live-llm: recall eval with the local model missed the test targets or could not run every query (reported, not gating)"
echo "live-llm: recall eval took $(( $(date +%s) - t3 )) s"
echo "live-llm: total $(( $(date +%s) - t0 )) s"
