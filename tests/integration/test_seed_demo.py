"""The demo seed: logins printed in a box only when it sets them; --reset-passwords."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from houses.models import Membership

pytestmark = pytest.mark.django_db(transaction=True)


def works(username: str, password: str) -> bool:
    return get_user_model().objects.get(username=username).check_password(password)


def seed(*args) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def passwords(output: str) -> dict[str, str]:
    return dict(re.findall(r"│ (owner|member|admin)\s+(\S+)\s{3}", output))


def test_first_seed_prints_working_logins_last_in_a_box():
    output = seed("--url", "http://127.0.0.1:8000/")
    assert output.rstrip().endswith("┘")
    assert "Demo logins at http://127.0.0.1:8000/" in output
    logins = passwords(output)
    assert set(logins) == {"owner", "member", "admin"}
    for username, password in logins.items():
        assert works(username, password)
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    roles = dict(Membership.objects.values_list("user__username", "role"))
    assert roles == {"owner": "owner", "member": "member"}


def test_a_second_seed_shows_no_password_and_says_how_to_get_new_ones():
    first = passwords(seed())
    again = seed()
    assert all(password not in again for password in first.values())
    assert "(set earlier, not shown again)" in again
    assert "seed_demo --reset-passwords" in again
    assert works("owner", first["owner"])


def test_reset_passwords_sets_and_prints_new_ones():
    first = passwords(seed())
    second = passwords(seed("--reset-passwords"))
    assert set(second) == {"owner", "member", "admin"}
    for username in second:
        assert second[username] != first[username]
        assert not works(username, first[username])
        assert works(username, second[username])
