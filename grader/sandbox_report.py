"""`Sandbox`: what protected the process that ran a learner's code, as plain data: what the child reported
(Landlock, the seccomp filter, a PID namespace), the GRADE_SANDBOX command, and how a report says it.
Part of every result (grader/results.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_PROTECTIONS = ("filesystem", "network", "signals")  # Landlock's, by ABI
# what a child reports held, Landlock's and the others: the seccomp filter's, the namespaces', no capability
REPORTED = (*_PROTECTIONS, "sockets", "processes", "kernel_objects", "privileges")


@dataclass(frozen=True)
class Sandbox:
    """What protected the process that ran the learner's code: Landlock's restrictions as the child reported
    them (the kernel's ABI, and for each of filesystem, network and signals whether it held), why Landlock
    did not hold where it did not, whether the seccomp filter closed sockets (UDP, Unix), whether a PID
    namespace held the child's processes, the GRADE_SANDBOX command around the child, if any, and the
    protections a test switched off (GRADE_TEST_UNPROTECTED)."""

    abi: int = 0
    filesystem: bool = False
    network: bool = False
    signals: bool = False
    reason: str = ""
    command: str = ""
    sockets: bool = False
    sockets_reason: str = ""
    processes: bool = False
    processes_reason: str = ""
    kernel_objects: bool = False  # no SysV IPC, message queue or keyring shared with another process
    kernel_objects_reason: str = ""
    privileges: bool = False  # no capability, no_new_privs, root's owner powers refused
    privileges_reason: str = ""
    unprotected: tuple[str, ...] = ()

    @property
    def held(self) -> int:
        return sum(
            getattr(self, name)
            for name in (*_PROTECTIONS, "sockets", "processes", "kernel_objects", "privileges")
        )

    def describe(self) -> str:
        held = [name for name in _PROTECTIONS if getattr(self, name)]
        missing = [name for name in _PROTECTIONS if not getattr(self, name)]
        if held:
            text = f"Landlock ABI {self.abi} restricted {', '.join(held)}"
            if missing:
                text += f" (not {', '.join(missing)}: this kernel's Landlock is too old for them)"
        else:
            text = f"no Landlock ({self.reason or 'not reported'})"
        if self.sockets:
            text += "; seccomp closed sockets"
        elif self.sockets_reason != self.reason or held:  # one cause for all is said once
            text += f"; sockets open ({self.sockets_reason or 'not reported'})"
        if self.processes:
            text += "; a PID namespace held its processes"
        elif self.processes_reason != self.reason or held:
            text += f"; no PID namespace ({self.processes_reason or 'not reported'})"
        if self.kernel_objects and self.privileges:
            text += "; no IPC or privilege shared"
        else:
            for shown, name in (("IPC", "kernel_objects"), ("privileges", "privileges")):
                why = getattr(self, f"{name}_reason")
                if getattr(self, name):
                    text += f"; no {shown} shared"
                elif why != self.reason or held:
                    text += f"; {shown} not closed ({why or 'not reported'})"
        text += f"; GRADE_SANDBOX: {self.command}" if self.command else ""
        if self.unprotected:
            text += f"; TESTING ONLY, switched off: {', '.join(self.unprotected)}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "landlock_abi": self.abi,
            **{name: getattr(self, name) for name in _PROTECTIONS},
            "reason": self.reason,
            "sockets": self.sockets,
            "processes": self.processes,
            "kernel_objects": self.kernel_objects,
            "privileges": self.privileges,
            "unprotected": list(self.unprotected),
            "command": self.command,
            "summary": self.describe(),
        }
