"""`{% mint_alerts_for user as cells %}`: today's mint ceilings that were reached or refused
claims, for the admin index's banner; none for a user who may not read the mint report."""

from typing import Any

from django import template

from accounts.economy import economy_settings
from accounts.mint import MintCell, mint_alerts_today

register = template.Library()


@register.simple_tag
def mint_alerts_for(user: Any) -> list[MintCell]:
    if not (user.is_active and user.is_staff and user.has_perm("accounts.view_economysettings")):
        return []
    return mint_alerts_today(economy=economy_settings())
