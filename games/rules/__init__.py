"""The Shisanshui rules engine: pure Python (and numpy), no Django.

RULES.md §1–7 as plain values and functions: cards, row hands, special hands, the rule
configuration, scoring, settlement and arranging; ``python -m games.rules`` is its command line.
"""
