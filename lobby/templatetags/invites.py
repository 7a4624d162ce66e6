"""``{% invite_share room_id=… %}`` / ``{% invite_share match_id=… %}`` (``compact=True``: folded
behind a chip): the share box of a private room's, a series' or a duplicate match's invite
link, for its owner only (nothing for anyone else): the link with a copy button, its QR
code, and a button making a new link.

The QR code is drawn here as inline SVG (segno): no script and no other host, so the page
keeps the site's Content-Security-Policy.
"""

from __future__ import annotations

from typing import Any

import segno
from django import template
from django.utils.safestring import mark_safe

from lobby.invites import invite_share as share_of

register = template.Library()


def qr_svg(url: str) -> str:
    """The link as a QR code, an inline <svg> (black modules on white, 4-module quiet zone)."""
    code = segno.make(url, error="m")
    return code.svg_inline(scale=4, dark="#000", light="#fff", svgclass="invite-qr-code")


@register.inclusion_tag("lobby/_invite_share.html", takes_context=True)
def invite_share(
    context: Any, room_id: int | None = None, match_id: int | None = None, compact: bool = False
) -> dict[str, Any]:
    """The share box; ``compact``: folded behind an "Invite" chip (the table page's header)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if request is None or (room_id is None) == (match_id is None):
        return {"share": None}
    share = share_of(user=user, room_id=room_id, match_id=match_id)
    if share is None:
        return {"share": None}
    url = request.build_absolute_uri(share["path"]) if share["path"] else ""
    return {
        "share": share,
        "compact": compact,
        "url": url,
        "qr": mark_safe(qr_svg(url)) if url else "",  # segno's own markup, no user text
        "back": request.get_full_path(),
        "csrf_token": context.get("csrf_token"),
    }
