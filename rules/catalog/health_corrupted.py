"""HL-8: requests that finished with NaN in their logits, by vLLM's own count: their answers are garbage. HL-9: the
sampler refused such a distribution. HL-10: the answer a client got is `!` only, token 0 sampled from NaN logits.

Why a rule of its own: a request whose logits hold NaN is still sampled, still streamed and still answered with
HTTP 200; nothing in the log says it failed. vLLM counts such requests when asked to (VLLM_COMPUTE_NANS_IN_LOGITS=1,
from 0.11.1: the `vllm:corrupted_requests` counter and `Corrupted: N reqs` in the stats line; v1/metrics/stats.py
counts a request once, when it finishes). The count is the only sign the server gives, and any count above zero means
answers sampled from a broken distribution (vLLM PR #27306 added the metric; PR #50283's description: the request
runs to completion, and its KV blocks stay in the prefix cache for later requests to reuse). The cause is the
model's arithmetic, not the load: a model trained in bfloat16 overflowing in float16 (the usual answer to NaN logits,
as zai-org/CogVLM#96's maintainer gave it: "You should use bf16 instead of fp16"), a broken checkpoint or
quantization, or a kernel fault.
"""

from __future__ import annotations

from rules import signals
from rules.alerts import Alert, rate
from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, ConfigChange, Finding, Rule, RulePage, Severity

# The model's dtype as servers spell float16 (`--dtype half`, the engine line's `dtype=torch.float16`).
_FLOAT16 = frozenset({"float16", "half", "fp16", "torch.float16"})


def _check_corrupted(facts: Facts) -> list[Finding]:
    counted = signals.corrupted_requests(facts)
    if counted is None or counted.value <= 0:
        return []
    dtype = _dtype(facts)
    changes = _bfloat16(dtype)
    count = int(counted.value)
    return [
        RULE_CORRUPTED.finding(
            Severity.HIGH,
            f"{count} request(s) finished with NaN in their logits (vLLM's corrupted-request count): their answers "
            "were sampled from garbage",
            summary="vLLM still sampled, streamed and answered these requests (HTTP 200): the count is the only sign. "
            "The cause is the model's arithmetic, not the load: a float16 overflow, a broken checkpoint or "
            "quantization, or a kernel fault." + (f" The model runs in {dtype}, the usual cause." if changes else ""),
            evidence=[counted.evidence],
            changes=changes,
            actions=_actions(facts, bool(changes)),
            confidence=0.9 if counted.strong else 0.7,
        )
    ]


def _dtype(facts: Facts) -> str:
    return (facts.config.dtype or "").lower() if facts.config else ""


def _bfloat16(dtype: str) -> list[ConfigChange]:
    """bfloat16 for a model served in float16: the usual cause of NaN logits, in either rule."""
    if dtype not in _FLOAT16:
        return []
    return [
        ConfigChange(
            flag="--dtype",
            current=dtype,
            proposed="bfloat16",
            reason="a model trained in bfloat16 can overflow float16's range, and an overflow becomes NaN in the "
            "logits; bfloat16 has float32's range (on GPUs of compute capability 8.0 and later)",
            cost="none on a GPU with bfloat16; not available on older GPUs (V100, T4)",
        )
    ]


def _actions(facts: Facts, float16: bool) -> list[str]:
    actions = []
    if not float16:
        actions.append(
            "Find what the corrupted requests share: the model's dtype (a model trained in bfloat16 served in float16 "
            "overflows; the engine line's dtype= says which), a quantized checkpoint (the same prompts on the "
            "unquantized model), the attention backend (another one through VLLM_ATTENTION_BACKEND), a prompt length."
        )
    if not (facts.config is not None and facts.config.enable_prefix_caching is False):  # on by default in V1
        actions.append(
            "After the fix, restart the server: vLLM does not stop a corrupted request or drop its KV blocks, so with "
            "prefix caching on a later request with the same prefix can read them."
        )
    actions.append(
        "Keep VLLM_COMPUTE_NANS_IN_LOGITS=1 set and watch vllm:corrupted_requests_total after the change: it should "
        "stay at zero."
    )
    return actions


# --- HL-9: the sampler refused the distribution ------------------------------------------------------------------


def _check_nan_probabilities(facts: Facts) -> list[Finding]:
    """torch.multinomial refuses a distribution holding inf, NaN or a negative entry. A softmax of finite logits has
    none, so the logits themselves were NaN or inf: the same arithmetic HL-8 counts, here failing the request (the
    samplers that call torch.multinomial: vLLM's early ones, ROCm's aiter top-k path in 0.32, and frameworks that
    sample themselves) instead of answering it with garbage."""
    events = facts.events_of(LogEventKind.NAN_PROBABILITIES)
    if not events:
        return []
    dtype = _dtype(facts)
    changes = _bfloat16(dtype)
    actions = [] if changes else [_DTYPE_ACTION]
    actions += [
        "If the weights are fine-tuned or quantized, run the same prompts on the base, unquantized model: a training "
        "that diverged or a broken quantization gives NaN logits in any dtype.",
        "If only long prompts fail, say so when reporting it: vllm#641 and vllm#1952 traced NaN rows to the "
        "attention output with long inputs.",
    ]
    return [
        RULE_NAN_PROBABILITIES.finding(
            c.death_severity(facts),
            "sampling failed on a distribution holding inf or NaN: the model's logits overflowed or were corrupted",
            summary="torch.multinomial refuses probabilities with inf, NaN or a negative entry, and a softmax of "
            "finite logits has none, so the logits themselves were NaN or inf. The usual cause is a model trained in "
            "bfloat16 served in float16, whose range it overflows (LianjiaTech/BELLE#412 and "
            "JIA-Lab-research/LongLoRA#165: float16 to bfloat16 fixed it); otherwise a diverged fine-tune or a broken "
            "quantization." + (f" The model runs in {dtype}." if changes else ""),
            evidence=[c.log_evidence(events[0], name="sampling", value=events[0].message)],
            changes=changes,
            actions=actions,
            confidence=0.75 if changes else 0.6,
        )
    ]


_DTYPE_ACTION = (
    "Check the dtype the engine line prints (`dtype=torch.float16`): a model trained in bfloat16 (its config.json's "
    "torch_dtype) served in float16 overflows; serve it with --dtype bfloat16, or --dtype float32 on GPUs without "
    "bfloat16 (V100, T4)."
)


# --- HL-10: an answer made of "!" only --------------------------------------------------------------------------


def _check_bang_answer(facts: Facts) -> list[Finding]:
    """An answer of `!` alone is token 0 sampled over and over: GPT-2-style vocabularies (GPT-2's, Llama 3's, Qwen's,
    OLMo's) put `!` at id 0, which is what a sampler takes from logits that are all NaN. The same arithmetic as HL-8
    and HL-9, seen in the text a client got."""
    events = facts.events_of(LogEventKind.BANG_ANSWER)
    if not events:
        return []
    dtype = _dtype(facts)
    changes = _bfloat16(dtype)
    return [
        RULE_BANG_ANSWER.finding(
            Severity.HIGH,
            "the model answers with `!` only: token 0 sampled from NaN logits, most often a float16 overflow",
            summary="`!` is token 0 in GPT-2-style vocabularies (GPT-2, Llama 3, Qwen, OLMo), and a sampler given "
            "logits that are all NaN picks token 0 every step, so the answer is a run of `!` served as a success. "
            "The logits went NaN in the model's arithmetic: a model trained in bfloat16 or float32 served in float16 "
            "overflows its range (allenai/olmo-cookbook#60: OLMo loaded in float16 answered so, and in bfloat16 or "
            "float32 answered well), or a broken checkpoint or quantization."
            + (f" The model runs in {dtype}." if changes else ""),
            evidence=[c.log_evidence(events[0], name="answer", value=events[0].message)],
            changes=changes,
            actions=([] if changes else [_DTYPE_ACTION])
            + [
                "Run the same prompt through Hugging Face transformers in the dtype the server uses: `!` there too "
                "(olmo-cookbook#60 saw it in float16) confirms the dtype; text there points at the checkpoint's "
                "quantization or the attention backend in vLLM.",
                "Ask vLLM to count such requests (VLLM_COMPUTE_NANS_IN_LOGITS=1, from 0.11.1): HL-8 reads the count.",
            ],
            confidence=0.7 if changes else 0.6,
        )
    ]


# Any request answered from NaN pages: users got garbage as a success. The counter exists only where the server
# counts (VLLM_COMPUTE_NANS_IN_LOGITS=1), so elsewhere the expression is empty and never fires.
ALERT_CORRUPTED = Alert(
    name="VllmCorruptedRequests",
    expr=f"{rate(signals.CORRUPTED_COUNTER, '5m')} > 0",
    for_="1m",
    severity=Severity.HIGH,
    description=(
        '{{ $labels.instance }} ({{ $labels.model_name }}): {{ $value | printf "%.3f" }} requests/s answered from NaN '
        "logits: their text is garbage served with HTTP 200."
    ),
)

RULE_CORRUPTED = Rule(
    code="HL-8",
    title="requests finished with NaN in their logits (vLLM's corrupted-request count)",
    category=Category.RELIABILITY,
    check=_check_corrupted,
    alerts=(ALERT_CORRUPTED,),
    needs=("window", "snapshot", "events"),
    page=RulePage(
        checks="vllm:corrupted_requests_total rising over the window, or `Corrupted: N reqs` above zero in the stats "
        "lines, or the counter above zero since start (vLLM counts them only with VLLM_COMPUTE_NANS_IN_LOGITS=1, "
        "from 0.11.1).",
        why="A request whose logits hold NaN is still sampled and answered with HTTP 200: its text is garbage, and "
        "nothing else in the log says so.",
        example="`Engine 000: … Prefix cache hit rate: 41.3%, Corrupted: 3 reqs` with --dtype float16 -> "
        "--dtype bfloat16.",
        fix="--dtype bfloat16 where the model runs in float16; else bisect the checkpoint, its quantization and the "
        "attention backend on the requests that failed; restart after, so no corrupted KV block is reused.",
        limits="Without VLLM_COMPUTE_NANS_IN_LOGITS=1 vLLM counts nothing and this rule cannot see it. The stats "
        "line misses requests that finish while the engine goes idle (vLLM logs that interval at debug level: on "
        "real vLLM 0.32 three such requests read 0 in every line while the counter held 3), so a quiet server's "
        "log can say nothing: the counter is the figure to trust. The count says that NaN happened, not where: only "
        "the dtype is read from the text, the rest is for the operator to bisect.",
        references=[
            "https://github.com/vllm-project/vllm/pull/27306",
            "https://github.com/vllm-project/vllm/pull/50283",
            "https://github.com/zai-org/CogVLM/issues/96",
        ],
    ),
)

RULE_NAN_PROBABILITIES = Rule(
    code="HL-9",
    title="sampling failed on inf or NaN probabilities (the logits overflowed or were corrupted)",
    category=Category.RELIABILITY,
    check=_check_nan_probabilities,
    needs=("events",),
    page=RulePage(
        checks="torch.multinomial's `probability tensor contains either `inf`, `nan` or element < 0` anywhere in a "
        "line (alone, after a progress bar, inside a RayTaskError's repr).",
        why="A softmax of finite logits holds no inf, NaN or negative entry, so the logits were NaN or inf: a float16 "
        "overflow, a diverged fine-tune, a broken quantization.",
        example="`RuntimeError: probability tensor contains either `inf`, `nan` or element < 0` from a fine-tuned "
        "model loaded in float16 (LianjiaTech/BELLE#412: bfloat16 fixed it).",
        fix="--dtype bfloat16 for a model trained in bfloat16 (float32 on GPUs without it); the base, unquantized "
        "weights to test the checkpoint.",
        limits="The line does not say which dtype or model; with the launch command or the engine line the dtype "
        "change is proposed directly. vLLM's own samplers stopped calling torch.multinomial (0.32 samples with "
        "exponential noise, save ROCm's aiter top-k path), so there the same NaN logits surface as HL-8's count.",
        references=[
            "https://github.com/LianjiaTech/BELLE/issues/412",
            "https://github.com/JIA-Lab-research/LongLoRA/issues/165",
            "https://github.com/vllm-project/vllm/issues/641",
        ],
    ),
)

RULE_BANG_ANSWER = Rule(
    code="HL-10",
    title="the model answers with `!` only (token 0 sampled from NaN logits)",
    category=Category.RELIABILITY,
    check=_check_bang_answer,
    needs=("events",),
    page=RulePage(
        checks="An answer quoted as a run of `!` alone (eight or more; after a label such as `output:`, or as a JSON "
        "string's whole content).",
        why="NaN logits are sampled as token 0, `!` in GPT-2-style vocabularies, and answered with HTTP 200.",
        example="`vLLM output: !!!!!!!!!!!!!!!!` (allenai/olmo-cookbook#60: an OLMo checkpoint vLLM loaded in float16; "
        "bfloat16 or float32 fixed it).",
        fix="--dtype bfloat16 for a model served in float16 (float32 on GPUs without bfloat16); else bisect the "
        "checkpoint, its quantization and the attention backend.",
        limits="Reads the quoted answer only: models whose vocabulary has another token at id 0 answer NaN logits "
        "with that token instead, which this rule does not know.",
        references=["https://github.com/allenai/olmo-cookbook/issues/60"],
    ),
)

RULES: list[Rule] = [RULE_CORRUPTED, RULE_NAN_PROBABILITIES, RULE_BANG_ANSWER]
