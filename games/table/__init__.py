"""The pure state machine of one Shisanshui table (RULES.md §5.1, §8, §9).

``state`` (frozen values, JSON round-trip), ``events`` (versioned events, transitions),
``machine`` (the commands: verify_x / can_x / x, from ``seating``, ``playing``,
``connections``, ``timeouts``, ``lockstep`` and ``chat``, with the checks they share in
``guards`` and ``arrangements``), ``perspective`` (what one seat may see), with ``flow``
(internal transitions), ``deck`` (commitment and dealing), ``compare`` (the paced comparison
and scoring) and ``suggest`` (the engine's suggestions). No Django, no clock, no
randomness, no I/O: time, the shuffled deck and the players' balances are inputs.
"""
