"""HttpArena's profiles scaled to one core: each server one process on
CPU 0 (SERVER_CPU), the load generator on CPU 1 (LOAD_CPU), the arms of a
profile alternated within each round, and server CPU per request beside
requests per second (utime+stime of the server's process tree from
/proc over the run, divided by the requests the load generator counted).
wrk for HTTP/1.1 (lua for the pipelined and rotating profiles), h2load
for h2c, both with the harness's requests. Arms whose program is missing
are skipped and said so. Run from the repository root after make build:

    python3 arena/bench.py [-duration 5] [-rounds 1] [-connections 256]
        [-profiles baseline,pipelined,json,json-comp,json-tls,baseline-h2c,baseline-h2,static,async-db,crud]
        [-arms m0serve-asgi,uvicorn,...] [-venv bench/.venv]
        [-fasthttp PATH (HttpArena's frameworks/go-fasthttp, built)]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARENA = os.path.join(ROOT, "arena")
TICK = os.sysconf("SC_CLK_TCK")

# The harness's json rotation (count, m) and its json-comp one.
JSON_PAIRS = [(1, 3), (5, 7), (10, 2), (15, 5), (25, 4), (40, 8), (50, 6)]
JSON_COMP_PAIRS = [(25, 4), (40, 8), (50, 6)]

ROTATE_LUA = """
local paths = {%s}
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""
# The crud profile's mix (its 20 templates): 15 reads and 3 updates of
# random ids in 1..50000, one page of "office" (page 1..10), one upsert
# of sequential ids from 100001.
CRUD_LUA = """
local n, seq = 0, 100000
request = function()
  n = n % 20 + 1
  if n <= 15 then
    return wrk.format("GET", "/crud/items/" .. math.random(1, 50000))
  elseif n <= 18 then
    return wrk.format("PUT", "/crud/items/" .. math.random(1, 50000), {["Content-Type"] = "application/json"},
      '{"name":"Updated","price":' .. math.random(1, 500) .. ',"quantity":' .. math.random(1, 1000) .. '}')
  elseif n == 19 then
    return wrk.format("GET", "/crud/items?category=office&page=" .. math.random(1, 10) .. "&limit=10")
  end
  seq = seq + 1
  return wrk.format("POST", "/crud/items", {["Content-Type"] = "application/json"},
    '{"id":' .. seq .. ',"name":"New Product","category":"test","price":25,"quantity":10}')
end
"""
ASYNC_DB_LIMITS = [5, 10, 20, 35, 50]
DB_PROFILES = ("async-db", "crud")
DATABASE_URL = "postgres://bench:bench@localhost:5432/benchmark"
PIPELINE_LUA = """
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format("GET", "/pipeline") end
  req = table.concat(r)
end
request = function() return req end
"""


CERTS = os.path.join(ARENA, "validate", "httparena", "certs")
M0_TLS = ["--ssl-certfile", CERTS + "/server.crt", "--ssl-keyfile", CERTS + "/server.key"]
GRANIAN_TLS = ["--ssl-certificate", CERTS + "/server.crt", "--ssl-keyfile", CERTS + "/server.key"]
UVICORN_TLS = ["--ssl-certfile", CERTS + "/server.crt", "--ssl-keyfile", CERTS + "/server.key"]


def arms(venv, fasthttp):
    """name: (command, environment, port or None for a free one, its
    flags for TLS with the harness's certificate, or None)."""
    py = os.path.join(venv, "bin")
    m0 = os.path.join(ROOT, "bin", "m0serve")
    asgi, wsgi = os.path.join(ARENA, "m0serve-asgi"), os.path.join(ARENA, "m0serve-wsgi")
    granian = [os.path.join(py, "granian"), "--port", "{port}", "--log-level", "warning", "--runtime-mode", "st"]
    return {
        "m0serve-asgi": ([m0, "--port", "{port}", "--app-dir", asgi, "app:app"], {}, None, M0_TLS),
        # The same entry with its asyncio loop on a thread of its own
        # (where the database driver's sockets are the loop's own).
        "m0serve-asgi-executor": ([m0, "--port", "{port}", "--asgi-thread", "executor", "--app-dir", asgi, "app:app"],
                                  {}, None, M0_TLS),
        "uvicorn": ([os.path.join(py, "python"), "-m", "uvicorn", "--port", "{port}", "--loop", "uvloop",
                     "--http", "httptools", "--workers", "1", "--no-access-log", "--log-level", "warning",
                     "--app-dir", asgi, "app:app"], {}, None, UVICORN_TLS),
        "granian-asgi": (granian + ["--working-dir", asgi, "--interface", "asgi", "--task-impl", "rust",
                                    "app:app"], {}, None, GRANIAN_TLS),
        "m0serve-wsgi": ([m0, "--port", "{port}", "--app-dir", wsgi, "app:app"], {}, None, M0_TLS),
        "granian-wsgi": (granian + ["--working-dir", wsgi, "--interface", "wsgi", "--blocking-threads", "1",
                                    "app:app"], {}, None, GRANIAN_TLS),
        "m0serve-native": ([m0, "--port", "{port}", "--native", "arena"], {}, None, M0_TLS),
        # HttpArena's frameworks/go-fasthttp as it is: port 8080, one
        # listener per CPU it may use (one here).
        "fasthttp": ([fasthttp or "/nonexistent/go-fasthttp"], {}, 8080, None),
    }


# Which arms enter which profile (the h2c arms: servers that speak h2c
# by prior knowledge).
H2 = ["m0serve-asgi", "granian-asgi", "m0serve-wsgi", "granian-wsgi", "m0serve-native"]
PROFILE_ARMS = {
    "baseline": None, "pipelined": None, "json": None, "json-comp": None,
    "baseline-h2c": H2, "baseline-h2": H2,
    "json-tls": ["m0serve-asgi", "uvicorn", "granian-asgi", "m0serve-wsgi", "granian-wsgi", "m0serve-native"],
    "static": H2,  # the servers with a static mount of their own
    "async-db": ["m0serve-asgi", "m0serve-asgi-executor", "uvicorn", "granian-asgi", "m0serve-wsgi", "granian-wsgi"],
    "crud": ["m0serve-asgi", "m0serve-asgi-executor", "uvicorn", "granian-asgi", "m0serve-wsgi", "granian-wsgi"],
}
STATIC_FILES = ["reset.css", "layout.css", "theme.css", "components.css", "utilities.css", "analytics.js",
                "helpers.js", "app.js", "vendor.js", "router.js", "header.html", "footer.html", "regular.woff2",
                "bold.woff2", "logo.svg", "icon-sprite.svg", "hero.webp", "thumb1.webp", "thumb2.webp",
                "manifest.json"]
TLS_PROFILES = ("json-tls", "baseline-h2")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tree(pid):
    """pid and its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry))
            except OSError:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pids):
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / TICK


def wait_port(port, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def load(profile, port, args, scripts):
    """The load generator's command line for a profile."""
    base = ["taskset", "-c", args.load_cpu]
    url = f"{'https' if profile in TLS_PROFILES else 'http'}://127.0.0.1:{port}"
    wrk = base + ["wrk", "-t", "1", "-c", str(args.connections), "-d", f"{args.duration}s", "--latency"]
    if profile == "baseline":
        return wrk + [url + "/baseline11?a=13&b=42"]
    if profile == "pipelined":
        return wrk + ["-s", scripts["pipeline"], url + "/pipeline"]
    if profile == "json":
        return wrk + ["-s", scripts["json"], url]
    if profile == "json-comp":
        return wrk + ["-H", "Accept-Encoding: gzip, br", "-s", scripts["json-comp"], url]
    if profile == "json-tls":
        return wrk + ["-s", scripts["json"], url]
    if profile == "static":
        return wrk + ["-H", "Accept-Encoding: br;q=1, gzip;q=0.8", "-s", scripts["static"], url]
    if profile == "async-db":
        return wrk + ["-s", scripts["async-db"], url]
    if profile == "crud":
        return wrk + ["-s", scripts["crud"], url]
    if profile == "baseline-h2":
        return base + ["h2load", "-c", str(args.connections), "-m", "100", "-t", "1",
                       "-D", str(args.duration), url + "/baseline2?a=1&b=1"]
    if profile == "baseline-h2c":
        return base + ["h2load", "-p", "h2c", "-c", str(args.connections), "-m", "100", "-t", "1",
                       "-D", str(args.duration), url + "/baseline2?a=1&b=1"]
    raise ValueError(profile)


def requests_done(profile, out):
    if profile.startswith("baseline-h2"):
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
        errors = 0
    else:
        m = re.search(r"(\d+) requests in", out)
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        errors = int(bad.group(1)) if bad else 0
    return (int(m.group(1)) if m else 0), errors


def run_arm(name, arm, profile, args, scripts):
    command, env, port, tls = arm
    port = port or free_port()
    command = [c.replace("{port}", str(port)) for c in command]
    at = command.index("--port") + 2 if "--port" in command else len(command)
    if profile in TLS_PROFILES:
        command = command[:at] + tls + command[at:]
    if profile == "static":  # m0serve's and Granian's flags are the same
        command = command[:at] + ["--static-path-mount", scripts["static-dir"], "--static-path-route", "/static"] + command[at:]
    env = dict(os.environ, **env, **scripts["entry-env"].get(name, {}))
    if profile in DB_PROFILES:
        env.update(scripts["database-env"])
    proc = subprocess.Popen(["taskset", "-c", args.server_cpu] + command, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if not wait_port(port, proc):
            return None, f"{name} did not listen on {port}"
        time.sleep(0.5)
        if profile in DB_PROFILES:
            # Unmeasured: the pool's connections open (SCRAM and a
            # backend each, tens of ms) as in the harness's longer runs.
            subprocess.run(load(profile, port, argparse.Namespace(**dict(vars(args), duration=2)), scripts),
                           capture_output=True)
        pids = tree(proc.pid)
        before = cpu_seconds(pids)
        started = time.time()
        out = subprocess.run(load(profile, port, args, scripts), capture_output=True, text=True).stdout
        elapsed = time.time() - started
        used = cpu_seconds(tree(proc.pid)) - before
        done, errors = requests_done(profile, out)
        if done == 0:
            return None, f"{name}: no requests counted:\n{out}"
        return {"rps": done / elapsed, "us": used / done * 1e6, "errors": errors}, None
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-duration", type=int, default=5)
    p.add_argument("-rounds", type=int, default=1)
    p.add_argument("-connections", type=int, default=256)
    p.add_argument("-profiles", default="baseline,pipelined,json,json-comp,json-tls,baseline-h2c,baseline-h2,static,async-db,crud")
    p.add_argument("-arms", default="")
    p.add_argument("-venv", default=os.path.join(ROOT, "bench", ".venv"))
    p.add_argument("-fasthttp", default="")
    p.add_argument("-server-cpu", dest="server_cpu", default=os.environ.get("SERVER_CPU", "0"))
    p.add_argument("-load-cpu", dest="load_cpu", default=os.environ.get("LOAD_CPU", "1"))
    args = p.parse_args()

    # A network namespace of its own: the fixed port of the fasthttp entry,
    # and no other server on the machine answering in a server's place.
    if not os.environ.get("ARENA_NETNS") and subprocess.run(["unshare", "-rn", "true"]).returncode == 0:
        os.execvpe("unshare", ["unshare", "-rn", sys.executable] + sys.argv, dict(os.environ, ARENA_NETNS="1"))
    if os.environ.get("ARENA_NETNS"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

    os.environ.setdefault("DATASET_PATH", os.path.join(ARENA, "validate", "httparena", "data", "dataset.json"))
    table = arms(args.venv, args.fasthttp)
    chosen = [a for a in (args.arms.split(",") if args.arms else table) if a in table]
    for name in list(chosen):
        program = table[name][0][0]
        if not shutil.which(program):
            print(f"arena-bench: {name}: skipped: {program} not found", file=sys.stderr)
            chosen.remove(name)

    work = tempfile.mkdtemp(prefix="arena-bench.")
    scripts = {"pipeline": os.path.join(work, "pipeline.lua")}
    with open(scripts["pipeline"], "w") as f:
        f.write(PIPELINE_LUA)
    # The harness's static files: HttpArena's data/static under HTTPARENA,
    # else validate/static.py's of the same names and sizes.
    scripts["static-dir"] = os.path.join(os.environ.get("HTTPARENA", ""), "data", "static")
    if not os.environ.get("HTTPARENA"):
        scripts["static-dir"] = os.path.join(work, "static")
        subprocess.run([sys.executable, os.path.join(ARENA, "validate", "static.py"), scripts["static-dir"]], check=True)
    scripts["static"] = os.path.join(work, "static.lua")
    with open(scripts["static"], "w") as f:
        f.write(ROTATE_LUA % ", ".join(f'"/static/{name}"' for name in STATIC_FILES))
    for key, pairs in (("json", JSON_PAIRS), ("json-comp", JSON_COMP_PAIRS)):
        scripts[key] = os.path.join(work, key + ".lua")
        with open(scripts[key], "w") as f:
            f.write(ROTATE_LUA % ", ".join(f'"/json/{c}?m={m}"' for c, m in pairs))

    scripts["database-env"], scripts["entry-env"] = entry_environments(work)
    docker = None
    if any(profile in DB_PROFILES for profile in args.profiles.split(",")):
        docker = start_database(work, scripts, args.load_cpu)
    results = {}
    try:
        run_rounds(args, chosen, table, scripts, results)
    finally:
        if docker:
            subprocess.run(docker + ["rm", "-f", "arena-bench-postgres"], capture_output=True)
    shutil.rmtree(work)

    print("| profile | server | req/s | server CPU µs/req | errors |")
    print("|---|---|---:|---:|---:|")
    for (profile, name), runs in results.items():
        runs.sort(key=lambda x: x["us"])
        mid = runs[len(runs) // 2]
        print(f"| {profile} | {name} | {mid['rps']:.0f} | {mid['us']:.1f} | {mid['errors']} |")


def entry_environments(work):
    """Each arm's environment for the entries' apps: the virtual
    environment arena/validate/docker makes from the entry's
    requirements.txt (its database driver, which the apps import),
    VIRTUAL_ENV for m0serve, PYTHONPATH for the peers; and the database
    profiles' DATABASE_URL, DATABASE_MAX_CONN and crud's cache folder."""
    validate = os.path.join(ARENA, "validate")
    docker = [os.path.join(validate, "docker")]
    os.environ.setdefault("ARENA_VENVS", os.path.join(validate, ".venvs"))
    venvs = {}
    for entry in ("m0serve-asgi", "m0serve-wsgi"):
        venv = subprocess.run(docker + ["venv", os.path.join(ARENA, entry, "requirements.txt")],
                              check=True, capture_output=True, text=True).stdout.strip()
        site = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                               "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              check=True, capture_output=True, text=True).stdout.strip()
        venvs[entry] = (venv, site)
    # DATABASE_MAX_CONN: one worker's share of the harness's 256 (its
    # servers run a worker per CPU, 32 to 64 of them), since each server
    # here is one worker on one CPU.
    database = {"DATABASE_URL": DATABASE_URL, "DATABASE_MAX_CONN": "8", "CRUD_CACHE_DIR": os.path.join(work, "crud-cache")}
    asgi, wsgi = venvs["m0serve-asgi"], venvs["m0serve-wsgi"]
    return database, {
        "m0serve-asgi": {"VIRTUAL_ENV": asgi[0]},
        "m0serve-asgi-executor": {"VIRTUAL_ENV": asgi[0]},
        "m0serve-wsgi": {"VIRTUAL_ENV": wsgi[0]},
        "uvicorn": {"PYTHONPATH": asgi[1]},
        "granian-asgi": {"PYTHONPATH": asgi[1]},
        "granian-wsgi": {"PYTHONPATH": wsgi[1]},
    }


def start_database(work, scripts, load_cpu):
    """The database profiles' Postgres, as the harness starts it: by
    arena/validate/docker's postgres:18 (Debian's PostgreSQL, seeded
    with HttpArena's pgdb-seed.sql), off the server's CPU."""
    docker = [os.path.join(ARENA, "validate", "docker")]
    os.environ["ARENA_DOCKER_STATE"] = os.path.join(work, "docker")
    seed = os.path.join(work, "pgdb-seed.sql")
    subprocess.run([sys.executable, os.path.join(ARENA, "validate", "httparena", "scripts", "generate-pgdb.py"),
                    os.environ["DATASET_PATH"], seed], check=True, capture_output=True)
    # Postgres beside the load generator, off the server's CPU (the
    # harness pins it to CPUs of its own too).
    subprocess.run(docker + ["run", "-d", "--name", "arena-bench-postgres", "--cpuset-cpus", load_cpu, "-e", "POSTGRES_USER=bench",
                             "-e", "POSTGRES_PASSWORD=bench", "-e", "POSTGRES_DB=benchmark",
                             "-v", seed + ":/docker-entrypoint-initdb.d/seed.sql:ro", "postgres:18",
                             "-c", "max_connections=256"], check=True, capture_output=True)
    for _ in range(120):
        probe = subprocess.run(docker + ["exec", "arena-bench-postgres", "psql", "-U", "bench", "-d", "benchmark",
                                         "-tAc", "SELECT 1 FROM items LIMIT 1"], capture_output=True, text=True)
        if probe.stdout.strip() == "1":
            break
        time.sleep(0.5)
    else:
        raise SystemExit("arena-bench: postgres did not start")
    with open(os.path.join(work, "async-db.lua"), "w") as f:
        f.write(ROTATE_LUA % ", ".join(f'"/async-db?min=10&max=50&limit={n}"' for n in ASYNC_DB_LIMITS))
    scripts["async-db"] = os.path.join(work, "async-db.lua")
    with open(os.path.join(work, "crud.lua"), "w") as f:
        f.write(CRUD_LUA)
    scripts["crud"] = os.path.join(work, "crud.lua")
    return docker


def run_rounds(args, chosen, table, scripts, results):
    for r in range(args.rounds):
        for profile in args.profiles.split(","):
            entrants = [a for a in chosen if a in PROFILE_ARMS[profile]] if PROFILE_ARMS[profile] else \
                [a for a in chosen if a != "m0serve-asgi-executor"]
            entrants = entrants[r % len(entrants):] + entrants[:r % len(entrants)]  # rotate each round
            for name in entrants:
                result, problem = run_arm(name, table[name], profile, args, scripts)
                if problem:
                    print(f"arena-bench: {profile}: {problem}", file=sys.stderr)
                    continue
                results.setdefault((profile, name), []).append(result)
                print(f"arena-bench: round {r + 1} {profile} {name}: {result['rps']:.0f} req/s, "
                      f"{result['us']:.1f} µs CPU/req, {result['errors']} errors", file=sys.stderr)


if __name__ == "__main__":
    main()
