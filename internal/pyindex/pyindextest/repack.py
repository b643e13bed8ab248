"""Repackages Python packages Debian installed into wheels, for a test
index: the files `dpkg -L` lists under Debian's dist-packages folder, and
the package's dist-info METADATA (and entry points), as a pure-Python
wheel with its WHEEL and RECORD files.

usage: python3 -I repack.py OUT_DIR DEBIAN_PACKAGE...
prints the wheels' file names, one a line
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

SITE = "/usr/lib/python3/dist-packages/"


def record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def repack(deb, out):
    listed = subprocess.run(["dpkg", "-L", deb], capture_output=True, text=True, check=True).stdout.splitlines()
    files = [f for f in listed if f.startswith(SITE) and os.path.isfile(f) and "/__pycache__/" not in f]
    infos = sorted({f[len(SITE):].split("/")[0] for f in files if f[len(SITE):].split("/")[0].endswith(".dist-info")})
    if len(infos) != 1:
        raise SystemExit("%s: %d dist-info folders (%s); this repackages one" % (deb, len(infos), infos))
    info = infos[0]
    meta = open(SITE + info + "/METADATA", "rb").read()
    fields = dict(re.findall(r"^(Name|Version): (.+)$", meta.decode(), re.M))
    name, version = fields["Name"].strip(), fields["Version"].strip()
    stem = re.sub(r"[-_.]+", "_", name) + "-" + version
    wheel = os.path.join(out, stem + "-py3-none-any.whl")
    dist = stem + ".dist-info"
    record = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(files):
            rel = f[len(SITE):]
            if rel.split("/")[0] == info:
                continue
            data = open(f, "rb").read()
            z.writestr(rel, data)
            record.append(record_line(rel, data))
        extra = {"METADATA": meta, "WHEEL": b"Wheel-Version: 1.0\nGenerator: featbench-repack\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
        ep = SITE + info + "/entry_points.txt"
        if os.path.exists(ep):
            extra["entry_points.txt"] = open(ep, "rb").read()
        for n, data in extra.items():
            z.writestr(dist + "/" + n, data)
            record.append(record_line(dist + "/" + n, data))
        record.append(dist + "/RECORD,,")
        z.writestr(dist + "/RECORD", "\n".join(record) + "\n")
    return os.path.basename(wheel)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for deb in sys.argv[2:]:
        print(repack(deb, out))


main()
