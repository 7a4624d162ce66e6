"""Why the ledger refused to move coins.

Every refusal of the ledger services is a `LedgerError` carrying a message meant for a person
(translated into the active language); when one is raised, nothing has been written.
"""


class LedgerError(Exception):
    """The ledger refused a request; `message` says why, in the active language."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidEntries(LedgerError):
    """The entries are empty, contain a zero, repeat an account or do not sum to zero."""


class InvalidAmount(LedgerError):
    """An amount that must be a positive whole number of coins is not, or is out of range."""


class InvalidTransaction(LedgerError):
    """The kind, idempotency key, reference or reversal target of a request is unusable."""


class UnknownAccount(LedgerError):
    """An entry names an account that does not exist."""


class InsufficientFunds(LedgerError):
    """A player's wallet would go below zero."""


class MissingReason(LedgerError):
    """An admin adjustment or a reversal was requested without saying why."""


class IdempotencyConflict(LedgerError):
    """The idempotency key was already used for a transaction with different content."""


class AlreadyReversed(LedgerError):
    """The transaction has already been reversed; it can be reversed only once."""


class NotReversible(LedgerError):
    """The transaction is itself a reversal; correct it with a new transaction instead."""


class ClaimRefused(LedgerError):
    """A daily bonus or relief grant that may not be claimed now.

    `code` names the rule that refused it (`daily_bonus_off`, `already_claimed`, `relief_off`,
    `not_broke`, `relief_limit`, `in_round`, `bot`, `mint_ceiling`); `message` says why, for
    the player.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class MintBudgetExhausted(ClaimRefused):
    """Today's ceiling of what the mint may issue for one kind (`accounts.models.MintKind`) is
    reached: code `mint_ceiling`; `kind` names the ceiling. Support has been alerted."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__("mint_ceiling", message)
        self.kind = kind


class SignupRefused(Exception):
    """A sign-up refused before anything was written; `code` is `signup_limit` (too many from
    the address today), `name_taken` (a look-alike of an existing name), `name_invisible` or
    `mint_ceiling` (today's sign-up grants are used up)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EconomyChangeRefused(Exception):
    """A proposal or an approval of an economy change was refused; nothing was written.
    `code` says why (accounts.services.economy_change_propose, economy_change_approve)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
