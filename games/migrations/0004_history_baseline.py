"""Give every configuration that exists before history was kept a first history record.

Without it the first change of the default configuration would have nothing to be compared
with on its history page. The records have no user: the state was made by a migration.
"""

from django.db import migrations
from django.utils import timezone

REASON = "history starts (migration)"


def baseline(apps, schema_editor):
    alias = schema_editor.connection.alias
    now = timezone.now()
    for model_name in ("RuleConfiguration", "SpecialHandSetting"):
        model = apps.get_model("games", model_name)
        history = apps.get_model("games", f"Historical{model_name}")
        recorded = set(history.objects.using(alias).values_list("id", flat=True))
        names = [f.attname for f in model._meta.concrete_fields]
        history.objects.using(alias).bulk_create(
            history(
                **{name: getattr(obj, name) for name in names},
                history_date=now,
                history_type="+",
                history_change_reason=REASON,
            )
            for obj in model.objects.using(alias).all()
            if obj.pk not in recorded
        )


def unbaseline(apps, schema_editor):
    alias = schema_editor.connection.alias
    for model_name in ("RuleConfiguration", "SpecialHandSetting"):
        history = apps.get_model("games", f"Historical{model_name}")
        history.objects.using(alias).filter(history_change_reason=REASON).delete()


class Migration(migrations.Migration):
    dependencies = [("games", "0003_history_and_help_texts")]

    operations = [migrations.RunPython(baseline, unbaseline)]
