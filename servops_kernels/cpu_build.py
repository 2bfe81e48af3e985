"""Build the native CPU kernels once per machine and load them with ctypes.

Why ctypes and a plain compiler call, not `torch.utils.cpp_extension`: the kernel takes raw
pointers and includes no PyTorch header, so it compiles in about two seconds with no ninja
and no Python headers, and a machine without a compiler loses only speed (the caller falls
back to the PyTorch twin). It is built with `-march=native`, so the cache key holds the CPU
model and flags as well as the source, the compiler and the flags: a cache shared between
machines never hands one CPU code built for another.

The library links OpenMP by soname (`libgomp.so.1`); PyTorch's CPU wheel has already loaded
a library of that name, so both share one OpenMP runtime and one thread pool.

`SERVOPS_KERNEL_CACHE` moves the cache (default `~/.cache/servops/kernels`); `CXX` picks
the compiler (default `c++`).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

_log = logging.getLogger(__name__)

CACHE_ENV = "SERVOPS_KERNEL_CACHE"
FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17")
SOURCES = Path(__file__).parent / "csrc"


class NativeBuildError(RuntimeError):
    """The native kernel could not be compiled or loaded here; the message says why."""


class NativeLibrary:
    """One csrc/ library, built and loaded at first use, its ABI version checked and its
    functions typed; where it cannot be built, None and the reason (callers fall back to PyTorch).

    `signatures` maps each exported function to its ctypes argument types (all return void).
    """

    def __init__(
        self,
        source_name: str,
        abi_function: str,
        abi_version: int,
        signatures: dict[str, list],
        extra_flags: tuple[str, ...] = (),
    ) -> None:
        self.source_name, self.abi_function, self.abi_version = source_name, abi_function, abi_version
        self.signatures, self.extra_flags = signatures, extra_flags
        self._warned = False

    @functools.cached_property
    def _loaded(self) -> tuple[ctypes.CDLL | None, str]:
        try:
            return self.build(), ""
        except NativeBuildError as exc:
            return None, str(exc)

    def build(self, more_flags: tuple[str, ...] = ()) -> ctypes.CDLL:
        """The library built with its own flags plus `more_flags` (or reused from the cache), its ABI
        checked and its functions typed; NativeBuildError where it cannot be. The engine loads the
        plain build once (`library()`); a variant (e.g. `-mno-avx512f`, the 8-lane paths only) is for
        tests and A/B benchmarks that hold one build against another."""
        lib = load(self.source_name, (*self.extra_flags, *more_flags))
        abi = getattr(lib, self.abi_function)()
        if abi != self.abi_version:
            raise NativeBuildError(f"the cached build of {self.source_name} has ABI {abi}, expected {self.abi_version}")
        for name, argtypes in self.signatures.items():
            function = getattr(lib, name)
            function.argtypes, function.restype = argtypes, None
        return lib

    def library(self) -> ctypes.CDLL | None:
        """The loaded library, or None where it cannot be built (`unavailable_reason` says why)."""
        return self._loaded[0]

    def available(self) -> bool:
        return self._loaded[0] is not None

    def unavailable_reason(self) -> str:
        return self._loaded[1]

    def available_or_warn(self, what: str, fallback: str) -> bool:
        """`available()`; the first time it is not, one warning: what is unavailable, why, and
        what runs instead (a dispatcher calls this on every call, so it must stay cheap)."""
        if self._loaded[0] is not None:
            return True
        if not self._warned:
            self._warned = True
            _log.warning("%s unavailable (%s); %s", what, self._loaded[1], fallback)
        return False


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "servops" / "kernels")


def load(source_name: str, extra_flags: tuple[str, ...] = ()) -> ctypes.CDLL:
    """Compile `csrc/<source_name>` for this machine (or reuse the cached build) and load it.

    `extra_flags` are added to FLAGS for this source only (the layer ops need
    `-ffp-contract=off` to round as PyTorch does; the attention kernels want FMA).
    """
    source = SOURCES / source_name
    compiler = os.environ.get("CXX") or "c++"
    if shutil.which(compiler) is None:
        raise NativeBuildError(f"no C++ compiler {compiler!r} on PATH (set CXX)")
    flags = (*FLAGS, *extra_flags)
    target = cache_dir() / f"{source.stem}-{_build_key(source, compiler, flags)}.so"
    if not target.exists():
        _compile(compiler, flags, source, target)
    try:
        return ctypes.CDLL(str(target))
    except OSError as exc:
        raise NativeBuildError(f"cannot load {target}: {exc}") from exc


def _build_key(source: Path, compiler: str, flags: tuple[str, ...]) -> str:
    """Source and every shared header (an edited header must rebuild), compiler, flags, CPU."""
    digest = hashlib.sha256(source.read_bytes())
    for header in sorted(SOURCES.glob("*.h")):
        digest.update(header.read_bytes())
    for part in (compiler, _compiler_version(compiler), " ".join(flags), platform.machine(), _cpu_identity()):
        digest.update(part.encode())
    return digest.hexdigest()[:16]


def _compiler_version(compiler: str) -> str:
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _cpu_identity() -> str:
    """Model name and feature flags of the first CPU: what -march=native compiles for."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor()
    keep = [line for line in text.splitlines()[:40] if line.split(":")[0].strip() in ("model name", "flags")]
    return "\n".join(keep)


def _compile(compiler: str, flags: tuple[str, ...], source: Path, target: Path) -> None:
    """Compile into a temporary file beside the target, then rename: processes that build at
    the same time (a server and its tests) never load a half-written library."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(suffix=".so.partial", dir=target.parent)
    os.close(fd)
    try:
        result = subprocess.run(
            [compiler, *flags, "-o", partial, str(source)], capture_output=True, text=True, timeout=300
        )
        if result.returncode != 0:
            first = next((line for line in result.stderr.splitlines() if "error" in line), result.stderr.strip())
            raise NativeBuildError(f"{compiler} failed on {source.name}: {first[:300]}")
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NativeBuildError(f"{compiler} could not build {source.name}: {exc}") from exc
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
