#!/usr/bin/env python3
"""Runs a command and writes its peak memory in KB to FILE: the most it held at once of resident
memory plus in-memory files (memfd, where shardpack keeps streamed shards: their pages are never
mapped, so RSS and /usr/bin/time's %M leave them out), sampled every 50 ms (often enough for files
of tens of MB, rarely enough to take little CPU from the command), and never less than its peak RSS
as the kernel counts it (getrusage, the figure /usr/bin/time -f %M gives).

    scripts/peak_memory.py -o FILE COMMAND [ARG ...]
"""
import os
import resource
import subprocess
import sys
import time


def held_kb(pid):
    """Resident KB plus the KB of the memfd files `pid` has open; None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        memfd = 0
        for fd in os.listdir(f"/proc/{pid}/fd"):
            path = f"/proc/{pid}/fd/{fd}"
            try:
                if os.readlink(path).startswith("/memfd:"):
                    memfd += os.stat(path).st_size
            except OSError:  # closed meanwhile
                pass
        return rss + memfd // 1024
    except (OSError, StopIteration):
        return None


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "-o":
        sys.exit(__doc__)
    out, command = sys.argv[2], sys.argv[3:]
    child = subprocess.Popen(command)
    peak = 0
    while child.poll() is None:
        kb = held_kb(child.pid)
        if kb is not None:
            peak = max(peak, kb)
        time.sleep(0.05)
    peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    with open(out, "w") as f:
        f.write(f"{peak}\n")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
