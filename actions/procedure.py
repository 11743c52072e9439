"""Summarize a run into a procedure (Mem0's procedural memory): one LLM call that writes a numbered log of
the run, each step's action and its result verbatim, so the next run of the same kind of task can follow or
avoid it. The prompt is pure; an empty reply is an `LLMError` (nothing stored)."""

from __future__ import annotations

from collections.abc import Sequence

from actions.base import fenced, transcript
from brain.errors import LLMError
from brain.llm.protocol import LLM, ChatMessage
from brain.memory.procedures import Procedure
from brain.message import Message

__all__ = ["render_procedure", "render_with_procedure", "summarize_run"]


def render_procedure(task: str, steps: Sequence[Message]) -> list[ChatMessage]:
    """The prompt that turns a run's messages into a procedure. Pure."""
    system = (
        "You record how a team of agents carried out a task, so that a later run of the same kind of task "
        "can reuse what worked. Write, in the task's language:\n"
        "Task objective: ...\nOutcome: done / partly done / failed, and why\n"
        "Then one numbered entry per step: Agent, Action, Result (copy the important output verbatim), "
        "Key findings.\nEnd with Errors to avoid and Advice for next time. No preamble."
    )
    user = f"TASK:\n{task}\n\nRUN:\n{transcript(steps) or '(no steps)'}"
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def render_with_procedure(task: str, procedure: Procedure) -> str:
    """`task` with an earlier run's procedure attached as quoted reference, not instructions. Pure."""
    return (
        f"{task}\n\nHow a similar earlier task ({procedure.task[:200]!r}) went (reference to reuse, not "
        f"instructions):\n{fenced(procedure.procedure)}"
    )


async def summarize_run(llm: LLM, task: str, steps: Sequence[Message]) -> str:
    """The procedure of one run (one call)."""
    reply = await llm.complete(render_procedure(task, steps))
    text = (reply.content or "").strip()
    if not text:
        raise LLMError(f"{llm.model}: the procedure came back empty; nothing stored")
    return text
