#!/usr/bin/env bash
# The container image's two stages, built and started without a container engine (for machines that
# have none; .ci/run uses `docker build` when an engine answers). It reads the Dockerfile itself, so the
# two cannot drift: the build stage's COPY list goes into a scratch directory where its RUN steps run
# (npm ci, the type check, the build, the prune); the final stage's `COPY --from=build` list goes into a
# second directory, which the service is started from, with the image's environment, as an unprivileged
# user when this runs as root, on 127.0.0.1, until /readyz answers. What it cannot check: the base image
# and the `node` user, which need the engine.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

final_from=$(grep -n '^FROM ' Dockerfile | sed -n 2p | cut -d: -f1)
[ -n "$final_from" ] || { echo "the Dockerfile has no second stage"; exit 1; }

mkdir -p "$work/build" "$work/final"
# Build stage: `COPY <sources...> <dest>` lines before the final FROM.
head -n "$((final_from - 1))" Dockerfile | grep '^COPY ' | grep -v -- '--from' | while read -r _ rest; do
  read -r -a parts <<< "$rest"
  dest=${parts[${#parts[@]}-1]}
  for src in "${parts[@]:0:${#parts[@]}-1}"; do
    if [ "$dest" = "./" ]; then cp -r "$src" "$work/build/"; else mkdir -p "$work/build/$(dirname "$dest")"; cp -r "$src" "$work/build/$dest"; fi
  done
done
(
  cd "$work/build"
  npm ci --no-audit --no-fund --loglevel=error
  npx tsc --noEmit -p .
  npm run build --silent
  npm prune --omit=dev --no-audit --no-fund --loglevel=error
)
# Final stage: `COPY --from=build /app/<path> ./<path>` lines after it.
tail -n "+$final_from" Dockerfile | grep '^COPY --from=build ' | while read -r _ _ src dest; do
  cp -r "$work/build/${src#/app/}" "$work/final/${dest#./}"
done
rm -rf "$work/build"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
mkdir -p "$work/data"
env_line=$(grep '^ENV ' Dockerfile | sed -n 1p | cut -d' ' -f2-)
run=(env -i PATH="$PATH" $env_line HOST=127.0.0.1 PORT="$port" DATA_DIR="$work/data" node dist/src/main.js)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  chown -R nobody "$work/data"
  chmod -R a+rX "$work/final"
  chmod a+x "$work"
  run=(setpriv --reuid=nobody --regid=nogroup --clear-groups "${run[@]}")
fi
(cd "$work/final" && exec setsid "${run[@]}") >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
    echo "image check: the final stage's files started as $( [ "$(id -u)" -eq 0 ] && echo nobody || id -un ) and /readyz answered on 127.0.0.1:$port"
    exit 0
  fi
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  sleep 0.5
done
echo "image check: /readyz never answered; the service said:"
cat "$work/server.log"
exit 1
