"""Numbers are grouped by thousands with a comma in both languages (shisanshui/formats): Django's
own Chinese format would write 100000, the pages' scripts and messages write 100,000."""

from __future__ import annotations

import pytest
from django.contrib.humanize.templatetags.humanize import intcomma
from django.template import Context, Template
from django.utils import translation


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_intcomma_groups_by_thousands_in_both_languages(language: str) -> None:
    with translation.override(language):
        assert intcomma(100000) == "100,000"
        assert intcomma(-1234567) == "-1,234,567"
        assert intcomma(999) == "999"
        rendered = Template("{% load humanize %}{{ n|intcomma }}").render(Context({"n": 32400}))
        assert rendered == "32,400"
        assert intcomma(100000) == f"{100000:,}"  # as the messages built in Python write it


def test_chinese_dates_keep_djangos_format() -> None:
    from django.utils.formats import get_format

    with translation.override("zh-hans"):
        assert get_format("DATE_FORMAT") == "Y年n月j日"
        assert get_format("THOUSAND_SEPARATOR") == ","
