"""Datasets read from an S3-protocol store: s3rver (npm) on 127.0.0.1 holds them, uploaded by
Debian's awscli, and shardpack reads s3://BUCKET/NAME through a proxy of this test that checks every
request's AWS Signature V4 with an independent implementation (botocore's S3SigV4Auth, recomputed
from the request and the secret key) before passing it on: s3rver does not check SigV4 itself.
For each format, `stat` and `verify --decode` of the s3:// URL print what they print for the local
folder and the loader's batches are byte-identical (through an empty cache, shards arriving as the
epoch goes; and streamed without a cache, except LMDB); every request shardpack signed passed the
check; a wrong secret key gives a clear error (and the proxy saw the bad signature); missing
credentials give a clear error before any request.

usage: s3_dataset_test.py SHARDPACK MAKE_IMAGE_TREE DUMP_BATCHES WORKDIR S3RVER
Exits 77 (skipped) when S3RVER, awscli or botocore is not installed (scripts/install-deps.sh
installs them).
"""

import hmac
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request

from checks import Checks, free_port, fresh_folder, pack_every_format, stop_process, wait_for_port

shardpack, make_tree, dump_batches, work, s3rver = sys.argv[1:6]
try:
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:
    print("skipped: python3-botocore is not installed (scripts/install-deps.sh)")
    sys.exit(77)
if not os.access(s3rver, os.X_OK) or shutil.which("aws") is None:
    print(f"skipped: {s3rver} or awscli is missing (scripts/install-deps.sh installs them)")
    sys.exit(77)

fresh_folder(work)
checks = Checks("s3 dataset test")
check = checks.check
KEY_ID, SECRET, BUCKET = "SHARDPACKTESTKEY", "shardpack-test-secret/0123456789", "datasets"


serve = os.path.join(work, "serve")
packs = pack_every_format(shardpack, make_tree, work, serve)

verified = {"good": 0, "bad": []}  # requests whose signature matched; reasons of those refused
lock = threading.Lock()
AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, *"
                  r"SignedHeaders=([^,]+), *Signature=([0-9a-f]{64})$")


def signature_problem(handler):
    """None when the request's SigV4 signature is the one botocore computes with SECRET."""
    m = AUTH.match(handler.headers.get("Authorization", ""))
    if not m:
        return "no AWS Signature V4 Authorization header"
    key_id, _, region, signed, signature = m.groups()
    if key_id != KEY_ID:
        return f"unknown access key {key_id}"
    headers = {}
    for name in signed.split(";"):
        if handler.headers.get(name) is None:
            return f"signed header {name} is missing"
        headers[name] = handler.headers.get(name)
    request = AWSRequest(method=handler.command, url=f"http://{handler.headers['Host']}{handler.path}",
                         headers=headers)
    request.context["timestamp"] = handler.headers["x-amz-date"]
    signer = S3SigV4Auth(Credentials(KEY_ID, SECRET), "s3", region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return None if hmac.compare_digest(expected, signature) else "signature mismatch"


class VerifyingProxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = None

    def log_message(self, *args):
        pass

    def do_GET(self):
        problem = signature_problem(self)
        with lock:
            if problem:
                verified["bad"].append(problem)
            else:
                verified["good"] += 1
        if problem:
            body = f"<Error><Code>SignatureDoesNotMatch</Code><Message>{problem}</Message></Error>".encode()
            self.send_response(403)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        forward = urllib.request.Request(self.upstream + self.path)
        if self.headers.get("Range"):
            forward.add_header("Range", self.headers["Range"])
        try:
            with urllib.request.urlopen(forward, timeout=30) as r:
                status, body, headers = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, body, headers = e.code, e.read(), e.headers
        self.send_response(status)
        for h in ("Content-Type", "Content-Range", "ETag"):
            if headers.get(h):
                self.send_header(h, headers[h])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass


s3_port = free_port()
store = subprocess.Popen([s3rver, "-d", os.path.join(work, "store"), "-a", "127.0.0.1", "-p", str(s3_port), "--silent",
                          "--allow-mismatched-signatures", "--configure-bucket", BUCKET],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
proxy = None
try:
    if not wait_for_port(s3_port):
        raise SystemExit(f"s3rver does not listen on 127.0.0.1:{s3_port}")
    VerifyingProxy.upstream = f"http://127.0.0.1:{s3_port}"
    proxy = QuietServer(("127.0.0.1", 0), VerifyingProxy)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    # Upload with a real S3 client, straight to the store.
    upload_env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                      AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=os.devnull,
                      AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    r = subprocess.run(["aws", "--endpoint-url", f"http://127.0.0.1:{s3_port}", "s3", "cp", "--recursive",
                        "--only-show-errors", serve, f"s3://{BUCKET}/"], env=upload_env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit("aws s3 cp failed: " + r.stderr)

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(SHARDPACK_CACHE=os.path.join(work, "cache"), AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET,
               AWS_REGION="us-east-1", AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.server_address[1]}")
    for name in packs:
        local, url = os.path.join(serve, name), f"s3://{BUCKET}/{name}"
        for command in (["stat"], ["verify", "--decode"]):
            want = subprocess.run([shardpack] + command + [local], capture_output=True, text=True)
            got = subprocess.run([shardpack] + command + [url], capture_output=True, text=True, env=env)
            check(got.returncode == want.returncode == 0, f"{name}: {command[0]} of {url}: {got.stderr}")
            check(got.stdout == want.stdout, f"{name}: {command[0]} of {url} printed\n{got.stdout}\nnot\n{want.stdout}")
        # The loader: through a cache of its own (empty, so shards arrive as the epoch goes), and,
        # with the streaming shuffle, streamed without a cache (not LMDB: it needs one).
        modes = [("cached", dict(env, SHARDPACK_CACHE=os.path.join(work, "cache-loader-" + name)))]
        if name != "lmdb":
            streaming = {k: v for k, v in env.items() if k != "SHARDPACK_CACHE"}
            modes.append(("streamed", dict(streaming, DUMP_SHUFFLE_BUFFER="3")))
        for mode, mode_env in modes:
            outputs = []
            for source, tag in ((local, "local"), (url, "s3")):
                out = os.path.join(work, f"{name}-{mode}-{tag}")
                r = subprocess.run([dump_batches, source, out, "4", "7", "16", "0", "0", "1", "2"],
                                   capture_output=True, text=True, env=mode_env)
                check(r.returncode == 0, f"{name}: dump_batches {mode} {tag}: {r.stderr}")
                outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
            check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0,
                  f"{name}: the loader's batches from S3 ({mode}) differ")
    check(verified["good"] > 0 and not verified["bad"],
          f"signed requests: {verified['good']} passed the check, refused: {verified['bad'][:3]}")

    bad = dict(env, AWS_SECRET_ACCESS_KEY="not-the-secret", SHARDPACK_CACHE=os.path.join(work, "cache-bad"))
    r = subprocess.run([shardpack, "stat", f"s3://{BUCKET}/wds"], capture_output=True, text=True, env=bad)
    endpoint = env["AWS_ENDPOINT_URL"]
    check(r.returncode == 1 and r.stderr == f"stat failed: GET {endpoint}/{BUCKET}/wds/manifest.json answered HTTP "
          "403 (access denied: check the URL and credentials)\n", f"wrong secret: {r.stderr!r}")
    check(verified["bad"] == ["signature mismatch"], f"the proxy saw {verified['bad']}")
    none = {k: v for k, v in env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    r = subprocess.run([shardpack, "stat", f"s3://{BUCKET}/wds"], capture_output=True, text=True, env=none)
    check(r.returncode == 1 and r.stderr == f"stat failed: reading s3://{BUCKET}/wds needs credentials: set "
          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL "
          "for a store other than AWS)\n", f"no credentials: {r.stderr!r}")
finally:
    if proxy is not None:
        proxy.shutdown()
        proxy.server_close()
    stop_process(store)

sys.exit(checks.finish())
