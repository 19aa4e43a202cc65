"""What the interop tests share: a fresh work folder, checks that record a failure and go on (so
that one run reports every failure; finish() prints the count and gives the exit status), and
ports for the test servers."""

import os
import shutil
import socket
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
