"""OP-7.18, OP-7.19, OP-7.165 and OP-7.170: the container's user and mounts — a uid with no user name, a cache
directory it may not write, another path on a read-only file system, a library it may not read.

Why a family of their own: platforms that run images under an arbitrary user (OpenShift gives each pod a random
UID; `docker run --user`, Kubernetes' runAsUser) break two assumptions of what runs inside vLLM, in Python's and
the OS's words, never vLLM's. Python's `getpass.getuser()` reads LOGNAME, USER, LNAME and USERNAME from the
environment and only then asks the password database, which has no entry for such a uid: `KeyError:
'getpwuid(): uid not found: N'` (CPython's getpass.py). torch's inductor names its cache directory after the user
(torch 2.13.0 catches the KeyError there: torch/_inductor/runtime/cache_dir_utils.py). And every cache vLLM and
its libraries write sits under the user's home or XDG_CACHE_HOME unless its own variable moves it: vLLM's
VLLM_CACHE_ROOT (vllm/envs.py, 0.32), FlashInfer's FLASHINFER_WORKSPACE_BASE (its cache is
`<base>/.cache/flashinfer`, flashinfer-python 0.7.4 jit/env.py), Hugging Face's HF_HOME (huggingface_hub 2.4
constants.py), Triton's TRITON_CACHE_DIR, torch's TORCHINDUCTOR_CACHE_DIR. A directory Docker created for a bind
mount belongs to root. Sources: vllm#44548 (OpenShift, `USER` set fixed it), odysseus-dev/odysseus#6157
(`/app/.cache` owned by root).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The variable that moves each library's cache, by a word of the refused path; XDG_CACHE_HOME moves vLLM's and
# Hugging Face's defaults together.
CACHE_VARIABLES = (
    ("flashinfer", "FLASHINFER_WORKSPACE_BASE", "FlashInfer's JIT cache (<base>/.cache/flashinfer)"),
    ("huggingface", "HF_HOME", "Hugging Face's cache"),
    ("triton", "TRITON_CACHE_DIR", "Triton's kernel cache"),
    ("torchinductor", "TORCHINDUCTOR_CACHE_DIR", "torch.compile's cache"),
    ("vllm", "VLLM_CACHE_ROOT", "vLLM's cache"),
)
FALLBACK_VARIABLE = ("XDG_CACHE_HOME", "the caches that default under ~/.cache (vLLM's, Hugging Face's)")


def cache_variable(path: str) -> tuple[str, str] | None:
    """The variable that moves the cache a path is in, and what that cache is, by the path's words (OP-7.19's
    directory it may not write, OP-7.34's full disk)."""
    return next(((name, what) for word, name, what in CACHE_VARIABLES if word in path.lower()), None)


# --- OP-7.18 a uid with no user name ------------------------------------------------------------------


def _check_uid(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.UID_WITHOUT_USER)
    if not events:
        return []
    uid = events[0].message or "?"
    return [
        RULE_UID.finding(
            Severity.CRITICAL,
            f"the process runs as uid {uid}, which has no user name: Python's getpass.getuser() fails without USER",
            summary=f"uid {uid} has no entry in the image's /etc/passwd (OpenShift gives each pod a random uid; "
            "`docker run --user` and runAsUser do the same), so `pwd.getpwuid()` raises KeyError. Python's "
            "`getpass.getuser()` asks the environment first (LOGNAME, USER, LNAME, USERNAME) and the password "
            "database only without them; torch's inductor calls it to name its cache directory while vLLM inspects "
            "the model, so the start fails there.",
            evidence=[c.log_evidence(events[0], name="uid without a user", value=uid)],
            changes=[
                ConfigChange(
                    flag="USER",
                    proposed="<any name, e.g. vllm>",
                    reason="getpass.getuser() returns it without asking the password database",
                    cost="none",
                    kind="env",
                )
            ],
            actions=[
                "Or give the uid a user name: an /etc/passwd entry written at start (nss_wrapper, or an image whose "
                "/etc/passwd its group may write and that adds the uid before the server starts).",
                "torch 2.13's inductor catches this error itself; a vLLM release on it avoids this caller, not others.",
            ],
            confidence=0.9,
        )
    ]


RULE_UID = Rule(
    code="OP-7.18",
    title="the process runs as a uid with no user name",
    category=Category.STARTUP,
    check=_check_uid,
    needs=("events",),
    page=RulePage(
        checks="Python's `KeyError: 'getpwuid(): uid not found: N'`.",
        why="Under an arbitrary uid (OpenShift, `docker run --user`), code that asks for the user's name fails "
        "unless the environment gives one.",
        example="vLLM's model-registry subprocess dying in torch's inductor cache-dir helper on OpenShift; `USER` "
        "set fixed it on v0.24.0 (vllm#44548).",
        fix="USER (or LOGNAME) in the server's environment; or an /etc/passwd entry for the uid.",
        limits="Names the failure, not which library asked (the frames above say).",
        references=["https://github.com/vllm-project/vllm/issues/44548"],
    ),
)


# --- OP-7.19 a cache directory the process may not write -------------------------------------------------


def _check_cache(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.CACHE_NOT_WRITABLE)
    if not events:
        return []
    paths = list(dict.fromkeys(e.message or "?" for e in events))
    library = cache_variable(paths[0])
    variable, what = library or FALLBACK_VARIABLE
    parent = paths[0].rsplit("/", 1)[0] or "/"
    if paths[0].startswith("/."):  # ~ is / itself (/.cache, /.triton): a home never given, never a dir to chown
        return [_homeless_cache(paths, events, library)]
    if events[0].component == "read_only":
        return [_read_only_cache(paths, events, variable, what)]
    if events[0].component == "package":
        return [_package_not_writable(paths, events)]
    return [
        RULE_CACHE.finding(
            Severity.CRITICAL,
            f"the process may not write its cache directory {paths[0]}: permission denied"
            + (f" ({len(paths)} cache directories)" if len(paths) > 1 else ""),
            summary="vLLM and the libraries it runs (FlashInfer, Triton, torch.compile, Hugging Face) write caches "
            "under the user's home or XDG_CACHE_HOME when they start; this one belongs to another user or sits on "
            "a read-only file system, so the engine fails where it first writes there: at start, or at the first "
            "request that compiles a kernel. A directory Docker created for a bind mount (its parent included) is "
            "owned by root, and an image run as another uid cannot write it.",
            evidence=[c.log_evidence(e, name="cache not writable", value=e.message) for e in events[:3]],
            changes=[_cache_moved(variable, what)],
            actions=[
                f"Give the user vLLM runs as ownership of the cache directory: `chown -R <uid>:<gid> {parent}` in the "
                "image or in an init step before the server starts (a bind mount's directory belongs to root).",
                f"Or run the server as the user that owns {parent} (`docker run --user <uid>`, a pod's "
                "securityContext.runAsUser): what the image created belongs to root, and running as root writes it "
                "at the cost of running as root.",
            ],
            confidence=0.85,
        )
    ]


def _read_only_cache(paths: list[str], events: list[LogEvent], variable: str, what: str) -> Finding:
    """A cache on a read-only file system (Errno 30): no owner can write it, so ownership is no fix; the mount is
    (llm-d-incubation/llm-d-modelservice#243: a chart mounted the model volume readOnly, and the Hub's cache in it
    needs its lock files; the reporter mounted a writable volume instead)."""
    return RULE_CACHE.finding(
        Severity.CRITICAL,
        f"the process may not write its cache directory {paths[0]}: it is on a read-only file system",
        summary="vLLM and the libraries it runs write caches when they start (the Hugging Face cache takes lock files "
        "even to read a model already in it); this one sits on a file system mounted read-only (a volume or PVC "
        "mounted readOnly, a container's read-only root, an Apptainer image), so no user can write it.",
        evidence=[c.log_evidence(e, name="cache on a read-only file system", value=e.message) for e in events[:3]],
        changes=[_cache_moved(variable, what)],
        actions=[
            f"Mount what holds {paths[0]} writable (a Kubernetes volumeMount without `readOnly: true`, a chart "
            "value that mounts the model volume read-only, Docker's `:ro`), or mount a writable volume at the "
            "cache directory and keep the models read-only beside it.",
        ],
        confidence=0.85,
    )


# Python's install folders: where a library writing inside its own package writes
_PACKAGES = re.compile(r"^(?P<root>.*?/(?:site|dist)-packages)/(?P<package>[^/]+)")


def _package_not_writable(paths: list[str], events: list[LogEvent]) -> Finding:
    """A library that writes inside its own installed package (FlashInfer links its cubins there) under a user that
    may not write the image's install folders: no cache variable moves it, so the folder's permissions are the fix
    (ai-dynamo/dynamo PR #12770: group write on flashinfer_cubin's cubins for OpenShift's arbitrary uid in group 0)."""
    found = _PACKAGES.match(paths[0])
    folder = f"{found['root']}/{found['package']}" if found else paths[0]
    package = found["package"] if found else "the package"
    return RULE_CACHE.finding(
        Severity.CRITICAL,
        f"the process may not write inside the installed package {package}, where a library keeps files it makes "
        "at run time",
        summary=f"A library writes inside an installed package's folder ({paths[0]}) when it first runs, as "
        "FlashInfer does for the TensorRT-LLM MoE kernels' cubins. The image installed it as root, and the server "
        "runs as another user (a non-root image, OpenShift's arbitrary uid in group 0), so the write is refused "
        "and the engine fails there, at start or at the first request that needs the kernel.",
        evidence=[c.log_evidence(e, name="package not writable", value=e.message) for e in events[:3]],
        actions=[
            f"Let the server's user write that folder in the image: `chgrp -R 0 {folder} && chmod -R g+rwX {folder}` "
            f"for OpenShift's arbitrary uid (group 0), or `chown -R <uid> {folder}` for a fixed uid (ai-dynamo/dynamo "
            "PR #12770 did the first for flashinfer_cubin).",
            "Or run the server as the user that installed the packages (root in most images), at the cost of "
            "running as root.",
        ],
        confidence=0.8,
    )


# What a cache moved to a directory outside a volume costs.
CACHE_REBUILT = "a cache outside a volume is rebuilt at every start (kernels compile again)"


def _cache_moved(variable: str, what: str) -> ConfigChange:
    """The library's own cache variable at a directory the server's user can write."""
    return ConfigChange(
        flag=variable,
        proposed="<a directory the server's user can write, e.g. a volume mounted for it>",
        reason=f"moves {what} out of the directory it may not write",
        cost=CACHE_REBUILT,
        kind="env",
    )


def _homeless_cache(paths: list[str], events: list[LogEvent], library: tuple[str, str] | None) -> Finding:
    """A cache at the root (`/.cache`): the process's HOME is `/`, as under OpenShift's arbitrary uid or in an image
    whose user has no home, so every library's `~/.cache` is a directory that uid may not create. The fix is a home
    (vllm#10185: HOME=/tmp worked) or the library's own cache variable when the path names it, never ownership of
    `/`."""
    change = (
        _cache_moved(*library)
        if library
        else ConfigChange(
            flag="HOME",
            proposed="<a directory the server's user can write: an emptyDir or volume, e.g. /home/vllm; /tmp>",
            reason="every library's ~/.cache then lands there (vllm#10185: HOME=/tmp fixed vLLM on OpenShift)",
            cost=CACHE_REBUILT,
            kind="env",
        )
    )
    return RULE_CACHE.finding(
        Severity.CRITICAL,
        f"the process may not write its cache directory {paths[0]}: its home is / (no home directory for this user)",
        summary="vLLM and the libraries it runs (FlashInfer, Triton, torch.compile, Hugging Face, numba, outlines) "
        "write caches under ~/.cache; here ~ is `/`, which happens when a container runs as a uid the image has no "
        "home for (OpenShift's arbitrary uid, `docker run --user` with a number), and that uid may not create "
        "directories at the root.",
        evidence=[c.log_evidence(e, name="cache not writable", value=e.message) for e in events[:3]],
        changes=[change],
        actions=[
            (
                "Or set HOME to a writable directory (vllm#10185: HOME=/tmp), or point each cache at one: "
                if library
                else "Or point each cache at a writable directory: "
            )
            + "HF_HOME for Hugging Face's, VLLM_CACHE_ROOT for vLLM's own (VLLM_CACHE_ROOT alone leaves Hugging "
            "Face's under ~/.cache/huggingface: vllm#20127), XDG_CACHE_HOME for the rest.",
            "Never make / writable for it: give the uid a home (the image's user, or a mounted directory).",
        ],
        confidence=0.85,
    )


RULE_CACHE = Rule(
    code="OP-7.19",
    title="the process may not write a cache directory",
    category=Category.STARTUP,
    check=_check_cache,
    needs=("events",),
    page=RulePage(
        checks="`[Errno 13] Permission denied` or `[Errno 30] Read-only file system` on a path with `cache` in it or "
        "inside an installed package (site-packages, dist-packages), or "
        "Triton's `.triton` and inductor's `torchinductor_` directories (their caches' parents).",
        why="vLLM and FlashInfer, Triton, torch.compile and Hugging Face write caches at start; a directory owned "
        "by root or read-only stops the engine.",
        example="`PermissionError: [Errno 13] Permission denied: '/app/.cache/vllm'` and the same for flashinfer, "
        "then `Engine core initialization failed`: Docker had created /app/.cache as root for a bind mount "
        "(odysseus-dev/odysseus#6157).",
        fix="The directory owned by the server's user; or the library's cache variable (VLLM_CACHE_ROOT, "
        "FLASHINFER_WORKSPACE_BASE, HF_HOME, TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, XDG_CACHE_HOME) at a "
        "writable directory; or the server run as the directory's owner (`docker run --user`). Inside an installed "
        "package no variable moves the write: the folder's permissions in the image (ai-dynamo/dynamo PR #12770).",
        limits="Reads paths with `cache` in them or inside site-packages; another path on a read-only file system is "
        "OP-7.165's, and a model directory or a log file it may not write for a permission is another error, read "
        "as such.",
        references=[
            "https://github.com/odysseus-dev/odysseus/issues/6157",
            "https://github.com/ai-dynamo/dynamo/pull/12770",
        ],
    ),
)

# --- OP-7.165 another path on a read-only file system -------------------------------------------------------


def _read_only_finding(facts: Facts, event: LogEvent, match: object) -> Finding:
    path = event.message or "?"
    return RULE_READ_ONLY.finding(
        Severity.HIGH,
        f"{path} is on a read-only file system where the process runs: a container image or a mount that is not "
        "writable there",
        summary="The write was refused by the file system, not by a permission: inside a container the image's own "
        "files are read-only under Apptainer/Singularity (and under Docker's `--read-only` or a pod's "
        "readOnlyRootFilesystem), and a host directory is writable there only where it is bound in writable.",
        evidence=[c.log_evidence(event, name="read-only path", value=path)],
        actions=[
            f"Bind the host directory that should hold {path} into the container writable: Apptainer/Singularity "
            "`-B <host dir>:<host dir>` (or the site's bindings module), Docker `-v <host dir>:<dir>` without `:ro`, "
            "a pod volumeMount without `readOnly: true`.",
            "Or write it somewhere the container can: a directory under a writable mount, or $HOME/$TMPDIR where "
            "those are bound.",
        ],
        confidence=0.7,
    )


RULE_READ_ONLY = Rule(
    code="OP-7.165",
    title="a path on a read-only file system",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.PATH_READ_ONLY, _read_only_finding),
    needs=("events",),
    page=RulePage(
        checks="`[Errno 30] Read-only file system: '<path>'` on a path that is not a cache's (OP-7.19 reads those).",
        why="Inside a container, paths outside the writable mounts are read-only, and whatever writes there stops.",
        example="`Error: [Errno 30] Read-only file system: '/scratch/project_…/h5-env'` creating a venv inside "
        "LUMI's vLLM Singularity image, whose file systems were not bound in (Lumi-supercomputer/LUMI-AI-Guide#46: "
        "the maintainers fixed the guide with the site's bindings module).",
        fix="Bind the directory in writable (Apptainer `-B`, Docker `-v` without `:ro`, a volumeMount without "
        "readOnly), or write elsewhere.",
        limits="The words do not say which mount is read-only; `mount | grep <path>` inside the container does.",
        references=["https://github.com/Lumi-supercomputer/LUMI-AI-Guide/issues/46"],
    ),
)

# --- OP-7.170 a library the process's user may not read ------------------------------------------------------------


def _unreadable_library_finding(facts: Facts, event: LogEvent, match: object) -> Finding:
    path = event.message or "?"
    in_root_home = path.startswith("/root/")
    return RULE_UNREADABLE_LIBRARY.finding(
        Severity.CRITICAL,
        f"the process's user may not read {path.rsplit('/', 1)[-1]}"
        + (": it lies under /root, the home of the user the image was built as" if in_root_home else ""),
        summary="The loader found the library and was refused it (Permission denied): the process runs as a user "
        "without read access to it. An image that installed its Python under root's home (uv's managed Pythons go "
        "to ~/.local/share/uv/python) breaks when it runs as another uid: `--user`, Kubernetes' runAsUser, "
        "OpenShift's random uid.",
        evidence=[c.log_evidence(event, name="unreadable library", value=path)],
        actions=[
            "Run the container as the user the image was built for (root here), or make the tree readable to the "
            "user it runs as: in a derived image, `RUN chown -R <uid>:<gid> <the venv> /root` or `chmod -R o+rX` on "
            "it (vllm#15174's commenter chowned /opt/venv and /root to uid 1000).",
            "Or build the image with its Python outside any home directory (uv's UV_PYTHON_INSTALL_DIR, a system "
            "Python), so any uid can read it.",
        ],
        confidence=0.8,
    )


RULE_UNREADABLE_LIBRARY = Rule(
    code="OP-7.170",
    title="a shared library the process's user may not read",
    category=Category.STARTUP,
    check=c.on_kind(LogEventKind.LIBRARY_UNREADABLE, _unreadable_library_finding),
    needs=("events",),
    page=RulePage(
        checks="The loader's `error while loading shared libraries: <path>: cannot open shared object file: "
        "Permission denied`.",
        why="The library is there; the user the process runs as may not read it, which happens when an image built "
        "as root runs as another uid.",
        example="`python3: error while loading shared libraries: /root/.local/share/uv/python/cpython-3.12.9-…/lib/"
        "libpython3.12.so.1.0: cannot open shared object file: Permission denied` running vllm-openai v0.8.1 as uid "
        "1000 (vllm#15174).",
        fix="Run as the image's user, or make the tree readable (chown, chmod), or install Python outside a home.",
        limits="Reads the loader's words; which uid the process runs as is `id` inside the container.",
        references=["https://github.com/vllm-project/vllm/issues/15174"],
    ),
)

RULES: list[Rule] = [RULE_UID, RULE_CACHE, RULE_READ_ONLY, RULE_UNREADABLE_LIBRARY]
