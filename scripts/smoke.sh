#!/usr/bin/env bash
# The binary as a self-hoster uses it: scripts/smoke.sh BINARY [RUNNER ...]
#   scripts/smoke.sh dist/lobby-server
#   scripts/smoke.sh dist/release/lobby-server-0.1.0-linux-arm64 qemu-aarch64 -L /usr/aarch64-linux-gnu
# Every run of BINARY goes through RUNNER when one is given (an emulator). Checks: --version (version, commit, build
# date, target: the one in the file's name, or SMOKE_TARGET), --help, start, /healthz, an app made with its CLI, the
# bot token's user and a lobby made with it, the API docs, WebAuthn, registration, the login page's headers and every
# script, chunk and stylesheet it loads answering 200, a 404, /metrics' build info, a second server on the same
# database refused, an online backup, SIGTERM, and the log lines. Run from the repository (package.json's version).
# SMOKE_START_SECONDS (120): how long start-up may take (under emulation it takes seconds). Exit 0 when all passed.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: scripts/smoke.sh BINARY [RUNNER ...]" >&2; exit 2; }
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
runner=("$@")
[ -f "$binary" ] || { echo "smoke: no file $binary" >&2; exit 2; }
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)
name=$(basename "$binary" .exe)
target=${SMOKE_TARGET:-}
case "$name" in "lobby-server-$version-"*) target=${target:-${name#"lobby-server-$version-"}} ;; esac

started=$(date +%s%N)
say() {
  local ms=$((($(date +%s%N) - started) / 1000000))
  printf '  %5d.%d s  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"
}
fail() { echo "smoke FAILED ($(basename "$binary")): $*" >&2; [ -f "${log:-}" ] && sed 's/^/  server: /' "$log" >&2; exit 1; }
run() { "${runner[@]}" "$binary" "$@"; }
curl() { command curl --max-time 120 "$@"; }

echo "smoke test of $(basename "$binary")$([ ${#runner[@]} = 0 ] || echo " under ${runner[*]}")"
line=$(run --version) || fail "--version exited $?"
date_re='[0-9]{4}-[0-9]{2}-[0-9]{2}'
printf '%s\n' "$line" | grep -Eq "^lobby-server ${version//./\\.} \\([0-9a-z-]+, $date_re, ${target:-[a-z0-9-]+}\\)\$" ||
  fail "--version said \"$line\" (want lobby-server $version (COMMIT, DATE, ${target:-TARGET}))"
say "--version: $line"
run --help | grep -q 'backup FILE' || fail "--help does not list backup"
run --help | grep -q '^usage: lobby-server ' || fail "--help does not say usage: lobby-server"
say "--help"

workdir=$(mktemp -d)
port=$(bun -e 'const s = Bun.serve({ port: 0, fetch: () => new Response() }); console.log(s.port); s.stop()')
base="http://127.0.0.1:$port"
log="$workdir/server.log"
db="$workdir/db/app.sqlite"
(cd "$workdir" && exec env PORT="$port" DATABASE_PATH="$db" METRICS=true "${runner[@]}" "$binary") >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$workdir"' EXIT
deadline=$(($(date +%s) + ${SMOKE_START_SECONDS:-120}))
until curl -fsS "$base/healthz" >/dev/null 2>&1; do
  kill -0 $pid 2>/dev/null || fail "the server exited before answering /healthz"
  [ "$(date +%s)" -lt "$deadline" ] || fail "no /healthz within ${SMOKE_START_SECONDS:-120} s"
  sleep 0.2
done
curl -fsS "$base/healthz" | grep -q '"ok"' || fail "/healthz is not ok"
say "started, /healthz ok"

app=$(cd "$workdir" && DATABASE_PATH="$db" run app create --name ci-smoke) || fail "app create"
bot_token=$(printf '%s' "$app" | bun -e 'console.log(JSON.parse(await Bun.stdin.text()).bot_token)')
say "app create (its CLI, beside the running server)"
curl -fsS -H "Authorization: Bot $bot_token" "$base/api/v9/users/@me" | grep -q '"bot":true' || fail "the bot's @me"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/api/v9/users/@me")
[ "$code" = 401 ] || fail "@me without a token answered $code"
code=$(curl -s -o "$workdir/lobby.json" -w '%{http_code}' -X POST -H "Authorization: Bot $bot_token" \
  -H 'content-type: application/json' -d '{}' "$base/api/v9/lobbies")
[ "$code" = 201 ] && grep -q '"application_id"' "$workdir/lobby.json" || fail "POST /lobbies answered $code"
say "the bot's user; a lobby made with the bot token: 201"
curl -fsS "$base/api/docs/json" | grep -q '"openapi"' || fail "/api/docs/json"
# WebAuthn (its dependency chain once broke only inside the binary) and the argon2 + zxcvbn paths of registration.
curl -fsS -X POST "$base/api/v9/auth/conditional/start" | grep -q '"ticket"' || fail "WebAuthn conditional start"
curl -fsS -X POST -H 'content-type: application/json' \
  -d '{"username":"cismoke","email":"ci@example.test","password":"a long enough password","date_of_birth":"1990-01-01","consent":true}' \
  "$base/api/v9/auth/register" | grep -q '"token"' || fail "register"
say "API docs, WebAuthn, registration"

# The web client's pages come out of the binary with their security headers, and everything they load is served:
# the login page's scripts and stylesheets, then every chunk each script imports (static or dynamic), transitively.
headers=$(curl -fsS -D - -o "$workdir/login.html" "$base/login") || fail "GET /login"
printf '%s' "$headers" | grep -qi "^content-security-policy: .*script-src 'self'" || fail "CSP script-src"
printf '%s' "$headers" | grep -qi "^content-security-policy: .*frame-ancestors 'none'" || fail "CSP frame-ancestors"
if printf '%s' "$headers" | grep -qi "^content-security-policy: .*unsafe-inline"; then fail "CSP allows inline code"; fi
printf '%s' "$headers" | grep -qi '^x-frame-options: DENY' || fail "X-Frame-Options"
printf '%s' "$headers" | grep -qi '^referrer-policy: no-referrer' || fail "Referrer-Policy"
queue=$(grep -Eo '(src|href)="/[^"]+\.(js|css)"' "$workdir/login.html" | sed -E 's/^(src|href)="//; s/"$//' || true)
printf '%s\n' "$queue" | grep -q '\.js$' || fail "the login page names no script"
seen=' '
missing=()
while [ -n "$queue" ]; do
  url=$(printf '%s\n' "$queue" | head -1)
  queue=$(printf '%s\n' "$queue" | tail -n +2)
  case "$seen" in *" $url "*) continue ;; esac
  seen="$seen$url "
  code=$(curl -s -o "$workdir/asset" -w '%{http_code}' "$base$url")
  if [ "$code" != 200 ]; then missing+=("$url ($code)"); continue; fi
  case "$url" in *.js) ;; *) continue ;; esac
  # import ... from "/x.js", import "/x.js", import("/x.js"); "./x.js" is relative to the script's folder.
  for dep in $(grep -Eo '(from|import)[ (]*"\.{0,2}/[^"]+\.js"' "$workdir/asset" | sed -E 's/^[^"]*"//; s/"$//'); do
    case "$dep" in ./*) dep="${url%/*}/${dep#./}" ;; ../*) dep="$(dirname "${url%/*}")/${dep#../}" ;; esac
    queue=$(printf '%s\n%s' "$queue" "$dep" | sed '/^$/d')
  done
done
[ ${#missing[@]} = 0 ] || fail "the login page loads what is not served: ${missing[*]}"
say "login page: headers; $(echo "$seen" | wc -w) scripts, chunks and styles, all 200"
curl -fsS -I "$base/wasntme/ci-smoke-token" | grep -qi '^x-frame-options: DENY' || fail "/wasntme headers"
code=$(curl -s -o "$workdir/nope.json" -w '%{http_code}' "$base/api/v9/nope")
[ "$code" = 404 ] && grep -q '"404: Not Found"' "$workdir/nope.json" || fail "an unknown route answered $code"
curl -fsS "$base/metrics" >"$workdir/metrics.txt" || fail "/metrics"
grep -Eq "^lobby_build_info\\{version=\"${version//./\\.}\",commit=\"[0-9a-z-]+\",built=\"$date_re\",target=\"${target:-[a-z0-9-]+}\"\\} 1\$" \
  "$workdir/metrics.txt" || fail "/metrics: $(grep lobby_build_info "$workdir/metrics.txt")"
say "404, /metrics: $(grep '^lobby_build_info' "$workdir/metrics.txt")"

# The operator's side: a second server on the same database refused in one line, an online backup.
if second=$(cd "$workdir" && env PORT=0 DATABASE_PATH="$db" "${runner[@]}" "$binary" 2>&1); then fail "a second server started"; fi
printf '%s\n' "$second" | grep -q "in use by another server (pid $pid" || fail "second server: $second"
[ "$(printf '%s\n' "$second" | grep -c .)" = 1 ] || fail "the second server said more than one line: $second"
say "a second server on the database: refused in one line"
(cd "$workdir" && DATABASE_PATH="$db" run backup "$workdir/backup.sqlite") | grep -q '"integrity":"ok"' || fail "backup"
say "backup (its CLI, beside the running server)"
kill -TERM $pid
wait $pid || true
grep -Eq "listening .*version=${version//./\\.} commit=[0-9a-z-]+ built=$date_re target=${target:-[a-z0-9-]+} " "$log" ||
  fail "the listening line: $(grep listening "$log")"
grep -q 'INFO request method=GET route=<unmatched> status=404' "$log" || fail "no access log line for the 404"
grep -q 'INFO shutting down signal=SIGTERM' "$log" || fail "no shutdown line"
if grep -q 'ci-smoke-token' "$log"; then fail "a link token reached the log"; fi
say "SIGTERM; listening line, access log, shutdown line; no token in the log"
echo "smoke test passed: $(basename "$binary")"
