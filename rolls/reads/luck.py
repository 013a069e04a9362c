"""The luck and fairness report of a session or a campaign, for one viewer, from the log alone.

Every roll counted is a roll the viewer may see (a hidden roll counts once it is revealed; the GM
sees all): the same visibility decision as the feed. Percentiles rank each roll's statistic under
the exact odds of its check as rolled (the event's payload; follow-ups such as Fortune do not
change it), so a roll's luck is what the dice did, not what was done with them afterwards.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple
from uuid import UUID

from django.contrib.auth import get_user_model
from django.core.cache import cache

from campaign.models import Campaign, Membership, Role, Session
from rolls import luck
from rolls.models import Check, VerificationCheckpoint
from rolls.reads.visibility import may_see
from rolls.systems import RuleError

# A report is recomputed only when the log moves on; this bounds how long an unused one is kept.
REPORT_CACHE_SECONDS = 600
# How many of the luckiest and unluckiest rolls each summary lists.
EXTREMES = 3


@dataclass
class RolledDie:
    """One roll entry of a check (a check holds several for opposed or multiple actions)."""

    seq: int
    system: str
    character_id: str | None
    character_name: str
    actor_id: int | None
    label: str
    outcome: str
    statistic: int
    percentile: luck.Percentile | None
    expected: dict[str, float]
    manual: bool
    faces: list[int]


@dataclass
class _Tally:
    rolls: list[RolledDie] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ranked = [roll for roll in self.rolls if roll.percentile is not None]
        test = luck.mean_test([roll.percentile for roll in ranked if roll.percentile])
        observed: dict[str, int] = defaultdict(int)
        expected: dict[str, float] = defaultdict(float)
        for roll in self.rolls:
            observed[roll.outcome] += 1
            for outcome, p in roll.expected.items():
                expected[outcome] += p
        by_luck = sorted(ranked, key=lambda roll: (roll.percentile.value, roll.seq))  # type: ignore[union-attr]
        lucky = [roll for roll in by_luck if roll.percentile.value >= 0.5]  # type: ignore[union-attr]
        unlucky = [roll for roll in by_luck if roll.percentile.value < 0.5]  # type: ignore[union-attr]
        return {
            "rolls": len(self.rolls),
            "ranked": len(ranked),
            "mean_percentile": None if test is None else round(test.mean * 100, 1),
            "p_value": None if test is None else test.p_value,
            "method": None if test is None else test.method,
            "outcomes": {
                outcome: {"observed": observed.get(outcome, 0), "expected": round(e, 2)}
                for outcome, e in sorted(expected.items(), key=lambda item: -item[1])
            }
            | {
                outcome: {"observed": count, "expected": 0.0}
                for outcome, count in observed.items()
                if outcome not in expected
            },
            # Either side of the middle, so that with few rolls none is both (a roll at 85 %
            # was listed as one of the unluckiest of three).
            "luckiest": [_roll_brief(roll) for roll in reversed(lucky[-EXTREMES:])],
            "unluckiest": [_roll_brief(roll) for roll in unlucky[:EXTREMES]],
        }


def _roll_brief(roll: RolledDie) -> dict[str, Any]:
    return {
        "seq": roll.seq,
        "character": roll.character_name,
        "label": roll.label,
        "outcome": roll.outcome,
        "statistic": roll.statistic,
        "percentile": None if roll.percentile is None else round(roll.percentile.value * 100, 1),
    }


class _CheckRow(NamedTuple):
    """The columns of a check the report reads (no model instances: a campaign has 100,000s)."""

    seq: int
    system: str
    visibility: str
    revealed: bool
    audience: list[int]
    actor_id: int | None
    manual: bool
    label: str
    payload: dict[str, Any]


def visible_rolls(
    *, campaign: Campaign, membership: Membership, session: Session | None = None
) -> list[RolledDie]:
    """Every roll entry of every check the viewer may see, in log order."""
    checks = Check.objects.filter(campaign=campaign).order_by("seq")
    if session is not None:
        checks = checks.filter(session_id=session.pk)
    rows = checks.values_list(*_CheckRow._fields[:-1], "event__payload")
    rolled: list[RolledDie] = []
    for values in rows.iterator(chunk_size=2000):
        check = _CheckRow(*values)
        if not may_see(check, membership):  # type: ignore[arg-type]
            continue
        for entry in check.payload.get("rolls", ()):
            rolled.append(_entry(check, entry))
    return rolled


def _entry(check: _CheckRow, entry: Mapping[str, Any]) -> RolledDie:
    system = check.system
    rule_check = entry.get("check") or {}
    result = entry.get("result") or {}
    statistic = int(result.get(luck.STATISTIC[system][0]) or 0)
    ranked, expected = _ranked(system, _frozen(rule_check), statistic)
    return RolledDie(
        seq=check.seq,
        system=system,
        character_id=entry.get("character_id"),
        character_name=entry.get("character_name") or "",
        actor_id=check.actor_id,
        label=entry.get("label") or check.payload.get("label") or check.label or "",
        outcome=str(result.get("outcome", "")),
        statistic=statistic,
        percentile=ranked,
        expected=expected,
        manual=check.manual,
        faces=[face for face in entry.get("faces", ()) if isinstance(face, int)],
    )


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value


def _thawed(value: Any) -> Any:
    return {key: item for key, item in value}


@lru_cache(maxsize=4096)
def _ranked(
    system: str, frozen_check: Any, statistic: int
) -> tuple[luck.Percentile | None, dict[str, float]]:
    """A roll's percentile and its outcomes' odds; long campaigns repeat the same few checks."""
    rule_check = _thawed(frozen_check)
    try:
        distribution = luck.distribution(system, rule_check)
        expected = luck.expected_outcomes(system, rule_check)
    except (RuleError, KeyError, TypeError, ValueError):
        return None, {}
    # A roll whose result was certain (an automatic success, no dice) says nothing about luck.
    if len(distribution) <= 1:
        return None, expected
    return luck.percentile_of(statistic, distribution), expected


def luck_report(
    *, campaign: Campaign, membership: Membership, session: Session | None = None
) -> dict[str, Any]:
    """The report as the API returns it and the page draws it.

    Kept in the cache per head of the log and per viewer: any event that could change it (a
    roll, a reveal) moves the head, so a cached report is never stale, only unused.
    """
    head = Campaign.objects.filter(pk=campaign.pk).values_list("head_seq", flat=True).first()
    viewer = "gm" if membership.role == Role.GM else f"user:{membership.user_id}"
    key = f"luck:{campaign.pk}:{head}:{session.pk if session else '-'}:{viewer}"
    report = cache.get(key)
    if report is None:
        report = _build_report(campaign=campaign, membership=membership, session=session)
        cache.set(key, report, timeout=REPORT_CACHE_SECONDS)
    # Verification moves on without the log moving (the audit page, verify_log): never cached.
    return {**report, "verification": _verification(campaign, session, head or 0)}


def _build_report(
    *, campaign: Campaign, membership: Membership, session: Session | None
) -> dict[str, Any]:
    rolls = visible_rolls(campaign=campaign, membership=membership, session=session)
    per_character: dict[str, _Tally] = defaultdict(_Tally)
    names: dict[str, str] = {}
    per_player: dict[int | None, _Tally] = defaultdict(_Tally)
    for roll in rolls:
        key = roll.character_id or f"npc:{roll.character_name}"
        names[key] = roll.character_name
        per_character[key].rolls.append(roll)
        per_player[roll.actor_id].rolls.append(roll)
    usernames = _usernames(per_player)
    strip_limit = 400 if session is None else None
    return {
        "campaign": campaign.pk,
        "system": campaign.system,
        "session": None if session is None else {"id": str(session.pk), "number": session.number},
        "rolls": len(rolls),
        "characters": [
            {"id": _uuid_or_none(key), "name": names[key], **tally.summary()}
            for key, tally in sorted(per_character.items(), key=lambda item: names[item[0]])
        ],
        "players": [
            {
                "user_id": user_id,
                "username": usernames.get(user_id, ""),
                **tally.summary(),
                "percentiles": [
                    round(roll.percentile.value * 100, 1)
                    for roll in tally.rolls[-strip_limit if strip_limit else 0 :]
                    if roll.percentile is not None
                ],
            }
            for user_id, tally in sorted(
                per_player.items(), key=lambda item: usernames.get(item[0], "")
            )
        ],
        "dice": _dice(rolls, campaign.system),
        # Every roll with its percentile: for one session (a campaign's would be its whole log).
        "each_roll": None if session is None else [_roll_brief(roll) for roll in rolls],
        "method": {
            "percentile": "mid-rank under the exact odds: P(X < x) + P(X = x) / 2",
            "mean": (
                f"two-sided; exact (grid of half a point) up to {luck.EXACT_LIMIT} rolls, "
                "normal approximation with each roll's exact variance above"
            ),
            "dice": "Pearson's chi-square against a fair die, per die size and source",
        },
    }


def _verification(campaign: Campaign, session: Session | None, head: int) -> dict[str, Any]:
    """What the stored verification (the audit page's, `verify_log`'s) says of these rolls'
    dice: read, never computed here (a first full proof of a long log takes minutes)."""
    checkpoint = VerificationCheckpoint.objects.filter(campaign=campaign).first()
    last = head if session is None or session.ended_seq is None else session.ended_seq
    return {
        "verified_through": checkpoint.seq if checkpoint else 0,
        "ok": bool(checkpoint and checkpoint.ok),
        "covers": bool(checkpoint and checkpoint.ok and checkpoint.seq >= last),
    }


def _dice(rolls: Iterable[RolledDie], system: str) -> list[dict[str, Any]]:
    faces: dict[str, list[int]] = {"server": [], "manual": []}
    for roll in rolls:
        faces["manual" if roll.manual else "server"].extend(roll.faces)
    sides = luck.SIDES[system]
    shown = []
    for source, values in faces.items():
        if not values:
            continue
        test = luck.chi_square_uniform(values, sides)
        shown.append(
            {
                "source": source,
                "sides": sides,
                "counts": list(test.counts),
                "total": test.total,
                "expected": round(test.expected, 2),
                "chi_square": round(test.statistic, 3),
                "dof": test.dof,
                "p_value": test.p_value,
            }
        )
    return shown


def _usernames(per_player: Mapping[int | None, Any]) -> dict[int | None, str]:
    ids = [user_id for user_id in per_player if user_id is not None]
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def _uuid_or_none(key: str) -> str | None:
    try:
        return str(UUID(key))
    except ValueError:
        return None
