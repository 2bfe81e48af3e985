"""Environment switches a pasted text shows set, wherever they stand: a shell's export, a container's `-e`, a prefix
to the command, a sentence quoting the command.

Why not a wording of the log table: a line that sets a switch often carries the error too (a reporter's command and
what it printed, on one line), and the table reads one wording per line; the switch is context for the rules, read
beside whatever the line says. One event per switch, at the first line that sets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rules.events import LogEvent, LogEventKind

# VLLM_USE_MODELSCOPE turned on: vLLM fetches the model from ModelScope, not the Hugging Face Hub (vllm/envs.py)
_MODELSCOPE_ON = re.compile(r"\bVLLM_USE_MODELSCOPE\s*=\s*['\"]?(?:1|[Tt]rue|TRUE)\b")


@dataclass
class EnvSwitches:
    """The switches seen so far, as the events the rules read."""

    found: dict[LogEventKind, LogEvent] = field(default_factory=dict)

    def read(self, text: str, line_no: int, source: str) -> None:
        if LogEventKind.MODELSCOPE_ON not in self.found and (on := _MODELSCOPE_ON.search(text)) is not None:
            self.found[LogEventKind.MODELSCOPE_ON] = LogEvent(
                kind=LogEventKind.MODELSCOPE_ON,
                message=on.group(0),
                raw=text.strip(),
                line_no=line_no,
                source_file=source,
            )

    def events(self) -> list[LogEvent]:
        return list(self.found.values())
