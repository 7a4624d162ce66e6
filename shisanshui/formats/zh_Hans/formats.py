"""Numbers on Chinese pages are grouped like on English ones: 100,000 coins.

Django's zh_Hans formats group by four digits with no separator (100000), while the pages'
scripts (``Number.toLocaleString("zh-hans")``) and the amounts in messages write 100,000; one
way everywhere. Everything else falls through to Django's zh_Hans formats.
"""

THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
