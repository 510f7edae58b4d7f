"""What Pi is given: its agent dir, command line and environment."""

import json
from pathlib import Path

from dispatch.pi import sandbox
from dispatch.pi.config import DEMO_PROVIDER, demo_provider, write_agent_dir
from dispatch.pi.process import PiConfig

FORBIDDEN = ("DURABLE_STREAMS_SECRET", "SECRET_KEY", "DATABASE_URL", "REDIS_URL")


def config(tmp_path, **overrides) -> PiConfig:
    fields = {
        "provider": DEMO_PROVIDER,
        "model": "demo",
        "instructions": "Be brief.",
        "session_file": tmp_path / "sessions" / "t.jsonl",
        "workspace": tmp_path / "ws",
        "agent_dir": tmp_path / "agent",
        **overrides,
    }
    return PiConfig(**fields)


def test_agent_dir_holds_models_and_settings(tmp_path, settings):
    settings.ARBE_INTERNAL_URL = "http://127.0.0.1:8123"
    path = write_agent_dir(tmp_path / "agent", {DEMO_PROVIDER: demo_provider()})
    models = json.loads((path / "models.json").read_text())
    demo = models["providers"][DEMO_PROVIDER]
    assert demo["baseUrl"] == "http://127.0.0.1:8123/demo-model/v1"
    assert demo["api"] == "openai-completions"
    # The per-install secret the demo endpoint checks, in a file only its owner reads.
    assert demo["apiKey"] == settings.DEMO_MODEL_SECRET and len(demo["apiKey"]) >= 40
    assert (path / "models.json").stat().st_mode & 0o777 == 0o600
    [model] = demo["models"]
    assert model["id"] == "demo"
    # Pi's schema wants every price present.
    assert model["cost"] == {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    pi_settings = json.loads((path / "settings.json").read_text())
    assert pi_settings["retry"] == {"enabled": False, "provider": {"maxRetries": 0}}
    assert pi_settings["compaction"] == {"enabled": False}
    assert pi_settings["quietStartup"] is True
    write_agent_dir(path, {}, compaction=True)  # rewriting in place
    assert json.loads((path / "models.json").read_text()) == {"providers": {}}
    assert sorted(p.name for p in path.iterdir()) == ["models.json", "settings.json"]


def test_command_line_is_hermetic(tmp_path):
    argv = config(tmp_path).argv()
    for flag in (
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
        "--no-context-files",
    ):
        assert flag in argv
    assert argv[argv.index("--mode") + 1] == "rpc"
    assert argv[argv.index("--session") + 1] == str(tmp_path / "sessions" / "t.jsonl")
    assert argv[argv.index("--append-system-prompt") + 1] == "Be brief."
    assert "--tools" not in argv
    assert config(tmp_path, tools=("read", "bash")).argv()[-2:] == ["--tools", "read,bash"]
    assert config(tmp_path, tools=()).argv()[-1] == "--no-tools"


def test_environment_is_built_from_scratch(tmp_path, monkeypatch):
    for name in FORBIDDEN:
        monkeypatch.setenv(name, "leak")
    env = sandbox.scrubbed_env(tmp_path / "home", tmp_path / "agent", {"BOT_KEY": "k"})
    assert set(env) == {
        "PATH",
        "HOME",
        "LANG",
        "PI_CODING_AGENT_DIR",
        "PI_OFFLINE",
        "PI_TELEMETRY",
        "PI_SKIP_VERSION_CHECK",
        "BOT_KEY",
    }
    assert env["HOME"] == str(tmp_path / "home")
    assert (env["PI_OFFLINE"], env["PI_TELEMETRY"]) == ("1", "0")


def test_bubblewrap_binds(tmp_path):
    ws, agent = tmp_path / "ws", tmp_path / "agent"
    argv = sandbox.bubblewrap_argv(workspace=ws, writable=[ws, agent])
    text = " ".join(argv)
    assert "--die-with-parent" in argv and "--unshare-pid" in argv
    assert "--unshare-net" not in argv and "--unshare-all" not in argv  # loopback models
    assert "--tmpfs /tmp" in text
    assert f"--bind {ws} {ws}" in text and f"--bind {agent} {agent}" in text
    assert f"--ro-bind {sandbox.PI_PACKAGE_DIR.resolve().parents[1]}" in text
    assert argv[-3:] == ["--chdir", str(ws), "--"]
    # The repo itself is not visible: only node_modules is bound from it.
    assert f" {sandbox.PI_PACKAGE_DIR.resolve().parents[2]} " not in f" {text} "


def test_pi_is_started_by_a_path_the_sandbox_binds(tmp_path):
    """node_modules is bound by its real path; a worktree's symlinked node_modules must not
    leave the CLI's path outside the sandbox."""
    argv = sandbox.bubblewrap_argv(workspace=tmp_path, writable=[tmp_path])
    bound = [Path(argv[i + 1]) for i, arg in enumerate(argv) if arg == "--ro-bind"]
    cli = Path(sandbox.pi_argv()[1])
    assert any(cli.is_relative_to(path) for path in bound)
