"""MemGPT's CLI in `brain chat`, run as users run it (a real process, its input piped, a scripted model):
`/pop` by exchanges, `/dump` of the main context, `/rethink`, `/heartbeat`, `/memorywarning`, `/attach`,
`/save`, `/history`, and `--persona`/`--human` with `--update-persona`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.roles.cli.test_chat import BRAIN, ROOT, brain, env_for
from tests.support.openai_server import Chat, Dynamic, Embeddings, Fault, ScriptedOpenAIServer

TIERED = ("--set", "memory.mode=tiered")


def said(text: str) -> Chat:
    """A tiered-mode answer: the model's `send_message` call."""
    return Chat(None, tool_calls=(("send_message", {"message": text}),))


def lines_in_order(out: str, expected: list[str]) -> None:
    position = 0
    for piece in expected:
        found = out.find(piece, position)
        assert found >= 0, f"{piece!r} not in order in:\n{out}"
        position = found + len(piece)


def contents(server: ScriptedOpenAIServer, request: int) -> list[str]:
    """The texts of a chat request's messages after the system message."""
    return [m["content"] for m in server.chat_requests()[request].body["messages"][1:]]


def test_pop_takes_back_exchanges_and_retry_and_rewrite_still_work(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(
        Chat("Answer one."),
        Chat("Answer two."),
        Chat("Answer one again."),
        Fault(500),
        Chat("Answer one, once more."),
    )
    script = [
        "first question",
        "second question",
        "/pop",
        "/retry",
        "/rewrite Rewritten one.",
        "third question",  # fails: pending
        "/pop",  # the unanswered question is the newest exchange
        "/retry",
        "/pop 2",
        "/retry",
        "/history 20",
    ]
    env = env_for(openai_server)
    result = brain("chat", "--set", "llm.max_retries=0", env=env, stdin="\n".join(script) + "\n")
    assert result.returncode == 0, result.stderr
    lines_in_order(
        result.stdout,
        [
            "Answer one.",
            "Answer two.",
            "took back 2 turn(s) (1 exchange(s)); they stay stored (see /history)",
            "Answer one again.",
            "the last answer was replaced",
            "took back the unanswered question (1 exchange(s))",
            "Answer one, once more.",
            "took back 2 turn(s) (1 exchange(s))",
            "error: nothing to retry",
            "#1 User: first question (taken back)",
            "#3 User: second question (taken back)",
            "#4 Lily: Answer two. (taken back)",
            "#9 Lily: Answer one, once more. (taken back)",
        ],
    )
    assert "/retry sends it again" in result.stderr  # the failed turn
    assert contents(openai_server, 2) == ["first question"]  # /retry after /pop: the first exchange again
    assert contents(openai_server, -1) == ["first question"]  # no dangling or pending question was sent


def test_pop_removes_a_dangling_question_with_its_exchange(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    turns = [("user", "Where is Bergen?"), ("assistant", "On the west coast."), ("user", "And Tromsø?")]
    file = tmp_path / "turns.jsonl"
    file.write_text(
        "".join(
            json.dumps({"role": r, "content": c, "created_at": f"2024-03-01T09:3{i}:00Z"}) + "\n"
            for i, (r, c) in enumerate(turns)
        )
    )
    env = env_for(openai_server)
    assert brain("memory", "backfill", "--user", "bo", "--chat", "old", str(file), env=env).returncode == 0
    openai_server.script(Chat("Bergen is on the west coast of Norway."))
    script = "/pop\n/rewrite West coast, by the sea.\n/retry\n"
    result = brain("chat", "--user", "bo", "--chat", "old", env=env, stdin=script)
    assert result.returncode == 0, result.stderr
    lines_in_order(
        result.stdout,
        [
            "took back 1 turn(s) (1 exchange(s))",
            "the last answer was replaced",
            "Bergen is on the west coast of Norway.",
        ],
    )
    assert contents(openai_server, 0) == ["Where is Bergen?"]


def test_dump_shows_the_main_context(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    persona = tmp_path / "sam.txt"
    persona.write_text("I am Sam, a cheerful travel agent.\n")
    openai_server.script(said("Hello Ann!"), Chat("SUMMARY: Ann said hello."))
    script = "hi\n/dump 1\n/summarize\n/dump\n/dump x\n"
    args = ("chat", *TIERED, "--persona", str(persona), "--human", "Ann, vegetarian, lives in Oslo.")
    result = brain(*args, env=env_for(openai_server), stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    first, _, second = out.partition("summary: SUMMARY")
    lines_in_order(
        first,
        [
            "Hello Ann!",
            "main context: the system message and 2 of the window's 2 messages, ",
            "[system]\nYou are Lily",
            "You have memory tools",
            "I am Sam, a cheerful travel agent.",
            "Ann, vegetarian, lives in Oslo.",
            "[messages: the last 1]\n#2 Lily: Hello Ann!",
        ],
    )
    assert "#1 User: hi" not in first
    lines_in_order(
        second,
        [
            "main context: the system message and 0 of the window's 0 messages",
            "SUMMARY: Ann said hello.",  # the memory section: summary, then core memory
            "I am Sam, a cheerful travel agent.",
            "[messages: none]",
            "error: /dump: 'x' is not a number of messages; usage: /dump [n]",
        ],
    )
    system = openai_server.chat_requests()[0].body["messages"][0]["content"]
    assert "I am Sam, a cheerful travel agent." in system and "Ann, vegetarian" in system


def test_rethink_replaces_what_the_agent_remembers_saying(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Hello!"), Chat("Fine, thanks."))
    script = "hi\n/rethink I should greet Ann by her name.\nhow are you?\n/rethink\n"
    result = brain("chat", env=env_for(openai_server), stdin=script)
    assert result.returncode == 0, result.stderr
    lines_in_order(
        result.stdout,
        [
            "Hello!",
            "the agent's last message was replaced",
            "Fine, thanks.",
            "usage: /rethink TEXT",
        ],
    )
    assert contents(openai_server, 1) == ["hi", "I should greet Ann by her name.", "how are you?"]


def test_heartbeat_and_memorywarning_reach_the_agent_as_system_events(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Chat("Still here."), Chat("I will save what matters."))
    result = brain("chat", env=env_for(openai_server), stdin="/heartbeat\n/memorywarning\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Still here.\nI will save what matters.\n"
    heartbeat = json.loads(contents(openai_server, 0)[-1])
    assert heartbeat["type"] == "heartbeat" and heartbeat["reason"] == "Automated timer" and heartbeat["time"]
    warning = json.loads(contents(openai_server, 1)[-1])
    assert warning["type"] == "system_alert"
    assert re.fullmatch(
        r"Memory pressure: the conversation fills \d+% of your context window\. Save anything important "
        r"to core or archival memory now; older messages will be summarized\.",
        warning["message"],
    )


def test_attach_loads_a_file_into_archival_memory_with_progress(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def vectors(body: dict[str, object]) -> Embeddings:
        return Embeddings(tuple((1.0, float(i)) for i, _ in enumerate(body["input"])))  # type: ignore[arg-type]

    notes = tmp_path / "notes.md"
    notes.write_text("# Home\n\nThe spare key is under the blue pot.\n")
    openai_server.script(Dynamic(vectors))
    script = f"/attach {notes}\n/attach {notes}\n/attach\n/attach {tmp_path / 'nope.md'}\n"
    embedded = ("--set", "llm.embedding_model=emb", "--set", "log.level=INFO")
    result = brain("chat", *embedded, env=env_for(openai_server), stdin=script)
    assert result.returncode == 0, result.stderr
    lines_in_order(
        result.stdout,
        [
            f"{notes}: 1 passages added",
            "(the agent searches archival memory in memory.mode: tiered)",
            f"{notes}: unchanged, nothing added",
            "usage: /attach FILE",
            f"error: /attach: cannot read {tmp_path / 'nope.md'}",
        ],
    )
    assert f"INFO brain.progress: {notes}: embedding: 0/1 passages (0%)" in result.stderr
    tiered = brain("chat", *TIERED, env=env_for(openai_server), stdin="/archival search spare key\n")
    assert "1 passage(s) match:\n- " in tiered.stdout and "blue pot" in tiered.stdout


def test_save_writes_the_chat_to_a_new_file(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Hello!"))
    env = env_for(openai_server)
    result = brain("chat", env=env, stdin="hi\n/save\n/save\n/save here.json\n")
    assert result.returncode == 0, result.stderr
    paths = re.findall(
        r"saved 2 turns to (\S+\.json) \(/import or brain memory import loads it\)", result.stdout
    )
    assert len(paths) == 2 and paths[0] != paths[1], result.stdout
    home = Path(os.environ["BRAIN_HOME"])
    assert all(Path(p).parent == home / "saves" and Path(p).name.startswith("local.default.") for p in paths)
    assert json.loads(Path(paths[0]).read_text())["format"] == "brain-assistant.conversation"
    assert "usage: /save" in result.stdout
    loaded = brain("memory", "import", "--user", "local", "--chat", "copy", paths[0], env=env)
    assert loaded.returncode == 0 and "imported 2 turns" in loaded.stdout


def test_persona_of_an_existing_agent_changes_only_with_update_persona(
    openai_server: ScriptedOpenAIServer,
) -> None:
    env = env_for(openai_server)

    def core(*flags: str, user: str = "ann") -> subprocess.CompletedProcess[str]:
        return brain("chat", *TIERED, "--user", user, *flags, env=env, stdin="/core\n")

    first = core("--persona", "I am Sam.", "--human", "Ann from Oslo.")
    assert first.returncode == 0, first.stderr
    assert "[persona] 9/2000 characters: I am Sam." in first.stdout
    assert "[human] 14/2000 characters: Ann from Oslo." in first.stdout
    assert "I am Sam." in core().stdout  # stored with the agent: no flag needed again
    refused = core("--persona", "I am Max.")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "brain: agent 'Lily' of user 'ann' already has a persona that differs from --persona: "
        "add --update-persona to replace it"
    ]
    assert "I am Sam." in core().stdout  # nothing was changed
    assert core("--persona", "I am Sam.").returncode == 0  # the same persona is no change
    updated = core("--persona", "I am Max.", "--update-persona")
    assert updated.returncode == 0 and "[persona] 9/2000 characters: I am Max." in updated.stdout
    alone = core("--update-persona")
    assert alone.returncode == 2 and "--update-persona needs --persona or --human" in alone.stderr
    openai_server.script(said("Hi."))
    assert brain("chat", *TIERED, "--user", "bo", env=env, stdin="hi\n").returncode == 0
    started = core("--human", "Bo.", user="bo")  # a chat with turns is an existing agent
    assert started.returncode == 2 and "already has a human that differs from --human" in started.stderr


def test_persona_from_the_settings_seeds_a_new_agent_only(openai_server: ScriptedOpenAIServer) -> None:
    env = env_for(openai_server)

    def core(persona: str, *flags: str) -> subprocess.CompletedProcess[str]:
        seed = ("--set", f"agent.persona={persona}")
        return brain("chat", *TIERED, *seed, "--user", "cy", *flags, env=env, stdin="/core\n")

    first = core("I am Sam.")
    assert first.returncode == 0 and "[persona] 9/2000 characters: I am Sam." in first.stdout
    kept = core("I am Max.")  # YAML is a seed: the existing agent keeps its own, and starts
    assert kept.returncode == 0 and "I am Sam." in kept.stdout and kept.stderr == ""
    updated = core("I am Max.", "--update-persona")
    assert updated.returncode == 0 and "[persona] 9/2000 characters: I am Max." in updated.stdout


def test_persona_and_human_in_the_brain_mode_system_prompt(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    persona = tmp_path / "persona.md"
    persona.write_text("I am Sam, a terse travel agent.")
    openai_server.script(Chat("Hi."))
    flags = ("--persona", str(persona), "--human", "Ann, vegetarian.")
    assert brain("chat", *flags, env=env_for(openai_server), stdin="hi\n").returncode == 0
    system = openai_server.chat_requests()[0].body["messages"][0]["content"]
    assert "I am Sam, a terse travel agent." in system
    assert "What you know about the user: Ann, vegetarian." in system
    empty = brain("chat", "--persona", " ", env=env_for(openai_server))
    assert empty.returncode == 2 and "--persona is empty" in empty.stderr


def test_help_lists_the_memgpt_commands(openai_server: ScriptedOpenAIServer) -> None:
    result = brain("chat", env=env_for(openai_server), stdin="/help\n")
    for command in (
        "/pop [n]",
        "/dump [n]",
        "/history [n]",
        "/rethink TEXT",
        "/rewrite TEXT",
        "/heartbeat",
        "/memorywarning",
        "/attach FILE",
        "/save",
    ):
        assert f"\n  {command} " in result.stdout, command


EXAMPLE = """\
brain chat --set memory.mode=tiered --persona "I am Sam, a cheerful travel agent." \\
  --human "Ann, vegetarian, lives in Oslo." <<'EOF'
Plan me a weekend in Bergen.
/rewrite Bergen: the fish market's vegetarian stalls on Saturday, Mount Fløyen on Sunday.
/heartbeat
/pop
/dump 2
/save
EOF
"""
"""The session of the README's "Coming from MemGPT/Letta", as it is shown there."""


def test_the_memgpt_example_runs_as_written(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(said("Bergen it is!"), said("Nothing new, Ann."))
    env = {**env_for(openai_server), "PATH": f"{Path(BRAIN).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", EXAMPLE], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    lines_in_order(
        result.stdout,
        [
            "Bergen it is!",
            "the last answer was replaced",
            "Nothing new, Ann.",
            "took back 2 turn(s) (1 exchange(s))",
            "I am Sam, a cheerful travel agent.",
            "[messages: the last 2]\n#1 User: Plan me a weekend in Bergen.\n#3 Lily: Bergen: the fish market",
            "saved 5 turns to ",  # every stored turn, the taken-back ones too,
        ],
    )
    heartbeat = contents(openai_server, 1)
    assert heartbeat[:2] == [
        "Plan me a weekend in Bergen.",
        "Bergen: the fish market's vegetarian stalls on Saturday, Mount Fløyen on Sunday.",
    ]
    assert json.loads(heartbeat[-1])["type"] == "heartbeat"


def test_the_readme_shows_the_memgpt_example() -> None:
    assert EXAMPLE in (ROOT / "README.md").read_text(), (
        "the README's 'Coming from MemGPT/Letta' lacks EXAMPLE"
    )


def test_exchanges_are_counted_from_the_newest_turn() -> None:
    from brain.message import Message
    from brain.storage.conversation import Turn
    from roles.operations import exchange_turns

    def turns(roles: str) -> list[Turn]:
        kinds = {"u": "user", "a": "assistant", "t": "tool"}
        return [Turn(i, 1, Message(role=kinds[r], content=r)) for i, r in enumerate(roles, 1)]

    assert exchange_turns(turns("uaua"), 1) == (2, 1)
    assert exchange_turns(turns("uatta"), 1) == (5, 1)  # a question, its steps and its answer
    assert exchange_turns(turns("uau"), 1) == (1, 1)  # a dangling question is an exchange of its own
    assert exchange_turns(turns("uau"), 2) == (3, 2)
    assert exchange_turns(turns("aaua"), 3) == (4, 2)  # answers with no question before them: one
    assert exchange_turns(turns(""), 2) == (0, 0)
    assert exchange_turns(turns("ua"), 0) == (0, 0)
