#!/bin/sh
# The real code `chitta bench code --speed` indexes: Python packages of the project's own
# environment (their sources as installed), Go's standard library (the Debian
# golang-1.19-src the call-graph benchmark fetches) and rxjs's TypeScript sources (its npm
# package, fetched likewise), copied into DEST as one git repository.
#   sh benchmarks/code/speed/corpus.sh DEST [SITE_PACKAGES] [BENCH_CACHE]
set -eu
dest=$1
site=${2:-.venv/lib/python3.11/site-packages}
cache=${3:-$HOME/.cache/chitta/bench-code}
rm -rf "$dest" && mkdir -p "$dest/python" "$dest/go" "$dest/typescript"
# The larger pure-Python packages; their vendored copies (pip/_vendor) the indexer skips.
for pkg in pip numpy pygments huggingface_hub setuptools pydantic hypothesis _pytest rich \
           mcp psycopg fsspec anyio click starlette pluggy onnxruntime \
           pkg_resources google cryptography psutil packaging jsonschema filelock; do
  [ -d "$site/$pkg" ] && cp -r "$site/$pkg" "$dest/python/"
done
go=$cache/go/tree/usr/share/go-1.19/src
for pkg in net go crypto encoding fmt strings sort bytes text runtime reflect os math image \
           compress debug regexp time io internal archive html mime testing unicode; do
  [ -d "$go/$pkg" ] && cp -r "$go/$pkg" "$dest/go/"
done
mkdir -p "$dest/go/cmd" && cp -r "$go/cmd/compile" "$go/cmd/go" "$dest/go/cmd/"
[ -d "$cache/typescript/tree/package/src" ] && cp -r "$cache/typescript/tree/package/src" "$dest/typescript/rxjs"
find "$dest" -name '__pycache__' -prune -exec rm -rf {} +
git -C "$dest" init -q && git -C "$dest" add -A && \
  git -C "$dest" -c user.name=bench -c user.email=bench@localhost commit -qm corpus
