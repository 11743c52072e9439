"""`brain worker status` and `brain worker retry`: a batch the model answers with garbage is parked after
`memory.facts.max_attempts` tries, shown with what came back, and queued again on request."""

from __future__ import annotations

import json
import re

from tests.roles.cli.test_chat import brain, env_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer

FACTS = [
    "--set",
    "memory.facts.enabled=true",
    "--set",
    "memory.facts.in_process_worker=false",
    "--set",
    "memory.facts.max_attempts=1",
]


def test_a_parked_batch_is_shown_and_queued_again(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Noted."), Chat("this is not JSON at all"))
    env = env_for(openai_server)
    assert brain("chat", *FACTS, env=env, stdin="I live in Rome\n").returncode == 0
    worker = brain("worker", "--once", *FACTS, env=env)
    assert worker.returncode == 1
    assert worker.stdout.splitlines() == [
        "applied 0 turns of 1 chats (1 LLM calls)",
        "1 chat(s) parked as dead letters: see brain worker status",
    ]

    status = brain("worker", "status", *FACTS, env=env)
    assert status.returncode == 0, status.stderr
    head, listed, *rest = status.stdout.splitlines()
    assert head == "queued: 0 entries (0 taken by a worker, not yet applied)"
    assert listed == "dead letters: 1 (brain worker retry --all queues them again)"
    (line,) = rest
    assert "user 'local' chat 'default'  turns up to 2  1 tries  " in line
    assert line.endswith("no JSON in the reply: 'this is not JSON at all'")
    letter = line.split()[0]
    assert re.fullmatch(r"\d+-\d+", letter)

    unknown = brain("worker", "retry", "1-0", *FACTS, env=env)
    assert (unknown.returncode, unknown.stdout) == (1, "re-queued 0 dead letter(s)\n")
    assert "1 id(s) named no dead letter" in unknown.stderr
    again = brain("worker", "retry", letter, *FACTS, env=env)
    assert (again.returncode, again.stdout) == (0, "re-queued 1 dead letter(s)\n")
    status = brain("worker", "status", *FACTS, env=env)
    assert status.stdout.splitlines() == [
        "queued: 1 entries (0 taken by a worker, not yet applied)",
        "dead letters: 0",
    ]

    openai_server.script(Chat(json.dumps({"facts": [{"text": "Lives in Rome", "category": "personal"}]})))
    applied = brain("worker", "--once", *FACTS, env=env)
    assert (applied.returncode, applied.stdout) == (0, "applied 2 turns of 1 chats (1 LLM calls)\n")
    assert brain("worker", "retry", "--all", *FACTS, env=env).stdout == "re-queued 0 dead letter(s)\n"
