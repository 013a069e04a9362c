"""Rolling a check: the dice (server or physical), the rule state under the lock, and the rolls
of single, multiple-action and opposed checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from campaign.errors import InvalidInput, call_rules
from campaign.models import (
    Campaign,
    Character,
    Membership,
    Session,
    SessionSecret,
)
from rolls import systems
from rolls.checks.assembly import SYSTEM_KEYS, RollContext
from rolls.checks.requests import (
    MAX_ACTIONS,
    ROLL_KEYS,
    find_character,
)
from rolls.models import Check
from rolls.reads.known import failed_attempts, free_botch_available
from rolls.rules import compare
from rolls.systems import KeyedDice, cofd, d6pool, key_commitment, roll_key, storyteller


class Roller:
    """Rolls every roll of one event: server dice from this roll's key and the player's client
    seed, or the player's faces. Every check.rolled of a session uses the next roll key (manual
    ones too, so that the n-th key is always the n-th roll's) and commits to the one after it."""

    def __init__(
        self,
        campaign: Campaign,
        session: Session,
        seq: int,
        faces: Any,
        manual: bool,
        client_seed: str | None,
    ):
        self.manual = manual
        self.index = 0
        seed = bytes(SessionSecret.objects.get(session_id=session.pk).seed)
        key_index = Check.objects.filter(campaign=campaign, session_id=session.pk).count()
        key = roll_key(seed, key_index)
        # Recorded in the event: what anyone needs to re-derive the faces once they may see it.
        self.record = {
            "client_seed": client_seed,
            "dice_key": {"index": key_index, "key": key.hex()},
            "next_key": key_commitment(roll_key(seed, key_index + 1)),
        }
        if manual:
            if faces is None:
                raise InvalidInput("faces", _("this campaign uses physical dice: enter the faces"))
            self.faces = faces
        else:
            if faces is not None:
                raise InvalidInput(
                    "faces",
                    _(
                        "this campaign rolls on the server; faces are accepted only "
                        "when the rule option manual_dice is on"
                    ),
                )
            self.dice = KeyedDice(key, campaign.pk, seq, client_seed or "")

    def roll(self, system: str, check: dict[str, Any], count: int) -> tuple[list[int], dict]:
        """The next roll's faces and result; ``count`` is how many rolls the event has."""
        if not self.manual:
            return call_rules(systems.roll, system, check, self.dice)
        faces = self.faces
        if count > 1:
            if not isinstance(faces, list) or len(faces) != count:
                raise InvalidInput(
                    "faces", _("expected {count} lists of faces, one per roll").format(count=count)
                )
            faces = faces[self.index]
        self.index += 1
        if not isinstance(faces, list) or not all(
            isinstance(f, int) and not isinstance(f, bool) for f in faces
        ):
            raise InvalidInput("faces", _("expected a list of integers"))
        result = call_rules(systems.resolve, system, check, faces, prefix="")
        return list(faces), result


def read_roll_context(
    *,
    campaign: Campaign,
    session: Session,
    character: Character | None,
    task: str,
    is_gm: bool,
    life_or_death_called: bool,
    helpers: list[Check],
    viewer: Membership | None = None,
) -> RollContext:
    """The state the rules decide on (``viewer`` None), or as ``viewer`` may know it (odds)."""
    attempt = 1
    if character is not None:
        attempt += failed_attempts(
            campaign=campaign, character_id=character.pk, task=task, viewer=viewer
        )
    free_botch = free_botch_available(
        campaign=campaign,
        session_id=session.pk,
        character_id=character.pk if character else None,
        viewer=viewer,
    )
    bonus = cofd.teamwork_bonus([h.data["rolls"][0]["result"] for h in helpers]) if helpers else 0
    return RollContext(
        attempt=attempt,
        free_botch_available=free_botch,
        teamwork_bonus=bonus,
        helper_count=len(helpers),
        life_or_death_allowed=is_gm or life_or_death_called,
    )


def roll_entry(
    character: Character | None,
    spec: Mapping[str, Any],
    assembled,
    faces: list[int],
    result: dict[str, Any],
) -> dict[str, Any]:
    return {
        "character_id": str(character.pk) if character else None,
        "character_name": character.name if character else "",
        "owner_id": character.owner_id if character else None,
        "traits": list(spec.get("traits") or []),
        "label": (spec.get("label") or "")[:200] if isinstance(spec.get("label"), str) else "",
        "breakdown": assembled.breakdown,
        "rules": assembled.rules,
        "check": assembled.check,
        "faces": faces,
        "result": result,
    }


def multiple_actions(data, character, build, roller, state, system) -> list[dict[str, Any]]:
    if system != "storyteller":
        raise InvalidInput("actions", _("multiple actions are a Storyteller rule"))
    actions = data["actions"]
    if not isinstance(actions, list) or not 2 <= len(actions) <= MAX_ACTIONS:
        raise InvalidInput("actions", _("declare 2 to {n} actions").format(n=MAX_ACTIONS))
    shared = {k: v for k, v in data.items() if k in ("difficulty", "stressful")}
    specs, bases = [], []
    for index, action in enumerate(actions):
        if not isinstance(action, Mapping) or set(action) - (ROLL_KEYS | {"difficulty"}):
            raise InvalidInput(
                f"actions.{index}",
                _("an action has traits, pool, modifiers, difficulty and label"),
            )
        spec = {**shared, **action}
        specs.append(spec)
        bases.append(build(spec, character, state, prefix=f"actions.{index}.").check["pool"])
    pools = storyteller.multiple_action_pools(bases)
    rolls = []
    for index, (spec, pool) in enumerate(zip(specs, pools, strict=True)):
        assembled = build(spec, character, state, prefix=f"actions.{index}.")
        split = pool - assembled.check["pool"]
        assembled.check["pool"] = pool
        assembled.breakdown.append({"label": "multiple actions", "value": split, "kind": "actions"})
        faces, result = roller.roll("storyteller", assembled.check, len(specs))
        rolls.append(roll_entry(character, spec, assembled, faces, result))
    return rolls


def opposed_rolls(campaign, data, character, build, roller, state):
    system = campaign.system
    against = data["against"]
    if not isinstance(against, Mapping) or set(against) - (ROLL_KEYS | set(SYSTEM_KEYS[system])):
        raise InvalidInput("against", _("the other side has character, traits, pool, modifiers"))
    other = find_character(campaign, against.get("character"), "against.character")
    first_spec = {k: v for k, v in data.items() if k not in ("against", "mode")}
    first = build(first_spec, character, state)
    faces_a, result_a = roller.roll(system, first.check, 2)
    other_state = RollContext(life_or_death_allowed=True)
    second = build(against, other, other_state, prefix="against.")
    if system == "d6pool":
        mode = data.get("mode") or "opposed"
        if mode not in ("opposed", "contest"):
            raise InvalidInput("mode", _("must be opposed or contest"))
        if mode == "opposed":
            reduced = d6pool.defender_pool(result_a, second.check["pool"])
            kind = "opposed"
            if reduced is None:  # a failed attack needs no defence roll
                comparison = compare(system, kind, [result_a])
                return (
                    kind,
                    [roll_entry(character, first_spec, first, faces_a, result_a)],
                    comparison,
                )
            penalty = reduced - second.check["pool"]
            second.check["pool"] = reduced
            second.breakdown.append(
                {"label": "attacker's successes", "value": penalty, "kind": "opposed"}
            )
    faces_b, result_b = roller.roll(system, second.check, 2)
    kind = mode if system == "d6pool" else ("resisted" if system == "storyteller" else "opposed")
    comparison = compare(system, kind, [result_a, result_b])
    return (
        kind,
        [
            roll_entry(character, first_spec, first, faces_a, result_a),
            roll_entry(other, against, second, faces_b, result_b),
        ],
        comparison,
    )
