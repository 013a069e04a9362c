from tests.api.conftest import build_world  # noqa: F401  (the API tests' table)
