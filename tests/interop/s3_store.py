"""An S3-protocol store for the tests: s3rver (npm) on 127.0.0.1, behind a proxy of the test that
checks every request's AWS Signature V4 with an independent implementation (botocore's
S3SigV4Auth, recomputed from the request, its body and the secret key) before passing it on:
s3rver does not check SigV4 itself. The proxy counts the requests it passed by method and path, and
can answer some with an error instead (fault injection). s3rver keeps no list of multipart uploads
and cannot abort one: the proxy serves ListMultipartUploads and AbortMultipartUpload itself, from
the uploads it saw start (and those a test starts with start_upload) and not complete.

    with S3Store(s3rver, folder) as store:
        env = store.client_env()        # AWS_* for shardpack, through the proxy
        store.upload(local, "name")     # with awscli, straight to s3rver
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
import threading
import urllib.parse
import urllib.request
from xml.etree import ElementTree
from collections import Counter

from checks import free_port, stop_process, wait_for_port

try:
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:
    S3SigV4Auth = None

KEY_ID, SECRET, BUCKET = "SHARDPACKTESTKEY", "shardpack-test-secret/0123456789", "datasets"
AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, *"
                  r"SignedHeaders=([^,]+), *Signature=([0-9a-f]{64})$")
# What the proxy passes on, each way, besides the body.
REQUEST_HEADERS = ("Range", "Content-Type")
RESPONSE_HEADERS = ("Content-Type", "Content-Range", "ETag", "Content-Length", "Last-Modified")


def missing_tools(s3rver):
    """Why the store cannot run here (for a skip), or None."""
    if S3SigV4Auth is None:
        return "python3-botocore is not installed (scripts/install-deps.sh)"
    if not os.access(s3rver, os.X_OK) or shutil.which("aws") is None:
        return f"{s3rver} or awscli is missing (scripts/install-deps.sh installs them)"
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
    def __init__(self, s3rver, folder):
        self.s3rver, self.folder = s3rver, folder
        self.good = 0         # requests whose signature matched
        self.bad = []         # why the others were refused
        self.passed = Counter()  # (method, path without query, query names) -> count, of those passed on
        self.fault = None     # (method, path) -> an HTTP status to answer instead, or None
        self.on_request = None  # (method, path) -> None, called for every request first
        self.uploads = {}     # upload id -> key, of the multipart uploads started and not finished
        self.aborted = []     # (key, upload id) of the uploads aborted through the proxy
        self.lock = threading.Lock()

    def __enter__(self):
        self.port = free_port()
        self.process = subprocess.Popen(
            [self.s3rver, "-d", self.folder, "-a", "127.0.0.1", "-p", str(self.port), "--silent",
             "--allow-mismatched-signatures", "--configure-bucket", BUCKET],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.proxy = None
        try:
            if not wait_for_port(self.port):
                raise SystemExit(f"s3rver does not listen on 127.0.0.1:{self.port}")
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
        """awscli, straight to s3rver (not through the proxy)."""
        env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER",
                   AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE=os.devnull,
                   AWS_SHARED_CREDENTIALS_FILE=os.devnull)
        r = subprocess.run(["aws", "--endpoint-url", f"http://127.0.0.1:{self.port}"] + list(args), env=env,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"aws {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def upload(self, local, name):
        self.aws("s3", "cp", "--recursive", "--only-show-errors", local, f"s3://{BUCKET}/{name}")

    def download(self, name, local):
        """Every object under NAME/, read straight from s3rver over HTTP (ListObjectsV2, then a GET
        each; not through shardpack's client nor the proxy) into the folder `local`; returns {file
        name: bytes}."""
        shutil.rmtree(local, ignore_errors=True)
        os.makedirs(local)
        base = f"http://127.0.0.1:{self.port}/{BUCKET}"
        with urllib.request.urlopen(f"{base}?list-type=2&max-keys=1000&prefix={urllib.parse.quote(name)}/",
                                    timeout=30) as r:
            listing = ElementTree.fromstring(r.read())
        ns = {"s3": listing.tag[1:listing.tag.index("}")]} if listing.tag.startswith("{") else {}
        key_path = "s3:Contents/s3:Key" if ns else "Contents/Key"
        files = {}
        for key in listing.findall(key_path, ns):
            file = key.text[len(name) + 1:]
            with urllib.request.urlopen(f"{base}/{urllib.parse.quote(key.text)}", timeout=30) as r:
                files[file] = r.read()
            with open(os.path.join(local, file), "wb") as f:
                f.write(files[file])
        return dict(sorted(files.items()))

    def start_upload(self, key):
        """Starts a multipart upload of `key` straight at s3rver, as another process would; returns
        its id, which the proxy then lists as live."""
        upstream = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            upstream.request("POST", f"/{BUCKET}/{urllib.parse.quote(key)}?uploads")
            body = upstream.getresponse().read().decode()
        finally:
            upstream.close()
        upload_id = re.search(r"<UploadId>([^<]+)</UploadId>", body).group(1)
        with self.lock:
            self.uploads[upload_id] = key
        return upload_id

    def live_uploads(self):
        with self.lock:
            return sorted((key, upload_id) for upload_id, key in self.uploads.items())

    def answer(self, handler, status, body=b""):
        handler.send_response(status)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)

    def serve_uploads(self, handler, path, query):
        """ListMultipartUploads and AbortMultipartUpload, which s3rver lacks: True when answered."""
        params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        if handler.command == "GET" and "uploads" in params and path == f"/{BUCKET}":
            prefix = params.get("prefix", "")
            items = "".join(f"<Upload><Key>{key}</Key><UploadId>{upload_id}</UploadId></Upload>"
                            for key, upload_id in self.live_uploads() if key.startswith(prefix))
            self.answer(handler, 200, (f"<ListMultipartUploadsResult><Bucket>{BUCKET}</Bucket><Prefix>{prefix}</Prefix>"
                                       f"<IsTruncated>false</IsTruncated>{items}</ListMultipartUploadsResult>").encode())
            return True
        if handler.command == "DELETE" and "uploadId" in params:
            key = urllib.parse.unquote(path[len(f"/{BUCKET}/"):])
            with self.lock:
                known = self.uploads.get(params["uploadId"]) == key
                if known:
                    del self.uploads[params["uploadId"]]
                    self.aborted.append((key, params["uploadId"]))
            self.answer(handler, 204 if known else 404,
                        b"" if known else b"<Error><Code>NoSuchUpload</Code></Error>")
            return True
        return False

    def track_upload(self, handler, path, query, status, data):
        """Records an upload that started, or forgets one that completed."""
        params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        if handler.command != "POST" or status != 200:
            return
        key = urllib.parse.unquote(path[len(f"/{BUCKET}/"):])
        with self.lock:
            if "uploads" in params:
                m = re.search(rb"<UploadId>([^<]+)</UploadId>", data)
                if m:
                    self.uploads[m.group(1).decode()] = key
            elif "uploadId" in params and b"<Error>" not in data:
                self.uploads.pop(params["uploadId"], None)

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
        if self.serve_uploads(handler, path, query):
            return
        headers = {h: handler.headers[h] for h in REQUEST_HEADERS if handler.headers.get(h)}
        headers.update({k: v for k, v in handler.headers.items() if k.lower().startswith("x-amz-meta-")})
        upstream = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            upstream.request(handler.command, handler.path, body=body if body else None, headers=headers)
            r = upstream.getresponse()
            data = r.read()
            self.track_upload(handler, path, query, r.status, data)
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
