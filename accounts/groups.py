"""The staff groups and the permissions each one holds.

`GROUP_PERMISSIONS` is the single description of both groups. Migration 0004 creates them;
`groups_sync` runs again after every `migrate` (see AccountsConfig.ready), so a permission
listed here is granted as soon as its model exists (the rule configurations of the games app
are created after this migration). Members still need `is_staff` to sign in to the admin.
"""

from typing import Any

SUPPORT = "support"
RULES_ADMIN = "rules_admin"
ECONOMY_ADMIN = "economy_admin"

# group name -> permissions as "app_label.codename".
GROUP_PERMISSIONS: dict[str, tuple[str, ...]] = {
    # Read-only access to users (and sending one a password reset link), wallets, the ledger,
    # the rule configurations and the played rounds (settlement audit), the CSV export of
    # ledger entries, and the collusion report.
    SUPPORT: (
        "accounts.view_user",
        # A password reset link goes to the player's own address: support may send it.
        "accounts.send_password_reset",
        "accounts.view_account",
        "accounts.view_transaction",
        "accounts.view_entry",
        "accounts.export_ledger",
        # The economy: its settings (read-only), sign-ups per address, and the collusion
        # report, whose flags support reviews (status and note only: accounts.admin).
        "accounts.view_economysettings",
        "accounts.view_signupquota",
        "accounts.view_collusionflag",
        "accounts.change_collusionflag",
        # ... and freezes a suspect's transfers pending review (with a note).
        "accounts.freeze_transfers",
        "accounts.view_transferfreeze",
        "games.view_ruleconfiguration",
        "games.view_specialhandsetting",
        "games.view_round",
        "games.view_roundplayer",
        "games.view_tableevent",
    ),
    # Proposes changes to the economy settings (what the mint pays, the protections) and
    # approves another administrator's (accounts.services.economy_change_approve). Superusers
    # hold the same power; nobody approves their own change.
    ECONOMY_ADMIN: (
        "accounts.view_economysettings",
        "accounts.change_economysettings",
        "accounts.change_economy_money",
        "accounts.view_economychange",
        "accounts.change_economychange",
        "accounts.view_signupquota",
        "accounts.view_collusionflag",
        "accounts.freeze_transfers",
        "accounts.view_transferfreeze",
    ),
    # Edits the rule configurations (games migration 0005 grants the same), moves rooms from
    # one to another, views rooms and rounds; views the economy settings. Every economy setting
    # is what the mint pays or a protection, so changing one is the economy administrators'
    # (migration 0009 took `change_economysettings` away).
    RULES_ADMIN: (
        "accounts.view_economysettings",
        "games.view_ruleconfiguration",
        "games.add_ruleconfiguration",
        "games.change_ruleconfiguration",
        "games.view_specialhandsetting",
        "games.add_specialhandsetting",
        "games.change_specialhandsetting",
        # Where the rules are used: the rooms (moved to another configuration by the rooms
        # admin's action, which asks for `games.change_ruleconfiguration`) and the rounds.
        "lobby.view_room",
        "lobby.view_seat",
        "games.view_round",
        "games.view_roundplayer",
    ),
}


# Permissions a group once held and no longer may: `groups_sync` removes them.
GROUP_REVOKED: dict[str, tuple[str, ...]] = {
    RULES_ADMIN: ("accounts.change_economysettings",),
}


def groups_sync(*, group_model: Any, permission_model: Any, using: str = "default") -> None:
    """Create the groups and add every listed permission that exists; removes only those in
    `GROUP_REVOKED`.

    Takes the models as arguments so that a migration can pass its historical models.
    """
    for name, permissions in GROUP_PERMISSIONS.items():
        group, _ = group_model.objects.using(using).get_or_create(name=name)
        wanted = {tuple(permission.split(".", 1)) for permission in permissions}
        existing = (
            permission_model.objects.using(using)
            .filter(
                content_type__app_label__in={app_label for app_label, _ in wanted},
                codename__in={codename for _, codename in wanted},
            )
            .select_related("content_type")
        )
        group.permissions.add(
            *(p for p in existing if (p.content_type.app_label, p.codename) in wanted)
        )
    for name, revoked in GROUP_REVOKED.items():
        group = group_model.objects.using(using).filter(name=name).first()
        if group is None:
            continue
        for permission in revoked:
            app_label, codename = permission.split(".", 1)
            group.permissions.remove(
                *permission_model.objects.using(using).filter(
                    content_type__app_label=app_label, codename=codename
                )
            )
