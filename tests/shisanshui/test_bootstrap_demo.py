"""`manage.py bootstrap_demo`: the default rules and the demo admin for `make run`."""

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from accounts.models import User
from accounts.services import user_signup
from games.management.commands.bootstrap_demo import DEMO_MARKER_GROUP, demo_password
from games.models import RuleConfiguration


def _bootstrap(**options: str) -> str:
    out = StringIO()
    call_command("bootstrap_demo", stdout=out, **options)
    return out.getvalue()


@pytest.fixture
def var_dir(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("DEMO_ADMIN_PASSWORD", raising=False)
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.mark.django_db
def test_creates_a_superuser_and_prints_the_url_and_credentials(var_dir: Path) -> None:
    output = _bootstrap(url="http://127.0.0.1:8123/")

    password = (var_dir / "demo-admin.txt").read_text().strip()
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff and admin.is_active
    assert admin.check_password(password)
    assert "http://127.0.0.1:8123/" in output
    assert "http://127.0.0.1:8123/admin/" in output
    assert "username: admin" in output
    assert f"password: {password}" in output
    assert (var_dir / "demo-admin.txt").stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_a_rerun_prints_the_same_password_and_resets_a_changed_one(var_dir: Path) -> None:
    _bootstrap()
    password = (var_dir / "demo-admin.txt").read_text().strip()
    admin = User.objects.get(username="admin")
    admin.set_password("changed-by-someone")
    admin.save()

    output = _bootstrap()

    assert f"password: {password}" in output
    assert User.objects.get(username="admin").check_password(password)
    assert User.objects.filter(username="admin").count() == 1


@pytest.mark.django_db
def test_demo_admin_password_from_the_environment_wins(
    var_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "s3cret-demo")

    output = _bootstrap()

    assert "password: s3cret-demo" in output
    assert User.objects.get(username="admin").check_password("s3cret-demo")
    assert not (var_dir / "demo-admin.txt").exists()


@pytest.mark.django_db
def test_the_default_rule_configuration_exists_after_migrate_and_is_restored(
    var_dir: Path,
) -> None:
    assert RuleConfiguration.objects.filter(is_default=True).count() == 1
    RuleConfiguration.objects.update(is_default=False)

    _bootstrap()

    assert RuleConfiguration.objects.filter(is_default=True).count() == 1


# -- it touches only the demo user it created ---------------------------------------------------


@pytest.mark.django_db
def test_the_demo_admin_is_marked_as_made_by_the_command(var_dir: Path) -> None:
    _bootstrap()

    admin = User.objects.get(username="admin")
    assert list(admin.groups.values_list("name", flat=True)) == [DEMO_MARKER_GROUP]
    assert not Group.objects.get(name=DEMO_MARKER_GROUP).permissions.exists()


@pytest.mark.django_db
def test_a_player_named_admin_is_left_alone(var_dir: Path) -> None:
    player = user_signup(username="admin", password="players-own-secret-7")
    before = User.objects.values().get(pk=player.pk)

    output = _bootstrap()

    assert User.objects.values().get(pk=player.pk) == before  # not promoted, password kept
    player.refresh_from_db()
    assert not player.is_staff and not player.is_superuser
    assert player.check_password("players-own-secret-7")
    assert not player.groups.exists()
    assert "A user named 'admin' exists that bootstrap_demo did not create" in output
    assert "left unchanged" in output
    password = (var_dir / "demo-admin.txt").read_text().strip()
    assert password not in output and "password:" not in output
    assert User.objects.filter(is_superuser=True).count() == 0


@pytest.mark.django_db
def test_no_demo_admin_beside_a_player_whose_name_looks_like_admin(var_dir: Path) -> None:
    player = user_signup(username="\u0430dmin", password="players-own-secret-7")  # Cyrillic а

    output = _bootstrap()

    assert "A user named 'admin' exists that bootstrap_demo did not create" in output
    assert "password:" not in output
    assert list(User.objects.values_list("pk", flat=True)) == [player.pk]


@pytest.mark.django_db
def test_a_demo_admin_of_an_earlier_version_is_recognised_by_its_password(var_dir: Path) -> None:
    password = demo_password(var_dir)
    User.objects.create_superuser(username="admin", password=password)  # no mark yet

    output = _bootstrap()

    assert f"password: {password}" in output
    assert User.objects.get(username="admin").groups.filter(name=DEMO_MARKER_GROUP).exists()


@pytest.mark.django_db
def test_a_rerun_keeps_the_demo_admins_api_token(var_dir: Path) -> None:
    _bootstrap()
    token = Token.objects.create(user=User.objects.get(username="admin"))

    _bootstrap()

    assert Token.objects.filter(pk=token.pk).exists()  # the password did not change
