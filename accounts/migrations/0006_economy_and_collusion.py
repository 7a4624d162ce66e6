"""The economy settings, sign-up quotas per address, collusion flags, and two new kinds of
ledger transaction: `daily_bonus` and `relief` (both credited from the mint).

Changing the `transaction_kind_known` check makes Django rebuild accounts_transaction on
SQLite, which drops that table's append-only triggers (migration 0003); the last operation
creates them again. PostgreSQL alters the constraint in place and keeps its triggers.
"""

import django.core.validators
import django.db.models.deletion
import django.db.models.functions.datetime
import simple_history.models
from django.conf import settings
from django.db import migrations, models


SQLITE_TRANSACTION_TRIGGERS = [
    f"""
    CREATE TRIGGER IF NOT EXISTS accounts_transaction_no_{operation}
    BEFORE {operation.upper()} ON accounts_transaction
    BEGIN
        SELECT RAISE(ABORT, 'the ledger is append-only: {operation.upper()} on accounts_transaction is not allowed');
    END;
    """
    for operation in ("update", "delete")
]


def sqlite_triggers_again(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_TRANSACTION_TRIGGERS:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0005_user_is_bot'),
    ]

    operations = [
        # Undone last when migrating backwards, after the table was rebuilt again.
        migrations.RunPython(migrations.RunPython.noop, sqlite_triggers_again, elidable=False),
        migrations.CreateModel(
            name='CollusionFlag',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('shared_rounds', models.PositiveIntegerField(verbose_name='shared rounds')),
                ('flow', models.BigIntegerField(verbose_name='net flow (coins)')),
                ('losses', models.BigIntegerField(verbose_name="loser's losses (coins)")),
                ('share_percent', models.DecimalField(decimal_places=1, max_digits=5, verbose_name='share of losses (%)')),
                ('first_round_at', models.DateTimeField(verbose_name='first shared round')),
                ('last_round_at', models.DateTimeField(verbose_name='last shared round')),
                ('status', models.CharField(choices=[('open', 'Open'), ('reviewed', 'Reviewed'), ('dismissed', 'Dismissed')], default='open', max_length=16, verbose_name='status')),
                ('note', models.TextField(blank=True, verbose_name='note')),
                ('reviewed_at', models.DateTimeField(blank=True, null=True, verbose_name='reviewed at')),
                ('flagged_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now(), editable=False, verbose_name='first flagged')),
                ('updated_at', models.DateTimeField(verbose_name='last found')),
            ],
            options={
                'verbose_name': 'collusion flag',
                'verbose_name_plural': 'collusion flags',
                'ordering': ['-updated_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='EconomySettings',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('signup_grant', models.BigIntegerField(blank=True, help_text='Coins a new player receives. Empty: the SIGNUP_GRANT setting.', null=True, validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='sign-up grant')),
                ('daily_bonus', models.BigIntegerField(default=2000, help_text='Coins a player may claim once per day (UTC). 0 turns the bonus off.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='daily bonus')),
                ('relief_amount', models.BigIntegerField(default=10000, help_text='Coins a broke player may claim. 0 turns relief off.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='relief grant')),
                ('relief_below', models.BigIntegerField(default=5000, help_text='Relief may be claimed only by a player holding fewer coins than this.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='relief below')),
                ('relief_per_day', models.PositiveSmallIntegerField(default=2, help_text='How many times a player may claim relief per day (UTC).', validators=[django.core.validators.MaxValueValidator(100, 'At most 100 reliefs a day.')], verbose_name='reliefs per day')),
                ('signups_per_address_per_day', models.PositiveIntegerField(default=5, help_text='Accounts that may be created from one IP address (an IPv6 /64 network) per day (UTC). 0: no limit.', verbose_name='sign-ups per address per day')),
                ('collusion_min_rounds', models.PositiveIntegerField(default=20, help_text='A pair is reported after at least this many settled rounds together.', validators=[django.core.validators.MinValueValidator(1, 'At least 1 shared round.')], verbose_name='collusion: shared rounds')),
                ('collusion_days', models.PositiveIntegerField(default=7, help_text='The rounds of this many past days are examined.', validators=[django.core.validators.MinValueValidator(1, 'At least 1 day.'), django.core.validators.MaxValueValidator(365, 'At most 365 days.')], verbose_name='collusion: days')),
                ('collusion_min_share_percent', models.PositiveSmallIntegerField(default=80, help_text="A pair is reported when at least this share of one player's losses in their shared rounds went, net, to the other.", validators=[django.core.validators.MinValueValidator(1, 'The share is a percentage from 1 to 100.'), django.core.validators.MaxValueValidator(100, 'The share is a percentage from 1 to 100.')], verbose_name='collusion: share of losses (%)')),
                ('collusion_min_flow', models.BigIntegerField(default=20000, help_text='And at least this many coins went, net, from one to the other.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='collusion: minimum flow')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='updated at')),
            ],
            options={
                'verbose_name': 'economy settings',
                'verbose_name_plural': 'economy settings',
            },
        ),
        migrations.CreateModel(
            name='HistoricalEconomySettings',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('signup_grant', models.BigIntegerField(blank=True, help_text='Coins a new player receives. Empty: the SIGNUP_GRANT setting.', null=True, validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='sign-up grant')),
                ('daily_bonus', models.BigIntegerField(default=2000, help_text='Coins a player may claim once per day (UTC). 0 turns the bonus off.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='daily bonus')),
                ('relief_amount', models.BigIntegerField(default=10000, help_text='Coins a broke player may claim. 0 turns relief off.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='relief grant')),
                ('relief_below', models.BigIntegerField(default=5000, help_text='Relief may be claimed only by a player holding fewer coins than this.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='relief below')),
                ('relief_per_day', models.PositiveSmallIntegerField(default=2, help_text='How many times a player may claim relief per day (UTC).', validators=[django.core.validators.MaxValueValidator(100, 'At most 100 reliefs a day.')], verbose_name='reliefs per day')),
                ('signups_per_address_per_day', models.PositiveIntegerField(default=5, help_text='Accounts that may be created from one IP address (an IPv6 /64 network) per day (UTC). 0: no limit.', verbose_name='sign-ups per address per day')),
                ('collusion_min_rounds', models.PositiveIntegerField(default=20, help_text='A pair is reported after at least this many settled rounds together.', validators=[django.core.validators.MinValueValidator(1, 'At least 1 shared round.')], verbose_name='collusion: shared rounds')),
                ('collusion_days', models.PositiveIntegerField(default=7, help_text='The rounds of this many past days are examined.', validators=[django.core.validators.MinValueValidator(1, 'At least 1 day.'), django.core.validators.MaxValueValidator(365, 'At most 365 days.')], verbose_name='collusion: days')),
                ('collusion_min_share_percent', models.PositiveSmallIntegerField(default=80, help_text="A pair is reported when at least this share of one player's losses in their shared rounds went, net, to the other.", validators=[django.core.validators.MinValueValidator(1, 'The share is a percentage from 1 to 100.'), django.core.validators.MaxValueValidator(100, 'The share is a percentage from 1 to 100.')], verbose_name='collusion: share of losses (%)')),
                ('collusion_min_flow', models.BigIntegerField(default=20000, help_text='And at least this many coins went, net, from one to the other.', validators=[django.core.validators.MinValueValidator(0, 'Enter 0 or more coins; a negative amount is not allowed.'), django.core.validators.MaxValueValidator(1000000000000000, 'At most 1,000,000,000,000,000 coins.')], verbose_name='collusion: minimum flow')),
                ('updated_at', models.DateTimeField(blank=True, editable=False, verbose_name='updated at')),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
            ],
            options={
                'verbose_name': 'historical economy settings',
                'verbose_name_plural': 'historical economy settings',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name='SignupQuota',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('address', models.CharField(max_length=64, verbose_name='address')),
                ('day', models.DateField(verbose_name='day (UTC)')),
                ('count', models.PositiveIntegerField(default=0, verbose_name='sign-ups')),
            ],
            options={
                'verbose_name': 'sign-ups by address',
                'verbose_name_plural': 'sign-ups by address',
                'ordering': ['-day', '-count'],
            },
        ),
        migrations.RemoveConstraint(
            model_name='transaction',
            name='transaction_kind_known',
        ),
        migrations.AlterField(
            model_name='transaction',
            name='kind',
            field=models.CharField(choices=[('grant', 'Grant'), ('settlement', 'Settlement'), ('escape_penalty', 'Escape penalty'), ('admin_adjustment', 'Admin adjustment'), ('reversal', 'Reversal'), ('daily_bonus', 'Daily bonus'), ('relief', 'Relief grant')], max_length=32, verbose_name='kind'),
        ),
        migrations.AddConstraint(
            model_name='transaction',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['grant', 'settlement', 'escape_penalty', 'admin_adjustment', 'reversal', 'daily_bonus', 'relief'])), name='transaction_kind_known'),
        ),
        migrations.AddField(
            model_name='collusionflag',
            name='loser',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='losing player'),
        ),
        migrations.AddField(
            model_name='collusionflag',
            name='reviewer',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='reviewer'),
        ),
        migrations.AddField(
            model_name='collusionflag',
            name='winner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='winning player'),
        ),
        migrations.AddConstraint(
            model_name='economysettings',
            constraint=models.CheckConstraint(condition=models.Q(('id', 1)), name='economy_settings_singleton'),
        ),
        migrations.AddConstraint(
            model_name='economysettings',
            constraint=models.CheckConstraint(condition=models.Q(('signup_grant__isnull', True), ('signup_grant__gte', 0), _connector='OR'), name='economy_signup_grant_not_negative'),
        ),
        migrations.AddConstraint(
            model_name='economysettings',
            constraint=models.CheckConstraint(condition=models.Q(('daily_bonus__gte', 0), ('relief_amount__gte', 0), ('relief_below__gte', 0), ('collusion_min_flow__gte', 0)), name='economy_amounts_not_negative'),
        ),
        migrations.AddConstraint(
            model_name='economysettings',
            constraint=models.CheckConstraint(condition=models.Q(('collusion_min_rounds__gte', 1), ('collusion_days__gte', 1), ('collusion_min_share_percent__gte', 1), ('collusion_min_share_percent__lte', 100)), name='economy_collusion_thresholds_usable'),
        ),
        migrations.AddField(
            model_name='historicaleconomysettings',
            name='history_user',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddConstraint(
            model_name='signupquota',
            constraint=models.UniqueConstraint(fields=('address', 'day'), name='signup_quota_one_per_day'),
        ),
        migrations.AddConstraint(
            model_name='collusionflag',
            constraint=models.UniqueConstraint(fields=('loser', 'winner'), name='collusion_flag_one_per_pair'),
        ),
        migrations.AddConstraint(
            model_name='collusionflag',
            constraint=models.CheckConstraint(condition=models.Q(('loser', models.F('winner')), _negated=True), name='collusion_flag_two_players'),
        ),
        migrations.AddConstraint(
            model_name='collusionflag',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['open', 'reviewed', 'dismissed'])), name='collusion_flag_status_known'),
        ),
        migrations.RunPython(sqlite_triggers_again, sqlite_triggers_again, elidable=False),
    ]
