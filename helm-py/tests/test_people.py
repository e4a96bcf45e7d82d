"""People management from Python: roles, deactivation and reactivation,
embedded and through a server, blocking and asyncio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import onehelm


def test_roles_and_access_change_embedded(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        helm.add_user("mia")
        helm.add_user("nol")
        promoted = helm.set_role("mia", "admin")
        assert (promoted.role, promoted.active) == ("admin", True)
        off = helm.deactivate_user("nol")
        assert off.active is False
        with pytest.raises(onehelm.Forbidden, match="deactivated"):
            helm.as_user("nol")
        mia = helm.as_user("mia")
        with pytest.raises(onehelm.Forbidden):
            mia.set_role("nol", "admin")
        with pytest.raises(onehelm.Refused):
            mia.deactivate_user("mia")
        assert mia.reactivate_user("nol").active is True
        with pytest.raises(onehelm.Refused):
            helm.set_role(helm.me().name, "member")
        with pytest.raises(onehelm.NotFound):
            helm.deactivate_user("nobody")
        with pytest.raises(onehelm.InvalidInput):
            helm.set_role("nol", "boss")


async def test_roles_and_access_change_through_a_server_async(server_factory: Any) -> None:
    server = server_factory()
    helm = onehelm.AsyncHelm.connect(server.url, server.token)
    await helm.add_user("mia")
    assert (await helm.set_role("mia", "admin")).role == "admin"
    assert (await helm.deactivate_user("mia")).active is False
    with pytest.raises(onehelm.Refused):
        await helm.deactivate_user("ada")
    assert (await helm.reactivate_user("mia")).active is True
