"""OP-7.148 and OP-7.149: two launches stopped before vLLM ran, by words that are not vLLM's: argparse's required
argument, and torch.distributed's environment rendezvous.

OP-7.148: `vllm serve` takes the model as its first, positional argument (`usage: vllm serve [model_tag] [options]`
in the 0.32 wheel, where --model also still works); in releases where the positional was required, `vllm serve
--model X` stopped at `vllm serve: error: the following arguments are required: model_tag` (vllm PR #8618's review:
the GGUF docs' `vllm serve --model …` command); a bare `vllm` without a subcommand names `subparser`.

OP-7.149: `init_process_group(init_method="env://")` reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the
environment, which a launcher sets (torchrun); a script started with plain python stops at `Error initializing
torch.distributed using env:// rendezvous: environment variable RANK expected, but not set` (vllm#7466: vLLM's NCCL
sanity-check script from its troubleshooting guide, which runs it with `torchrun --nproc-per-node=<GPUs>`). vLLM's own
server starts its workers itself; its `external_launcher` executor is the one that expects torchrun's variables.

"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity


def _required_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    args = event.message or ""
    prog = event.component or "the program"
    if "model_tag" in args:
        title = "`vllm serve` was given no model as its first argument: this vLLM requires it there"
        actions = [
            "Put the model first: `vllm serve <model or path> [options]`; in the releases that require it, --model "
            "does not count (from the GGUF docs' `vllm serve --model …`, vllm PR #8618).",
        ]
    elif "subparser" in args:
        title = "`vllm` was run without a subcommand: `vllm serve <model>` starts the server"
        actions = ["Run `vllm serve <model> [options]` (`vllm --help` lists the subcommands)."]
    else:
        title = f"{prog} stopped before starting: it requires {args} on its command line"
        actions = [f"Add {args} to the command (`{prog} --help` says what each takes)."]
    return RULE_REQUIRED.finding(
        Severity.CRITICAL,
        title,
        summary="argparse checked the command line before anything ran; nothing else is wrong yet.",
        evidence=[c.log_evidence(event, name="arguments required", value=args)],
        actions=actions,
        confidence=0.85,
    )


RULE_REQUIRED = Rule(
    code="OP-7.148",
    title="a command line without an argument its parser requires (vllm serve's model)",
    category=Category.CONFIGURATION,
    check=c.on_kind(LogEventKind.ARGS_REQUIRED, _required_finding),
    needs=("events",),
    page=RulePage(
        checks="argparse's `PROG: error: the following arguments are required: ARGS`.",
        why="The server never started; the command line lacks what its parser requires.",
        example="`vllm serve: error: the following arguments are required: model_tag` for `vllm serve --model "
        "./tinyllama.gguf` (vllm PR #8618).",
        fix="`vllm serve <model> [options]`; a subcommand after `vllm`.",
        limits="Another program's required arguments are named, not explained.",
        references=["https://github.com/vllm-project/vllm/pull/8618"],
    ),
)

ENV_RENDEZVOUS = re.compile(
    r"Error initializing torch\.distributed using env:// rendezvous: environment variable (?P<var>\w+) expected, "
    r"but not set"
)


def _rendezvous_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_RENDEZVOUS.finding(
        Severity.CRITICAL,
        f"a script that joins torch.distributed from the environment was started without a launcher: "
        f"{match['var']} is not set",
        summary="init_method env:// reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, which torchrun sets for each "
        "process it starts; plain `python script.py` sets none. vLLM's server starts its own workers and does not "
        "need them; its external_launcher executor (an RL framework's own processes) and test scripts do.",
        evidence=[c.log_evidence(event, name="variable not set", value=match["var"])],
        actions=[
            "Start it with torchrun: `torchrun --nproc-per-node=<GPUs> script.py` (how vLLM's troubleshooting guide "
            "runs its NCCL sanity check, vllm#7466).",
            "For vLLM with distributed_executor_backend='external_launcher', torchrun (or the framework's launcher) "
            "must start every rank.",
        ],
        confidence=0.8,
    )


RULE_RENDEZVOUS = Rule(
    code="OP-7.149",
    title="torch.distributed's env:// rendezvous without a launcher's variables",
    category=Category.STARTUP,
    check=c.on_phrase(ENV_RENDEZVOUS, _rendezvous_finding),
    needs=("events",),
    page=RulePage(
        checks="PyTorch's `Error initializing torch.distributed using env:// rendezvous: environment variable X "
        "expected, but not set`.",
        why="A distributed script run with plain python has no rank; torchrun gives each process its own.",
        example="vLLM's NCCL sanity-check script run as `python3 test.py` in a pod (vllm#7466).",
        fix="`torchrun --nproc-per-node=<GPUs> script.py`.",
        limits="Which script it was is in the traceback above.",
        references=["https://github.com/vllm-project/vllm/issues/7466"],
    ),
)

RULES: list[Rule] = [RULE_REQUIRED, RULE_RENDEZVOUS]
