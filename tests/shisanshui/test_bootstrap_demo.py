"""`manage.py bootstrap_demo`: the default rules and the demo admin for `make run`."""

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from accounts.models import User
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
