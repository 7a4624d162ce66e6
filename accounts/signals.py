"""Signals of the accounts app; sent only after the database transaction has committed."""

from django.dispatch import Signal

# Sent once per newly posted ledger transaction (never for a replayed idempotency key),
# with `transaction`: the accounts.models.Transaction. Receivers may push balance updates.
transaction_posted = Signal()
