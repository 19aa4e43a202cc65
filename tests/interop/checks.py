"""What the interop tests share: a fresh work folder, checks that record a failure and go on (so
that one run reports every failure; finish() prints the count and gives the exit status), and
ports for the test servers, and the datasets of every format that the remote tests serve."""

import os
import shutil
import socket
import subprocess
import time


class Checks:
    def __init__(self, name):
        self.name = name
        self.failures = []

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)

    def finish(self):
        print(f"{self.name}: {len(self.failures)} failures")
        return 1 if self.failures else 0


def fresh_folder(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def free_port():
    """A port nothing listens on now, on 127.0.0.1 (the servers of the tests bind only there)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10):
    """Waits, at most `seconds`, until a server accepts connections on 127.0.0.1:port."""
    for _ in range(int(seconds * 10)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def stop_process(process, seconds=10):
    """Stops a server the test started: SIGTERM, then SIGKILL when it has not exited after `seconds`."""
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def pack_every_format(shardpack, make_tree, work, serve):
    """14 small images in 3 classes (WORK/src) packed into SERVE/wds (shards of 5), SERVE/lmdb and
    SERVE/raw (16x16, shards of 6); returns {name: pack flags}."""
    subprocess.run([make_tree, os.path.join(work, "src"), "--classes", "3", "--images", "14", "--small"],
                   check=True, stdout=subprocess.DEVNULL)
    packs = {"wds": ["--samples-per-shard", "5"], "lmdb": ["--format", "lmdb"],
             "raw": ["--format", "raw", "--crop", "16", "--samples-per-shard", "6"]}
    for name, flags in packs.items():
        subprocess.run([shardpack, "pack", os.path.join(work, "src"), os.path.join(serve, name), "--quiet",
                        "--no-sync"] + flags, check=True, stdout=subprocess.DEVNULL)
    return packs


def start_nginx(work, serve):
    """nginx on a free port of 127.0.0.1 serving SERVE, its files in WORK (access log: WORK/access.log);
    returns (process, base URL). Callers stop it with stop_process, also on failure."""
    port = free_port()
    for root, dirs, files in os.walk(serve):  # nginx's workers may run as another user
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    os.chmod(work, 0o755)
    conf = os.path.join(work, "nginx.conf")
    temp = " ".join(f"{kind}_temp_path {work}/tmp-{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                        "scgi"))
    open(conf, "w").write(f"daemon off; worker_processes 2; pid {work}/nginx.pid; error_log {work}/error.log;\n"
                          + ("user root;\n" if os.geteuid() == 0 else "")
                          + f"events {{ worker_connections 256; }}\nhttp {{ access_log {work}/access.log; {temp}\n"
                          f"  server {{ listen 127.0.0.1:{port}; root {serve}; }} }}\n")
    nginx = subprocess.Popen(["/usr/sbin/nginx", "-c", conf, "-p", work], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    if not wait_for_port(port):
        stop_process(nginx)
        raise SystemExit("nginx did not start: " + open(os.path.join(work, "error.log")).read())
    return nginx, f"http://127.0.0.1:{port}"
