#!/usr/bin/env bash
# A new user's first run, timed: clone → `npm install` → `npm start` → the printed curl answered, then the first
# `npx orgscan --help` and `npx orgscan keys list`. Not part of `npm test` or `npm run bench` (it installs from the
# registry and takes minutes); results: test/bench/results/first-run.md, docs/adr/0175-first-run-under-a-minute.md.
#
#   test/bench/first-run.sh [--warm CACHE] [--load N] [--rev REV] [--keep] [SOURCE]
#
# SOURCE: a git repository to clone (default: this checkout; commit first, the clone takes HEAD); --rev: check out REV.
# --warm CACHE: use the npm cache folder CACHE as it is (filled by an earlier run); default: a new, empty cache.
# --load N: N busy loops (`node -e 'for(;;){}'`) run for the whole measurement, on this 2-core machine.
# --keep: leave the clone (its path is printed).
set -euo pipefail

src="$(cd "$(dirname "$0")/../.." && pwd)"
cache=""
load=0
keep=0
rev=""
while [ $# -gt 0 ]; do
  case "$1" in
    --warm) cache="$2"; shift 2 ;;
    --load) load="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --rev) rev="$2"; shift 2 ;;
    *) src="$1"; shift ;;
  esac
done

work="$(mktemp -d /tmp/first-run-XXXXXX)"
mode="warm"
if [ -z "$cache" ]; then cache="$work/npm-cache"; mode="cold"; fi
mkdir -p "$cache"
export npm_config_cache="$cache"
port="$(node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

pids=()
server=""
cleanup() {
  # npm start runs in a process group of its own: the server is npm's child, and stops with the group.
  [ -n "$server" ] && kill -TERM -- "-$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "kept: $work"; fi
}
trap cleanup EXIT
for _ in $(seq 1 "$load"); do node -e 'for(;;){}' & pids+=($!); done

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "source $(git -C "$src" rev-parse --short "${rev:-HEAD}") ($src), npm cache $mode, busy loops $load, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
git clone -q "$src" "$work/orgscan"
cd "$work/orgscan"
if [ -n "$rev" ]; then git checkout -q "$rev"; fi

t0="$(now)"
/usr/bin/time -o "$work/install.cpu" -f "%U %S" npm install --timing >"$work/install.out" 2>"$work/install.err"
t1="$(now)"
install_cpu="$(awk '{ printf "%.1f", $1 + $2 }' "$work/install.cpu")"
unpack="$(sed -n 's/.*timing reify:unpack Completed in \([0-9]*\)ms/\1/p' "$work/install.err")"
reify="$(sed -n 's/.*timing reify Completed in \([0-9]*\)ms/\1/p' "$work/install.err")"
echo "npm install: $(secs "$t0" "$t1") s, $install_cpu s of CPU (reify $(awk -v m="$reify" 'BEGIN{printf "%.1f", m/1000}') s, of which unpack $(awk -v m="$unpack" 'BEGIN{printf "%.1f", m/1000}') s; the rest is the project's postinstall); $(du -sm node_modules | cut -f1) MB in node_modules"
grep -h "EBADENGINE" "$work/install.err" | head -3 || true
grep -h "npm warn" "$work/install.err" | grep -v "install-scripts" | head -5 || true

PORT="$port" setsid npm start >"$work/start.out" 2>"$work/start.err" &
server=$!
curl_line=""
until [ -n "$curl_line" ]; do
  kill -0 "$server" 2>/dev/null || { echo "npm start exited:"; tail -5 "$work/start.err"; exit 1; }
  curl_line="$(grep -m1 "^  curl -u '.*/v1/orgs'\?$" "$work/start.out" 2>/dev/null || true)"
  sleep 0.05
done
t2="$(now)"
# CPU the server process (npm's child) had used when it printed the banner.
node_pid="$(pgrep -P "$server" node || pgrep -P "$(pgrep -P "$server" | head -1)" node || true)"
start_cpu="$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/${node_pid%%$'\n'*}/stat" 2>/dev/null || echo "?")"
probe='curl -s -o /dev/null -w %{http_code} '
status="$(eval "${curl_line/curl /$probe}")"
t3="$(now)"
echo "npm start: banner after $(secs "$t1" "$t2") s ($start_cpu s of CPU), first curl $status after $(secs "$t1" "$t3") s"
grep -hE "^(  )?(seeding|Seeded|seeded|The large|  seeding)" "$work/start.err" | sed 's/^/    /' | head -20 || true
echo "first run (install + start + curl): $(secs "$t0" "$t3") s"

# What a user types next. keys list is answered by the running server (the data folder is locked by it).
t4="$(now)"; npx orgscan --help >/dev/null; t5="$(now)"
account="$(node bin/orgscan.js accounts list --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].id))')"
t5="$(now)"; npx orgscan keys list --account "$account" >/dev/null; t6="$(now)"
npx orgscan --help >/dev/null; t7="$(now)"
echo "npx orgscan --help: first $(secs "$t4" "$t5") s, again $(secs "$t6" "$t7") s; npx orgscan keys list (server running): $(secs "$t5" "$t6") s"

# The large org, seeded after the banner when the first start seeds in two parts.
if grep -q "large" "$work/start.err"; then
  until grep -qE "Seeded the large|large org.*seeded" "$work/start.err"; do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  t8="$(now)"
  grep -hE "Seeded the large|large org.*seeded" "$work/start.err" | sed 's/^/    /' | head -2 || true
  echo "large org served after $(secs "$t1" "$t8") s from npm start"
fi
