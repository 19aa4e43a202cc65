#!/usr/bin/env python3
"""Completes a wheel that auditwheel repaired: copies into it the libraries its extension still
loads from the system, besides glibc, libstdc++ and libgcc.

Why: auditwheel grafts every library but those the manylinux policy assumes every Linux system
has, and that list holds the X11 client libraries (libX11, libxcb, ...). Debian's OpenCV core
needs libGLX, which auditwheel grafts, and libGLX needs libX11, which it does not; a machine
without X11 (a container, a training node) could not import the module. shardpack never draws,
so the copies are only there to be loaded.

Each copy goes into the wheel's shardpack.libs/ under its own name, with the run-path $ORIGIN, so
that the grafted libraries that need it (auditwheel gives them $ORIGIN too) find it there before the
system's; RECORD is written anew. Repeats until ldd shows nothing else from outside.

    graft_system_libs.py WHEEL OUT_DIR     (patchelf on PATH; OUT_DIR/<the same name>.whl)
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

# glibc's libraries, libstdc++ and libgcc: every system has them (and the wheel's tag says which glibc).
SYSTEM = re.compile(r"^(libc|libm|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s)\.so|^ld-linux")


def outside(module, libs):
    """{soname: path} of what `module` loads (ldd: transitively) from outside `libs`, glibc and the like aside."""
    found = {}
    for line in subprocess.run(["ldd", module], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            name, path = parts[0], parts[2]
            if path == "not":
                raise SystemExit(f"graft_system_libs: {module} needs {name}, which is not found")
            if not SYSTEM.match(name) and not os.path.realpath(path).startswith(os.path.realpath(libs) + os.sep):
                found[name] = path
    return found


def record(root):
    """RECORD's lines for every file under root (the wheel's own RECORD without a hash)."""
    lines = []
    for folder, _, files in os.walk(root):
        for f in sorted(files):
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, root)
            if rel.endswith(".dist-info/RECORD"):
                lines.append(f"{rel},,")
                continue
            data = open(path, "rb").read()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{rel},sha256={digest},{len(data)}")
    return sorted(lines)


def main():
    wheel, out_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        libs = os.path.join(tmp, "shardpack.libs")
        modules = [os.path.join(tmp, "shardpack", f) for f in os.listdir(os.path.join(tmp, "shardpack"))
                   if f.startswith("_shardpack") and f.endswith(".so")]
        copied = []
        for _ in range(10):
            missing = {}
            for module in modules:
                missing.update(outside(module, libs))
            if not missing:
                break
            for name, path in sorted(missing.items()):
                target = os.path.join(libs, name)
                shutil.copyfile(path, target)
                os.chmod(target, 0o755)
                subprocess.run(["patchelf", "--set-rpath", "$ORIGIN", target], check=True)
                copied.append(name)
        else:
            raise SystemExit("graft_system_libs: still loading libraries from outside after 10 rounds")
        dist_info = next(d for d in os.listdir(tmp) if d.endswith(".dist-info"))
        with open(os.path.join(tmp, dist_info, "RECORD"), "w") as f:
            f.write("\n".join(record(tmp)) + "\n")
        os.makedirs(out_dir, exist_ok=True)
        target = os.path.join(out_dir, os.path.basename(wheel))
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
            for folder, _, files in os.walk(tmp):
                for f in sorted(files):
                    path = os.path.join(folder, f)
                    z.write(path, os.path.relpath(path, tmp))
    print(f"graft_system_libs: {len(copied)} libraries added: {' '.join(copied) or 'none'}")


if __name__ == "__main__":
    main()
