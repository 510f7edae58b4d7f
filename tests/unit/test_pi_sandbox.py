"""One house per sandbox: a shell started in bubblewrap with the very command line and
environment a bot's Pi gets (``process.sandbox_argv``, ``sandbox.scrubbed_env``) lists what
it can read and write. Its own workspace, session dir and home: yes. Its agent dir: read,
never write. Another house's sessions, another bot's config, the server's agent dir, the
``var/`` secrets and the repository: not even there."""

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from dispatch.pi import layout, sandbox
from dispatch.pi.config import (
    DEMO_PROVIDER,
    PLAIN_COMPAT,
    PiModel,
    PiProvider,
    demo_provider,
    write_agent_dir,
    write_json,
)
from dispatch.pi.process import PiConfig, sandbox_argv

SECRETS = ("secret_key", "durable_streams_secret", "demo_model_secret", "arbe.sqlite3")


@pytest.fixture
def server(tmp_path, settings):
    """A server's var dir: its secrets, the server's agent dir (two providers, an auth.json
    with keys for two), and two houses' bots, each with a session and a workspace."""
    var = tmp_path / "var"
    settings.PI_HOME = var / "pi"
    for name in SECRETS:
        (var / name).parent.mkdir(parents=True, exist_ok=True)
        (var / name).write_text(f"server-{name}")
    other = PiProvider(
        baseUrl="http://127.0.0.1:9/v1",
        apiKey="other-literal-key",
        api="openai-completions",
        compat=PLAIN_COMPAT,
        models=[PiModel(id="m")],
    )
    source = write_agent_dir(var / "pi" / "agent", {DEMO_PROVIDER: demo_provider(), "other": other})
    auth = {DEMO_PROVIDER: {"type": "api_key", "key": "demo-auth"}, "openai": {"key": "sk-op"}}
    write_json(source / "auth.json", auth)
    ours = SimpleNamespace(id="a_ours", provider=DEMO_PROVIDER, api_key_env="")
    theirs = SimpleNamespace(id="a_theirs", provider="other", api_key_env="")
    mine = bot_config(ours, 1, "t_mine", source)
    elsewhere = bot_config(theirs, 2, "t_theirs", source)
    earlier = bot_config(ours, 1, "t_earlier", source)  # the same bot, another thread
    for config in (mine, elsewhere, earlier):
        config.make_dirs()
    for config in (elsewhere, earlier):
        config.session_file.write_text('{"transcript": "not yours"}\n')
        (config.workspace / "notes.txt").write_text("not yours")
    return SimpleNamespace(var=var, source=source, mine=mine, elsewhere=elsewhere, earlier=earlier)


def bot_config(bot, house_id, thread_id, source) -> PiConfig:
    """A bot's PiConfig, laid out as a reply lays it out (dispatch/conversation.py)."""
    return PiConfig(
        provider=bot.provider,
        model="demo",
        instructions="",
        session_file=layout.session_file(house_id, thread_id, bot.id, "g0"),
        workspace=layout.workspace(bot.id, thread_id),
        agent_dir=layout.bot_agent_dir(bot, source),
    )


def probe(config: PiConfig, reads: list[Path], writes: list[Path]) -> set[str]:
    """Run a shell in the bot's sandbox; the paths it could read (or list) and write."""
    can_read = 'cat "{0}" >/dev/null 2>&1 || ls "{0}" >/dev/null 2>&1 && echo "read {0}"'
    lines = [can_read.format(p) for p in reads]
    lines += [f'(echo x >> "{p}") 2>/dev/null && echo "wrote {p}"' for p in writes]
    argv = sandbox_argv(config) + ["/bin/sh", "-c", "\n".join(lines)]
    env = sandbox.scrubbed_env(config.home, config.agent_dir, config.env)
    done = subprocess.run(argv, env=env, cwd=config.workspace, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.decode().splitlines())


def test_a_bot_sandbox_holds_its_own_files_and_nothing_of_another_house(server, settings):
    assert sandbox.bubblewrap_works(), "bubblewrap must work here (make system-dep-bubblewrap)"
    mine, elsewhere, earlier = server.mine, server.elsewhere, server.earlier
    own_reads = [mine.agent_dir / "models.json", mine.agent_dir / "settings.json", mine.workspace]
    own_reads += [mine.session_file.parent, mine.home]
    foreign = [server.var / name for name in SECRETS]
    foreign += [server.source / "models.json", server.source / "auth.json", server.source]
    foreign += [elsewhere.session_file, elsewhere.session_file.parent, elsewhere.workspace]
    foreign += [elsewhere.agent_dir / "models.json", elsewhere.home]
    foreign += [earlier.session_file, earlier.workspace / "notes.txt"]
    repo = Path(settings.BASE_DIR)
    foreign += [repo / "arbe_site" / "settings.py", repo / "manage.py", repo / ".git"]
    foreign += [Path(settings.VAR_DIR) / name for name in SECRETS]
    foreign += [Path(f"/proc/{os.getpid()}/environ")]  # the server's processes: not in its PIDs
    own_writes = [mine.workspace / "out.txt", mine.session_file, mine.home / ".history"]
    config_writes = [mine.agent_dir / "models.json", mine.agent_dir / "settings.json"]
    before = (mine.agent_dir / "models.json").read_bytes()

    seen = probe(mine, own_reads + foreign, own_writes + config_writes + [mine.agent_dir / "x"])

    assert {f"read {p}" for p in own_reads} <= seen
    assert [line for line in seen if line.startswith("read") and Path(line[5:]) in foreign] == []
    assert {f"wrote {p}" for p in own_writes} <= seen
    assert not [p for p in config_writes if f"wrote {p}" in seen]
    assert (mine.agent_dir / "models.json").read_bytes() == before
    # What it may create beside its config lives in the sandbox only.
    assert not (mine.agent_dir / "x").exists()
    assert (mine.workspace / "out.txt").read_text() == "x\n"  # its own writes land


def test_a_bot_agent_dir_holds_only_its_provider(server, settings):
    mine, elsewhere = server.mine, server.elsewhere
    models = json.loads((mine.agent_dir / "models.json").read_text())
    assert list(models["providers"]) == [DEMO_PROVIDER]
    assert json.loads((mine.agent_dir / "auth.json").read_text()) == {
        DEMO_PROVIDER: {"type": "api_key", "key": "demo-auth"}
    }
    theirs = json.loads((elsewhere.agent_dir / "models.json").read_text())
    assert list(theirs["providers"]) == ["other"]
    assert not (elsewhere.agent_dir / "auth.json").exists()  # the server's has none for it
    assert mine.agent_dir != elsewhere.agent_dir and mine.home != elsewhere.home


def test_a_key_named_by_the_bot_is_the_one_its_provider_entry_reads(server):
    keyed = SimpleNamespace(id="a_keyed", provider="other", api_key_env="ARBE_BOTKEY_OTHER")
    agent_dir = layout.bot_agent_dir(keyed, server.source)
    entry = json.loads((agent_dir / "models.json").read_text())["providers"]["other"]
    assert entry["apiKey"] == "ARBE_BOTKEY_OTHER"  # not the server's literal key
