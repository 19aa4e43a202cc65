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
import re
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
subprocess.run([shardpack, "pack", os.path.join(work, "src"), os.path.join(serve, "raw"), "--samples-per-shard", "5",
                "--format", "raw", "--crop", "16", "--quiet", "--no-sync"], check=True, stdout=subprocess.DEVNULL)
local_verify = subprocess.run([shardpack, "verify", os.path.join(serve, "ds")], capture_output=True, text=True).stdout

plan = {}      # path -> faults still to serve, in order
requests = {}  # path -> requests seen
ranges = {}    # path -> the Range headers of its requests, in order (None: none)
times = {}     # path -> (monotonic time, status) of its requests, in order
credentials = {}  # path -> the Authorization / x-amz-security-token headers of its requests
serve_ranges = [True]  # whether the server honours Range requests
slowdown_every = [0]   # every Nth request answers 503 SlowDown (0: none)
served = [0]
lock = threading.Lock()
ENDLESS_LIMIT = 256 << 20
endless_sent = []  # bytes each endless body had sent when the client hung up  # an "endless" body stops here, so that the test's loop is bounded


class FaultyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    other = None  # the URL of the other server, where "elsewhere" redirects

    def log_message(self, *args):
        pass

    def answer(self, code, headers=(), body=b""):
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.startswith("/bucket/"):  # s3://bucket/ds through AWS_ENDPOINT_URL
            path = path[len("/bucket"):]
        with lock:
            served[0] += 1
            slow_down = slowdown_every[0] and served[0] % slowdown_every[0] == 0
            requests[path] = requests.get(path, 0) + 1
            ranges.setdefault(path, []).append(self.headers.get("Range"))
            credentials.setdefault(path, []).append(
                (self.headers.get("Authorization"), self.headers.get("x-amz-security-token")))
            fault = plan[path].pop(0) if plan.get(path) else None
            if slow_down and fault is None:
                fault = "slowdown"
            times.setdefault(path, []).append((time.monotonic(), fault))
        file = os.path.join(serve, path.lstrip("/"))
        if fault == "slowdown":  # S3's answer when a prefix takes more requests than it serves
            self.answer(503, body=b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate."
                                  b"</Message></Error>")
            return
        if fault == "503-page":  # a busy server's HTML page, longer than the range asked for
            self.answer(503, [("Content-Type", "text/html")], b"<html><body>" + b"busy " * 20000 + b"</body></html>")
            return
        if fault and fault.startswith("retry-after="):
            self.answer(503, [("Retry-After", fault.split("=", 1)[1])])
            return
        if fault == "again":  # a redirect to the same URL on this server
            self.answer(302, [("Location", self.path)])
            return
        if fault == "elsewhere":  # a redirect to the other server, which serves the same files
            self.answer(302, [("Location", self.other + path)])
            return
        if fault == "downgrade":  # a redirect to a scheme the client must not follow to
            self.answer(302, [("Location", "ftp://127.0.0.1" + path)])
            return
        if fault in ("503", "429", "404") or not os.path.isfile(file):
            self.answer(int(fault) if fault else 404)
            return
        body = open(file, "rb").read()
        if fault == "flip":
            body = body[:100] + bytes([body[100] ^ 1]) + body[101:]
        if fault == "bigger":  # more than the manifest's size, announced
            body = body + b"\0" * (4 << 20)
        if fault == "endless":  # chunked, without end (up to ENDLESS_LIMIT)
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"\0" * (1 << 20)
            sent = 0
            try:
                while sent < ENDLESS_LIMIT:
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                    sent += len(chunk)
                with lock:
                    endless_sent.append(sent)
            except OSError:
                with lock:
                    endless_sent.append(sent)
            self.close_connection = True
            return
        wanted = self.headers.get("Range")
        if wanted and serve_ranges[0]:  # "bytes=N-" (the rest, after a partial body) or "bytes=N-M"
            first, last = wanted.split("=")[1].split("-")
            start, end = int(first), min(int(last) if last else len(body) - 1, len(body) - 1)
            if fault == "short":  # a byte fewer than asked, and said so
                end -= 1
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
            body = body[start:end + 1]
            if fault == "flip-range":  # the range's first byte damaged
                body = bytes([body[0] ^ 1]) + body[1:]
            if fault == "long-range":  # the range asked for, and 100 bytes more
                body = body + b"x" * 100
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
    # socketserver's backlog of 5 overflowed under a sanitizer build's load when retries came fast
    # (retry-budget: 1000 planned 503s): the kernel then drops a connection's handshake, which the
    # client retries after 1, 2, 4, ... s, and one attempt took about a minute (CI, once, 71.5 s).
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients hang up on purpose here (a refused range, a timeout); not worth a traceback


server = QuietServer(("127.0.0.1", 0), FaultyHandler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/ds"
# Another host (another origin: another port) serving the same files, where redirects may point.
other_requests = []  # (path, Authorization, x-amz-security-token, x-amz-date) of each request there


class OtherHandler(FaultyHandler):
    def do_GET(self):
        with lock:
            other_requests.append((self.path, self.headers.get("Authorization"),
                                   self.headers.get("x-amz-security-token"), self.headers.get("x-amz-date")))
        file = os.path.join(serve, self.path.lstrip("/"))
        self.answer(200, body=open(file, "rb").read()) if os.path.isfile(file) else self.answer(404)


other = QuietServer(("127.0.0.1", 0), OtherHandler)
other.daemon_threads = True
threading.Thread(target=other.serve_forever, daemon=True).start()
FaultyHandler.other = f"http://127.0.0.1:{other.server_address[1]}"


def published(cache):
    """The cache's files with published names (no temporary .part-PID files, no .lock files, no
    records of checks)."""
    return {os.path.relpath(os.path.join(d, f), cache): os.path.join(d, f)
            for d, _, fs in os.walk(cache) for f in fs
            if ".part-" not in f and not f.endswith(".lock") and ".checked-" not in f}


# The loader over the URL: one epoch of `shardpack bench` (the streaming shuffle, so that it may also
# stream without a cache), which must see all 14 images, none skipped.
LOADER = ["bench", "--epochs", "1", "--threads", "1", "--batch", "2", "--crop", "16", "--shuffle-buffer", "4",
          "--json"]
GLOBAL_LOADER = ["bench", "--epochs", "1", "--threads", "1", "--batch", "2", "--crop", "16", "--json"]


def loader_saw_every_image(stdout):
    try:
        figures = json.loads(stdout)
    except ValueError:
        return False
    return figures.get("images") == 14 and figures.get("corrupt") == 0


def case(name, faults, expect_ok, expect_counts, expect_error=None, env_extra=None, cache=None, command="verify",
         streaming=False, location=None):
    cache = cache or os.path.join(work, "cache-" + name)
    with lock:
        plan.clear()
        plan.update({"/ds/" + path: list(f) for path, f in faults.items()})
        requests.clear()
        ranges.clear()
        times.clear()
        credentials.clear()
        other_requests.clear()
    env = dict(os.environ, SHARDPACK_CACHE=cache, **(env_extra or {}))
    if streaming:
        del env["SHARDPACK_CACHE"]
    where = location or url
    loader = GLOBAL_LOADER if command == "global" else LOADER
    args = [shardpack, "verify", where] if command == "verify" else [shardpack] + loader[:1] + [where] + loader[1:]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    if expect_ok is not None:  # None: the caller checks
        check((r.returncode == 0) == expect_ok, f"{name}: exit {r.returncode}, stderr {r.stderr!r}")
    if expect_ok and command == "verify":
        check(r.stdout == local_verify, f"{name}: verify printed {r.stdout!r}, the local folder {local_verify!r}")
    if expect_ok and command in ("loader", "global"):
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

    # A global shuffle without a cache folder reads each sample's bytes with a range request (and
    # each side file whole, then its lines by range): no shard is fetched whole. An answer that is
    # not the range asked for is an error naming the file; a server without ranges, one naming the fixes.
    shards = sorted(f for f in os.listdir(os.path.join(serve, "ds")) if f.endswith(".tar"))
    _, r = case("ranged", {}, True, {}, command="global", streaming=True)
    shard_ranges = [r for s in shards for r in ranges.get("/ds/" + s, [])]
    check(len(shard_ranges) >= 14 and all(re.fullmatch(r"bytes=\d+-\d+", r or "") for r in shard_ranges),
          f"ranged: the shards were asked for {shard_ranges}, not a range a read")
    case("ranged-503-twice", {shard: ["503", "503"]}, True, {}, command="global", streaming=True)
    check(ranges.get("/ds/" + shard, [])[:3] == [ranges["/ds/" + shard][0]] * 3,
          f"ranged-503-twice: the range was not asked for again: {ranges.get('/ds/' + shard)}")
    # An error page longer than the range is the server's answer, retried (it was taken for a damaged
    # sample and skipped); a 206 longer than asked is the server's error, naming the URL, not a skip.
    case("ranged-503-page-twice", {shard: ["503-page", "503-page"]}, True, {}, command="global", streaming=True)
    # Range reads follow redirects by the cached path's rules (they failed naming AWS settings).
    case("ranged-redirected-twice", {shard: ["again", "again"]}, True, {}, command="global", streaming=True)
    _, r = case("ranged-redirect-loop", {shard: ["again"] * 10}, False, {}, command="global", streaming=True)
    check(re.fullmatch(f"bench failed: GET {re.escape(url)}/{shard} answered HTTP 302 to {re.escape(url)}/{shard}: "
                       "more than 5 redirects \\(a loop\\?\\); refused\n", r.stderr) is not None,
          f"ranged-redirect-loop: {r.stderr!r}")
    _, r = case("ranged-long", {shard: ["long-range"]}, False, {}, command="global", streaming=True)
    check(re.fullmatch(f"bench failed: GET {re.escape(url)}/{shard} answered HTTP 206 with more than the \\d+ bytes "
                       "asked for\n", r.stderr) is not None, f"ranged-long: {r.stderr!r}")
    for fault, answer in (("bigger", f"Content-Range bytes \\d+-\\d+/{size + (4 << 20)} \\(the file changed on the "
                                     "server since the dataset was opened\\)"),
                          ("short", f"Content-Range bytes \\d+-\\d+/{size}")):
        _, r = case("ranged-" + fault, {shard: [fault]}, False, {}, command="global", streaming=True)
        check(re.fullmatch(f"bench failed: {re.escape(url)}/{shard}: asked for bytes \\d+-\\d+ of {size}, the server "
                           f"answered HTTP 206 with {answer}\n", r.stderr) is not None,
              f"ranged-{fault}: {r.stderr!r}")
    # A sample's bytes are checked against its sample table: damaged once, read again; damaged on
    # every read, the sample is skipped and reported, naming it, and the epoch goes on.
    case("ranged-flipped-once", {shard: ["flip-range"]}, True, {}, command="global", streaming=True)
    _, r = case("ranged-flipped-always", {shard: ["flip-range"] * 3}, None, {}, command="global", streaming=True)
    figures = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    check(r.returncode == 0 and figures.get("images") == 13 and figures.get("corrupt") == 1 and
          re.fullmatch(f"skipped sample \\(index \\d+\\): {shard}: sample \\d+ does not match the "
                       "checksum its sample table lists, in 3 reads \\(the server holds a damaged or changed copy; run "
                       "shardpack verify\\)\n", r.stderr) is not None,
          f"ranged-flipped-always: exit {r.returncode}, {figures}, {r.stderr!r}")
    # The same for raw pixels (one request a sample, checked against the sample table).
    with lock:
        plan.clear()
        plan["/raw/shard-000001.npy"] = ["flip-range"] * 3
    no_cache = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
    r = subprocess.run([shardpack] + GLOBAL_LOADER[:1] + [url[:-len("/ds")] + "/raw"] + GLOBAL_LOADER[1:],
                       capture_output=True, text=True, env=no_cache, timeout=120)
    figures = json.loads(r.stdout) if r.stdout.startswith("{") else {}
    check(r.returncode == 0 and figures.get("images") == 13 and figures.get("corrupt") == 1 and
          re.fullmatch("skipped sample \\(index \\d+\\): shard-000001.npy: sample \\d+ does not match the checksum its "
                       "sample table lists, in 3 reads \\(the server holds a damaged or changed copy; run shardpack "
                       "verify\\)\n", r.stderr) is not None,
          f"ranged raw, flipped always: exit {r.returncode}, {figures}, {r.stderr!r}")
    serve_ranges[0] = False
    _, r = case("ranged-no-ranges", {}, False, {}, command="global", streaming=True)
    serve_ranges[0] = True
    check(re.fullmatch(f"bench failed: {re.escape(url)}/shard-00000\\d.tar: the server does not serve byte ranges "
                       "\\(it answered a range request with the whole file\\), and reading a dataset at random without "
                       "a cache folder needs them: set SHARDPACK_CACHE=DIR, or stream the dataset \\(the streaming "
                       "shuffle\\)\n", r.stderr) is not None, f"ranged-no-ranges: {r.stderr!r}")

    # Redirects: followed (at most 5), never to another scheme; credentials and signatures go to
    # their own host only, and what another host serves is still held to the manifest's checksum.
    case("redirected-twice", {shard: ["again", "again"]}, True, {shard: 3})
    case("redirect-loop", {shard: ["again"] * 10}, False, {shard: 6},
         f"verify failed: GET {url}/{shard} answered HTTP 302 to {url}/{shard}: more than 5 redirects (a loop?); "
         "refused\n")
    case("redirect-to-ftp", {shard: ["downgrade"]}, False, {shard: 1},
         f"verify failed: GET {url}/{shard} answered HTTP 302 to ftp://127.0.0.1/ds/{shard}, not http(s): refused\n")
    port = server.server_address[1]
    with_password = f"http://alice:secret@127.0.0.1:{port}/ds"
    case("basic-auth-elsewhere", {shard: ["elsewhere"]}, True, {shard: 1}, location=with_password)
    check(credentials["/ds/manifest.json"] == [("Basic YWxpY2U6c2VjcmV0", None)],  # base64("alice:secret")
          f"basic-auth-elsewhere: the server got {credentials['/ds/manifest.json']}")
    check(other_requests == [("/ds/" + shard, None, None, None)],
          f"basic-auth-elsewhere: the other host got {other_requests}")
    case("password-never-printed", {shard: ["404"]}, False, {shard: 1},
         f"verify failed: {url}/{shard} does not exist (HTTP 404)\n", location=with_password)
    s3_env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
              "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_SESSION_TOKEN": "token-1",
              "AWS_REGION": "us-east-1"}
    case("s3-redirect-elsewhere", {shard: ["elsewhere"]}, True, {shard: 1}, env_extra=s3_env,
         location="s3://bucket/ds")
    auth, token = credentials["/ds/manifest.json"][0]
    check(auth is not None and auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") and token == "token-1",
          f"s3-redirect-elsewhere: the store got {credentials['/ds/manifest.json']}")
    check(other_requests == [("/ds/" + shard, None, None, None)],
          f"s3-redirect-elsewhere: the other host got {other_requests}")

    # Bodies longer than the manifest's size are stopped at once, announced or endless; nothing is
    # published, and streaming memory stays small while the server would send 256 MB.
    shard_size = os.path.getsize(os.path.join(serve, "ds", shard))
    too_long = (f"verify failed: {url}/{shard} sends more than the {shard_size} bytes expected of it: stopped there "
                "(the server holds another version of the file, or is broken)\n")
    cache, _ = case("bigger", {shard: ["bigger"]}, False, {shard: 1}, too_long)
    check(shard not in {os.path.basename(p) for p in published(cache)}, "bigger: the shard in the cache")
    def streamed_verify(faults):
        """verify of the URL streamed (no cache) under /usr/bin/time: (stderr without time's lines,
        the process's peak RSS in KiB)."""
        with lock:
            plan.clear()
            plan.update({"/ds/" + path: list(f) for path, f in faults.items()})
            endless_sent.clear()
        env = dict(os.environ)
        env.pop("SHARDPACK_CACHE", None)
        r = subprocess.run(["/usr/bin/time", "-f", "peak-rss-kib %M", shardpack, "verify", url], env=env,
                           capture_output=True, text=True, timeout=120)
        lines = [line for line in r.stderr.splitlines(keepends=True) if not line.startswith("Command exited with")]
        return "".join(lines[:-1]), int(lines[-1].split()[1])

    # The baseline: the same verify with nothing wrong, measured the same way (sanitizer builds use
    # more memory, so the bound is relative to it).
    _, baseline_kib = streamed_verify({})
    err, endless_kib = streamed_verify({shard: ["endless"]})
    check(err == too_long, f"endless, streamed: stderr {err!r}")
    for _ in range(100):  # bounded: the server's thread notices the hang-up
        with lock:
            if endless_sent:
                break
        time.sleep(0.05)
    check(endless_sent and endless_sent[0] < 64 << 20, f"endless, streamed: the server sent {endless_sent} bytes")
    check(endless_kib < baseline_kib + (32 << 10),
          f"endless, streamed: peaked at {endless_kib} KiB, {baseline_kib} KiB without the fault")
    print(f"endless body: the server sent {endless_sent} bytes before the client hung up; the process peaked at "
          f"{endless_kib} KiB ({baseline_kib} KiB without the fault)")
    # A shard list has no sizes: the client's cap (SHARDPACK_HTTP_MAX_BYTES) holds its bodies.
    shard_list = url + "/shard-{000000..000002}.tar"
    case("list-endless", {shard: ["endless"]}, False, {}, command="loader", streaming=True, location=shard_list,
         expect_error=f"bench failed: GET {url}/{shard}: the body passes 100000 bytes, the most a download may take: "
                      "stopped (set SHARDPACK_HTTP_MAX_BYTES for larger files)\n",
         env_extra={"SHARDPACK_HTTP_MAX_BYTES": "100000"})

    # Retries: S3's SlowDown on every third request is ridden out, each wait within the capped
    # backoff; Retry-After is waited, up to the cap; the retry budget ends the attempts.
    slowdown_every[0] = 3
    case("slowdown-third", {}, True, {}, env_extra={"SHARDPACK_HTTP_MAX_BACKOFF": "0.4"})
    slowdown_every[0] = 0
    waits = [(b[0] - a[0], a[1]) for ts in times.values() for a, b in zip(ts, ts[1:]) if a[1] == "slowdown"]
    check(len(waits) >= 2 and all(w <= 0.4 + 0.6 for w, _ in waits),
          f"slowdown-third: waits after SlowDown {waits}, expected at most 0.4 s (+0.6 s for the request on a "
          "loaded machine)")
    print(f"slowdown-third: {len(waits)} retries after SlowDown, longest wait {max(w for w, _ in waits):.3f} s")
    case("retry-after-1", {shard: ["retry-after=1"]}, True, {shard: 2}, env_extra={"SHARDPACK_HTTP_MAX_BACKOFF": "5"})
    gap = times["/ds/" + shard][1][0] - times["/ds/" + shard][0][0]
    check(1.0 <= gap <= 2.0, f"retry-after-1: the retry came after {gap:.3f} s, expected 1 s")
    case("retry-after-capped", {shard: ["retry-after=3600"]}, True, {shard: 2},
         env_extra={"SHARDPACK_HTTP_MAX_BACKOFF": "0.5"})
    gap = times["/ds/" + shard][1][0] - times["/ds/" + shard][0][0]
    check(0.5 <= gap <= 1.2, f"retry-after-capped: the retry came after {gap:.3f} s, expected the 0.5 s cap")
    started = time.monotonic()
    # The budget, not the count of attempts, must end them, for every draw of the jitter: with 10
    # attempts, 9 waits drawn from [0, 0.4] s summed to under 1 s in about 1 run in 60, and the
    # attempts ran out first. 1000 attempts need 999 such waits to fit in 1 s (mean 200 s): never.
    _, r = case("retry-budget", {shard: ["503"] * 1000}, False, {},
                env_extra={"SHARDPACK_HTTP_RETRY_SECONDS": "1", "SHARDPACK_HTTP_MAX_BACKOFF": "0.4",
                           "SHARDPACK_HTTP_ATTEMPTS": "1000"})
    elapsed = time.monotonic() - started
    check(re.fullmatch(rf"verify failed: GET {re.escape(url)}/{shard} answered HTTP 503 \(gave up after \d+ "
                       r"attempts: the next would start after the 1 s allowed for retries "
                       r"\(SHARDPACK_HTTP_RETRY_SECONDS\)\)\n", r.stderr) is not None and elapsed < 5,
          f"retry-budget: {r.stderr!r} after {elapsed:.1f} s")
    # A timeout below a second still detects a stall (libcurl counts whole seconds: 1, not 0 = off).
    case("stall-half-second", {shard: ["stall"]}, True, {shard: 2}, env_extra={"SHARDPACK_HTTP_TIMEOUT": "0.5"})
    gap = times["/ds/" + shard][1][0] - times["/ds/" + shard][0][0]
    check(gap < 2.5, f"stall-half-second: the stall was noticed after {gap:.2f} s, expected about 1 s")

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
    other.shutdown()
    other.server_close()

sys.exit(checks.finish())
