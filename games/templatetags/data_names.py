"""``{{ room.name|data_name }}``: a name the platform gave, in the page's language only."""

from __future__ import annotations

from django import template

from games.labels import data_name as _data_name

register = template.Library()


@register.filter
def data_name(name: object) -> str:
    return _data_name(str(name))
