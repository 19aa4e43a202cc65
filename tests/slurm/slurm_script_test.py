"""`shardpack slurm-script` with hostile values, without a cluster: the generated submit.sh is data,
not code. A newline in SRC, OUT, --time or --slurm-partition is refused with its message; `$(...)`
and quotes in SRC and OUT stay inert (the script, run with a stub `sbatch` that records what it
is given, creates no file the values name, and the sbatch files hold the paths exactly); --time,
--mem-per-cpu and --slurm-partition are held to Slurm's syntax; submit.sh and both sbatch files pass
shellcheck (Debian's package).

usage: slurm_script_test.py SHARDPACK WORKDIR
Exits 77 (skipped) without shellcheck (scripts/install-deps.sh installs it).
"""

import os
import shlex
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from checks import Checks, fresh_folder  # noqa: E402

shardpack, work = sys.argv[1:3]
if not shutil.which("shellcheck"):
    print("skipped: shellcheck is not installed (scripts/install-deps.sh)")
    sys.exit(77)
fresh_folder(work)
checks = Checks("slurm script test")
check = checks.check
witness = os.path.join(work, "injected")  # what an injected command would create


def script(src, out, *extra):
    return subprocess.run([shardpack, "slurm-script", src, out, "--array", "3"] + list(extra), capture_output=True,
                          text=True, timeout=60)


# Refused, each with its message: a newline anywhere, values against Slurm's syntax.
refusals = [
    ((f"/data\ntouch {witness} #", "/out"),
     f"slurm-script failed: SRC '/data\\ntouch {witness} #': holds a control character (a newline would be a line "
     "of the script of its own)\n"),
    (("/data", f"/out\ntouch {witness} #"),
     f"slurm-script failed: OUT '/out\\ntouch {witness} #': holds a control character (a newline would be a line "
     "of the script of its own)\n"),
    (("/data", "/out", "--time", "1:00\ntouch x"),
     "slurm-script failed: --time '1:00\\ntouch x': holds a control character (a newline would be a line of the "
     "script of its own)\n"),
    (("/data", "/out", "--time", f"$(touch {witness})"),
     f"slurm-script failed: --time '$(touch {witness})': not a Slurm time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or "
     "UNLIMITED)\n"),
    (("/data", "/out", "--slurm-partition", "gpu\n#SBATCH --uid=0"),
     "slurm-script failed: --slurm-partition 'gpu\\n#SBATCH --uid=0': holds a control character (a newline would "
     "be a line of the script of its own)\n"),
    (("/data", "/out", "--slurm-partition", "gpu $(id)"),
     "slurm-script failed: --slurm-partition 'gpu $(id)': not a Slurm partition name (letters, digits, '_', '-', "
     "'.'; several separated by ',')\n"),
    (("/data", "/out", "--mem-per-cpu", "2G;id"),
     "slurm-script failed: --mem-per-cpu '2G;id': not a Slurm memory size (a whole number, then K, M, G or T)\n"),
    # lmdb cannot be packed in parts: refused when the script is made, not in every array task.
    (("/data", "/out", "--format", "lmdb"),
     "slurm-script failed: --format lmdb: every array task would fail with \"--partition: the lmdb format writes "
     "one file, which cannot be packed in parts; pack wds or raw in parts and convert the merged dataset\"\n"),
]
for args, message in refusals:
    r = script(*args)
    check(r.returncode != 0 and r.stdout == "" and r.stderr == message, f"{args!r}: {r.returncode} {r.stderr!r}")

# Accepted and inert: command substitution, backquotes, quotes and spaces in the paths.
src = os.path.join(work, f"src $(touch {witness}) `touch {witness}` it's")
out = os.path.join(work, f"out $(touch {witness})'\"")
r = script(src, out, "--time", "1-02:30", "--mem-per-cpu", "512M", "--slurm-partition", "gpu-a100,cpu_2",
           "--samples-per-shard", "10")
check(r.returncode == 0, f"hostile paths refused: {r.stderr}")
run_dir = os.path.join(work, "run")
os.makedirs(run_dir)
open(os.path.join(run_dir, "submit.sh"), "w").write(r.stdout)
stub_dir = os.path.join(work, "bin")
os.makedirs(stub_dir)
stub = os.path.join(stub_dir, "sbatch")
calls = os.path.join(work, "sbatch-calls")
open(stub, "w").write(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {shlex.quote(calls)}\necho 4242\n")
os.chmod(stub, stat.S_IRWXU)
env = dict(os.environ, PATH=stub_dir + os.pathsep + os.environ["PATH"])
r = subprocess.run(["bash", "submit.sh"], cwd=run_dir, capture_output=True, text=True, env=env, timeout=60)
check(r.returncode == 0 and r.stdout == "submitted the pack array 4242 (3 tasks) and the merge 4242 after it\n",
      f"submit.sh with the stub sbatch: {r.returncode} {r.stdout!r} {r.stderr!r}")
check(open(calls).read() == "--parsable shardpack-pack.sbatch\n"
      "--parsable --dependency=afterok:4242 shardpack-merge.sbatch\n", f"sbatch was called with {open(calls).read()!r}")
check(not os.path.exists(witness), "a command hidden in a path ran")
pack_sbatch = open(os.path.join(run_dir, "shardpack-pack.sbatch")).read()
exec_line = [line for line in pack_sbatch.splitlines() if line.startswith("exec ")]
check(len(exec_line) == 1 and shlex.split(exec_line[0])[2:5] == ["pack", src, out],
      f"the task's command line: {exec_line}")
for line in ("#SBATCH --time=1-02:30", "#SBATCH --mem-per-cpu=512M", "#SBATCH --partition=gpu-a100,cpu_2"):
    check(line in pack_sbatch.splitlines(), f"no line {line!r} in shardpack-pack.sbatch")
# The task scripts run the command they hold: with `shardpack` replaced by echo, nothing injected
# runs and the paths arrive whole.
echo_sbatch = pack_sbatch.replace(exec_line[0], exec_line[0].replace(f"'{shardpack}'", "printf '%s\\n'", 1))
r = subprocess.run(["bash", "-c", echo_sbatch], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout.splitlines()[:3] == ["pack", src, out], f"the task's arguments: {r.stdout!r}")
check(not os.path.exists(witness), "a command hidden in a path ran in the task script")

# shellcheck: clean at every severity for plain values; with the hostile ones only its note that
# "$(...)" does not expand in single quotes (SC2016, severity info) remains, which is the point.
plain_dir = os.path.join(work, "plain")
os.makedirs(plain_dir)
r = script("/data/train", "/shared/out", "--slurm-partition", "gpu")
open(os.path.join(plain_dir, "submit.sh"), "w").write(r.stdout)
r = subprocess.run(["bash", "submit.sh"], cwd=plain_dir, capture_output=True, text=True, env=env, timeout=60)
check(r.returncode == 0, f"plain submit.sh: {r.stderr}")
for folder, severity in ((plain_dir, "style"), (run_dir, "warning")):
    for name in ("submit.sh", "shardpack-pack.sbatch", "shardpack-merge.sbatch"):
        r = subprocess.run(["shellcheck", "--shell=bash", "--severity=" + severity, os.path.join(folder, name)],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"shellcheck --severity={severity} {folder}/{name}:\n{r.stdout}{r.stderr}")

sys.exit(checks.finish())
