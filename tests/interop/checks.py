"""What the interop tests share: a fresh work folder, and checks that record a failure and go on,
so that one run reports every failure; finish() prints the count and gives the exit status."""

import os
import shutil


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
