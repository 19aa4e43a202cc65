"""An S3-protocol store for the tests: moto's S3 server (PyPI, requirements.txt) on 127.0.0.1, in a
process of its own, behind a proxy of the test that checks every request's AWS Signature V4 with
an independent implementation (botocore's S3SigV4Auth, recomputed from the request, its body and
the secret key) before passing it on: moto does not check signatures itself. The proxy counts the
requests it passed by method and path, and can answer some with an error instead (fault
injection). Multipart uploads are moto's own: it keeps the live ones (ListMultipartUploads,
AbortMultipartUpload) and, as S3 does, refuses to complete one whose parts but the last are smaller
than the minimum part size (set to PART_MIN, so that the tests' small parts are checked too).

    with S3Store(folder) as store:
        env = store.client_env()        # AWS_* for shardpack, through the proxy
        store.upload(local, "name")     # with awscli, straight to moto
        store.fault = lambda method, path: 503 if ... else None
"""

import hashlib
import hmac
import http.client
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from collections import Counter

from checks import free_port, stop_process, wait_for_port

try:
    import boto3
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:
    S3SigV4Auth = None
try:
    import moto.server  # noqa: F401  (started below as `python -m moto.server`)
except ImportError:
    moto = None

KEY_ID, SECRET, BUCKET = "SHARDPACKTESTKEY", "shardpack-test-secret/0123456789", "datasets"
# The smallest part moto accepts in a multipart upload (S3: 5 MiB), as small as the tests' parts
# (SHARDPACK_S3_PART_SIZE=16384 in s3_output_test.py).
PART_MIN = 16384
AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, *"
                  r"SignedHeaders=([^,]+), *Signature=([0-9a-f]{64})$")
# What the proxy passes on, each way, besides the body (and the x-amz-meta-* headers). The
# signature's headers go on too: moto does not check them, but without them a request is anonymous,
# and moto, as S3, refuses anonymous reads of a private bucket.
REQUEST_HEADERS = ("Range", "Content-Type", "Authorization", "x-amz-date", "x-amz-content-sha256")
RESPONSE_HEADERS = ("Content-Type", "Content-Range", "ETag", "Content-Length", "Last-Modified")


# awscli beside the tests' Python (build/venv/bin), or on PATH.
AWS = shutil.which("aws", path=os.path.dirname(sys.executable)) or shutil.which("aws")


def missing_tools():
    """Why the store cannot run here (for a skip), or None."""
    if S3SigV4Auth is None or moto is None or AWS is None:
        return ("botocore, boto3, moto or awscli is missing from the tests' Python "
                f"{sys.executable} (scripts/install-deps.sh installs them into build/venv)")
    return None


def signature_problem(handler, body):
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
    declared = handler.headers.get("x-amz-content-sha256")
    if declared is None or "x-amz-content-sha256" not in signed.split(";"):
        return "no signed x-amz-content-sha256 header (S3 requires one with Signature V4)"
    if declared != "UNSIGNED-PAYLOAD" and declared != hashlib.sha256(body).hexdigest():
        return "the body is not the one x-amz-content-sha256 declares"
    request = AWSRequest(method=handler.command, url=f"http://{handler.headers['Host']}{handler.path}",
                         headers=headers, data=body)
    request.context["timestamp"] = handler.headers["x-amz-date"]
    signer = S3SigV4Auth(Credentials(KEY_ID, SECRET), "s3", region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return None if hmac.compare_digest(expected, signature) else "signature mismatch"


class S3Store:
    def __init__(self, folder):
        self.folder = folder  # moto keeps objects in memory; its log goes here
        self.good = 0         # requests whose signature matched
        self.bad = []         # why the others were refused
        self.passed = Counter()  # (method, path without query, query names) -> count, of those passed on
        self.fault = None     # (method, path) -> an HTTP status to answer instead, or None
        self.on_request = None  # (method, path) -> None, called for every request first
        self.aborted = []     # (key, upload id) of the uploads aborted through the proxy
        self.lock = threading.Lock()

    def __enter__(self):
        self.port = free_port()
        os.makedirs(self.folder, exist_ok=True)
        self.log = open(os.path.join(self.folder, "moto.log"), "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self.log, stderr=subprocess.STDOUT,
            env=dict(os.environ, S3_UPLOAD_PART_MIN_SIZE=str(PART_MIN)))
        self.proxy = None
        try:
            if not wait_for_port(self.port, seconds=30):
                raise SystemExit(f"moto's server does not listen on 127.0.0.1:{self.port} "
                                 f"(its log: {self.log.name})")
            self.direct = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{self.port}", region_name="us-east-1",
                                       aws_access_key_id="MOTO", aws_secret_access_key="MOTO")
            self.direct.create_bucket(Bucket=BUCKET)
            store = self

            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"

                def log_message(self, *args):
                    pass

                def handle_any(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    store.serve(self, body)

                do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = handle_any

            class QuietServer(http.server.ThreadingHTTPServer):
                def handle_error(self, request, client_address):
                    pass

            self.proxy = QuietServer(("127.0.0.1", 0), Handler)
            self.proxy.daemon_threads = True
            threading.Thread(target=self.proxy.serve_forever, daemon=True).start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.proxy is not None:
            self.proxy.shutdown()
            self.proxy.server_close()
        stop_process(self.process)
        self.log.close()

    def endpoint(self):
        return f"http://127.0.0.1:{self.proxy.server_address[1]}"

    def client_env(self, **extra):
        """The environment for shardpack: the test's credentials, the proxy as the endpoint."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID=KEY_ID, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL=self.endpoint())
        env.update(extra)
        return env

    def aws(self, *args):
        """awscli, straight to moto (not through the proxy)."""
        env = dict(os.environ, AWS_ACCESS_KEY_ID="MOTO", AWS_SECRET_ACCESS_KEY="MOTO",
                   AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=os.devnull,
                   AWS_SHARED_CREDENTIALS_FILE=os.devnull)
        r = subprocess.run([AWS, "--endpoint-url", f"http://127.0.0.1:{self.port}"] + list(args), env=env,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"aws {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def upload(self, local, name):
        self.aws("s3", "cp", "--recursive", "--only-show-errors", local, f"s3://{BUCKET}/{name}")

    def download(self, name, local):
        """Every object under NAME/, read straight from moto with boto3 (ListObjectsV2, then a GET
        each; not through shardpack's client nor the proxy) into the folder `local`; returns {file
        name: bytes}."""
        shutil.rmtree(local, ignore_errors=True)
        os.makedirs(local)
        files = {}
        listing = self.direct.list_objects_v2(Bucket=BUCKET, Prefix=f"{name}/", MaxKeys=1000)
        for item in listing.get("Contents", []):
            file = item["Key"][len(name) + 1:]
            files[file] = self.direct.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            with open(os.path.join(local, file), "wb") as f:
                f.write(files[file])
        return dict(sorted(files.items()))

    def start_upload(self, key):
        """Starts a multipart upload of `key` straight at moto, as another process would; returns its id."""
        return self.direct.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]

    def live_uploads(self):
        """(key, upload id) of the multipart uploads moto holds, started and neither completed nor aborted."""
        uploads = self.direct.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
        return sorted((u["Key"], u["UploadId"]) for u in uploads)

    def track_abort(self, handler, path, query, status):
        """Records an AbortMultipartUpload that moto answered with success."""
        params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        if handler.command == "DELETE" and "uploadId" in params and status == 204:
            with self.lock:
                self.aborted.append((urllib.parse.unquote(path[len(f"/{BUCKET}/"):]), params["uploadId"]))

    def serve(self, handler, body):
        path = handler.path.split("?")[0]
        if self.on_request:
            self.on_request(handler.command, path)
        problem = signature_problem(handler, body)
        with self.lock:
            if problem:
                self.bad.append(problem)
            else:
                self.good += 1
        status = None if problem else (self.fault(handler.command, handler.path) if self.fault else None)
        if problem or status:
            code = "SignatureDoesNotMatch" if problem else "InternalError"
            reply = f"<Error><Code>{code}</Code><Message>{problem or 'injected fault'}</Message></Error>".encode()
            handler.send_response(403 if problem else status)
            handler.send_header("Content-Length", str(len(reply)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(reply)
            return
        query = handler.path.split("?")[1] if "?" in handler.path else ""
        names = tuple(sorted(p.split("=")[0] for p in query.split("&") if p))
        with self.lock:
            self.passed[(handler.command, path, names)] += 1
        headers = {h: handler.headers[h] for h in REQUEST_HEADERS if handler.headers.get(h)}
        headers.update({k: v for k, v in handler.headers.items() if k.lower().startswith("x-amz-meta-")})
        upstream = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            upstream.request(handler.command, handler.path, body=body if body else None, headers=headers)
            r = upstream.getresponse()
            data = r.read()
            self.track_abort(handler, path, query, r.status)
            handler.send_response(r.status)
            for h, v in r.getheaders():
                if h in RESPONSE_HEADERS or h.lower().startswith("x-amz-meta-"):
                    handler.send_header(h, v)
            if r.getheader("Content-Length") is None:
                handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(data)
        finally:
            upstream.close()

    def count(self, method, path_part=None, query_names=None):
        """Requests passed on with this method (and a path containing path_part, and these query
        parameter names)."""
        with self.lock:
            return sum(n for (m, p, q), n in self.passed.items()
                       if m == method and (path_part is None or path_part in p)
                       and (query_names is None or q == tuple(sorted(query_names))))
