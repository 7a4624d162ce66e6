# The index of the rounds the standings job has still to count, in a migration of its own:
# CREATE INDEX CONCURRENTLY runs outside a transaction, and a build that failed or was cancelled
# leaves only this migration to run again (DROP the INVALID index it may leave first).

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(AddIndexConcurrently):
    """CREATE INDEX CONCURRENTLY on PostgreSQL, so that the deals, which insert rounds, go on
    while the index is built over every round; a plain CREATE INDEX elsewhere."""

    @staticmethod
    def _way(schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            return AddIndexConcurrently
        return migrations.AddIndex

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        way = self._way(schema_editor)
        way.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        way = self._way(schema_editor)
        way.database_backwards(self, app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("games", "0017_standings_counted"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name='round',
            index=models.Index(condition=models.Q(('settled_at__isnull', False), ('standings_counted', False)), fields=['id'], name='round_standings_uncounted'),
        ),
    ]
