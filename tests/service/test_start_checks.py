"""`smart-table doctor`'s device-free checks run at every start and show in the service's health
(issue 18): the director and `top` see what the installer must fix without running doctor."""

from __future__ import annotations

from controller.service.app import TableService
from tests.service.conftest import table_config
from tests.service.mqtt_helpers import Recorder


async def test_a_sound_table_reports_its_start_checks_passed(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        doctor = service.health.as_dict()["doctor"]
        assert doctor["status"] == "ok" and "disk" in doctor["detail"] and "secrets" in doctor["detail"]
        await rec.wait_for(lambda r: r.docs("state") and "doctor" in r.docs("state")[-1]["health"])
        assert rec.docs("state")[-1]["health"]["doctor"]["status"] == "ok"


async def test_a_broken_layout_is_in_health_with_its_fix_and_the_table_still_runs(tmp_path):
    bad = tmp_path / "layout.toml"
    bad.write_text("this is not a layout\n")
    cfg = table_config(tmp_path, devices={"layout": str(bad)})
    async with TableService(cfg) as service:
        doctor = service.health.as_dict()["doctor"]
        assert doctor["status"] == "failed"
        assert "layout" in doctor["detail"] and "calibrate" in doctor["detail"]
        assert service.health.as_dict()["engine"]["status"] == "ok"  # the table rules on all the same
