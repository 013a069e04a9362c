"""nice_damnit: every worked example of RULES §5.6 (E1-E9), the §5.2 chip table, the option."""

from decimal import Decimal
from fractions import Fraction

import pytest

from rolls.systems import RuleError, nice_damnit, odds, resolve, rounding

# §5.2 table, totals 6..23: (band, Nice!, Damnit!)
TABLE = {
    6: ("bad", 0, 9),
    7: ("bad", 0, 8),
    8: ("bad", 0, 7),
    9: ("bad", 0, 6),
    10: ("bad", 0, 5),
    11: ("bad", 0, 4),
    12: ("bad", 0, 3),
    13: ("average", 1, 3),
    14: ("average", 1, 2),
    15: ("average", 2, 2),
    16: ("average", 2, 1),
    17: ("average", 3, 1),
    18: ("excellent", 4, 0),
    19: ("excellent", 5, 0),
    20: ("excellent", 6, 0),
    21: ("excellent", 7, 0),
    22: ("excellent", 8, 0),
    23: ("excellent", 9, 0),
}


def r(faces: list[int], bonus: int = 0, **kw: object) -> dict:
    return resolve("nice_damnit", {"bonus": bonus, **kw}, faces)


def chips(res: dict) -> tuple[str, int, int, int]:
    return res["outcome"], res["nice"], res["damnit"], res["extra_nice"]


def test_chip_table_of_section_5_2() -> None:
    for total, (band, n, d) in TABLE.items():
        res = r([1, 1], total - 2)
        assert (res["total"], res["outcome"], res["nice"], res["damnit"]) == (total, band, n, d)
    assert r([1, 1], -10)["damnit"] == 9  # below the seed's table: 9 Damnit! [I]
    assert r([10, 10], 20)["nice"] == 9


def test_E1_excellent_four_nice() -> None:
    assert chips(r([7, 6], 2 + 3)) == ("excellent", 4, 0, 0)


def test_E2_bad_eight_damnit() -> None:
    assert chips(r([3, 2], 1 + 1)) == ("bad", 0, 8, 0)


def test_E3_average_takes_two_extra() -> None:
    assert chips(r([5, 5], 3, extra_nice=2)) == ("average", 3, 5, 2)


def test_E4_sixteen_takes_two_extra() -> None:
    assert chips(r([8, 8], 0, extra_nice=2)) == ("average", 4, 3, 2)


def test_E5_cap_of_nine_allows_only_one() -> None:
    res = r([10, 10], 2, extra_nice=2)
    assert chips(res) == ("excellent", 9, 1, 1)
    assert res["extra_nice_requested"] == 2


def test_E6_thirty_no_extras_possible() -> None:
    assert chips(r([10, 10], 10, extra_nice=2)) == ("excellent", 9, 0, 0)


def test_E7_bad_band_cannot_take_extras() -> None:
    assert chips(r([6, 6], 0, extra_nice=2)) == ("bad", 0, 3, 0)


def test_E8_snake_eyes() -> None:
    assert chips(r([1, 1])) == ("bad", 0, 9, 0)


def test_E9_rounding_half_up() -> None:
    assert rounding.nice_damnit_round(2.5) == 3
    assert rounding.half_up(2.49) == 2
    assert rounding.half_up(Fraction(5, 2)) == 3
    assert rounding.half_up(Decimal("2.5")) == 3
    assert rounding.half_up(-2.5) == -3  # [I] half away from zero
    assert rounding.half_up(-2.49) == -2
    assert rounding.half_up(4) == 4
    assert round(2.5) == 2  # why the rules forbid round(): it goes to even


def test_extra_nice_option_off() -> None:
    assert chips(r([5, 5], 3, extra_nice=2, extra_nice_enabled=False)) == ("average", 1, 3, 0)
    assert nice_damnit.extra_nice_allowed(13, enabled=False) == 0
    assert nice_damnit.extra_nice_allowed(13) == 2
    assert nice_damnit.extra_nice_allowed(22) == 1


def test_odds_totals_and_chips() -> None:
    o = odds("nice_damnit", {"bonus": 0})
    assert o["totals"][11] == pytest.approx(0.10)
    assert o["totals"][2] == pytest.approx(0.01)
    assert o["outcomes"]["excellent"] == pytest.approx(sum(o["totals"][t] for t in range(18, 21)))
    assert sum(o["nice"].values()) == pytest.approx(1.0)
    assert o["damnit"][9] == pytest.approx(0.01 + 0.02 + 0.03 + 0.04 + 0.05)  # totals 2..6
    assert set(odds("nice_damnit", {"bonus": 30})["outcomes"]) == {"excellent"}


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ({"bonus": "2"}, "bonus"),
        ({"extra_nice": 3}, "extra_nice"),
        ({"extra_nice": -1}, "extra_nice"),
        ({"extra_nice": True}, "extra_nice"),
        ({"extra_nice_enabled": 0}, "extra_nice_enabled"),
    ],
)
def test_invalid_checks(check: dict, key: str) -> None:
    with pytest.raises(RuleError, match=key):
        resolve("nice_damnit", check, [1, 1])


def test_face_errors() -> None:
    with pytest.raises(RuleError, match="expected 2 d10"):
        r([5])
    with pytest.raises(RuleError, match=r"1\.\.10"):
        r([5, 11])
