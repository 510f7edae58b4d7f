"""Which server variable a bot may take its key from, and what its Pi is handed."""

import ast
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from dispatch.pi import sandbox
from dispatch.pi.config import PLAIN_COMPAT, PiModel, PiProvider, write_agent_dir
from dispatch.pi.keys import name_problem, server_variables
from dispatch.pi.providers import config_problem, key_environment, key_plan, setting_problem

SETTINGS_FILE = Path(django_settings.BASE_DIR) / "arbe_site" / "settings.py"
SECRETS = ("DURABLE_STREAMS_SECRET", "SECRET_KEY", "DATABASE_URL", "REDIS_URL")
SECRETS += ("DEMO_MODEL_SECRET", "POSTHOG_API_KEY")


def settings_variables() -> set[str]:
    """Every name arbe_site/settings.py passes to env_str, env_int, env_bool or env_list."""
    names = set()
    for node in ast.walk(ast.parse(SETTINGS_FILE.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("env_")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(node.args[0].value)
    return names


@pytest.fixture
def agent_dir(tmp_path):
    keyed = PiProvider(
        baseUrl="http://127.0.0.1:9/v1",
        apiKey="ARBE_BOTKEY_TEAM",  # names a variable
        api="openai-completions",
        compat=PLAIN_COMPAT,
        models=[PiModel(id="m")],
    )
    literal = PiProvider(
        baseUrl="http://127.0.0.1:9/v1",
        apiKey="sk-literal",
        api="openai-completions",
        models=[PiModel(id="m")],
    )
    providers = {"keyed": keyed, "literal": literal}
    return write_agent_dir(tmp_path / "agent", providers)


def test_every_setting_the_server_reads_is_refused_whatever_the_operator_allows(settings):
    names = settings_variables()
    assert set(SECRETS) <= names and len(names) >= 25
    assert {n.upper() for n in names} <= server_variables()
    settings.ARBE_BOT_KEY_ALLOW = sorted(names)
    for prefix in ("", "D", "S", "ARBE_", "DURABLE_STREAMS_", "SECRET_KEY"):
        settings.ARBE_BOT_KEY_PREFIX = prefix
        for name in names:
            assert "server's own settings" in name_problem(name), (prefix, name)
        assert "server's own settings" in name_problem("secret_key")  # any case
    for name in ("ARBE_TOKEN", "ARBE_DEMO_ADMIN_PASSWORD", "PATH", "PI_CODING_AGENT_DIR"):
        assert "server's own settings" in name_problem(name)


def test_a_key_variable_needs_the_prefix_or_the_list(settings):
    assert name_problem("ARBE_BOTKEY_TEAM") is None
    assert name_problem("OPENAI_API_KEY") == (
        "OPENAI_API_KEY is not a bot key variable (its name must start with ARBE_BOTKEY_ or "
        "be listed in ARBE_BOT_KEY_ALLOW)"
    )
    settings.ARBE_BOT_KEY_ALLOW = ["OPENAI_API_KEY"]
    assert name_problem("OPENAI_API_KEY") is None
    settings.ARBE_BOT_KEY_PREFIX = ""  # no prefix: only the list
    assert "must be listed in ARBE_BOT_KEY_ALLOW" in name_problem("ARBE_BOTKEY_TEAM")
    assert name_problem("OPENAI_API_KEY") is None


def test_a_configuration_is_judged_on_names_never_on_what_is_set(agent_dir, monkeypatch):
    answers = []
    for present in (False, True):
        for name in ("ARBE_BOTKEY_X", "OPENAI_API_KEY", "DURABLE_STREAMS_SECRET", "ANY_NAME"):
            if present:
                monkeypatch.setenv(name, "value")
            else:
                monkeypatch.delenv(name, raising=False)
        answers.append(
            [
                setting_problem("openai", "ARBE_BOTKEY_X", agent_dir),
                setting_problem("openai", "", agent_dir),
                setting_problem("openai", "DURABLE_STREAMS_SECRET", agent_dir),
                setting_problem("keyed", "ANY_NAME", agent_dir),
                setting_problem("literal", "", agent_dir),
            ]
        )
    assert answers[0] == answers[1]
    ok, default, secret, other, literal = answers[0]
    assert ok is None and literal is None
    assert default[0] == "api_key_env" and "name a key variable for openai" in default[1]
    assert "server's own settings" in secret[1] and "not a bot key variable" in other[1]


def test_a_missing_key_at_run_time_names_no_variable(agent_dir):
    environ = {}
    assert config_problem("openai", "ARBE_BOTKEY_X", agent_dir, environ) == (
        "api_key_env",
        "no API key for openai",
    )
    refused = config_problem("openai", "SECRET_KEY", agent_dir, {"SECRET_KEY": "s"})
    assert refused[1].startswith("no API key for openai: SECRET_KEY is one of")
    assert config_problem("openai", "ARBE_BOTKEY_X", agent_dir, {"ARBE_BOTKEY_X": "k"}) is None


def test_the_key_reaches_pi_under_the_name_its_provider_reads(agent_dir, settings):
    environ = {"ARBE_BOTKEY_X": "bot-key", "OPENAI_API_KEY": "operator-key", "SECRET_KEY": "s"}
    # A built-in provider reads OPENAI_API_KEY: the bot's key is handed under that name.
    assert key_plan("openai", "ARBE_BOTKEY_X", agent_dir) == ("ARBE_BOTKEY_X", "OPENAI_API_KEY")
    assert key_environment("openai", "ARBE_BOTKEY_X", agent_dir, environ) == {
        "OPENAI_API_KEY": "bot-key"
    }
    # No api_key_env: the provider's usual variable, only if the operator listed it.
    assert key_environment("openai", "", agent_dir, environ) == {}
    settings.ARBE_BOT_KEY_ALLOW = ["OPENAI_API_KEY"]
    assert key_environment("openai", "", agent_dir, environ) == {"OPENAI_API_KEY": "operator-key"}
    settings.ARBE_BOT_KEY_ALLOW = ["SECRET_KEY"]
    assert key_environment("openai", "SECRET_KEY", agent_dir, environ) == {}
    # models.json providers: the variable their apiKey names, or none for a literal key.
    assert key_environment("keyed", "", agent_dir, {"ARBE_BOTKEY_TEAM": "t"}) == {
        "ARBE_BOTKEY_TEAM": "t"
    }
    assert key_environment("literal", "", agent_dir, environ) == {}
    assert key_plan("literal", "ARBE_BOTKEY_X", agent_dir) == ("ARBE_BOTKEY_X", "ARBE_BOTKEY_X")


def test_a_key_cannot_replace_pis_own_environment(tmp_path):
    extra = {"PATH": "/evil", "PI_CODING_AGENT_DIR": "/shared", "ARBE_BOTKEY_X": "k"}
    env = sandbox.scrubbed_env(tmp_path / "home", tmp_path / "agent", extra)
    assert env["PI_CODING_AGENT_DIR"] == str(tmp_path / "agent") and env["PATH"] != "/evil"
    assert env["ARBE_BOTKEY_X"] == "k"


def test_a_provider_reading_a_server_setting_gets_no_key(tmp_path):
    leaky = PiProvider(
        baseUrl="http://127.0.0.1:9/v1",
        apiKey="SECRET_KEY",  # an operator's models.json naming a server setting
        api="openai-completions",
        models=[PiModel(id="m")],
    )
    agent_dir = write_agent_dir(tmp_path / "agent", {"leaky": leaky})
    environ = {"ARBE_BOTKEY_X": "k", "SECRET_KEY": "s"}
    assert setting_problem("leaky", "ARBE_BOTKEY_X", agent_dir) == (
        "provider",
        "leaky reads its key from SECRET_KEY, a server setting",
    )
    assert config_problem("leaky", "ARBE_BOTKEY_X", agent_dir, environ)[1].startswith(
        "no API key for leaky: "
    )
    assert key_environment("leaky", "ARBE_BOTKEY_X", agent_dir, environ) == {}
    assert key_environment("leaky", "", agent_dir, environ) == {}
