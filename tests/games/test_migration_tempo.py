"""games/migrations/0010_brisker_comparison: the Standard rules compare at 500 ms a step,
unless an administrator has already tuned the pace; recorded in the history; reversible."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG

pytestmark = pytest.mark.django_db

migration = importlib.import_module("games.migrations.0010_brisker_comparison")


def standard(reveal_ms: int) -> RuleConfiguration:
    """The Standard rules (made by migration 0002, or here when the database was flushed)."""
    config = RuleConfiguration.objects.filter(name=migration.DEFAULT_NAME).first()
    if config is None:
        config = RuleConfiguration.from_engine(DEFAULT_CONFIG, name=migration.DEFAULT_NAME)
    RuleConfiguration.objects.filter(pk=config.pk).update(reveal_interval_ms=reveal_ms)
    config.refresh_from_db()
    return config


def test_a_migrated_database_has_the_brisker_standard_rules() -> None:
    config = RuleConfiguration.objects.filter(name=migration.DEFAULT_NAME).first()
    if config is None:
        pytest.skip("the database was flushed by an earlier transactional test")
    assert config.reveal_interval_ms == migration.BRISK_REVEAL_MS


def test_the_standard_rules_get_the_brisker_comparison_with_a_history_record() -> None:
    config = standard(800)
    migration.forwards(apps, None)
    config.refresh_from_db()
    assert config.reveal_interval_ms == 500
    latest = config.history.order_by("-history_date", "-history_id").first()
    assert latest is not None and latest.reveal_interval_ms == 500
    assert latest.history_change_reason == migration.REASON
    migration.backwards(apps, None)
    config.refresh_from_db()
    assert config.reveal_interval_ms == 800


def test_a_pace_an_administrator_tuned_is_left_alone() -> None:
    config = standard(650)
    before = config.history.count()
    migration.forwards(apps, None)
    config.refresh_from_db()
    assert config.reveal_interval_ms == 650 and config.history.count() == before
