"""Shared fixtures of the play tests."""

import pytest

from .wsclient import OPEN


@pytest.fixture
async def close_clients():
    """Close every communicator a test opened, even when the test failed."""
    yield
    while OPEN:
        await OPEN.pop().close()
