"""featbench_install: installs a level 2 prediction's package as
``pip install --no-index --no-deps --no-build-isolation --no-compile
--target TARGET SRC`` would, without pip's start-up, when that is sure.

Run as the tests' user with ``python3 -I featbench_install.py SRC TARGET``.
pip spends most of its time importing itself and starting a new Python for
each PEP 517 hook. This script calls the same hooks of the same backend in
one process (metadata, then the wheel, as pip does), checks the wheel as
pip checks it, and unpacks it into TARGET. Whenever the case is not one it
knows pip handles exactly so (backend-path, a wheel
with a .data folder or scripts to generate, a tag other than pure Python 3,
a name or version that does not match, a Requires-Python it cannot read,
any error), it installs nothing and exits 3, and the harness runs pip,
whose verdict then stands. Exit 0: installed. TARGET must be empty.

What differs from pip's result: pip also writes INSTALLER, REQUESTED and
direct_url.json into the .dist-info folder and rewrites its RECORD.
"""

import email.parser
import importlib
import os
import re
import shutil
import sys
import tempfile
import zipfile

DECLINE = 3


class Decline(Exception):
    pass


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def load_backend(src):
    """The backend pip would use, as (module, object path)."""
    pyproject = os.path.join(src, "pyproject.toml")
    if not os.path.exists(pyproject):
        if not os.path.exists(os.path.join(src, "setup.py")):
            raise Decline("neither pyproject.toml nor setup.py")
        return "setuptools.build_meta:__legacy__"
    try:
        import tomllib
    except ImportError:
        raise Decline("no tomllib (Python < 3.11)")
    try:
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
    except Exception as e:
        raise Decline(f"pyproject.toml does not load: {e}")
    # PEP 517 and 518's defaults, as pip applies them: no [build-system]
    # table, or one without build-backend, is setuptools' legacy backend.
    bs = data.get("build-system", {"requires": ["setuptools>=40.8.0", "wheel"]})
    if not isinstance(bs, dict):
        raise Decline("build-system is not a table")
    if "backend-path" in bs:
        raise Decline("backend-path")
    requires = bs.get("requires")
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        raise Decline("build-system.requires is not a list of strings")
    backend = bs.get("build-backend", "setuptools.build_meta:__legacy__")
    if not isinstance(backend, str) or not re.fullmatch(r"[A-Za-z_][\w.]*(:[A-Za-z_][\w.]*)?", backend):
        raise Decline("build-system.build-backend is not a backend name")
    return backend


def import_backend(spec):
    mod, _, obj = spec.partition(":")
    b = importlib.import_module(mod)
    for part in obj.split(".") if obj else []:
        b = getattr(b, part)
    return b


def specifiers():
    """packaging's SpecifierSet and Version: the system's, else setuptools'."""
    for name in ("packaging", "setuptools.extern.packaging", "setuptools._vendor.packaging"):
        try:
            spec = importlib.import_module(name + ".specifiers")
            ver = importlib.import_module(name + ".version")
            return spec.SpecifierSet, ver.Version
        except Exception:
            continue
    raise Decline("packaging is not importable")


def check_wheel(path, names):
    """Checks the wheel pip would check, and returns its dist-info folder."""
    m = re.fullmatch(r"([^-]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl", os.path.basename(path))
    if not m:
        raise Decline("the wheel's file name is not a wheel's")
    name, version, _, py, abi, plat = m.groups()
    if abi != "none" or plat != "any" or not {"py3", f"py3{sys.version_info[1]}"} & set(py.split(".")):
        raise Decline(f"the wheel is {py}-{abi}-{plat}, not pure Python 3")
    info = [n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")]
    info = sorted(set(info))
    if len(info) != 1:
        raise Decline("the wheel has not one .dist-info folder")
    for n in names:
        parts = n.split("/")
        if n.startswith("/") or "\\" in n or ".." in parts or ":" in parts[0]:
            raise Decline(f"the wheel holds a path outside it: {n!r}")
        if parts[0].endswith(".data"):
            raise Decline("the wheel has a .data folder (scripts, headers or data)")
    return name, version, info[0]


def check_metadata(z, name, version, info):
    SpecifierSet, Version = specifiers()
    meta = email.parser.BytesParser().parsebytes(z.read(info + "/METADATA"))
    mname, mversion = meta.get("Name"), meta.get("Version")
    if not mname or not mversion:
        raise Decline("METADATA has no Name or Version")
    if canonical(mname) != canonical(name) or canonical(info[: -len(".dist-info")]) != canonical(name + "-" + version):
        raise Decline("the wheel's name does not match its metadata")
    try:
        if Version(mversion) != Version(version):
            raise Decline("the wheel's version does not match its metadata")
    except Decline:
        raise
    except Exception:
        raise Decline(f"version {mversion!r} is not valid")
    rp = meta.get("Requires-Python")
    if rp is not None:
        try:
            ok = Version(".".join(map(str, sys.version_info[:3]))) in SpecifierSet(rp)
        except Exception:
            raise Decline(f"Requires-Python {rp!r} is not valid")
        if not ok:
            raise Decline(f"Requires-Python {rp!r} excludes this Python")
    try:
        eps = z.read(info + "/entry_points.txt").decode()
    except KeyError:
        eps = ""
    if re.search(r"^\s*\[\s*(console_scripts|gui_scripts)\s*\]", eps, re.M):
        raise Decline("entry points with scripts to generate")


def install(src, target):
    if os.listdir(target):
        raise Decline("the target is not empty")
    backend = import_backend(load_backend(src))
    work = tempfile.mkdtemp(prefix="featbench-install-")
    try:
        md = None
        if hasattr(backend, "prepare_metadata_for_build_wheel"):
            md = os.path.join(work, backend.prepare_metadata_for_build_wheel(os.path.join(work), None))
        os.makedirs(os.path.join(work, "wheel"))
        whl = os.path.join(work, "wheel", backend.build_wheel(os.path.join(work, "wheel"), None, md))
        with zipfile.ZipFile(whl) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
            name, version, info = check_wheel(whl, names)
            check_metadata(z, name, version, info)
            try:
                for n in names:
                    dest = os.path.join(target, *n.split("/"))
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    with z.open(n) as r, open(dest, "xb") as w:
                        shutil.copyfileobj(r, w)
                    # Executable bits as the wheel gives them, as pip does.
                    if (z.getinfo(n).external_attr >> 16) & 0o111:
                        os.chmod(dest, 0o755)
            except BaseException:
                for e in os.listdir(target):
                    p = os.path.join(target, e)
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
                raise
        return name, version
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    src, target = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.chdir(src)
    try:
        name, version = install(src, target)
    except Decline as e:
        print(f"featbench-install: {e}: pip decides", flush=True)
        return DECLINE
    except BaseException as e:  # the backend's or the package's failure: pip's verdict
        print(f"featbench-install: {type(e).__name__}: {e}: pip decides", flush=True)
        return DECLINE
    print(f"featbench-install: installed {name} {version} as pip would", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
