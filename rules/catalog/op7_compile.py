"""OP-7.49: torch.compile failed where vLLM compiles the model at start.

Why a rule of its own: vLLM's V1 engine compiles the model with torch.compile before it serves (the log's "Dynamo
bytecode transform time" and "Compiling a graph for … takes" lines), and a failure there surfaces as torch's
exceptions, not vLLM's: Dynamo's `BackendCompilerFailed` around whatever the backend raised, Inductor's
`InductorError`, Dynamo's `Unsupported`. Their words name a compiler internal that tells an operator little; what
helps is what vLLM's maintainers answer for them (docs/environment-failures.md has the threads): compiling nothing
gets the server up and proves the compiler is at fault (`--enforce-eager`, vllm#15722), a PyTorch other than the one
vLLM pins is a frequent cause (vllm#25604 went away on torch 2.8, vllm#28982 is torch 2.9 under a vLLM built for 2.8),
and vLLM's own cache of compiled graphs under ~/.cache/vllm/torch_compile_cache can hold an artifact a failed
compilation left broken (vLLM says so itself: "a previous compilation failed, leading to a corrupted compilation
artifact", vllm/compilation/compiler_interface.py, 0.32; vllm#18851).
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

COMPILE_CACHE = "~/.cache/vllm/torch_compile_cache"  # VLLM_CACHE_ROOT's default, vllm/envs.py (0.32)
_STAGES = {"backend": "its compiler backend", "inductor": "Inductor", "dynamo": "Dynamo"}

_EAGER = ConfigChange(
    flag="--enforce-eager",
    proposed="true",
    reason="vLLM compiles nothing and captures no CUDA graphs: the model runs as PyTorch code, so the server starts "
    "whatever the compiler's fault",
    cost="slower decode (no CUDA graphs), most at small batches; a way around the failure, not its fix",
)
_CLEAR_CACHE = ConfigChange(
    flag="VLLM_DISABLE_COMPILE_CACHE",
    proposed="1",
    reason="vLLM neither loads nor saves compiled graphs, so an artifact a failed compilation left is never read",
    cost="every start compiles again (tens of seconds to minutes)",
    kind="env",
)
_VERSIONS = (
    "Check that torch and triton are the versions the installed vLLM pins (`pip show vllm torch triton`; "
    "vLLM's wheel requires one torch exactly): a torch installed after vLLM is the most frequent cause of "
    "Dynamo's and Inductor's errors under it."
)
_CACHE = (
    f"Remove vLLM's compile cache ({COMPILE_CACHE}, or torch_compile_cache under VLLM_CACHE_ROOT) and start again, "
    "or run once with VLLM_DISABLE_COMPILE_CACHE=1: a graph cached by a failed or older compilation is read back "
    "at every start."
)


def _check(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TORCH_COMPILE_FAILED)
    if not events:
        return []
    host = next((e for e in events if e.component in ("no_triton", "gpu_too_old")), None)
    if host is not None:
        return [_host_finding(host)]
    cache = next((e for e in events if e.component == "cache"), None)
    return [_cache_finding(cache) if cache is not None else _compile_finding(events[0])]


def _host_finding(event: LogEvent) -> Finding:
    """Inductor refused before compiling: no Triton it can use, or a GPU older than Triton supports."""
    if event.component == "gpu_too_old":
        return RULE.finding(
            Severity.CRITICAL,
            f"the GPU (compute capability {event.message}) is older than Triton supports (7.0): torch.compile "
            "cannot compile for it",
            summary="Inductor compiles through Triton, which supports compute capability 7.0 and newer; vLLM's own "
            "installation guide asks 7.0 or higher (7.5 in current releases), so a Pascal GPU (6.x: P40, P100, GTX "
            "10xx) is below both.",
            evidence=[c.log_evidence(event, name="GPU's compute capability", value=event.message)],
            changes=[_EAGER],
            actions=[
                "`--enforce-eager` skips torch.compile, the step that refused; vLLM's own Triton kernels (some "
                "attention and MoE paths) need 7.0 as well, so a start past this point is not a supported one.",
                "Serve on a GPU of compute capability 7.0 or newer; community builds for Pascal exist outside vLLM's "
                "releases, at their own risk.",
            ],
            confidence=0.9,
        )
    return RULE.finding(
        Severity.CRITICAL,
        "torch.compile found no working Triton: it is not installed, or older than this torch needs",
        summary="Inductor compiles vLLM's model through Triton on CUDA and checks it can import a Triton recent "
        "enough first; PyTorch's CUDA wheels for Linux x86_64 require the Triton release they were built with.",
        evidence=[c.log_evidence(event, name="Triton", value=event.message)],
        changes=[_EAGER],
        actions=[
            'Install the Triton the installed torch requires: its metadata names it (`python -c "import '
            "importlib.metadata as m; print([r for r in m.requires('torch') if r.startswith('triton')])\"`), then "
            "`pip install triton==<that version>`; a torch that requires none is a CPU build (OP-7.48's reading).",
            _VERSIONS,
        ],
        confidence=0.85,
    )


def _cache_finding(event: LogEvent) -> Finding:
    checksum_mismatch = "checksum" in (event.message or "")  # torch's check of a saved artifact's bytes
    actions = [
        _CACHE,
        "If the start fails again with the cache gone, the error it prints then is the compiler's own: "
        + _VERSIONS[0].lower()
        + _VERSIONS[1:],
        "With TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 set, torch 2.7 and older fail with the same words "
        "(vllm#21858, fixed in torch 2.8): unset it, or set VLLM_DISABLE_COMPILE_CACHE=1 beside it.",
    ]
    if checksum_mismatch:
        actions.append(
            "Where several servers or jobs start at once on one machine or shared home directory, give each its "
            "own VLLM_CACHE_ROOT (or VLLM_DISABLE_COMPILE_CACHE=1) so none reads another's half-written artifact."
        )
    return RULE.finding(
        Severity.CRITICAL,
        "vLLM's torch.compile cache holds an artifact whose bytes changed (written by two processes at once, or "
        "left by a failed compilation): it cannot load the compiled graph"
        if checksum_mismatch
        else "vLLM's torch.compile cache holds an artifact a failed compilation left: it cannot load the compiled "
        "graph",
        summary="vLLM caches the graphs it compiles and reads them back at the next start; "
        + (
            "torch's checksum of a saved artifact says its bytes changed since it was written: several processes "
            "sharing one cache directory wrote it at once (ray PR #59319: Ray's tests starting vLLM engines on one "
            "~/.cache/vllm), or a failed compilation left it half-written."
            if checksum_mismatch
            else "its words say the artifact found there is broken, most often because an earlier compilation failed."
        )
        + " The real error, if any, shows once the cache is gone.",
        evidence=[c.log_evidence(event, name="compile cache", value=event.message)],
        changes=[_CLEAR_CACHE],
        actions=actions,
        confidence=0.97,  # the words name the cache
    )


def _compile_finding(event: LogEvent) -> Finding:
    stage = _STAGES.get(event.component or "", "torch.compile")
    said = f": {event.message[:160]}" if event.message else ""
    return RULE.finding(
        Severity.CRITICAL,
        f"torch.compile failed in {stage} while vLLM compiled the model{said}",
        summary="vLLM compiles the model with torch.compile before it serves; the compiler, not the model's "
        "weights or vLLM's flags, raised. Serving without compilation proves it and gets the server up; the cause is "
        "most often a torch that is not the one vLLM pins, or a cached graph from an earlier failure.",
        evidence=[c.log_evidence(event, name=f"torch.compile ({stage})", value=event.message or stage)],
        changes=[_EAGER],
        actions=[
            _VERSIONS,
            _CACHE,
            "On vLLM 0.32, `-cc.mode=none` turns off compilation alone and keeps CUDA graphs (faster than "
            "--enforce-eager); older releases spell the compilation level otherwise.",
            "If it fails with the pinned versions and no cache, report it to vLLM with the model, the release and the "
            "whole traceback (TORCH_LOGS=+dynamo shows what was being compiled).",
        ],
        confidence=0.75,
    )


RULE = Rule(
    code="OP-7.49",
    title="torch.compile failed where vLLM compiles the model",
    category=Category.STARTUP,
    check=_check,
    needs=("events",),
    page=RulePage(
        checks="torch's `BackendCompilerFailed: backend=… raised:`, `InductorError: …`, `LoweringException: …`, "
        "Inductor's `Cannot find a working triton installation` and `… too old to be supported by the triton GPU "
        "compiler …`, "
        "`torch._dynamo.exc.Unsupported` / `InternalTorchDynamoError` / `TorchRuntimeError`; vLLM's `failed to get "
        "the hash of the compiled graph` and `a previous compilation failed, leading to a corrupted compilation "
        "artifact` (a broken compile cache).",
        why="vLLM's V1 engine compiles the model before serving; the compiler's exceptions name its internals, "
        "while the operator's levers are compiling nothing, the torch version vLLM pins, and vLLM's compile cache.",
        example="`torch._inductor.exc.InductorError: AssertionError: type(self)=<class "
        "'torch._inductor.scheduler.Scheduler'>` with torch 2.9 under a vLLM built for torch 2.8 (vllm#28982).",
        fix="`--enforce-eager` to serve (and to prove the compiler is at fault); torch and triton as vLLM pins them; "
        f"{COMPILE_CACHE} removed, or VLLM_DISABLE_COMPILE_CACHE=1 (vLLM's own advice for a broken artifact).",
        limits="The exception says the compiler failed, not why: a model bug, a torch mismatch and a stale cache read "
        "the same; `-cc.mode=none` is 0.32's spelling (the `level` key of older releases is refused there).",
        references=[
            "https://github.com/vllm-project/vllm/issues/18851",
            "https://github.com/vllm-project/vllm/issues/21858",
            "https://github.com/vllm-project/vllm/issues/25604",
            "https://github.com/vllm-project/vllm/issues/28982",
            "https://github.com/vllm-project/vllm/issues/15722",
        ],
    ),
)

RULES: list[Rule] = [RULE]
