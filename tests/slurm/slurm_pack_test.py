"""Distributed packing on a real Slurm: this test starts a one-node cluster of its own (munged,
slurmctld and slurmd from Debian's slurm-wlm and munge, on 127.0.0.1 and free ports, in WORKDIR),
and always stops it. `shardpack slurm-script` writes the submit script for 4 array tasks; running it
packs a generated tree in 4 parts and merges them, and the dataset must equal a one-node pack byte
for byte and verify clean. Then the same with array task 2 cancelled (scancel) while it packs: its
part stays unfinished (journal, no part manifest), the merge waits forever (its dependency cannot be
met) and is cancelled, task 2 resubmitted alone continues its part, and the merge resubmitted alone
gives the same bytes again.

usage: slurm_pack_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR
Exits 77 (skipped) without Slurm and munge (scripts/install-deps.sh installs them) or without root
(the cluster runs its daemons as root: SlurmUser=root).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from checks import Checks, fresh_folder, free_port, stop_process  # noqa: E402

shardpack, make_tree, work = sys.argv[1:4]
daemons = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"]
if not all(os.path.exists(d) for d in daemons) or not shutil.which("sbatch"):
    print("skipped: slurm-wlm and munge are not installed (scripts/install-deps.sh)")
    sys.exit(77)
if os.geteuid() != 0:
    print("skipped: the test cluster runs its daemons as root")
    sys.exit(77)

fresh_folder(work)
checks = Checks("slurm pack test")
check = checks.check
cluster = os.path.join(work, "cluster")
for d in ("state", "spool", "log", "munge"):
    os.makedirs(os.path.join(cluster, d))
socket_path = os.path.join(cluster, "munge", "munge.socket.2")
key = os.path.join(cluster, "munge", "munge.key")
with open(key, "wb") as f:
    f.write(os.urandom(1024))
os.chmod(key, 0o600)
host = socket.gethostname().split(".")[0]
conf = os.path.join(cluster, "slurm.conf")
open(conf, "w").write(f"""ClusterName=shardpack-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket_path}
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation={cluster}/state
SlurmdSpoolDir={cluster}/spool
SlurmctldPidFile={cluster}/slurmctld.pid
SlurmdPidFile={cluster}/slurmd.pid
SlurmctldLogFile={cluster}/log/slurmctld.log
SlurmdLogFile={cluster}/log/slurmd.log
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
env = dict(os.environ, SLURM_CONF=conf)


def run(args, cwd=None, timeout=120):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def wait_for(condition, seconds, what):
    """Polls `condition` every 0.1 s for at most `seconds`; raises naming `what` when it never holds."""
    for _ in range(int(seconds * 10)):
        if condition():
            return
        time.sleep(0.1)
    raise SystemExit(f"timed out after {seconds} s waiting for {what}")


def jobs_left(job_ids):
    """The jobs (and array tasks) of job_ids still in the queue, with their state and reason."""
    r = run(["squeue", "-h", "-o", "%i %T %r", "-j", ",".join(job_ids)])
    return [line for line in r.stdout.splitlines() if line.strip()]


def submit(folder):
    """Runs the generated submit script in `folder`; returns (array job id, merge job id)."""
    r = run(["bash", "submit.sh"], cwd=folder)
    m = re.search(r"submitted the pack array (\d+) \(4 tasks\) and the merge (\d+) after it", r.stdout)
    if r.returncode != 0 or not m:
        raise SystemExit(f"submit.sh failed: {r.stdout} {r.stderr}")
    return m.group(1), m.group(2)


def dataset_files(folder):
    """name -> bytes of every file but the part manifests and journals."""
    return {f: open(os.path.join(folder, f), "rb").read() for f in sorted(os.listdir(folder))
            if not f.startswith("part-")}


def pid_of(name):
    try:
        return int(open(os.path.join(cluster, name)).read().strip())
    except (OSError, ValueError):
        return None


munged = None
try:
    munged = subprocess.Popen(["/usr/sbin/munged", "--foreground", "--force", f"--socket={socket_path}",
                               f"--key-file={key}", f"--pid-file={cluster}/munge/munged.pid",
                               f"--log-file={cluster}/munge/munged.log", f"--seed-file={cluster}/munge/seed"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(socket_path), 10, "munged")
    for daemon in ("/usr/sbin/slurmctld", "/usr/sbin/slurmd"):
        r = run([daemon, "-f", conf], timeout=30)
        if r.returncode != 0:
            raise SystemExit(f"{daemon} did not start: {r.stderr}")
    wait_for(lambda: run(["sinfo", "-h", "-o", "%T"]).stdout.strip() == "idle", 30, "the node to be idle")

    src = os.path.join(work, "src")
    subprocess.run([make_tree, src, "--classes", "4", "--images", "400", "--scale", "2", "--png-every", "0",
                    "--jobs", "2"], check=True, stdout=subprocess.DEVNULL)
    pack_options = ["--samples-per-shard", "10", "--check", "decode", "--no-sync"]
    reference = os.path.join(work, "reference", "ds")
    r = run([shardpack, "pack", src, reference, "--quiet"] + pack_options)
    check(r.returncode == 0, f"one-node pack: {r.stderr}")

    def prepare(name):
        folder = os.path.join(work, name)
        os.makedirs(folder)
        r = run([shardpack, "slurm-script", src, os.path.join(folder, "ds"), "--array", "4", "--cpus-per-task", "1",
                 "--time", "00:10:00", "--mem-per-cpu", "200M"] + pack_options)
        if r.returncode != 0:
            raise SystemExit(f"slurm-script failed: {r.stderr}")
        open(os.path.join(folder, "submit.sh"), "w").write(r.stdout)
        return folder

    def check_dataset(folder, what):
        ds = os.path.join(folder, "ds")
        check(os.path.exists(os.path.join(ds, "manifest.json")), f"{what}: no manifest.json")
        check(dataset_files(ds) == dataset_files(reference), f"{what}: the dataset differs from the one-node pack")
        r = run([shardpack, "verify", ds])
        check(r.returncode == 0 and r.stdout.startswith("verify OK: 40 shards, 400 samples"),
              f"{what}: verify: {r.stdout} {r.stderr}")

    # 1. The generated script, as a user runs it.
    folder = prepare("run")
    array, merge = submit(folder)
    wait_for(lambda: not jobs_left([array, merge]), 300, "the array and the merge")
    check(len([f for f in os.listdir(folder) if f.startswith("shardpack-pack-")]) == 4,
          f"the array's task logs: {os.listdir(folder)}")
    check_dataset(folder, "4 array tasks and the merge")

    # 2. Task 2 cancelled while it packs, then resubmitted alone.
    folder = prepare("cancelled")
    array, merge = submit(folder)
    journal = os.path.join(folder, "ds", "part-00002-of-00004.journal.json")
    wait_for(lambda: os.path.exists(journal), 120, "task 2 to publish a shard")
    r = run(["scancel", f"{array}_2"])
    check(r.returncode == 0, f"scancel: {r.stderr}")
    wait_for(lambda: all(line.split()[0] == merge for line in jobs_left([array, merge])), 300,
             "the other tasks to finish")
    # The merge can never start: Slurm says so once its scheduler looks at the dependency again.
    wait_for(lambda: any("DependencyNeverSatisfied" in line for line in jobs_left([merge])), 60,
             "Slurm to see that the merge's dependency cannot be met")
    left = jobs_left([array, merge])
    check(len(left) == 1 and left[0].startswith(merge) and "DependencyNeverSatisfied" in left[0],
          f"after the cancel the queue holds {left}")
    check(os.path.exists(journal) and not os.path.exists(journal.replace(".journal", "")),
          "the cancelled part is not unfinished (it finished before the cancel, or lost its journal)")
    check(not os.path.exists(os.path.join(folder, "ds", "manifest.json")), "a manifest after a cancelled task")
    run(["scancel", merge])
    r = run(["sbatch", "--parsable", "--array=2", "shardpack-pack.sbatch"], cwd=folder)
    check(r.returncode == 0, f"resubmitting task 2: {r.stderr}")
    again = r.stdout.strip().split(";")[0]
    wait_for(lambda: not jobs_left([again]), 300, "the resubmitted task")
    r = run(["sbatch", "--parsable", "shardpack-merge.sbatch"], cwd=folder)
    merge = r.stdout.strip().split(";")[0]
    wait_for(lambda: not jobs_left([merge]), 120, "the merge")
    check_dataset(folder, "task 2 cancelled and resubmitted")
finally:
    run(["scancel", "--full", "--quiet", "-u", "root"], timeout=30)
    for name in ("slurmd.pid", "slurmctld.pid"):
        pid = pid_of(name)
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for name in ("slurmd.pid", "slurmctld.pid"):  # bounded: 10 s each, then SIGKILL
        pid = pid_of(name)
        for _ in range(100):
            if not pid or not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
    if munged is not None:
        stop_process(munged)

sys.exit(checks.finish())
