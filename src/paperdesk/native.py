"""Compiled build of the ingest workers' hot path (mypyc), kept outside the source tree.

Why: after the record model went to C (msgspec), a worker's CPU a record is mostly Python
bytecode in name splitting, plain-text reduction and the JSON-lines parsers. mypyc compiles
those same modules to C extensions (same source, same results: prepared rows of the daily
feed and of a bulk-snapshot sample are byte-identical), and the workers' CPU a record of the
feed falls by 10-17 % and of the 1M snapshot stream by ~16 % (docs/benchmarks.md, Ingest,
fourth and fifth rounds).

Why outside the tree: a compiled module built next to its `.py` would shadow it, so an
edited source would silently keep running the old compiled code. Here a build goes to a
directory of its own with a stamp (the sha256 of every source it was compiled from), and it
is used only while every stamped source is unchanged; otherwise the pure-Python modules
load as usual. Which build: `PAPERDESK_NATIVE=DIR` names one (a missing or stale one is
reported with a warning), `PAPERDESK_NATIVE=off` turns it off, and without the variable
the environment's own build is used when there is a current one: `DEFAULT_DIR`, which
`make` (the README's set-up) builds when a C compiler and the Python headers are present
(`build DIR --optional`: without them it says so and the package runs as pure Python).

    python -m paperdesk.native build DIR [--optional]   # ~1-2 min
    PAPERDESK_NATIVE=DIR paperdesk ingest ...            # spawned workers inherit it

Compiled code checks the declared argument types at run time, so a malformed record can be
rejected with a different message text than the pure-Python parser gives (still a clean
per-record ParseError).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

# The modules compiled: everything a worker runs per record but the msgspec record model
# (already C) and the store's row encoding (a few calls into msgspec and hashlib).
MODULES = (
    "paperdesk.normalize",  # finish(), check_limits()
    "paperdesk.normalize.names",
    "paperdesk.normalize.text",
    "paperdesk.normalize.ids",
    "paperdesk.sources._jsonio",
    "paperdesk.sources._arxiv_common",
    "paperdesk.sources.arxiv_feed",
    "paperdesk.sources.arxiv_snapshot",
)
STAMP = "paperdesk-native.json"
_PACKAGE = Path(__file__).resolve().parent
# The environment's own build, made by `make` into the virtual environment and used when
# `PAPERDESK_NATIVE` is not set.
DEFAULT_DIR = Path(sys.prefix) / "paperdesk-native"
OFF = ("", "0", "off", "no")
_active: Path | None = None


def active() -> Path | None:
    """The build this process loads its compiled modules from, or None (pure Python)."""
    return _active


def activate_from_env() -> bool:
    """What `paperdesk/__init__` runs first: the build `PAPERDESK_NATIVE` names, none when
    it says `off`, else the environment's own build if it is current (quietly: a missing
    or stale one there means pure Python, as on a machine without a C compiler)."""
    from paperdesk.settings import NATIVE

    chosen = NATIVE.get()
    if chosen is None:
        return DEFAULT_DIR.joinpath(STAMP).exists() and activate(DEFAULT_DIR, quiet=True)
    if chosen.strip().lower() in OFF:
        return False
    return activate(chosen)


def _source(module: str) -> Path:
    path = _PACKAGE.parent.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tag() -> str:
    return f"{sys.implementation.cache_tag}-{sys.platform}"


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the compiled extension for each built module (and mypyc's shared library)."""

    def __init__(self, files: dict[str, Path]):
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            # A plain module of a compiled package (normalize.links): while the package's
            # compiled __init__ runs, its __path__ is the build directory, so find the
            # source here.
            parent = fullname.rpartition(".")[0]
            source = _source(fullname)
            if parent in self.files and source.is_file():
                return importlib.util.spec_from_file_location(fullname, source)
            return None
        source = _source(fullname)
        if source.name != "__init__.py":
            return importlib.util.spec_from_file_location(fullname, file)
        # a compiled package: its submodules are still found in its source directory
        return importlib.util.spec_from_file_location(
            fullname,
            file,
            loader=_PackageLoader(fullname, str(file)),
            submodule_search_locations=[str(source.parent)],
        )


class _PackageLoader(importlib.machinery.ExtensionFileLoader):
    """A compiled package's loader: mypyc points the package's `__path__` at the build
    directory, where only the compiled submodules are; put back its source directory."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        module.__path__ = [str(_source(module.__name__).parent)]


def activate(directory: str | Path, *, quiet: bool = False) -> bool:
    """Load the compiled modules of a build in `directory` from now on, if it is current.

    Returns False (and warns, unless `quiet`) when the build is missing, for another
    Python, or stale; must run before the modules are first imported (`paperdesk/__init__`
    calls it)."""
    global _active
    root = Path(directory)

    def no(why: str) -> bool:
        if not quiet:
            warnings.warn(f"PAPERDESK_NATIVE: {why}", stacklevel=3)
        return False

    try:
        stamp = json.loads((root / STAMP).read_text())
    except (OSError, ValueError) as exc:
        return no(f"no usable build in {root} ({exc})")
    if stamp.get("tag") != _tag():
        return no(f"{root} was built for {stamp.get('tag')}")
    stale = [m for m, h in stamp["sources"].items() if _digest(_source(m)) != h]
    if stale:
        return no(
            f"{root} is stale ({', '.join(stale)} changed since the build); "
            "using the Python modules"
        )
    files = {name: root / file for name, file in stamp["files"].items()}
    if any(sys.modules.get(name) is not None for name in files):
        return False  # already imported as Python: too late to swap
    sys.meta_path.insert(0, _Finder(files))
    _active = root
    return True


def cannot_build() -> str | None:
    """Why this machine cannot compile the build (no C compiler, no Python headers), or
    None. The compiler is the one Python's build tools use (`CC`, else Python's own)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc})"
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        return f"no Python headers ({include}/Python.h)"
    return None


def build(directory: str | Path, modules: Sequence[str] = MODULES) -> Path:
    """Compile `modules` with mypyc from the current sources into `directory` (replacing a
    previous build there) and write its stamp. Runs mypyc on a copy of the package, so
    nothing is written into the source tree."""
    out = Path(directory)
    with tempfile.TemporaryDirectory(prefix="paperdesk-native-") as tmp:
        work = Path(tmp)
        shutil.copytree(_PACKAGE, work / "paperdesk", ignore=shutil.ignore_patterns("__pycache__"))
        files = [str(_source(m).relative_to(_PACKAGE.parent)) for m in modules]
        subprocess.run(
            [sys.executable, "-m", "mypyc", "--ignore-missing-imports", *files],
            cwd=work,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        built: dict[str, str] = {}
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        for so in work.rglob(f"*{suffix}"):
            rel = so.relative_to(work)
            if rel.parts[0] == "build":
                continue
            name = ".".join(rel.parts)[: -len(suffix)].removesuffix(".__init__")
            target = out / ("__".join(rel.parts))
            shutil.copy2(so, target)
            built[name] = target.name
    missing = set(modules) - set(built)
    if missing:
        raise RuntimeError(f"mypyc built no extension for {sorted(missing)}")
    stamp = {
        "tag": _tag(),
        "sources": {m: _digest(_source(m)) for m in modules},
        "files": built,
    }
    (out / STAMP).write_text(json.dumps(stamp, indent=1) + "\n")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """`build DIR [--optional]`: with `--optional` (what `make` runs) a machine that cannot
    build it (see `cannot_build`), or a build that fails, is reported and exits 0: the
    package then runs as pure Python, only slower."""
    args = list(sys.argv[1:] if argv is None else argv)
    optional = "--optional" in args
    args = [a for a in args if a != "--optional"]
    if len(args) != 2 or args[0] != "build":
        print("usage: python -m paperdesk.native build DIR [--optional]", file=sys.stderr)
        return 2
    if optional:
        why = cannot_build()
        if why is None:
            try:
                print(build(args[1]))
                return 0
            except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
                why = f"the build failed ({exc})"
        shutil.rmtree(args[1], ignore_errors=True)  # no stale build left to be found
        print(f"paperdesk: compiled build skipped: {why}; running as pure Python",
              file=sys.stderr)
        return 0
    print(build(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
