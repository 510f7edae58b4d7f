"""The ground floor: model rules, settings from the environment, deploy checks, the demo seed."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.urls import reverse

from houses.membership import LastOwnerError, add_member, remove_member, set_role
from houses.models import Agent, ApiToken, House, Membership, token_digest
from tests.factories import make_bot, make_house, make_user
from threads.models import Thread

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_one_membership_per_user_and_house():
    owner = make_user("olive")
    house = make_house("h", owner=owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(house=house, user=owner, role="member")


def test_role_must_be_known():
    house = make_house("h")
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(house=house, user=make_user("x"), role="admin")


def test_the_last_owner_can_neither_leave_nor_step_down():
    owner = make_user("olive")
    house = make_house("h", owner=owner)
    membership = Membership.objects.get(house=house, user=owner)
    with pytest.raises(LastOwnerError):
        remove_member(membership)
    with pytest.raises(LastOwnerError):
        set_role(membership, Membership.Role.MEMBER)
    assert Membership.objects.filter(house=house, role="owner").count() == 1


def test_an_owner_can_leave_once_another_owner_exists():
    olive, otto = make_user("olive"), make_user("otto")
    house = make_house("h", owner=olive)
    add_member(house, otto, Membership.Role.OWNER)
    remove_member(Membership.objects.get(house=house, user=olive))
    assert list(house.memberships.values_list("user__username", flat=True)) == ["otto"]


def test_every_person_gets_a_principal_with_a_free_handle():
    first, second = make_user("Sam"), make_user("sam")
    assert first.agent.kind == Agent.Kind.PERSON
    assert first.agent.id.startswith("ag_")
    assert {first.agent.handle, second.agent.handle} == {"sam", "sam2"}


def test_an_agent_is_either_a_person_or_a_bot():
    house = make_house("h")
    with pytest.raises(IntegrityError), transaction.atomic():
        Agent.objects.create(kind="bot", display_name="Homeless", handle="h")
    with pytest.raises(IntegrityError), transaction.atomic():
        Agent.objects.create(kind="person", house=house, display_name="P", handle="p")


def test_bot_handles_are_unique_per_house_only():
    a, b = make_house("a"), make_house("b")
    make_bot(a, "helper")
    make_bot(b, "helper")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_bot(a, "helper")


def test_api_tokens_are_stored_as_digests():
    user = make_user("olive")
    token, raw = ApiToken.issue(user, "laptop")
    assert raw.startswith("arbe_")
    assert raw not in token.digest
    assert token.digest == token_digest(raw)


def test_a_thread_has_a_short_random_id_and_an_idle_record():
    house = make_house("h")
    thread = Thread.objects.create(house=house, title="t")
    assert len(thread.id) == 10
    assert (thread.status, thread.status_rev, thread.stream_name) == (
        "idle",
        0,
        f"arbe-thread-{thread.id}",
    )


@pytest.mark.django_db(transaction=True)
def test_seed_demo_is_idempotent(capsys):
    call_command("seed_demo")
    first = capsys.readouterr().out
    call_command("seed_demo")
    second = capsys.readouterr().out
    assert "Shown once" in first and "not shown again" not in first
    assert "(set earlier, not shown again)" in second  # passwords print only when set
    house = House.objects.get(slug="demo")
    assert house.memberships.count() == 2
    assert house.bots.count() == 1
    assert house.threads.count() == 1


@pytest.mark.django_db(transaction=True)
def test_seed_demo_takes_passwords_from_the_environment(monkeypatch, client):
    monkeypatch.setenv("ARBE_DEMO_OWNER_PASSWORD", "owner-pass-from-env")
    call_command("seed_demo")
    # Through the sign-in form: axes refuses client.login() (authenticate() with no request).
    response = client.post(
        reverse("login"), {"username": "owner", "password": "owner-pass-from-env"}
    )
    assert response.status_code == 302 and response["Location"] == reverse("home")


def test_the_login_page_renders(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'name="username"' in response.content
    assert b"htmx-2.min.js" in response.content and b"ext/hx-ws-2" in response.content


def test_pages_need_a_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_house_page_is_a_404_for_non_members(client):
    make_house("secret", owner=make_user("olive"))
    client.force_login(make_user("eve"))
    assert client.get(reverse("house", args=["secret"])).status_code == 404


def test_members_see_their_houses(client):
    olive = make_user("olive")
    make_house("mine", owner=olive, name="Mine")
    make_house("theirs", owner=make_user("otto"), name="Theirs")
    client.force_login(olive)
    body = client.get(reverse("home")).content.decode()
    assert "Mine" in body and "Theirs" not in body


def run_manage(args, env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_python(code, env):
    """Read settings in a fresh interpreter, as a process started with ``env`` would."""
    setup = "import django; django.setup();"
    env = {**env, "DJANGO_SETTINGS_MODULE": "arbe_site.settings"}
    return subprocess.run(
        [sys.executable, "-c", setup + code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


PRODUCTION_ENV = {
    "DEBUG": "false",
    "HTTPS": "true",
    "SECRET_KEY": "x7!kq" * 12,
    "ALLOWED_HOSTS": "arbe.example.com",
}


def test_check_deploy_is_silent_with_production_values(tmp_path):
    result = run_manage(["check", "--deploy"], {**PRODUCTION_ENV, "ARBE_VAR_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_settings_come_from_the_environment(tmp_path):
    env = {
        "ARBE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://u:p@db.internal:5433/arbe",
        "REDIS_URL": "redis://cache.internal:6380/1",
        "DURABLE_STREAMS_URL": "http://streams.internal:4437/",
        "DURABLE_STREAMS_SECRET": "s3cret-value",
        "ALLOWED_HOSTS": "a.example, b.example",
        "DEBUG": "yes",
    }
    code = (
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['HOST'], s.DATABASES['default']['PORT'],"
        " s.CHANNEL_LAYERS['default']['BACKEND'], s.DURABLE_STREAMS_URL,"
        " s.DURABLE_STREAMS_SECRET == 's3cret-value', s.ALLOWED_HOSTS, s.DEBUG)"
    )
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "db.internal",
        "5433",
        "arbe_site.channel_layer.WaitingRedisChannelLayer",
        "http://streams.internal:4437",
        "True",
        "['a.example',",
        "'b.example']",
        "True",
    ]


def test_defaults_are_the_embedded_configuration(tmp_path):
    env = dict.fromkeys(("DATABASE_URL", "REDIS_URL", "DURABLE_STREAMS_URL", "SECRET_KEY"), "")
    env |= {"ARBE_VAR_DIR": str(tmp_path), "DURABLE_STREAMS_SECRET": ""}
    code = (
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'],"
        " s.CHANNEL_LAYERS['default']['BACKEND'], repr(s.DURABLE_STREAMS_URL))"
    )
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    engine, name, layer, url = result.stdout.split()
    assert engine == "django.db.backends.sqlite3"
    assert name == str(tmp_path / "arbe.sqlite3")
    assert layer == "arbe_site.channel_layer.ProcessChannelLayer"  # in memory, one process
    assert url == "''"
    # The stream secret was generated into var/, readable by the owner only, and not printed.
    secret_file = tmp_path / "durable_streams_secret"
    assert secret_file.stat().st_mode & 0o777 == 0o600
    assert secret_file.read_text() not in result.stdout + result.stderr


def test_sqlite_runs_in_wal_mode():
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def test_every_middleware_is_async_capable():
    """One sync-only middleware would run every async view, long-polls included, on a thread."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    sync_only = [
        path
        for path in settings.MIDDLEWARE
        if not getattr(import_string(path), "async_capable", False)
    ]
    assert sync_only == []


async def test_the_asgi_app_serves_static_files_without_collectstatic():
    import httpx

    from arbe_site.asgi import application

    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/static/django_htmx/htmx-2.min.js")
        css = await client.get("/static/arbe/arbe.css")
    assert response.status_code == 200 and b"htmx" in response.content
    assert css.status_code == 200
