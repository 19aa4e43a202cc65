"""Remote reads under faults, against a web server of the test's own (Python's http.server on
127.0.0.1, stopped at the end) that fails chosen requests on purpose: 503 and 429 (retried), a
connection dropped mid-body (retried), a flipped byte (downloaded again), a stalled transfer
(timed out and retried), 404 (fails at once), failures that never stop (the attempt limit), and a
reader killed with SIGKILL mid-download. A dropped transfer resumes with a Range request, or starts
over when the server ignores ranges. The loader (`shardpack bench`) meets the same faults while it
fetches shards as the epoch goes, streamed and cached: a download that keeps failing stops it with
its error. Three verifiers, and three loaders, sharing one cache download each file once. Each case
checks the requests the server counted, the message, and that the cache never publishes a file
that differs from the server's.

usage: http_faults_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
"""

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time

from checks import Checks, fresh_folder

shardpack, make_tree, work = sys.argv[1:4]
fresh_folder(work)
checks = Checks("http faults test")
check = checks.check


serve = os.path.join(work, "serve")
subprocess.run([make_tree, os.path.join(work, "src"), "--classes", "3", "--images", "14", "--small"], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run([shardpack, "pack", os.path.join(work, "src"), os.path.join(serve, "ds"), "--samples-per-shard", "5",
                "--quiet", "--no-sync"], check=True, stdout=subprocess.DEVNULL)
local_verify = subprocess.run([shardpack, "verify", os.path.join(serve, "ds")], capture_output=True, text=True).stdout

plan = {}      # path -> faults still to serve, in order
requests = {}  # path -> requests seen
ranges = {}    # path -> the Range headers of its requests, in order (None: none)
serve_ranges = [True]  # whether the server honours Range requests
lock = threading.Lock()


class FaultyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        with lock:
            requests[self.path] = requests.get(self.path, 0) + 1
            ranges.setdefault(self.path, []).append(self.headers.get("Range"))
            fault = plan[self.path].pop(0) if plan.get(self.path) else None
        file = os.path.join(serve, self.path.lstrip("/"))
        if fault in ("503", "429", "404") or not os.path.isfile(file):
            code = int(fault) if fault else 404
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = open(file, "rb").read()
        if fault == "flip":
            body = body[:100] + bytes([body[100] ^ 1]) + body[101:]
        wanted = self.headers.get("Range")
        if wanted and serve_ranges[0]:  # "bytes=N-", as the client asks after a partial body
            start = int(wanted.split("=")[1].rstrip("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            body = body[start:]
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "drop":  # half the body, then the connection goes
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "slow":  # the whole body, late: readers sharing a cache overlap
            time.sleep(0.5)
        if fault in ("stall", "hang"):  # a few bytes, then nothing for longer than the timeout
            self.wfile.write(body[:10])
            self.wfile.flush()
            time.sleep(3 if fault == "stall" else 30)
            self.close_connection = True
            return
        self.wfile.write(body)


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients hang up on purpose here (a refused range, a timeout); not worth a traceback


server = QuietServer(("127.0.0.1", 0), FaultyHandler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/ds"


def published(cache):
    """The cache's files with published names (no temporary .part-PID files, no .lock files, no
    records of checks)."""
    return {os.path.relpath(os.path.join(d, f), cache): os.path.join(d, f)
            for d, _, fs in os.walk(cache) for f in fs
            if ".part-" not in f and not f.endswith(".lock") and not f.endswith(".checked")}


# The loader over the URL: one epoch of `shardpack bench` (the streaming shuffle, so that it may also
# stream without a cache), which must see all 14 images, none skipped.
LOADER = ["bench", "--epochs", "1", "--threads", "1", "--batch", "2", "--crop", "16", "--shuffle-buffer", "4",
          "--json"]


def loader_saw_every_image(stdout):
    try:
        figures = json.loads(stdout)
    except ValueError:
        return False
    return figures.get("images") == 14 and figures.get("corrupt") == 0


def case(name, faults, expect_ok, expect_counts, expect_error=None, env_extra=None, cache=None, command="verify",
         streaming=False):
    cache = cache or os.path.join(work, "cache-" + name)
    with lock:
        plan.clear()
        plan.update({"/ds/" + path: list(f) for path, f in faults.items()})
        requests.clear()
        ranges.clear()
    env = dict(os.environ, SHARDPACK_CACHE=cache, **(env_extra or {}))
    if streaming:
        del env["SHARDPACK_CACHE"]
    args = [shardpack, "verify", url] if command == "verify" else [shardpack] + LOADER[:1] + [url] + LOADER[1:]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    check((r.returncode == 0) == expect_ok, f"{name}: exit {r.returncode}, stderr {r.stderr!r}")
    if expect_ok and command == "verify":
        check(r.stdout == local_verify, f"{name}: verify printed {r.stdout!r}, the local folder {local_verify!r}")
    if expect_ok and command == "loader":
        check(loader_saw_every_image(r.stdout), f"{name}: the loader printed {r.stdout!r}")
    if expect_error is not None:
        check(r.stderr == expect_error, f"{name}: stderr {r.stderr!r}, expected {expect_error!r}")
    for path, count in expect_counts.items():
        check(requests.get("/ds/" + path, 0) == count,
              f"{name}: {requests.get('/ds/' + path, 0)} requests for {path}, expected {count}")
    for rel, path in published(cache).items():
        original = os.path.join(serve, "ds", os.path.basename(rel))
        check(open(path, "rb").read() == open(original, "rb").read(), f"{name}: the cache published a bad {rel}")
    return cache, r


try:
    shard = "shard-000001.tar"
    case("503-twice", {shard: ["503", "503"]}, True, {shard: 3})
    case("429-manifest", {"manifest.json": ["429"]}, True, {"manifest.json": 2})
    case("dropped", {shard: ["drop"]}, True, {shard: 2})
    size = os.path.getsize(os.path.join(serve, "ds", shard))
    check(ranges.get("/ds/" + shard) == [None, f"bytes={size // 2}-"],
          f"dropped: the retry did not resume after the {size // 2} bytes received: {ranges.get('/ds/' + shard)}")
    serve_ranges[0] = False  # a server that ignores Range: the client starts over
    case("dropped-no-ranges", {shard: ["drop"]}, True, {shard: 3})
    check(ranges.get("/ds/" + shard) == [None, f"bytes={size // 2}-", None],
          f"dropped-no-ranges: requests {ranges.get('/ds/' + shard)}")
    serve_ranges[0] = True
    case("flipped-once", {shard: ["flip"]}, True, {shard: 2})
    case("stalled", {shard: ["stall"]}, True, {shard: 2}, env_extra={"SHARDPACK_HTTP_TIMEOUT": "1"})
    cache, _ = case("503-always", {shard: ["503"] * 10}, False, {shard: 3},
                    f"verify failed: GET {url}/{shard} answered HTTP 503 (gave up after 3 attempts)\n",
                    {"SHARDPACK_HTTP_ATTEMPTS": "3"})
    check(shard not in {os.path.basename(p) for p in published(cache)}, "503-always: the shard in the cache")
    case("flipped-always", {shard: ["flip"] * 3}, False, {shard: 3},
         f"verify failed: {url}/{shard} does not match the checksum its manifest lists, in 3 downloads (the server "
         "holds a damaged or changed copy)\n")
    case("404", {shard: ["404"]}, False, {shard: 1}, f"verify failed: {url}/{shard} does not exist (HTTP 404)\n")

    # The same faults met by the loader, which fetches shards as it goes: streamed without a cache,
    # or into one. A download that keeps failing stops the epoch with its error; no sample is
    # skipped for it.
    case("loader-503-twice", {shard: ["503", "503"]}, True, {shard: 3}, command="loader", streaming=True)
    case("loader-dropped", {shard: ["drop"]}, True, {shard: 2}, command="loader", streaming=True)
    check(ranges.get("/ds/" + shard) == [None, f"bytes={size // 2}-"],
          f"loader-dropped: the retry did not resume after {size // 2} bytes: {ranges.get('/ds/' + shard)}")
    case("loader-flipped-once", {shard: ["flip"]}, True, {shard: 2}, command="loader")
    cache, _ = case("loader-flipped-always", {shard: ["flip"] * 3}, False, {shard: 3},
                    f"bench failed: {url}/{shard} does not match the checksum its manifest lists, in 3 downloads (the "
                    "server holds a damaged or changed copy)\n", command="loader")
    check(shard not in {os.path.basename(p) for p in published(cache)}, "loader-flipped-always: the shard in the cache")
    case("loader-404", {shard: ["404"]}, False, {shard: 1}, f"bench failed: {url}/{shard} does not exist (HTTP 404)\n",
         command="loader", streaming=True)

    # Three processes sharing one cache, at once: each file is downloaded once.
    cache = os.path.join(work, "cache-shared")
    shards = sorted(f for f in os.listdir(os.path.join(serve, "ds")) if f.endswith(".tar"))
    with lock:
        plan.clear()
        plan.update({"/ds/" + s: ["slow"] for s in shards})
        requests.clear()
    env = dict(os.environ, SHARDPACK_CACHE=cache)
    readers = [subprocess.Popen([shardpack, "verify", url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for _ in range(3)]
    results = [r.communicate(timeout=120) for r in readers]
    check(all(r.returncode == 0 for r in readers) and all(out == local_verify for out, _ in results),
          f"shared cache: {[(r.returncode, e) for r, (_, e) in zip(readers, results)]}")
    check(all(requests.get("/ds/" + s) == 1 for s in shards) and requests.get("/ds/manifest.json") == 3,
          f"shared cache: requests {sorted(requests.items())}")

    # Three loaders sharing one cache, at once: each shard is downloaded once (a lock per shard).
    cache = os.path.join(work, "cache-shared-loaders")
    with lock:
        plan.clear()
        plan.update({"/ds/" + s: ["slow"] for s in shards})
        requests.clear()
    env = dict(os.environ, SHARDPACK_CACHE=cache)
    loaders = [subprocess.Popen([shardpack] + LOADER[:1] + [url] + LOADER[1:], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=120) for p in loaders]
    check(all(p.returncode == 0 for p in loaders) and all(loader_saw_every_image(out) for out, _ in results),
          f"shared cache, loaders: {[(p.returncode, e) for p, (_, e) in zip(loaders, results)]}")
    check(all(requests.get("/ds/" + s) == 1 for s in shards) and requests.get("/ds/manifest.json") == 3,
          f"shared cache, loaders: requests {sorted(requests.items())}")

    # SIGKILL while a shard is downloading: nothing published that a later run would trust, and
    # the next run completes the cache.
    cache = os.path.join(work, "cache-killed")
    with lock:
        plan.clear()
        plan["/ds/shard-000002.tar"] = ["hang"]
        requests.clear()
    env = dict(os.environ, SHARDPACK_CACHE=cache)
    reader = subprocess.Popen([shardpack, "verify", url], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    for _ in range(200):  # bounded: 10 s for the reader to reach the hanging shard
        if requests.get("/ds/shard-000002.tar"):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    reader.send_signal(signal.SIGKILL)
    reader.wait(timeout=10)
    names = {os.path.basename(p) for p in published(cache)}
    check(requests.get("/ds/shard-000002.tar") == 1, "killed: the reader never reached shard-000002.tar")
    check("shard-000002.tar" not in names,
          f"killed: the cache published {sorted(names)}")
    case("after-kill", {}, True, {"shard-000000.tar": 0, "shard-000002.tar": 1}, cache=cache)
finally:
    server.shutdown()
    server.server_close()

sys.exit(checks.finish())
