"""A bot's process holds its own key and no server secret (docs/security.md, "Bots:
secrets and sandbox"): a real reply through Pi on the loopback fake, its live processes'
``/proc/<pid>/environ`` and what its ``env`` tool call printed, scanned for every server
variable's name and every secret's value."""

import json
import os
from pathlib import Path

import pytest
from django.conf import settings

from dispatch.pi.keys import PI_VARIABLES, server_variables
from houses.models import Agent
from tests.peers.fake_llm import MODEL, PROVIDER

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]

BOT_KEY = "bot-key-7f3a"
# Values the server's environment holds in the test, beside the secrets settings hold.
PLANTED = {
    "REDIS_URL": "redis://planted-redis-secret:6379/0",
    "POSTHOG_API_KEY": "phc_planted_posthog_secret",
    "ARBE_DEMO_ADMIN_PASSWORD": "planted-admin-password",
    "OPENAI_API_KEY": "sk-planted-operator-key",
}


def secret_values() -> dict[str, str]:
    values = {
        "DURABLE_STREAMS_SECRET": settings.DURABLE_STREAMS_SECRET,
        "SECRET_KEY": settings.SECRET_KEY,
        "DEMO_MODEL_SECRET": settings.DEMO_MODEL_SECRET,
        "DATABASE_URL": settings.DATABASE_URL,
        **PLANTED,
    }
    assert all(len(v) >= 16 for v in values.values())
    return values


def secret_names() -> set[str]:
    # PATH, HOME and LANG are Pi's own (built from nothing, never copied from ours).
    return set(server_variables() - PI_VARIABLES)


def leaks(env_text: str) -> list[str]:
    names = {line.split("=", 1)[0] for line in env_text.splitlines() if "=" in line}
    found = sorted(names & secret_names())
    found += [f"value of {k}" for k, v in secret_values().items() if v in env_text]
    return found


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def pi_environments() -> dict[int, str]:
    """The environment of every process under us that runs Pi (bwrap, its init, node)."""
    envs = {}
    for pid in descendants(os.getpid()):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if b"pi-coding-agent" in cmdline:
            envs[pid] = environ.replace(b"\0", b"\n").decode(errors="replace")
    return envs


def test_a_running_bot_sees_its_key_and_no_server_secret(live, monkeypatch):
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ARBE_BOTKEY_HELPER", BOT_KEY)
    Agent.objects.filter(pk=live.world.bot.pk).update(api_key_env="ARBE_BOTKEY_HELPER")
    first = live.fake.hold()  # Pi is running and waiting on the model: look at it then
    live.post("@helper ENVTOOL")
    assert first.arrived.wait(60)  # a guard against a hang, not a timing check
    envs = pi_environments()
    first.release()
    live.settle()
    assert envs, "no Pi process found under the server"
    for pid, text in envs.items():
        assert leaks(text) == [], (pid, leaks(text))
        assert f"ARBE_BOTKEY_HELPER={BOT_KEY}" in text.splitlines()  # its own key, and
    # what a tool run by the bot sees: the env it printed, as recorded in the thread.
    [result] = [e.payload for e in live.entries() if e.type == "pi.tool_result"]
    printed = json.dumps(result.message)
    assert "PI_CODING_AGENT_DIR=" in printed and f"ARBE_BOTKEY_HELPER={BOT_KEY}" in printed
    assert leaks(printed.replace("\\n", "\n")) == []
    [prepared] = [e.payload for e in live.entries() if e.type == "signal.environment.prepared"]
    assert prepared.isolation == "bubblewrap"


@pytest.mark.parametrize("variable", ["DURABLE_STREAMS_SECRET", "SECRET_KEY", "POSTHOG_API_KEY"])
def test_a_bot_naming_a_server_secret_fails_before_pi_starts(live, settings, variable):
    """A bot stored before the rule (or by hand) still gets nothing: checked at run time."""
    settings.ARBE_BOT_KEY_ALLOW = [variable]  # an operator's list can't admit it either
    Agent.objects.filter(pk=live.world.bot.pk).update(api_key_env=variable)
    live.post("@helper hello")
    live.settle()
    [failed] = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert failed.error.startswith("no API key for fakellm: ") and failed.final
    assert "one of the server's own settings" in failed.error
    assert live.fake.requests == []  # no model call: Pi never ran
    assert not [e for e in live.entries() if e.type == "signal.environment.prepared"]


def test_a_missing_key_at_run_time_is_a_neutral_failure(live):
    os.environ.pop("ARBE_BOTKEY_NOT_THERE", None)
    Agent.objects.filter(pk=live.world.bot.pk).update(api_key_env="ARBE_BOTKEY_NOT_THERE")
    live.post("@helper hello")
    live.settle()
    [failed] = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert failed.error == f"no API key for {PROVIDER}"  # names no variable
    assert live.fake.requests == []
    page = live.client.get(f"/threads/{live.world.thread.id}/").content.decode()
    assert f"no API key for {PROVIDER}; an owner can fix it on the members page" in page
    assert MODEL  # the bot stays configured: an owner sets the variable, the next reply works


def test_a_run_of_a_bot_naming_a_server_secret_fails_before_pi_starts(live):
    Agent.objects.filter(pk=live.world.bot.pk).update(api_key_env="DURABLE_STREAMS_SECRET")
    response = live.client.post(
        f"/api/threads/{live.world.thread.id}/runs",
        json.dumps({"agent": "helper", "task": "ENVTOOL"}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    live.settle()
    [report] = [e.payload for e in live.entries() if e.type == "signal.thread.child_finished"]
    assert (report.ok, report.report) == (False, "The run failed: no API key for fakellm")
    assert live.fake.requests == []
