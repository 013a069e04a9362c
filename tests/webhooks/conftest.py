from tests.rolls.checks.conftest import table  # noqa: F401  (the same table as the check tests)
