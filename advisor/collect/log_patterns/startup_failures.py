"""The errors that stop a server from starting: KV cache too small, memory, CUDA OOM, engine core.

Each wording carries the numbers OP-1 proposes its flag values from (the KV needed and
available, free and requested memory, what the allocation tried); CUDA out-of-memory is tagged
with its phase where the text says it.
"""

from __future__ import annotations

import re

from advisor.catalog.vllm_interface import flags_taking, is_flag, is_model_type, nearest_flag
from advisor.collect.log_patterns.pattern import NUM, Fields, Pattern, to_float, to_gib, to_int, wording
from advisor.collect.refused_names import flag_releases
from rules.catalog.op7_json_flag import CONFIG_INVALID
from rules.events import NVML_ASSERT_OOM, RAY_UNKNOWN_ENGINE_ARGUMENT, ZMQ_CLOSED_SOCKET, OomPhase
from rules.events import LogEventKind as K


def _memory_below_requested(match: re.Match[str]) -> Fields:
    """vLLM's start-up memory check, worded for a GPU or a CPU NUMA node; the fraction is
    --gpu-memory-utilization on both (it also sets CPU memory on the CPU backend)."""
    return {
        "free_gib": to_float(match["free"]),
        "total_gib": to_float(match["total"]),
        "gpu_memory_utilization": to_float(match["util"]),
        "requested_gib": to_float(match["req"]),
    }


_OTHER_PROCESS = re.compile(rf"\bProcess \d+ has (?P<amount>{NUM}) (?P<unit>[KMG]iB) memory in use")


def _allocator_numbers(match: re.Match[str]) -> Fields:
    """torch's allocator's numbers, in either of its wordings (torch >= 2.1's `GPU 0 has a total capacity of …`, and
    torch < 2.1's and torch_npu's `(GPU 0; … total capacity; … already allocated; … free; …)`): the same named
    groups, the same fields."""
    return {
        "tried_to_allocate_gib": to_gib(match["try"], match["tu"]),
        "total_gib": to_float(match["total"]),
        "free_gib": to_gib(match["free"], "B" if match["fu"] == "bytes" else match["fu"]),
        "torch_allocated_gib": to_gib(match["torch"], "B" if match["tau"] == "bytes" else match["tau"])
        if match["torch"]
        else None,
    }


def _other_processes_gib(text: str) -> float:
    """What every other process torch names on the GPU holds, summed (it lists each on its own)."""
    return sum(to_gib(m["amount"], m["unit"]) or 0.0 for m in _OTHER_PROCESS.finditer(text))


def _model_not_found(match: re.Match[str]) -> Fields:
    """Which of the words, and the path or id they quote."""
    reason = match.lastgroup or ""  # the empty group that ends each alternative names it
    model = match[f"{reason}_model"]
    if reason == "vllm_path":  # transformers' words mean what vLLM's own do, unless the name is empty
        reason = "vllm" if model else "empty"
    if reason == "vllm_config":  # AutoConfig's words, the same reading
        reason = "vllm"
    if reason == "hf_fs":  # the Hub's file system's words for the Hub's validator's refusal
        reason = "repo_id"
    if reason == "modelscope_404":  # the hub's API in requests' words: the same missing model on ModelScope
        reason = "modelscope"
    return {"message": reason, "model": model, "component": match["file"] or match["no_code_file"]}


def _python_script(words: list[str]) -> str | None:
    """The script of a Python command line appended after the interpreter's own options (`-u main.py`): a `.py`
    word that is no flag's value (`--tool-parser-plugin parser.py` is one)."""
    return next(
        (w for i, w in enumerate(words) if w.endswith(".py") and i and not words[i - 1].startswith("--")),
        None,
    )


_ONE_DASH_FLAG = re.compile(r"^-[a-z][a-z0-9]+(?:-[a-z0-9]+)*(?:=|$)")


def _unrecognized(match: re.Match[str]) -> Fields:
    """The first argument vLLM's command line does not take: a program when the arguments start with one (a
    command appended to an image whose entrypoint is vLLM's server), else the first unknown flag and the flag it
    misspells."""
    words = match["args"].split()
    if words and not words[0].startswith("-"):
        return {"message": match["args"], "component": words[0]}
    script = _python_script(words)
    if script:
        return {"message": match["args"], "component": script}
    flags = [w.split("=", 1)[0] for w in words if w.startswith("--")]
    # a long flag typed with one dash (`-port 8000`, vast-data/VUA#7) is no flag argparse knows, and names the one
    # it misses a dash of
    named = (w.split("=", 1)[0] for w in words if _ONE_DASH_FLAG.match(w))
    single = next((name for name in named if is_flag("-" + name)), None)
    if single is not None:
        return {"message": match["args"], "component": single, "nearest_flag": "-" + single}
    unknown = next((w for w in flags if not is_flag(w)), None)
    refused = unknown or (flags[0] if flags else None)  # every flag vLLM 0.32 knows: the server is another release
    releases = flag_releases(refused) if refused else None
    return {
        "message": match["args"],
        "component": refused,
        "nearest_flag": nearest_flag(unknown) if unknown else None,
        "known_in_release": releases.known_in_release if releases else None,
        "known_releases": releases.known_releases if releases else None,
    }


def _engine_kwarg(match: re.Match[str]) -> Fields:
    """Ray Serve LLM's refusal of an engine_kwargs key, read as the command-line flag of the same engine argument:
    the same field of vLLM's engine arguments, so the same releases took it."""
    flag = "--" + match["key"].replace("_", "-")
    releases = flag_releases(flag)
    return {
        "message": match.group(0),
        "component": flag,
        "nearest_flag": None if is_flag(flag) else nearest_flag(flag),
        "known_in_release": releases.known_in_release,
        "known_releases": releases.known_releases,
    }


def _value_refused(match: re.Match[str]) -> Fields:
    """What argparse refused of a flag: its value's type, its choice, or a value missing altogether."""
    if match["missing"]:
        return {"component": match["flag"], "message": "missing_value"}
    if match["choice"] is not None:
        choices = match["choices"].replace("'", "")
        return {
            "component": match["flag"],
            "message": "invalid_choice",
            "argument_value": match["choice"],
            "accepted_instead": choices,
        }
    if match["config"]:
        return {"component": match["flag"], "message": CONFIG_INVALID, "accepted_instead": match["config"]}
    return {
        "component": match["flag"],
        "message": "invalid_value",
        "argument_value": match["value"] if match["value"] is not None else match["dvalue"],
        "accepted_instead": match["type"] or match["dtype"],
    }


# pydantic's words for a value outside a Literal field's list: the listed values, and the value refused
_LITERAL_REFUSED = r"Input should be (?P<allowed>.+?) \[type=literal_error, input_value=(?P<value>.+?), input_type=\w+"


def _listed_values(match: re.Match[str]) -> list[str]:
    """The values a Literal field lists, as pydantic words them (`'a', 'b' or 'c'`), unquoted."""
    return [value.strip("'\"") for value in re.split(r", | or ", match["allowed"])]


def _config_value_refused(match: re.Match[str]) -> Fields | None:
    """pydantic refusing a config field's value outside its Literal (the LLM class, a YAML config, code that builds
    vLLM's configs): the error lists the values, not the flag, so the values name it; none named, no event (a
    request's schema refuses values in the same words, OP-5.28's; FIELD_CHOICE_REFUSED reads the detail line)."""
    allowed = _listed_values(match)
    flags = flags_taking(allowed)
    if not flags:
        return None
    return {
        "component": " or ".join(flags),
        "message": "config_choice",
        "argument_value": match["value"].strip("'\""),
        "accepted_instead": ", ".join(allowed),
    }


def _field_choice_refused(match: re.Match[str]) -> Fields | None:
    """pydantic's detail line for a value outside a field's fixed list, pasted alone, whose values no flag of vLLM's
    takes: another program's field (a wrapper's configuration around vLLM, PaddlePaddle/PaddleOCR#16897's `backend`)
    or a request's; inside an error body or a framework's message it is a request's refusal, OP-5.28's."""
    allowed = _listed_values(match)
    if flags_taking(allowed) or not match.string.lstrip().startswith("Input should be"):
        return None
    return {"argument_value": match["value"].strip("'\""), "accepted_instead": ", ".join(allowed)}


def _model_type(match: re.Match[str]) -> Fields | None:
    """A bare KeyError on a configuration's model type (the interface table's: the transformers installed beside vLLM
    0.32, and vLLM's own registry), read as transformers' error naming it; a short word (`opt`, `git`) could be any
    dict's key, so it needs a digit or five letters."""
    key = match["key"]
    if not is_model_type(key) or (len(key) < 5 and not any(ch.isdigit() for ch in key)):
        return None
    return {"message": match.group(0).strip(), "model": key}


PATTERNS: tuple[Pattern, ...] = (
    wording(  # transformers' CONFIG_MAPPING[model_type] in a release that predates the model (gpustack/gpustack#1510:
        # `KeyError: 'gemma3'` loading Gemma 3 with the transformers of an older vLLM image)
        ("KeyError: ",),
        K.MODEL_TYPE_UNKNOWN,
        r"KeyError: ['\"](?P<key>[a-z][a-z0-9_-]*)['\"]\s*$",
        _model_type,
    ),
    wording(  # argparse's refusal, as `vllm serve`, the api_server module or a wrapper's parser prints it; retyped
        # without its spaces and quoted (self-llm#459: `“vllm:error:unrecognized arguments:--enable-reason”`)
        ("error: unrecognized arguments: ", "error:unrecognized arguments:"),
        K.ARGS_UNRECOGNIZED,
        r"error: ?unrecognized arguments: ?(?P<args>.+?)[\s\"'”’]*$",
        _unrecognized,
    ),
    wording(  # Ray Serve LLM checks each engine_kwargs key against the installed vLLM's engine and front-end argument
        # fields and refuses the first it lacks (ray-project/ray#64466: `task`, removed from vLLM, in Ray's guide)
        (RAY_UNKNOWN_ENGINE_ARGUMENT,),
        K.ARGS_UNRECOGNIZED,
        re.escape(RAY_UNKNOWN_ENGINE_ARGUMENT) + r"(?P<key>[A-Za-z_]\w*)",
        _engine_kwarg,
    ),
    wording(  # argparse taking an option this vLLM lacks for the start of several it has (`allow_abbrev`): `vllm serve`
        # without --model (the model is positional) given --model from a --config YAML's `model:` key (vllm PR #18999)
        ("error: ambiguous option: ",),
        K.ARGS_AMBIGUOUS,
        r"error: ambiguous option: (?P<option>--?[\w-]+)(?:=\S*)? could match (?P<flags>--?[\w-]+(?:, --?[\w-]+)*)",
        lambda m: {"message": m["option"], "component": m["flags"]},
    ),
    wording(  # argparse's stop for an argument it requires, with the program it parses for (`vllm serve`)
        ("error: the following arguments are required: ",),
        K.ARGS_REQUIRED,
        r"(?:(?P<prog>[\w. -]+?): )?error: the following arguments are required: (?P<args>.+?)\s*$",
        lambda m: {"message": m["args"], "component": m["prog"]},
    ),
    wording(  # the program to start is not on the PATH: the container runtime's words (Go's os/exec error, as runc
        # and so Docker and the kubelet print it), and bash's, dash's and zsh's
        (
            "executable file not found in $PATH",
            "not found in $PATH",
            "command not found",
            ": not found",
            "No such file or directory: '",
        ),
        K.COMMAND_NOT_FOUND,
        r'exec: "(?P<exec>[^"]+)": executable file not found in \$PATH'
        # CRI-O's words for the same (production-stack#869: `container create failed: executable file
        # `lmcache_experimental_server` not found in $PATH`)
        r"|executable file `(?P<crio>[^`]+)` not found in \$PATH"
        r"|^(?:\S*(?:bash|sh): (?:line \d+: |\d+: )?)(?P<shell>[\w./-]+): (?:command )?not found\s*$"
        r"|zsh: command not found: (?P<zsh>[\w./-]+)\s*$"
        # Python's subprocess starting a program by a path in a bin directory that does not exist (a launcher
        # running `/usr/local/bin/vllm` in an image without vLLM, gpustack/gpustack#363)
        r"|\[Errno 2\] No such file or directory: '(?:[^']*/)?bin/(?P<python>[\w.-]+)'\s*$",
        lambda m: {
            "message": m["exec"] or m["crio"] or m["shell"] or m["zsh"] or m["python"],
            "component": "the container runtime"
            if m["exec"] or m["crio"]
            else "Python's subprocess"
            if m["python"]
            else "the shell",
        },
    ),
    wording(  # Podman's init (catatonit, `podman run --init`, RamaLama's containers) could not start the container's
        # command: ENOENT for the program or its script's interpreter (containers/ramalama#2214, no cause confirmed)
        ("failed to exec pid1",),
        K.COMMAND_NOT_FOUND,
        r"\(catatonit:\d+\): failed to exec pid1: No such file or directory",
        lambda m: {"message": None, "component": "Podman's init (catatonit)"},
    ),
    wording(  # the program is there but may not be run by this user: a shell's or the container runtime's EACCES
        # (vllm#15461: `/bin/sh: 1: vllm: Permission denied` under OpenShift's arbitrary uid)
        (": Permission denied", ": permission denied"),
        K.COMMAND_NOT_FOUND,
        r'exec: "(?P<exec>[^"]+)": permission denied'
        r"|^(?:\S*(?:bash|sh): (?:line \d+: |\d+: )?)(?P<shell>[\w./-]+): Permission denied\s*$"
        # a script whose interpreter (its #! line) this user may not run: vLLM 0.8's image, its venv's python a link
        # into root's home (vllm PR #15302: `/opt/venv/bin/vllm: /opt/venv/bin/python3: Permission denied`)
        r"|^/[\w./-]+: (?P<interpreter>/[\w./-]+): (?:bad interpreter: )?Permission denied\s*$",
        lambda m: {
            "message": m["exec"] or m["shell"] or m["interpreter"],
            "component": "the container runtime" if m["exec"] else "the shell",
            "error_code": "EACCES",
        },
    ),
    wording(  # argparse refusing a flag's value: of the wrong type, not among its choices, or missing
        ("error: argument ",),
        K.ARG_VALUE_REFUSED,
        # (a value quoted in backticks may lose its closing quote to the paste: `… value: '8000:8000``, vllm#2235)
        r"error: argument (?P<flag>-[\w-]+)(?:/-[\w-]+)*: "
        r"(?:invalid (?P<type>\w+) value: '(?P<value>[^'`]*)(?:'|`?\s*$)"
        # a value holding single quotes, which Python's repr puts in double ones (a dict's repr given to a JSON flag)
        r"|invalid (?P<dtype>\w+) value: \"(?P<dvalue>[^\"]*)\""
        # a JSON flag's value pydantic refused for its config class (`--compilation-config 3` in vLLM 0.11 on)
        r"|\d+ validation errors? for (?P<config>\w+Config)\b"
        r"|invalid choice: '(?P<choice>[^']*)' \(choose from (?P<choices>.*)\)|(?P<missing>expected one argument))",
        _value_refused,
    ),
    wording(  # pydantic's words for a value outside a config field's Literal (vllm-project/vllm-omni PR #1397: a
        # rank-48 adapter made max_lora_rank 48, which LoRAConfig's MaxLoRARanks does not list)
        ("type=literal_error",),
        K.ARG_VALUE_REFUSED,
        _LITERAL_REFUSED,
        _config_value_refused,
    ),
    wording(  # the same words for a field no flag of vLLM's is (PaddlePaddle/PaddleOCR#16897: PaddleX's `backend`)
        ("type=literal_error",),
        K.FIELD_CHOICE_REFUSED,
        _LITERAL_REFUSED,
        _field_choice_refused,
    ),
    wording(
        ("To serve at least one request",),
        K.MAX_MODEL_LEN_TOO_LARGE,
        r"To serve at least one request with the models?'s max seq len \((?P<len>[\d,]+)\), "
        rf"\(?(?P<need>{NUM}) GiB KV cache is needed, which is larger than the available KV cache memory "
        rf"\((?P<avail>{NUM}) GiB\)(?:.*?estimated maximum model length is (?P<est>[\d,]+))?",
        lambda m: {
            "max_model_len": to_int(m["len"]),
            "kv_needed_gib": to_float(m["need"]),
            "available_kv_gib": to_float(m["avail"]),
            "estimated_max_model_len": to_int(m["est"]),
        },
    ),
    wording(  # the same refusal as people retell it, the GiB kept and the length dropped (allenai/olmocr#269:
        # `ValueError: 1.75 GiB KV cache is needed, available 0.13 GiB`, two --gpu-memory-utilization flags)
        ("KV cache is needed, available",),
        K.MAX_MODEL_LEN_TOO_LARGE,
        rf"(?P<need>{NUM}) GiB KV cache is needed, available (?P<avail>{NUM}) GiB",
        lambda m: {"kv_needed_gib": to_float(m["need"]), "available_kv_gib": to_float(m["avail"])},
    ),
    wording(
        ("maximum number of tokens that can be stored",),
        K.V0_MAX_SEQ_LEN_TOO_LARGE,
        r"The model's max seq len \((?P<len>[\d,]+)\) is larger than the maximum number of tokens that can be "
        r"stored in KV cache \((?P<kv>[\d,]+)\)",
        lambda m: {"max_model_len": to_int(m["len"]), "max_seq_len_tokens": to_int(m["kv"])},
    ),
    wording(
        ("No available memory for the cache blocks",), K.NO_CACHE_BLOCKS, r"No available memory for the cache blocks"
    ),
    wording(
        ("less than desired GPU memory utilization",),
        K.FREE_MEMORY_BELOW_REQUESTED,
        rf"Free memory on device(?: \S+)? \((?P<free>{NUM})/(?P<total>{NUM}) GiB\) on startup is less than "
        rf"desired GPU memory utilization \((?P<util>{NUM}), (?P<req>{NUM}) GiB\)",
        _memory_below_requested,
    ),
    wording(  # vLLM's CPU backend (v1/worker/cpu_worker.py, 0.32): the same check against the NUMA node's memory
        ("less than desired CPU memory utilization",),
        K.FREE_MEMORY_BELOW_REQUESTED,
        rf"Available memory on node \d+ \((?P<free>{NUM})/(?P<total>{NUM}) GiB\) on startup is less than "
        rf"desired CPU memory utilization \((?P<util>{NUM}), (?P<req>{NUM}) GiB\)",
        lambda m: {**_memory_below_requested(m), "device": "CPU"},
    ),
    wording(
        ("Error in memory profiling",),
        K.MEMORY_PROFILING_ERROR,
        rf"Error in memory profiling\. Initial free memory (?P<a>{NUM}) ?GiB, current free memory (?P<b>{NUM}) ?GiB",
        lambda m: {"initial_free_gib": to_float(m["a"]), "current_free_gib": to_float(m["b"])},
    ),
    wording(
        ("Failed to load model - not enough GPU memory",),
        K.CUDA_OOM,
        r"Failed to load model - not enough GPU memory",
        lambda m: {"oom_phase": OomPhase.WEIGHT_LOAD},
    ),
    wording(  # a paste cut after the count (llm-d/llm-d#787: `… warming up sampler with 1024 `) still names it
        ("out of memory occurred when warming up",),
        K.CUDA_OOM,
        r"out of memory occurred when warming up (?:sampler|pooler).*? with (?P<n>\d+)(?: dummy requests|\s*$)",
        lambda m: {"oom_phase": OomPhase.SAMPLER_WARMUP, "num_dummy_requests": int(m["n"])},
    ),
    wording(  # ROCm's PyTorch words it the same with HIP for CUDA; a paste may begin at "Tried to allocate" (its first
        # sentence left on the line above, or cut), and the allocator's numbers after it are torch's OOM all the same
        ("CUDA out of memory", "HIP out of memory", "Tried to allocate"),
        K.CUDA_OOM,
        rf"(?:(?P<dev>CUDA|HIP) out of memory\. |^)Tried to allocate (?P<try>{NUM}) (?P<tu>[KMG]iB)\. GPU \d+ has a "
        rf"total capac(?:i)?ty of (?P<total>{NUM}) GiB of which (?P<free>{NUM}) (?P<fu>[KMG]iB|bytes) is free\."
        # torch's own account, when the line goes on (torch >= 2.1): other processes, then this one's allocations
        rf"(?P<others>.*?\bProcess \d+ has {NUM} [KMG]iB memory in use)?"
        rf"(?:.*?this process has (?P<mine>{NUM}) (?P<mu>[KMG]iB)(?: memory)? in use)?"
        rf"(?:.*?Of the allocated memory (?P<torch>{NUM}) (?P<tau>[KMG]iB) is allocated by PyTorch)?",
        lambda m: {
            **_allocator_numbers(m),
            "other_processes": bool(m["others"]),
            "other_processes_gib": _other_processes_gib(m.string) if m["others"] else None,
            "this_process_gib": to_gib(m["mine"], m["mu"]) if m["mine"] else None,
            "device": "HIP" if m["dev"] == "HIP" else None,
        },
    ),
    wording(  # torch before 2.1 (`(GPU 0; 15.78 GiB total capacity; …)`), and torch_npu's allocator, which still
        # words it so (`NPU out of memory. Tried to allocate 3.47 GiB (NPU 0; 60.97 GiB total capacity; …)`), as does
        # Intel's extension for an XPU, without the free figure (`XPU out of memory. Tried to allocate 1.02 GiB (GPU 0;
        # 15.56 GiB total capacity; 0 bytes already allocated; 0 bytes reserved in total by PyTorch)`)
        ("out of memory. Tried to allocate",),
        K.CUDA_OOM,
        rf"(?P<dev>CUDA|NPU|XPU|HIP) out of memory\. Tried to allocate (?P<try>{NUM}) (?P<tu>[KMG]iB) \((?:GPU|NPU) "
        rf"\d+; (?P<total>{NUM}) GiB total capacity; (?P<torch>{NUM}) (?P<tau>[KMG]iB|bytes) already allocated; "
        rf"(?:{NUM} [KMG]iB current active; )?(?:(?P<free>{NUM}) (?P<fu>[KMG]iB|bytes) free;)?",
        lambda m: {
            **_allocator_numbers(m),
            "device": m["dev"] if m["dev"] != "CUDA" else None,
        },
    ),
    wording(  # XLA on a TPU out of HBM: loading a compiled program or allocating a buffer beside the KV cache (its
        # figures: what it asked, what was free), or compiling one larger than the chip (used of the chip's HBM)
        ("at the bottom of memory", "Error allocating device buffer", "memory space hbm", "memory space vmem"),
        K.TPU_HBM_EXHAUSTED,
        r"(?:Error loading program(?: '(?P<program>[^']+)')?: )?Attempting to reserve "
        r"(?P<asked>[\d.]+)(?P<au>[KMG]?)B? at the bottom of memory\. That was not possible\.(?: There are "
        r"(?P<free>[\d.]+)(?P<fu>[KMG]?)B? free)?"
        r"|Error allocating device buffer: Attempting to allocate (?P<asked2>[\d.]+)(?P<au2>[KMG]?)B?\. That was not "
        r"possible\.(?: There are (?P<free2>[\d.]+)(?P<fu2>[KMG]?)B? free)?"
        r"|Ran out of memory in memory space hbm\.(?: Used (?P<used>[\d.]+)(?P<uu>[KMG]?)B? of (?P<cap>[\d.]+)"
        r"(?P<cu>[KMG]?)B? hbm\.)?"
        r"|Ran out of memory in memory space vmem\b",  # a kernel's vector memory, on the core: not HBM
        lambda m: {
            "message": m.group(0),
            "component": m["program"],
            "requested_gib": to_gib(m["asked"] or m["asked2"] or m["used"], m["au"] or m["au2"] or m["uu"] or "B"),
            "free_gib": to_gib(m["free"] or m["free2"], m["fu"] or m["fu2"] or "B"),
            "total_gib": to_gib(m["cap"], m["cu"] or "B"),
        },
    ),
    wording(  # xFormers' dispatcher finding no kernel for the attention inputs, then its reasons per kernel
        # (ops/fmha/dispatch.py and common.py): the build's CUDA kernels absent, the dtype, the GPU too old
        (
            "No operator found for `memory_efficient_attention",
            "xFormers wasn't build with CUDA support",
            "(supported: {torch.",
            "requires device with capability",
        ),
        K.XFORMERS_NO_KERNEL,
        r"(?P<no_operator>No operator found for `memory_efficient_attention_\w+`)"
        r"|(?P<no_cuda_build>xFormers wasn't build with CUDA support)"
        r"|^\s*dtype=torch\.(?P<dtype>\w+) \(supported: \{torch\."
        r"|requires device with capability [>=]+ \(\d+, \d+\) but your GPU has capability "
        r"\((?P<capability>\d+, \d+)\)",
        lambda m: {
            "message": next(name for name in ("no_operator", "no_cuda_build", "dtype", "capability") if m[name]),
            "component": m["dtype"] or (m["capability"].replace(", ", ".") if m["capability"] else None),
        },
    ),
    wording(  # PyTorch's caching allocator asserting on NVML where it words an OOM: after cudaMalloc failed it asks
        # NVML for the device's memory to build the message, and on MIG slices, Jetson and some containers NVML fails
        # (pytorch#112377, #185240; fal-ai/fal#478 reads it as an OOM)
        ("INTERNAL ASSERT FAILED",),
        K.CUDA_OOM,
        r"NVML_SUCCESS == (?:r|DriverAPI::get\(\)->nvml\w+\(\)) INTERNAL ASSERT FAILED at "
        r"\"[^\"]*CUDACachingAllocator\.cpp",
        lambda m: {"message": NVML_ASSERT_OOM},
    ),
    wording(  # a bare OOM: the device, where the allocator's words name one other than CUDA (op1_oom.py)
        ("OutOfMemoryError", "CUDA out of memory", "HIP out of memory", "XPU out of memory"),
        K.CUDA_OOM,
        r"(?:torch\.(?:cuda\.)?OutOfMemoryError|OutOfMemoryError\('|(?:CUDA|HIP|XPU) out of memory)",
        lambda m: {"device": named[1]} if (named := re.search(r"\b(HIP|XPU) out of memory", m.string)) else {},
    ),
    wording(
        (
            "Engine core initialization failed",
            "EngineCore failed to start",
            "Engine process failed to start",
            "WorkerProc initialization failed",
            "Operation not supported",
        ),
        K.ENGINE_CORE_FAILED,
        # the third: V0's multiprocessing front end (0.6-0.10, vllm/entrypoints/openai/api_server.py); the fourth: the
        # engine core's multiproc executor on a GPU worker that failed to start (0.8 on; vllm#45784). The worker's own
        # `WorkerProc failed to start.` is not read here: its traceback follows it, and is the cause. The last: the
        # same V0 front end's output loop polling the sockets it closed when the engine process failed (pyzmq raises
        # ENOTSUP on a closed socket's poll; vllm#10556, #10856, #11189, #11564), once per pending task
        r"Engine core initialization failed.*|EngineCore failed to start\.?|Engine process failed to start.*"
        r"|WorkerProc initialization failed due to an exception in a background process\..*"
        r"|(?P<zmq>ZMQError(?::\s*|\(')Operation not supported)",
        lambda m: {"message": ZMQ_CLOSED_SOCKET if m.group("zmq") else m.group(0)},
    ),
    wording(  # a bare assertion on the KV heads and the TP size (the layer's and some models' own code; OP-3.9):
        # a traceback's source line, not an error line, so no other wording reads it
        ("num_kv_heads",),
        K.KV_HEADS_INDIVISIBLE,
        r"assert (?:self\.)?(?:total_)?num_kv_heads % (?:self\.)?tp_size == 0"
        r"|assert (?:self\.)?tp_size % (?:self\.)?(?:total_)?num_kv_heads == 0",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # torchao's assertion before it quantizes to FP8 activations (OP-2.5): printed alone, as an assertion's
        # message, with no error word of its own
        ("Float8 dynamic activation quantization is only supported",),
        K.TORCHAO_FP8_UNSUPPORTED,
        r"Float8 dynamic activation quantization is only supported on CUDA>=8\.9 and MI300\+?",
        lambda m: {"message": m.group(0)},
    ),
    wording(  # the model argument names nothing vLLM can read: vLLM's own check (transformers_utils/config.py, 0.7 on),
        # huggingface_hub's validation of a Hub id (a path that is no directory here is taken for one), transformers'
        # missing file (utils/hub.py) and config without a model type (models/auto/configuration_auto.py)
        (
            "Invalid repository ID or local directory specified",
            "Repo id must be in the form",
            "Repo id must use alphanumeric chars",
            "(invalid repository id)",
            "does not appear to have a file named",
            "Should have a `model_type` key",
            "Can't load tokenizer for",
            "Incorrect path_or_model_id",
            "Can't load the configuration of",
            "does not exist!",
            "Could not locate the ",
            "modelscope.cn/api/v1/models/",
        ),
        K.MODEL_NOT_FOUND,
        r"Invalid repository ID or local directory specified: '(?P<vllm_model>[^']*)'(?P<vllm>)"
        # (the id cut from a pasted line, kaito-project/kaito#2320, still says a name the Hub's form refuses)
        # (only the form's refusal: a name refused for its characters, cut, may as well be a Hub id with a colon)
        r"|Repo id must (?:be in the form 'repo_name' or 'namespace/repo_name':|use alphanumeric chars[^:]*:(?= '))"
        r"(?: '(?P<repo_id_model>[^']*)')?(?P<repo_id>)"
        # huggingface_hub's file system (hf_file_system.py) on the same refusal of a path taken for a Hub id
        # (vllm#3786: a Ray worker node without the model at the head node's path)
        r"|FileNotFoundError: (?P<hf_fs_model>\S+) \(invalid repository id\)(?P<hf_fs>)"
        r"|(?P<no_file_model>\S+) does not appear to have a file named (?P<file>[\w./-]+?)\.?(?= |$)(?P<no_file>)"
        r"|Unrecognized model in (?P<no_model_type_model>\S+?)\. Should have a `model_type` key(?P<no_model_type>)"
        # transformers' generic refusal to resolve a tokenizer's files (tokenization_utils_base.py)
        r"|Can't load tokenizer for '(?P<no_tokenizer_model>[^']+)'(?P<no_tokenizer>)"
        # transformers' own refusal of a name that is neither a local folder nor a Hub id (utils/hub.py), an empty one
        # included: the setting meant to carry the model was not set (runpod-workers/worker-vllm#75)
        r"|Incorrect path_or_model_id: '(?P<vllm_path_model>[^']*)'(?P<vllm_path>)"
        # transformers' AutoConfig when it could not get config.json from the path or the Hub (configuration_utils.py:
        # `… make sure you don't have a local directory with the same name`; vllm#2814, a RunPod template)
        r"|Can't load the configuration of '(?P<vllm_config_model>[^']+)'(?P<vllm_config>)"
        # ModelScope's hub answering 404 for the id (modelscope/hub/errors.py): vLLM looks models up on ModelScope
        # instead of the Hugging Face Hub when VLLM_USE_MODELSCOPE is set (CraftJarvis/JarvisVLA#5)
        r"|The request model: (?P<modelscope_model>\S+) does not exist!(?P<modelscope>)"
        # its API's 404 for the model's revisions, as requests words it (vllm#2629: `LLM(model="gpt2")` with
        # VLLM_USE_MODELSCOPE set looked gpt2 up on ModelScope)
        r"|404 Client Error: Not Found for url: https?://(?:www\.)?modelscope\.cn/api/v1/models/"
        r"(?P<modelscope_404_model>[^/?\s]+(?:/[^/?\s]+)?)/revisions(?P<modelscope_404>)"
        # transformers' remote-code loader (dynamic_module_utils.py) when the model's own code file that config.json's
        # auto_map names is not beside it: a converted or quantized copy without the .py files (vllm-ascend#619,
        # DeepSeek's configuration_deepseek.py after ModelSlim)
        r"|Could not locate the (?P<no_code_file>(?:configuration|modeling|tokenization|processing|image_processing"
        r"|feature_extraction)_[\w.-]+\.py)(?: inside (?P<no_code_model>\S+?))?\.?(?=[`'\"]?\s*$)(?P<no_code>)",
        _model_not_found,
    ),
)
