"""OP-7.79, OP-7.84 and OP-7.91: a TRL trainer's vLLM, as a server nobody answers for, as a GPU its process cannot
see, and as a server command the installed TRL does not have.

OP-7.79: a TRL trainer waits for the vLLM server it generates with, and none answers.

Why a rule of its own: TRL's online trainers (GRPO, RLOO, online DPO) generate with vLLM, and from TRL 0.16 the
default is a separate server the trainer reaches over HTTP: `trl vllm-serve --model …` on GPUs of its own, started
first. Before the first step the trainer's client (trl/extras/vllm_client.py) polls the server's `/health/` and logs
`Server is not up yet. Retrying in 2.0 seconds...` until it answers, then gives up with `The vLLM server can't be
reached at <url> after <n> seconds. Make sure the server is running by running `trl vllm-serve``. huggingface/open-r1
#568 and #543 met the endless retry right after TRL moved vLLM out of the trainer (0.15 ran it in-process, so the
same script had worked a month before); a maintainer's first question was whether the server had been started. The
server is TRL's own command, not `vllm serve`: the trainer also calls routes only it has (`/get_world_size/`, the
weight-sync group; huggingface/trl#3587 got `404 {"detail":"Not Found"}` from a plain vLLM server).

OP-7.84: before 0.16, TRL's GRPO trainer ran vLLM inside the training script on one GPU of its own, `vllm_device`
(default `auto`: the GPU after the training processes', `cuda:<num_processes>`), and refused a device index the process
cannot see: `The requested device for vllm (cuda:1) is not available. … In your case: `--num_processes 0``
(huggingface/trl PR #2600). Three setups meet it. Every GPU given to training (`accelerate launch` with as many
processes as GPUs): one fewer process, as the message says. One GPU (the suggestion reads `--num_processes 0`, which
cannot run): a maintainer's answer in huggingface/trl#2826 was `vllm_device="cuda:0"`, vLLM sharing the training GPU
with a smaller `vllm_gpu_memory_utilization`. A device named by its physical number under CUDA_VISIBLE_DEVICES
(huggingface/trl#2913: `cuda:6` with `CUDA_VISIBLE_DEVICES=6,7`): indices count within the visible GPUs, so that GPU is
`cuda:1` (huggingface/trl#3085 solved it with `--gpu_ids` and `vllm_device auto`).

OP-7.91: `trl vllm-serve` is TRL's own command from 0.16.0, the release that moved generation to a separate server. A
TRL older than that (or a 0.16 development build from before the command landed) has no such command, and its
argument parser refuses it: `TRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from 'chat', 'dpo',
'env', 'grpo', 'kto', 'sft')`. A maintainer's answer in huggingface/trl#3139 was `pip install --upgrade trl`; the
reporter of wdrink/SimpleAR#24 had followed a recipe that pinned `trl==0.16.0.dev0`. The choices the parser lists are
the installed TRL's commands, which is how the finding tells the version's age without asking.
"""

from __future__ import annotations

from rules.catalog import common as c
from rules.events import LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _check_trl_server(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRL_SERVER_UNREACHED)
    if not events:
        return []
    gave_up = next((e for e in events if e.message), None)  # the ConnectionError names the URL it polled
    event = gave_up or events[-1]
    where = f" at {gave_up.message}" if gave_up else ""
    waits = len(events) if gave_up is None else None
    return [
        RULE_TRL_SERVER.finding(
            Severity.HIGH,
            f"the TRL trainer finds no vLLM server{where}: start `trl vllm-serve` first, on GPUs of its own, or "
            "generate in the trainer's process",
            summary="From TRL 0.16 its online trainers generate with a separate vLLM server and wait for it to "
            "answer on /health/ before training; nothing answered"
            + (f" ({waits} retries in this text)" if waits and waits > 1 else "")
            + ". The server was not started, is still loading the model, listens on another host or port, or the "
            "request went to a proxy.",
            evidence=[c.log_evidence(event, name="TRL's vLLM client", value=gave_up.message if gave_up else None)],
            actions=[
                "Start TRL's server before the trainer, on GPUs the trainer does not use: `CUDA_VISIBLE_DEVICES=0 trl "
                "vllm-serve --model <the model being trained>`, then launch training on the others; wait for its "
                "`Application startup complete`.",
                "It must be `trl vllm-serve`, not `vllm serve`: the trainer also uses the weight-sync routes only "
                "TRL's server has (a plain server answers them 404, huggingface/trl#3587).",
                "Point the trainer at it: vllm_server_host and vllm_server_port (or vllm_server_base_url) in the "
                "trainer's config; a proxy set in HTTP_PROXY catches the request unless NO_PROXY names that host. A "
                "large model that loads longer than the trainer waits needs a larger vllm_server_timeout.",
                'With one GPU, or to keep generation in the trainer as TRL before 0.16 did: vllm_mode="colocate" '
                "(TRL 0.18 on), or use_vllm=False.",
            ],
            confidence=0.75,
        )
    ]


RULE_TRL_SERVER = Rule(
    code="OP-7.79",
    title="a TRL trainer's vLLM server does not answer",
    category=Category.STARTUP,
    check=_check_trl_server,
    needs=("events",),
    page=RulePage(
        checks="TRL's client (trl.extras.vllm_client) logging `Server is not up yet. Retrying in 2.0 seconds...`, or "
        "giving up with `The vLLM server can't be reached at <url> after <n> seconds`.",
        why="TRL 0.16 on generates with a separate `trl vllm-serve` server that must be started first and reachable "
        "at the trainer's configured host and port.",
        example="open-r1's GRPO recipe after upgrading TRL: the retry line, endlessly (huggingface/open-r1#568; "
        "#543 with the server on other GPUs).",
        fix="Start `trl vllm-serve --model …` on GPUs of its own before training, point the trainer at it, or "
        'generate in the trainer (vllm_mode="colocate").',
        limits="Other projects that copied TRL's client (ms-swift, axolotl) log the same words; the finding names "
        "TRL's command, whose counterpart in those projects has its own name.",
        references=[
            "https://github.com/huggingface/open-r1/issues/568",
            "https://github.com/huggingface/open-r1/issues/543",
            "https://github.com/huggingface/trl/issues/3587",
        ],
    ),
)


def _check_trl_device(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRL_VLLM_DEVICE)
    if not events:
        return []
    event = events[0]
    device, processes = event.device or "cuda:N", event.message
    one_gpu = processes == "0"
    actions = [
        f"Launch training with one process fewer than the visible GPUs (`accelerate launch --num_processes "
        f"{processes or '<GPUs - 1>'}`) and leave vllm_device at auto: vLLM takes the GPU after the training ones."
    ]
    if one_gpu:
        actions = [
            'With one GPU, put vLLM on the training GPU: vllm_device="cuda:0", as TRL\'s maintainers answered in '
            "huggingface/trl#2826, with a vllm_gpu_memory_utilization small enough to leave the training process the "
            "rest of the GPU; or give vLLM a second GPU."
        ]
    actions += [
        f"vllm_device counts within CUDA_VISIBLE_DEVICES, not by the physical number: with CUDA_VISIBLE_DEVICES=6,7 "
        f"physical GPU 7 is cuda:1 (huggingface/trl#2913); {device} must be below the number of visible GPUs.",
        "TRL 0.16 and later run vLLM as a separate `trl vllm-serve` on GPUs of its own (the trainer's default "
        'vllm_mode="server"), or in the training processes with vllm_mode="colocate" (0.18 on): upgrading TRL '
        "removes vllm_device.",
    ]
    title = f"TRL's GRPO trainer was told to put vLLM on {device}, a GPU its process cannot see"
    return [
        RULE_TRL_DEVICE.finding(
            Severity.CRITICAL,
            title + (": with one GPU, vLLM must share it" if one_gpu else ""),
            summary="TRL before 0.16 ran vLLM inside the training script on one GPU of its own (vllm_device, by "
            "default the one after the training processes') and stops when that index is not among the GPUs the "
            "process sees.",
            evidence=[c.log_evidence(event, name="TRL's refusal", value=device)],
            actions=actions,
            confidence=0.75,
        )
    ]


RULE_TRL_DEVICE = Rule(
    code="OP-7.84",
    title="TRL's GRPO trainer asked for a vLLM GPU its process cannot see",
    category=Category.CONFIGURATION,
    check=_check_trl_device,
    needs=("events",),
    page=RulePage(
        checks="TRL's `The requested device for vllm (cuda:N) is not available. … In your case: `--num_processes M``.",
        why="TRL 0.14-0.15 ran vLLM on a GPU of its own beside training (vllm_device, default after the training "
        "processes'); an index beyond the visible GPUs stops the trainer.",
        example="`ValueError: The requested device for vllm (cuda:1) is not available. … In your case: "
        '`--num_processes 0`.` on one GPU (huggingface/trl#2826: `vllm_device="cuda:0"`).',
        fix="One training process fewer than the GPUs; with one GPU, vllm_device cuda:0 and a smaller "
        "vllm_gpu_memory_utilization; an index within CUDA_VISIBLE_DEVICES; or TRL 0.16's `trl vllm-serve`.",
        limits="How many GPUs the host has is not in the line; the suggested --num_processes, when printed, tells it.",
        references=[
            "https://github.com/huggingface/trl/pull/2600",
            "https://github.com/huggingface/trl/issues/2826",
            "https://github.com/huggingface/trl/issues/2913",
            "https://github.com/huggingface/trl/issues/3085",
        ],
    ),
)


def _check_trl_no_serve(facts: Facts) -> list[Finding]:
    events = facts.events_of(LogEventKind.TRL_NO_VLLM_SERVE)
    if not events:
        return []
    event = events[0]
    listed = f" (it has {event.message})" if event.message else ""
    return [
        RULE_TRL_NO_SERVE.finding(
            Severity.CRITICAL,
            f"the installed TRL has no `vllm-serve` command{listed}: it is older than TRL 0.16.0, the release that "
            "added the server",
            summary="`trl vllm-serve` starts the vLLM server TRL's online trainers generate with from 0.16.0 on. The "
            "TRL installed here predates it (a release before 0.16.0, or a development build from before the command "
            "was added), so its command line refuses the word.",
            evidence=[c.log_evidence(event, name="TRL's command line", value=event.message)],
            actions=[
                "Upgrade TRL in the environment that runs the command: `pip install --upgrade trl` (0.16.0 or later), "
                "as TRL's maintainers answered in huggingface/trl#3139; check with `trl env`. A recipe that pins an "
                "older TRL (or a `0.16.0.dev0` build) needs its pin raised together with the vLLM version that TRL "
                "release supports.",
                "Or keep the old TRL and generate inside the trainer as it did then (use_vllm with vllm_device), with "
                "no separate server.",
            ],
            confidence=0.8,
        )
    ]


RULE_TRL_NO_SERVE = Rule(
    code="OP-7.91",
    title="the installed TRL has no `vllm-serve` command",
    category=Category.STARTUP,
    check=_check_trl_no_serve,
    needs=("events",),
    page=RulePage(
        checks="TRL's argument parser refusing the command: `invalid choice: 'vllm-serve' (choose from …)`.",
        why="`trl vllm-serve` arrived with TRL 0.16.0; an older TRL, or a 0.16 development build from before it, "
        "lists only its other commands.",
        example="`TRL CLI: error: argument command: invalid choice: 'vllm-serve' (choose from 'chat', 'dpo', 'env', "
        "'grpo', 'kto', 'sft')` with trl 0.16.0.dev0 (wdrink/SimpleAR#24; huggingface/trl#3139).",
        fix="`pip install --upgrade trl` (0.16.0 or later), with the vLLM version that release supports.",
        limits="Reads TRL's own parser; another project's command of the same name is not TRL's.",
        references=[
            "https://github.com/huggingface/trl/issues/3139",
            "https://github.com/wdrink/SimpleAR/issues/24",
        ],
    ),
)

RULES: list[Rule] = [RULE_TRL_SERVER, RULE_TRL_DEVICE, RULE_TRL_NO_SERVE]
