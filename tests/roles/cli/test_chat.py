"""`brain chat`, `brain memory` and `brain run` as users run them: real processes, real Valkey/Redis."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from brain import BrainMemory, RedisMemoryStore, Settings
from brain.backends.redis import RedisConnection
from brain.memory.erasure import UNREACHABLE
from tests.support.openai_server import Chat, Dynamic, Embeddings, Fault, ScriptedOpenAIServer

BRAIN = str(Path(sys.executable).parent / "brain")
ROOT = Path(__file__).resolve().parents[3]


def env_for(server: ScriptedOpenAIServer, **extra: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test", **extra}


def as_a_foreground_job() -> None:
    """Run in a spawned `brain` before exec, where a test types Ctrl-C: SIGINT back to its default, as a shell
    gives its foreground job. A shell starts a background job (pytest or CI started with `&`) with SIGINT
    ignored, and every process under it inherits that, the spawned `brain` too (Ctrl-C did nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def with_defaults(env: dict[str, str]) -> dict[str, str]:
    """`env` without the tests' configuration file: every setting at its default (facts on)."""
    return {k: v for k, v in env.items() if k != "BRAIN_CONFIG"}


def brain(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([BRAIN, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env)


async def stored(user: str = "local", chat: str = "default") -> BrainMemory:
    settings = Settings(home=Path(os.environ["BRAIN_HOME"]))
    async with await RedisConnection.open(settings) as connection:
        return await BrainMemory.loads(RedisMemoryStore(connection.client), user, chat)


async def test_restart_and_remember(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Nice to meet you, Ann."), Chat("Your name is Ann."))
    env = env_for(openai_server)
    first = brain("chat", env=env, stdin="My name is Ann.\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Nice to meet you, Ann.\n"
    second = brain("chat", env=env, stdin="What is my name?\n/exit\n")
    assert second.stdout == "Your name is Ann.\n"
    messages = openai_server.chat_requests()[1].body["messages"]
    assert [m["content"] for m in messages[1:]] == [
        "My name is Ann.",
        "Nice to meet you, Ann.",
        "What is my name?",
    ]
    assert (await stored()).turn_count == 4


SLASH_REPLIES = (
    Chat("Hello!"),
    Chat("Hello again!"),
    Chat("Welcome back!"),
    Chat("SUMMARY: Ann said hi."),
    Chat("Greetings"),
)


def slash_lines(export: Path) -> list[str]:
    return [
        "hi",
        "/knowledge add Ann is vegetarian",
        "/memory",
        "/history",
        "/rewrite Hi there!",
        "/history 3",
        "/retry",
        "/pop",
        "/history 5",
        "hi again",
        "/summarize",
        "/title",
        "/usage",
        f"/export {export}",
        "/forget",
        "y",
        "/memory",
        f"/import {export}",
        "/history 2",
        "/forget",
        "n",
        "/help",
        "/bogus",
        "/knowledge",
    ]


def assert_slash_output(out: str, export: Path, server: ScriptedOpenAIServer) -> None:
    expected = [
        "Hello!",
        "remembered",
        "knowledge: Ann is vegetarian",
        "window: 2 turns",
        "#1 User: hi\n#2 Lily: Hello!",
        "the last answer was replaced",
        "#2 Lily: Hello! (taken back)\n#3 Lily: Hi there!",
        "Hello again!",
        "took back 2 turn(s) (1 exchange(s)); they stay stored (see /history)",
        "#4 User: hi (taken back)\n#5 Lily: Hello again! (taken back)",
        "Welcome back!",
        "summary: SUMMARY: Ann said hi.",
        "title: Greetings",
        "calls: 5; prompt tokens: 50; completion tokens: 25",
        "calls per turn: [1, 1, 1]",
        f"exported 7 turns to {export}",
        "forgotten",
        "summary: (none yet)",
        "imported 7 turns",
        "#6 User: hi again\n#7 Lily: Welcome back!",
        "kept",
        "/knowledge add TEXT remember TEXT as knowledge",
        "unknown command /bogus; /help lists them",
        "usage: /knowledge add TEXT",
    ]
    position = 0
    for piece in expected:
        found = out.find(piece, position)
        assert found >= 0, f"{piece!r} not in order in:\n{out}"
        position = found + len(piece)
    data = json.loads(export.read_text())
    assert data["format"] == "brain-assistant.conversation" and "sk-test" not in export.read_text()
    retry_request = server.chat_requests()[1].body["messages"]
    assert retry_request[-1]["content"] == "hi"
    assert not any(
        m["content"] in {"Hello!", "Hi there!"} for m in retry_request
    )  # taken back: not in prompt


def test_every_slash_command_in_a_terminal(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script(*SLASH_REPLIES)
    export = tmp_path / "chat.json"
    child = pexpect.spawn(
        BRAIN,
        ["chat", "--chat", "cmds"],
        env=env_for(openai_server),
        encoding="utf-8",
        timeout=30,
        dimensions=(60, 250),
    )
    child.expect("you> ")
    out = ""
    for line in slash_lines(export):
        child.sendline(line)
        child.expect(r"\[y/N\] " if line == "/forget" else "you> ")
        out += child.before.replace("\r\n", "\n")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert_slash_output(out, export, openai_server)


def test_every_slash_command_from_a_pipe(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script(*SLASH_REPLIES)
    export = tmp_path / "chat.json"
    script = "\n".join([*slash_lines(export), "/exit", "never read"]) + "\n"
    result = brain("chat", "--chat", "cmds", env=env_for(openai_server), stdin=script)
    assert result.returncode == 0, result.stderr
    assert_slash_output(result.stdout, export, openai_server)
    assert "never read" not in result.stdout


def test_ctrl_c_cancels_the_reply_not_the_session(openai_server: ScriptedOpenAIServer) -> None:
    slow = Chat(" ".join(f"word{i}" for i in range(200)), chunk_delay=0.05)
    openai_server.script(slow, Chat("Second answer."))
    child = pexpect.spawn(
        BRAIN,
        ["chat", "--chat", "pty"],
        env=env_for(openai_server),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
        preexec_fn=as_a_foreground_job,
    )
    child.expect("you> ")
    child.sendline("Tell me a long story")
    child.expect("word3 ")
    child.sendintr()
    child.expect(r"\[reply cancelled; nothing was lost\]")
    child.expect("you> ")
    child.send("Short plese\x1b[D\x1b[Da")  # line editing: cursor left twice, insert the missing letter
    child.sendline("")
    child.expect("Second answer.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    second = openai_server.chat_requests()[1].body["messages"]
    assert second[-1]["content"] == "Short please"
    assert "word3" not in json.dumps(second)  # the cancelled reply was never stored


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_kill_or_a_closed_terminal_ends_the_chat_as_leaving_does(
    signum: int, openai_server: ScriptedOpenAIServer
) -> None:
    slow = Chat(" ".join(f"word{i}" for i in range(40)), chunk_delay=0.02)
    openai_server.script(Chat("First answer."), slow)
    child = pexpect.spawn(BRAIN, ["chat"], env=env_for(openai_server), encoding="utf-8", timeout=30)
    child.expect("you> ")
    child.sendline("hello")
    child.expect("First answer.")
    child.expect("you> ")
    valkey = int(json.loads((Path(os.environ["BRAIN_HOME"]) / "valkey" / "server.json").read_text())["pid"])
    child.sendline("Tell me a story")
    child.expect("word3 ")
    child.kill(signum)  # during a reply: it is finished first
    child.expect("word39")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 128 + signum and child.signalstatus is None  # it left, it was not killed
    assert not _running(valkey)  # its embedded Valkey stopped with it, as on /exit
    again = pexpect.spawn(BRAIN, ["chat"], env=env_for(openai_server), encoding="utf-8", timeout=30)
    again.expect("you> ")
    again.kill(signal.SIGTERM)  # at the prompt: at once
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 128 + signal.SIGTERM
    assert len(openai_server.chat_requests()) == 2  # nothing more was asked


async def test_cancelled_reply_left_memory_consistent(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat(" ".join(f"w{i}" for i in range(100)), chunk_delay=0.05))
    child = pexpect.spawn(
        BRAIN,
        ["chat", "--chat", "c2"],
        env=env_for(openai_server),
        encoding="utf-8",
        timeout=30,
        preexec_fn=as_a_foreground_job,
    )
    child.expect("you> ")
    child.sendline("Question that gets cancelled")
    child.expect("w2 ")
    child.sendintr()
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    memory = await stored(chat="c2")
    assert memory.history == [] and memory.last_talk == "Question that gets cancelled"


def test_two_processes_serving_one_chat_stay_consistent(
    openai_server: ScriptedOpenAIServer, redis_server_url: str
) -> None:
    openai_server.script(*(Chat(f"answer {i}") for i in range(6)))
    env = env_for(openai_server, BRAIN_REDIS_URL=redis_server_url)
    procs = [
        subprocess.Popen(
            [BRAIN, "chat", "--user", "u2p", "--chat", "shared"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    for i in range(6):
        proc = procs[i % 2]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"question {i}\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == f"answer {i}\n"
    for proc in procs:
        proc.communicate("/exit\n", timeout=30)
    last = openai_server.chat_requests()[-1].body["messages"]
    assert [m["content"] for m in last[1:]] == [
        x for i in range(5) for x in (f"question {i}", f"answer {i}")
    ] + ["question 5"]


def test_memory_export_import_delete(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script(Chat("A1"), Chat("A2"))
    env = env_for(openai_server)
    brain("chat", "--user", "ann", "--chat", "x", env=env, stdin="Q1\nQ2\n")
    first = brain("memory", "export", "--user", "ann", "--chat", "x", env=env)
    assert first.returncode == 0 and json.loads(first.stdout)["turns"][3]["message"]["content"] == "A2"
    refused = brain("memory", "delete", "--user", "ann", "--chat", "x", env=env)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert (
        brain("memory", "delete", "--user", "ann", "--chat", "x", "--yes", env=env).stdout
        == "deleted ann/x\n"
    )
    file = tmp_path / "x.json"
    file.write_text(first.stdout)
    imported = brain("memory", "import", "--user", "ann", "--chat", "x", str(file), env=env)
    assert imported.stdout == "imported 4 turns into ann/x\n"
    again = brain(
        "memory", "export", "--user", "ann", "--chat", "x", "--file", str(tmp_path / "y.json"), env=env
    )
    assert again.returncode == 0 and (tmp_path / "y.json").read_text() == first.stdout  # round trip exact
    twice = brain("memory", "import", "--user", "ann", "--chat", "x", str(file), env=env)
    assert twice.returncode == 1 and "already has a conversation; delete it first" in twice.stderr
    file.write_text("{}")
    broken = brain("memory", "import", "--user", "ann", "--chat", "y", str(file), env=env)
    assert broken.returncode == 1 and "not a brain-assistant conversation export" in broken.stderr


@pytest.mark.parametrize("name", ["assistant.yaml", "writer-reviewer.yaml", "research-pipeline.yaml"])
def test_shipped_deployments_validate(name: str) -> None:
    result = brain("run", str(ROOT / "config" / name), "--dry-run", env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"deployment {ROOT / 'config' / name}\n") and "pipeline:" in result.stdout


def test_run_writer_reviewer(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(
        Chat("Draft one."), Chat("- Too short."), Chat("Draft two, longer."), Chat("APPROVED")
    )
    result = brain("run", str(ROOT / "config" / "writer-reviewer.yaml"), env=env_for(openai_server))
    assert result.returncode == 0, result.stderr
    assert (
        "[Writer / Write]\nDraft two, longer." in result.stdout
        and "[Reviewer / Review]\nAPPROVED" in result.stdout
    )
    assert "stopped after n_round=4 rounds" in result.stdout


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "roles:\n  - name: W\n    actions: [{name: Write}]\n",
            r"roles\.0\.actions\.0\.instruction: Field required",
        ),
        (
            "roles:\n  - name: W\n    colour: red\n    actions: [{name: A, instruction: x}]\n",
            r"roles\.0\.colour: unknown key.*valid keys: name, class, profile",
        ),
        (
            "roles:\n  - name: W\n    llm: fancy\n    actions: [{name: A, instruction: x}]\n",
            r"roles\.0\.llm: no LLM named 'fancy'",
        ),
        ("roles: []\n", r"roles: Tuple should have at least 1 item"),
        ("roles:\n  - name: W\n", r"roles\.0\.actions: a plain role needs at least one action"),
        (
            "roles:\n  - name: W\n    class: nowhere:Nothing\n    actions: [{name: A, instruction: x}]\n"
            "pipeline: {idea: go}\n",
            r"roles\.0\.class: cannot import 'nowhere:Nothing'",
        ),
        (
            "roles:\n  - name: W\n    skills: [{name: s, description: d, entry: 'no.such:thing'}]\n"
            "    actions: [{name: A, instruction: x}]\n",
            r"roles\.0\.skills\[0\]\.entry: cannot import",
        ),
        (
            "pipeline: {idea: x}\nroles:\n  - {name: W, actions: [{name: A, instruction: x}]}\n"
            "  - {name: W, actions: [{name: A, instruction: x}]}\n",
            r"roles\.1\.name: two roles are named 'W'",
        ),
    ],
)
def test_deployment_errors_name_file_and_key(
    yaml_text: str, message: str, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(yaml_text)
    result = brain("run", str(path), env=env_for(openai_server))
    assert result.returncode != 0
    assert str(path) in result.stderr
    import re

    assert re.search(message, result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_examples_run_as_written(openai_server: ScriptedOpenAIServer) -> None:
    hiking = {"facts": [{"text": "Alice loves hiking", "category": "preferences", "valid_at": None}]}
    openai_server.script(
        Chat("Hello Alice!"),
        Chat("You love hiking."),
        Chat(json.dumps(hiking)),  # facts are on: the in-process worker applies the turns on exit
        Chat("Leaves fall\non the fjord"),
        Chat("Lovely rhythm."),
    )
    env = with_defaults(env_for(openai_server))
    first = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "assistant.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Hello Alice!\nYou love hiking.\n(2 LLM calls)\n"
    extraction = openai_server.chat_requests()[2].body
    assert (
        "User: Hi! I'm Alice and I love hiking.\nLily: Hello Alice!" in extraction["messages"][-1]["content"]
    )
    second = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "pipeline.py")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert second.returncode == 0, second.stderr
    assert (
        "[Writer] Leaves fall\non the fjord" in second.stdout and "[Reviewer] Lovely rhythm." in second.stdout
    )
    assert "done: no role has anything left to do after 2 rounds" in second.stdout


def readme_block(marker: str) -> str:
    """The README's python block that contains `marker`."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    [block] = [b for b in blocks if marker in b]
    return block


def run_python(code: str, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "example.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=90, env=env, cwd=ROOT
    )


def test_readme_library_example_runs_with_only_the_environment(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    facts = {"facts": [{"text": "Alice is vegetarian", "category": "preferences", "valid_at": None}]}
    openai_server.script(Chat("Noted, Alice!"), Chat("To Oslo, in May."), Chat(json.dumps(facts)))
    env = {**with_defaults(env_for(openai_server)), "PYTHONPATH": str(ROOT)}
    result = run_python(readme_block("Assistant.from_settings(settings"), tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted, Alice!\nTo Oslo, in May."
    first = openai_server.chat_requests()[0]
    assert first.headers.get("authorization") == "Bearer sk-test"  # the key from the environment


def test_coming_from_metagpt_runs_as_written(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    rewrite = {"related": True, "rewritten": "Book hotels in Oslo for me."}
    example = (ROOT / "examples" / "metagpt.py").read_text()
    block = readme_block("from roles.metagpt import")
    assert block.strip() in example.replace(
        'if __name__ == "__main__":\n    ', ""
    )  # README shows the example
    env = {**with_defaults(env_for(openai_server)), "PYTHONPATH": str(ROOT)}
    for code in (block, example):
        openai_server.script(Chat("Great, Oslo!"), Chat(json.dumps(rewrite)), Chat("Booked."))
        result = run_python(code, tmp_path, env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "Great, Oslo!\nBooked.\nRemember: aisle seat.\n"
    talk = openai_server.chat_requests()[-1].body["messages"][-1]["content"]
    assert talk.startswith("Book hotels there for me.") and "Book hotels in Oslo for me." in talk


def test_coming_from_llamaindex_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = run_python(readme_block('session_id="wang-advisor"'), tmp_path, env)
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    assert (
        shown.index("你是一位谨慎的理财顾问。")
        < shown.index("<memory>")
        < shown.index("用户35岁,风险偏好保守。")
    )
    assert "用户是我们的理财客户。" in shown


def test_the_tool_decorator_example_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = run_python(readme_block("@tool\nasync def get_weather("), tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Sunny in Oslo.\n"


def test_memory_load_documents(tmp_path: Path) -> None:
    notes, todo = tmp_path / "notes.md", tmp_path / "todo.txt"
    notes.write_text(
        "# Home\n\nThe boiler is serviced every October.\n\nThe spare key is under the blue pot.\n"
    )
    todo.write_text("Buy milk.\n")
    env = dict(os.environ)
    first = brain("memory", "load", str(notes), str(todo), env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"{notes}: 1 passages added\n{todo}: 1 passages added\n"
    assert brain("memory", "load", str(notes), env=env).stdout == f"{notes}: unchanged, nothing added\n"
    notes.write_text("The spare key moved to the shed.\n")
    assert (
        brain("memory", "load", str(notes), env=env).stdout
        == f"{notes}: 1 passages added, 1 old passages replaced\n"
    )
    missing = brain("memory", "load", str(tmp_path / "nope.md"), env=env)
    assert missing.returncode == 1 and "cannot read" in missing.stderr


def test_memory_load_embeds_with_progress_and_a_failed_embedding_is_retried(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    def vectors(body: dict[str, object]) -> Embeddings:
        return Embeddings(tuple((1.0, float(i)) for i, _ in enumerate(body["input"])))  # type: ignore[arg-type]

    notes = tmp_path / "notes.md"
    notes.write_text("\n\n".join(f"Paragraph {i}: " + "a few words " * 40 for i in range(3)))
    openai_server.script(Fault(500), Fault(500), Dynamic(vectors))
    env = env_for(openai_server)
    load = ["memory", "load", str(notes), "--set", "llm.embedding_model=emb", "--set", "llm.max_retries=1"]
    failed = brain(*load, env=env)
    assert failed.returncode != 0 and "HTTP 500" in failed.stderr
    again = brain(*load, "--set", "log.level=INFO", env=env)  # the failed load left no marker: this one adds
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"{notes}: 2 passages added\n"  # progress goes to the log (stderr), not a bar
    assert f"INFO brain.progress: {notes}: embedding: 0/2 passages (0%)" in again.stderr
    assert f"INFO brain.progress: {notes}: embedding: 2/2 passages done in " in again.stderr


def test_tiered_chat_commands(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat(None, tool_calls=(("send_message", {"message": "Hi Ann!"}),)))
    script = (
        "\n".join(
            [
                "/core",
                "/archival add The wifi password is on the router",
                "/archival search wifi password",
                "/archival",
                "Hello, I am Ann",
                "/memory",
            ]
        )
        + "\n"
    )
    result = brain("chat", "--set", "memory.mode=tiered", env=env_for(openai_server), stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "[persona] 39/2000 characters: I am a helpful assistant who remembers." in out
    assert "[human] 0/2000 characters: (empty)" in out
    assert "stored in archival memory" in out
    assert "1 passage(s) match:\n- The wifi password is on the router" in out
    assert "usage: /archival search QUERY, or /archival add TEXT" in out
    assert "Hi Ann!" in out and "core [human]: (empty)" in out
    tools = {t["function"]["name"] for t in openai_server.chat_requests()[0].body["tools"]}
    assert {"send_message", "core_memory_replace", "archival_memory_search", "conversation_search"} <= tools
    plain = brain("chat", env=env_for(openai_server), stdin="/core\n")
    assert "this needs the tiered memory mode" in plain.stdout


def test_agent_file_round_trip_through_the_cli(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    openai_server.script(Chat(None, tool_calls=(("send_message", {"message": "Noted."}),)))
    env = env_for(openai_server)
    brain(
        "chat",
        "--set",
        "memory.mode=tiered",
        env=env,
        stdin="/archival add Passport expires 2027\nI am Ann\n",
    )
    first = tmp_path / "agent.json"
    exported = brain("agent", "export", str(first), "--set", "memory.mode=tiered", env=env)
    assert exported.returncode == 0, exported.stderr
    empty = {**env, "BRAIN_HOME": str(tmp_path / "fresh-home")}  # another, empty embedded Valkey
    imported = brain("agent", "import", str(first), "--set", "memory.mode=tiered", env=empty)
    assert imported.returncode == 0, imported.stderr
    assert "2 turns" in imported.stdout and "1 archival passages" in imported.stdout
    second = tmp_path / "again.json"
    assert brain("agent", "export", str(second), "--set", "memory.mode=tiered", env=empty).returncode == 0
    assert second.read_text() == first.read_text()
    assert json.loads(first.read_text())["format"] == "brain-assistant.agent"


def test_tiered_assistant_deployment(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    deploy = tmp_path / "tiered.yaml"
    deploy.write_text(
        "memory: {mode: tiered}\nroles:\n  - {name: Lily, class: assistant}\n"
        "pipeline: {idea: 'Hello there', n_round: 2}\n"
    )
    openai_server.script(Chat(None, tool_calls=(("send_message", {"message": "Hi from tiered Lily"}),)))
    result = brain("run", str(deploy), env=env_for(openai_server))
    assert result.returncode == 0, result.stderr
    assert "[Lily / TalkAction]\nHi from tiered Lily" in result.stdout
    assert "core_memory_append" in json.dumps(openai_server.chat_requests()[0].body["tools"])


def test_prompt_history_recalls_earlier_lines(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("First."), Chat("Again."))
    child = pexpect.spawn(
        BRAIN, ["chat", "--chat", "history"], env=env_for(openai_server), encoding="utf-8", timeout=30
    )
    child.expect("you> ")
    child.sendline("What is the capital of Norway?")
    child.expect("First.")
    child.expect("you> ")
    child.sendline("\x1b[A")  # arrow up: the previous line comes back
    child.expect("Again.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert [r.body["messages"][-1]["content"] for r in openai_server.chat_requests()] == [
        "What is the capital of Norway?",
        "What is the capital of Norway?",
    ]


def test_two_chats_share_the_embedded_server_and_the_first_exits(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("First answer."), Chat("Second answer."))
    env = env_for(openai_server)
    first = pexpect.spawn(BRAIN, ["chat", "--chat", "one"], env=env, encoding="utf-8", timeout=30)
    first.expect("you> ")
    second = pexpect.spawn(BRAIN, ["chat", "--chat", "two"], env=env, encoding="utf-8", timeout=30)
    second.expect("you> ")
    first.sendline("hello from one")
    first.expect("First answer.")
    first.expect("you> ")
    first.sendline("/exit")
    first.expect(pexpect.EOF)
    first.close()
    second.sendline("hello from two")  # the server the first process started is still there
    second.expect("Second answer.")
    second.expect("you> ")
    second.sendline("/exit")
    second.expect(pexpect.EOF)
    second.close()
    assert first.exitstatus == 0 and second.exitstatus == 0


def test_a_failed_turn_stays_pending_and_retry_answers_it(openai_server: ScriptedOpenAIServer) -> None:
    from tests.support.openai_server import Fault, Slow

    # The client retries a 500 (max_retries: 1); the second 500 fails the turn.
    openai_server.script(Fault(500), Slow(2.5, Fault(500)), Chat("Oslo is lovely."))
    child = pexpect.spawn(
        BRAIN,
        ["chat", "--chat", "fail", "--set", "llm.max_retries=1"],
        env=env_for(openai_server),
        encoding="utf-8",
        timeout=30,
    )
    child.expect("you> ")
    child.sendline("Tell me about Oslo")
    child.expect(r"the model endpoint failed; retrying request")  # progress while the client retries
    child.expect(r"waiting for the model \(2 s\)")
    child.expect(r"error: gpt-4o-mini: HTTP 500")
    child.expect(r"your message is kept: /retry sends it again")
    child.expect("you> ")
    child.sendline("/memory")
    child.expect(r"pending \(not answered yet; /retry answers it\): Tell me about Oslo")
    child.expect("you> ")
    child.sendline("/retry")
    child.expect("Oslo is lovely.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    retried = openai_server.chat_requests()[-1].body["messages"]
    assert [m["content"] for m in retried[1:]] == ["Tell me about Oslo"]  # sent once, not doubled


def test_memory_delete_user_erases_every_tier(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    say = [Chat(tool_calls=(("send_message", {"message": f"Noted {i}."}),)) for i in range(3)]
    openai_server.script(*say)
    env = env_for(openai_server)
    tiered = ["--set", "memory.mode=tiered"]
    notes = tmp_path / "notes.md"
    notes.write_text("Ann's passport expires in 2031.\n\nAnn likes Lisbon.", encoding="utf-8")
    assert brain("memory", "load", str(notes), "--user", "ann", *tiered, env=env).returncode == 0
    for user, chat in (("ann", "c1"), ("ann", "c2"), ("bob", "c1")):
        assert brain("chat", "--user", user, "--chat", chat, *tiered, env=env, stdin="hi\n").returncode == 0
    result = brain("memory", "delete", "--user", "ann", "--yes", *tiered, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        # each chat: the question, the inner thought said with send_message (kept as a step), the answer
        "erased user 'ann': 2 chats, 6 recall entries, 1 archival passages, 0 core blocks",  # none copied
        "checked with a scan: nothing of user 'ann' remains",
        "deleted 0 API keys; not reached by an erasure:",
        *(f"  {line}" for line in UNREACHABLE),
    ]
    kept = brain("memory", "export", "--user", "bob", "--chat", "c1", env=env)
    assert len(json.loads(kept.stdout)["turns"]) == 3  # another user's memory is untouched


def test_facts_from_the_command_line(openai_server: ScriptedOpenAIServer) -> None:
    extracted = json.dumps({"facts": [{"text": "I love Chinese food", "category": "preferences"}]})
    changed = json.dumps({"facts": [{"text": "I hate Chinese food", "category": "preferences"}]})
    decision = json.dumps(
        {"memory": [{"event": "UPDATE", "id": "0", "text": "I hate Chinese food", "new": 0}]}
    )
    openai_server.script(Chat("Noted."), Chat(extracted), Chat("Noted again."), Chat(changed), Chat(decision))
    env = env_for(openai_server)
    facts = ["--set", "memory.facts.enabled=true", "--set", "memory.facts.in_process_worker=false"]
    assert brain("chat", *facts, env=env, stdin="I love Chinese food\n").returncode == 0
    first = brain("worker", "--once", *facts, env=env)
    assert first.returncode == 0 and first.stdout == "applied 2 turns of 1 chats (1 LLM calls)\n"
    assert brain("chat", *facts, env=env, stdin="Actually I hate Chinese food\n").returncode == 0
    assert brain("worker", "--once", *facts, env=env).stdout == "applied 2 turns of 1 chats (2 LLM calls)\n"
    listed = brain("memory", "facts", "--user", "local", env=env)
    assert listed.stdout.split("  ", 1)[1] == "[preferences] I hate Chinese food\n"
    every = brain("memory", "facts", "--user", "local", "--all", env=env).stdout
    assert "I love Chinese food (retired" in every
    history = brain("memory", "history", "--user", "local", env=env).stdout.splitlines()
    assert [line.split()[2] for line in history] == ["ADD", "UPDATE"]
    undo = brain("memory", "rollback", history[-1].split()[0], "--user", "local", env=env)
    assert undo.returncode == 0, undo.stderr
    again = brain("memory", "facts", "--user", "local", env=env).stdout
    assert again.split("  ", 1)[1] == "[preferences] I love Chinese food\n"


def test_a_stopped_worker_applies_what_it_holds(openai_server: ScriptedOpenAIServer) -> None:
    extracted = json.dumps({"facts": [{"text": "Lives in Rome", "category": "personal"}]})
    openai_server.script(Chat("Noted."), Chat(extracted))
    env = env_for(openai_server)
    facts = ["--set", "memory.facts.enabled=true", "--set", "memory.facts.in_process_worker=false"]
    held = [*facts, "--set", "memory.facts.idle_seconds=600"]  # it would hold the turns for 10 minutes
    worker = subprocess.Popen(
        [BRAIN, "worker", *held], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert worker.stderr is not None
        while "applying queued turns" not in worker.stderr.readline():  # started, signals handled
            assert worker.poll() is None
        assert brain("chat", *facts, env=env, stdin="I live in Rome\n").returncode == 0
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=30)
    finally:
        worker.kill()
    assert worker.returncode == 0, err
    assert out == "applied 2 turns of 1 chats (1 LLM calls)\n"
    listed = brain("memory", "facts", "--user", "local", env=env)
    assert listed.stdout.split("  ", 1)[1] == "[personal] Lives in Rome\n"


def test_graph_memory_from_the_command_line(openai_server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    extracted = json.dumps({"facts": [{"text": "Caroline adopted a dog named Rex", "category": "personal"}]})
    graph = {
        "entities": [{"name": "Caroline", "type": "person"}, {"name": "Rex", "type": "animal"}],
        "relations": [{"source": "Caroline", "relation": "adopted", "target": "Rex"}],
    }
    openai_server.script(Chat("Lovely."), Chat(extracted), Chat(None, tool_calls=(("record_graph", graph),)))
    env = env_for(openai_server)
    on = [
        "--set", "memory.facts.enabled=true",
        "--set", "memory.facts.in_process_worker=false",
        "--set", "memory.graph.enabled=true",
    ]  # fmt: skip
    chat = brain("chat", "--user", "caroline", *on, env=env, stdin="I adopted a dog named Rex\n")
    assert chat.returncode == 0, chat.stderr
    assert brain("worker", "--once", *on, env=env).stdout == "applied 2 turns of 1 chats (2 LLM calls)\n"
    asked = openai_server.requests[-1].body
    assert [t["function"]["name"] for t in asked["tools"]] == ["record_graph"]
    as_json = json.loads(brain("memory", "graph", "--user", "caroline", "--format", "json", env=env).stdout)
    assert sorted(e["name"] for e in as_json["entities"]) == ["Caroline", "Rex"]
    assert [r["relation"] for r in as_json["relations"]] == ["adopted"]
    mermaid = brain("memory", "graph", "--user", "caroline", env=env).stdout
    assert mermaid.startswith("flowchart LR") and "-->|adopted|" in mermaid and '["Caroline"]' in mermaid
    dot = brain("memory", "graph", "--user", "caroline", "--entity", "rex", "--format", "dot", env=env).stdout
    assert dot.startswith("digraph memory") and 'label="adopted"' in dot
    picture = brain("memory", "graph", "--user", "caroline", "--out", str(tmp_path / "g.svg"), env=env)
    assert picture.returncode == 0, picture.stderr
    assert (tmp_path / "g.svg").exists() or "flowchart LR" in (tmp_path / "g.mmd").read_text(encoding="utf-8")
    repl = brain("chat", "--user", "caroline", *on, env=env, stdin="/graph Caroline\n/graph Nobody\n")
    assert "- Caroline -adopted-> Rex" in repl.stdout and "knows no 'Nobody'" in repl.stdout
    history = brain("memory", "history", "--user", "caroline", env=env).stdout.splitlines()
    added = next(line for line in history if " relation " in line)
    undo = brain("memory", "rollback", added.split()[0], "--user", "caroline", env=env)
    assert undo.returncode == 0 and "a relation" in undo.stdout, undo.stderr
    assert "adopted" not in brain("memory", "graph", "--user", "caroline", "--format", "json", env=env).stdout
    other = json.loads(brain("memory", "graph", "--user", "bob", "--format", "json", env=env).stdout)
    assert other == {"entities": [], "relations": []}


def test_erasing_a_user_then_compacting_leaves_nothing_of_them_on_disk(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Chat("Noted."))
    env = env_for(openai_server)
    brain("chat", "--user", "zoe", "--chat", "x", env=env, stdin="my locker code is zq7731\n")
    home = Path(env["BRAIN_HOME"])

    def on_disk() -> bool:
        return any(b"zq7731" in p.read_bytes() for p in home.rglob("*") if p.is_file() and "aof" in str(p))

    assert on_disk()  # the append-only file keeps what was written
    erased = brain("memory", "delete", "--user", "zoe", "--yes", env=env)
    assert erased.returncode == 0 and "append-only file" in erased.stdout  # said, not hidden
    compacted = brain("memory", "compact", env=env)
    assert compacted.returncode == 0, compacted.stderr
    assert compacted.stdout == "the append-only file was rewritten\n"
    assert not on_disk()


def test_memory_backfill_learns_facts_as_of_the_turns_times(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    fact = {
        "text": "Lives in Oslo",
        "key": "user.city",
        "value": "Oslo",
        "category": "personal",
        "valid_at": None,
    }
    openai_server.script(Chat(json.dumps({"facts": [fact]})))
    env = with_defaults(env_for(openai_server))
    lines = [
        {"role": "user", "content": "I live in Oslo.", "created_at": "2024-03-01T09:30:00Z"},
        {"role": "assistant", "content": "Noted.", "created_at": "2024-03-01T09:30:05Z"},
    ]
    file = tmp_path / "turns.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    done = brain("memory", "backfill", "--user", "bo", "--chat", "old", str(file), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "loaded 2 messages into bo/old\nfacts learned from 2 turns with 1 model calls\n"
    prompt = openai_server.chat_requests()[-1].body["messages"][1]["content"]
    assert "[2024-03-01 09:30]\nUser: I live in Oslo." in prompt
    then = brain("memory", "facts", "--user", "bo", "--as-of", "2024-03-02", env=env)
    before = brain("memory", "facts", "--user", "bo", "--as-of", "2024-02-28", env=env)
    assert "user.city: Lives in Oslo" in then.stdout and before.stdout == ""
    file.write_text(json.dumps(lines[0]) + "\n" + '{"role": "user"}\n')
    broken = brain("memory", "backfill", "--user", "bo", "--chat", "other", str(file), env=env)
    assert broken.returncode == 1 and "turns.jsonl:2: not a message: content" in broken.stderr


def test_memory_stats_shows_what_each_kind_of_memory_costs(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Hello!"))
    env = env_for(openai_server)
    assert brain("chat", "--user", "sten", env=env, stdin="hi\n").returncode == 0
    mine = brain("memory", "stats", "--user", "sten", env=env)
    assert mine.returncode == 0, mine.stderr
    lines = mine.stdout.splitlines()
    assert lines[0].split() == ["memory", "keys", "bytes", "share"] and lines[-2].startswith("total")
    assert any(line.split()[0] == "conversation" and int(line.split()[1]) > 0 for line in lines[1:-2])
    assert "'sten'" in lines[-2]
    assert lines[-1].startswith("fact queue: ") and " of 10,000 entries (" in lines[-1]
    assert lines[-1].endswith("0 dropped at the bound; 0 dead letters of 1,000, 0 trimmed")
    everything = brain("memory", "stats", env=env)
    assert everything.returncode == 0 and everything.stdout.splitlines()[-2].startswith("total")
