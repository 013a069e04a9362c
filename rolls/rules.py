"""The rule tables the server applies around the engines, each written once (pure Python).

Imports only `rolls.systems`, so services, projectors, selectors and the standalone verifier share
the same tables:

* `option` — the one reader of a campaign's rule option (the table's default when a stored option
  set lacks the name; no call site restates a default);
* `ROLL_COUNTS`, `compare` — the kinds of check each system has, how many rolls each kind has, and
  the comparison recorded for two-sided checks;
* `RETRY_SYSTEMS`, `failed_attempt` — which checks count towards a task's failed attempts; the
  decision is recorded in the ``check.rolled`` event, and `recorded_failed_attempt` reads it back
  (deciding it from the payload only for events logged before it was recorded).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from rolls.systems import SYSTEM_IDS, age, d6pool, storyteller
from rolls.systems.options import option_table

# --- rule options ----------------------------------------------------------------------------


def option(options: Mapping[str, Any], system: str, name: str) -> Any:
    """The value of the rule option ``name`` in force: the campaign's, else the table's default.

    Raises KeyError for a name the system's option table does not have (a typo is a bug)."""
    table = option_table(system)
    if name not in table:
        raise KeyError(f"{system} has no rule option {name!r}")
    return options.get(name, table[name].default)


# --- kinds of check and their comparisons ----------------------------------------------------

# How many rolls each kind of check has, per system (None: no upper bound).
ROLL_COUNTS: dict[tuple[str, str], tuple[int, int | None]] = {
    **{(system, "single"): (1, 1) for system in SYSTEM_IDS},
    ("storyteller", "multiple"): (2, None),
    ("storyteller", "resisted"): (2, 2),
    ("d6pool", "opposed"): (1, 2),  # a failed attack needs no defence roll
    ("d6pool", "contest"): (2, 2),
    ("age", "opposed"): (2, 2),
}
# The comparison recorded for a two-sided check, from its rolls' results in order.
_COMPARISONS: dict[tuple[str, str], Callable[[list[Any]], Any]] = {
    ("d6pool", "opposed"): lambda r: d6pool.opposed(r[0], r[1] if len(r) > 1 else None),
    ("d6pool", "contest"): lambda r: d6pool.contest(r),
    ("storyteller", "resisted"): lambda r: storyteller.resisted(r[0], r[1]),
    ("age", "opposed"): lambda r: age.opposed(r[0], r[1]),
}


def compares(system: str, kind: str) -> bool:
    return (system, kind) in _COMPARISONS


def compare(system: str, kind: str, results: list[Any]) -> Any:
    """The comparison of a two-sided check (KeyError for a kind that has none)."""
    return _COMPARISONS[(system, kind)](results)


# --- failed attempts at a task ---------------------------------------------------------------

# Systems whose retries get harder with each failed attempt at the same task.
RETRY_SYSTEMS = ("storyteller", "cofd")
_FAILED_OUTCOMES = {
    "storyteller": ("failure", "botch"),
    "cofd": ("failure", "dramatic_failure"),
}


def task_key(name: str) -> str:
    """One retry counter per task however its name is typed: case, spacing, width (fullwidth
    letters) and invisible characters (a zero-width space, a word joiner) do not count, so a
    name that looks the same on the GM's panel is the same task."""
    visible = "".join(
        c for c in unicodedata.normalize("NFKC", name) if unicodedata.category(c) != "Cf"
    )
    return " ".join(visible.split()).casefold()


def failed_attempt(
    system: str,
    task: str,
    character_id: str | None,
    result: Mapping[str, Any],
    not_escalating: bool = False,
) -> bool | None:
    """What a check does to its task's count of failed attempts: True adds one, False clears it
    (the task succeeded), None leaves it (no task, no character, no retry rule, or impossible).

    A check the GM marked as not escalating is not an attempt: its failure leaves the count
    (README decision), its success still ends the task."""
    if not task or not character_id or system not in RETRY_SYSTEMS:
        return None
    if result["outcome"] in _FAILED_OUTCOMES[system]:
        return None if not_escalating else True
    if result["outcome"] == "impossible":
        return None
    return False


def recorded_failed_attempt(payload: Mapping[str, Any]) -> bool | None:
    """The `failed_attempt` decision of a ``check.rolled`` payload; events logged before it was
    recorded are decided from their first roll, as they were then."""
    if "failed_attempt" in payload:
        return payload["failed_attempt"]
    first = payload["rolls"][0]
    return failed_attempt(
        payload["system"],
        payload["task"],
        first["character_id"],
        first["result"],
        bool(first["rules"].get("not_escalating")),
    )
