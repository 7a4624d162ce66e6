"""The "Standard 标准" rules compare at 500 ms a step instead of RULES.md's 800 (tempo): with the deal's new pace (a round of cards per interval) a round spends well under a
third of its time waiting. Only when an administrator has not tuned the pace already; the
change is recorded in the configuration's history like an admin's. Reversible."""

from django.db import migrations
from django.utils import timezone

DEFAULT_NAME = "Standard 标准"
RULES_MD_REVEAL_MS = 800
BRISK_REVEAL_MS = 500
REASON = "Tempo: a brisker comparison"


def _set_reveal(apps, old: int, new: int) -> None:
    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    Historical = apps.get_model("games", "HistoricalRuleConfiguration")
    config = RuleConfiguration.objects.filter(
        name=DEFAULT_NAME, reveal_interval_ms=old
    ).first()
    if config is None:
        return
    config.reveal_interval_ms = new
    config.save(update_fields=["reveal_interval_ms"])
    values = {
        f.attname: getattr(config, f.attname)
        for f in RuleConfiguration._meta.concrete_fields
    }
    Historical.objects.create(
        **values,
        history_date=timezone.now(),
        history_type="~",
        history_change_reason=REASON,
    )


def forwards(apps, schema_editor):
    _set_reveal(apps, RULES_MD_REVEAL_MS, BRISK_REVEAL_MS)


def backwards(apps, schema_editor):
    _set_reveal(apps, BRISK_REVEAL_MS, RULES_MD_REVEAL_MS)


class Migration(migrations.Migration):
    dependencies = [("games", "0009_bot_seats")]

    operations = [migrations.RunPython(forwards, backwards)]
