from typing import Any

from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


def _sync_staff_groups(*, app_config: AppConfig, using: str = "default", **kwargs: Any) -> None:
    """After a migrate (or a test-database flush), grant the staff groups their permissions.

    post_migrate is sent once per app; this acts on the last one, when every app's
    permissions have been created.
    """
    if app_config is not list(apps.get_app_configs())[-1]:
        return
    from django.contrib.auth.models import Group, Permission

    from accounts.groups import groups_sync

    groups_sync(group_model=Group, permission_model=Permission, using=using)


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        post_migrate.connect(_sync_staff_groups, dispatch_uid="accounts.sync_staff_groups")
        from django.contrib.auth import get_user_model

        from accounts.signals import password_change_receivers_connect

        # A changed password deletes the user's API tokens.
        password_change_receivers_connect(get_user_model())
