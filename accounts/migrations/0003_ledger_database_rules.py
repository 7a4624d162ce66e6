"""What the database itself enforces about the ledger, whoever writes to it.

PostgreSQL (the production database):
- transactions and entries are append-only: UPDATE and DELETE raise;
- an entry, when inserted, adds its amount to its account's cached balance (the only way that
  balance changes) and records the result in `balance_after`; the wallet check constraint
  (migration 0002) then refuses a negative player wallet;
- an account starts at a balance of 0, its balance cannot be set directly, and its kind and
  owner cannot change;
- at commit (DEFERRABLE INITIALLY DEFERRED constraint triggers) every transaction has entries,
  they sum to zero, and they were all written together with the transaction.

SQLite (`make run` without DATABASE_URL) gets what it can do: append-only transactions and
entries, entries applied to the cached balance, accounts starting at 0. It has no deferred
triggers, so balancing is left to the service there.

TRUNCATE is deliberately not blocked: it is how the test framework empties the database.
If a later migration makes Django rebuild one of these tables on SQLite (it copies the table
to alter it), that migration must create the SQLite triggers again.
"""

from django.db import migrations

POSTGRESQL_FORWARDS = [
    # Append-only ledger.
    """
    CREATE FUNCTION accounts_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'the ledger is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'restrict_violation',
                  HINT = 'Correct a transaction by posting its reversal.';
    END;
    $$;
    """,
    """
    CREATE TRIGGER accounts_transaction_append_only
        BEFORE UPDATE OR DELETE ON accounts_transaction
        FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
    """,
    """
    CREATE TRIGGER accounts_entry_append_only
        BEFORE UPDATE OR DELETE ON accounts_entry
        FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
    """,
    # Each new entry moves its account's cached balance; balance_after must agree.
    """
    CREATE FUNCTION accounts_entry_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        new_balance bigint;
    BEGIN
        UPDATE accounts_account SET balance = balance + NEW.amount
            WHERE id = NEW.account_id
            RETURNING balance INTO new_balance;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'account % does not exist', NEW.account_id
                USING ERRCODE = 'foreign_key_violation';
        END IF;
        IF NEW.balance_after IS NULL THEN
            NEW.balance_after := new_balance;
        ELSIF NEW.balance_after <> new_balance THEN
            RAISE EXCEPTION 'entry for account %: balance_after is %, the balance is %',
                NEW.account_id, NEW.balance_after, new_balance
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END;
    $$;
    """,
    """
    CREATE TRIGGER accounts_entry_apply
        BEFORE INSERT ON accounts_entry
        FOR EACH ROW EXECUTE FUNCTION accounts_entry_apply();
    """,
    # The cached balance changes only through an entry (the trigger above runs at depth 1, so
    # its UPDATE reaches this one at depth 2); kind and owner never change.
    """
    CREATE FUNCTION accounts_account_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            IF NEW.balance <> 0 THEN
                RAISE EXCEPTION 'a new account starts at 0, not %', NEW.balance
                    USING ERRCODE = 'check_violation';
            END IF;
        ELSE
            IF NEW.balance IS DISTINCT FROM OLD.balance AND pg_trigger_depth() < 2 THEN
                RAISE EXCEPTION 'the balance of account % changes only by ledger entries', OLD.id
                    USING ERRCODE = 'restrict_violation';
            END IF;
            IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.user_id IS DISTINCT FROM OLD.user_id THEN
                RAISE EXCEPTION 'the kind and owner of account % cannot change', OLD.id
                    USING ERRCODE = 'restrict_violation';
            END IF;
        END IF;
        RETURN NEW;
    END;
    $$;
    """,
    """
    CREATE TRIGGER accounts_account_guard
        BEFORE INSERT OR UPDATE ON accounts_account
        FOR EACH ROW EXECUTE FUNCTION accounts_account_guard();
    """,
    # At commit: the transaction has entries, they sum to zero, and all were inserted in the
    # same (sub)transaction as the transaction row, so no entry is added to it later.
    """
    CREATE FUNCTION accounts_transaction_check(checked_id bigint) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE
        total numeric;
        entry_count bigint;
        late_entries bigint;
    BEGIN
        SELECT COALESCE(SUM(e.amount), 0), COUNT(*),
               COUNT(*) FILTER (WHERE NOT (e.xmin = t.xmin))
            INTO total, entry_count, late_entries
            FROM accounts_transaction t
            JOIN accounts_entry e ON e.transaction_id = t.id
            WHERE t.id = checked_id;
        IF entry_count = 0 THEN
            RAISE EXCEPTION 'ledger transaction % has no entries', checked_id
                USING ERRCODE = 'check_violation';
        END IF;
        IF total <> 0 THEN
            RAISE EXCEPTION 'the entries of ledger transaction % sum to %, not 0',
                checked_id, total
                USING ERRCODE = 'check_violation';
        END IF;
        IF late_entries > 0 THEN
            RAISE EXCEPTION 'entries were added to ledger transaction % after it was posted',
                checked_id
                USING ERRCODE = 'restrict_violation';
        END IF;
    END;
    $$;
    """,
    """
    CREATE FUNCTION accounts_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM accounts_transaction_check(NEW.id);
        RETURN NULL;
    END;
    $$;
    """,
    """
    CREATE CONSTRAINT TRIGGER accounts_transaction_balanced
        AFTER INSERT ON accounts_transaction
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION accounts_transaction_balanced();
    """,
    """
    CREATE FUNCTION accounts_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM accounts_transaction_check(NEW.transaction_id);
        RETURN NULL;
    END;
    $$;
    """,
    """
    CREATE CONSTRAINT TRIGGER accounts_entry_balanced
        AFTER INSERT ON accounts_entry
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION accounts_entry_balanced();
    """,
]

POSTGRESQL_BACKWARDS = [
    "DROP TRIGGER accounts_entry_balanced ON accounts_entry;",
    "DROP FUNCTION accounts_entry_balanced();",
    "DROP TRIGGER accounts_transaction_balanced ON accounts_transaction;",
    "DROP FUNCTION accounts_transaction_balanced();",
    "DROP FUNCTION accounts_transaction_check(bigint);",
    "DROP TRIGGER accounts_account_guard ON accounts_account;",
    "DROP FUNCTION accounts_account_guard();",
    "DROP TRIGGER accounts_entry_apply ON accounts_entry;",
    "DROP FUNCTION accounts_entry_apply();",
    "DROP TRIGGER accounts_entry_append_only ON accounts_entry;",
    "DROP TRIGGER accounts_transaction_append_only ON accounts_transaction;",
    "DROP FUNCTION accounts_ledger_append_only();",
]

SQLITE_FORWARDS = [
    *(
        f"""
        CREATE TRIGGER accounts_{table}_no_{operation}
        BEFORE {operation.upper()} ON accounts_{table}
        BEGIN
            SELECT RAISE(ABORT, 'the ledger is append-only: {operation.upper()} on accounts_{table} is not allowed');
        END;
        """
        for table in ("transaction", "entry")
        for operation in ("update", "delete")
    ),
    """
    CREATE TRIGGER accounts_entry_balance_after
    BEFORE INSERT ON accounts_entry
    WHEN NEW.balance_after IS NOT
        (SELECT balance FROM accounts_account WHERE id = NEW.account_id) + NEW.amount
    BEGIN
        SELECT RAISE(ABORT, 'entry: balance_after does not match the account balance');
    END;
    """,
    """
    CREATE TRIGGER accounts_entry_apply
    AFTER INSERT ON accounts_entry
    BEGIN
        UPDATE accounts_account SET balance = balance + NEW.amount WHERE id = NEW.account_id;
    END;
    """,
    """
    CREATE TRIGGER accounts_account_starts_at_zero
    BEFORE INSERT ON accounts_account
    WHEN NEW.balance <> 0
    BEGIN
        SELECT RAISE(ABORT, 'a new account starts at 0');
    END;
    """,
    """
    CREATE TRIGGER accounts_account_owner_fixed
    BEFORE UPDATE OF kind, user_id ON accounts_account
    WHEN NEW.kind IS NOT OLD.kind OR NEW.user_id IS NOT OLD.user_id
    BEGIN
        SELECT RAISE(ABORT, 'the kind and owner of an account cannot change');
    END;
    """,
]

SQLITE_BACKWARDS = [
    *(
        f"DROP TRIGGER accounts_{table}_no_{operation};"
        for table in ("transaction", "entry")
        for operation in ("update", "delete")
    ),
    "DROP TRIGGER accounts_entry_balance_after;",
    "DROP TRIGGER accounts_entry_apply;",
    "DROP TRIGGER accounts_account_starts_at_zero;",
    "DROP TRIGGER accounts_account_owner_fixed;",
]

STATEMENTS = {
    "postgresql": (POSTGRESQL_FORWARDS, POSTGRESQL_BACKWARDS),
    "sqlite": (SQLITE_FORWARDS, SQLITE_BACKWARDS),
}


def _run(schema_editor, direction):
    vendor = schema_editor.connection.vendor
    if vendor not in STATEMENTS:
        raise NotImplementedError(
            f"The coin ledger needs PostgreSQL or SQLite to enforce its rules, not {vendor}."
        )
    for statement in STATEMENTS[vendor][direction]:
        schema_editor.execute(statement, params=None)


def forwards(apps, schema_editor):
    _run(schema_editor, 0)


def backwards(apps, schema_editor):
    _run(schema_editor, 1)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_ledger"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
