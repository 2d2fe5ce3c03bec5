"""The HTML report of a simulated table run: one self-contained file a person can open and follow.

Steps first (pass/fail, what was seen instead), then every ruling in order with the panel as the
players saw it and the camera frame as the vision pipeline annotated it. Pictures are embedded
(JPEG, base64), so the file can be mailed or attached to a ticket on its own.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from hil.scenario import Scenario, ScenarioResult, describe_ruling

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;background:#fafafa}
h1{font-size:1.5em;margin-bottom:.2em} .meta{color:#555;margin-bottom:1em}
.pass{color:#116611;font-weight:bold} .fail{color:#b00;font-weight:bold} .notrun{color:#888}
table.steps{border-collapse:collapse;width:100%;margin-bottom:1.5em}
table.steps td,table.steps th{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
.ruling{background:#fff;border:1px solid #ddd;border-radius:6px;margin:.8em 0;padding:.6em .8em}
.ruling h3{margin:.1em 0 .4em 0;font-size:1.05em} .ruling .step{color:#666;font-size:.9em}
.ruling .pics{display:flex;gap:.8em;flex-wrap:wrap} .ruling img{max-width:520px;width:100%;border-radius:4px}
.ruling pre{background:#f3f3f3;padding:.3em .5em;white-space:pre-wrap;font-size:.85em;margin:.4em 0}
.alert h3{color:#b00}
"""
ALERTS = {
    "misdeal",
    "button_misplaced",
    "dead_hand",
    "replace_exposed",
    "extra_card",
    "boxed_card",
    "out_of_turn",
    "board_redeal",
    "action_ruled",
    "error",
}


def _img(folder: Path, name: str | None, alt: str, width: int = 520) -> str:
    if not name:
        return ""
    path = folder / name
    try:
        import cv2

        img = cv2.imread(str(path))
        if img is None:
            return ""
        if img.shape[1] > width:
            scale = width / img.shape[1]
            img = cv2.resize(img, (width, int(img.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if not ok:
            return ""
        data = base64.b64encode(buf.tobytes()).decode()
    except Exception:
        return f'<a href="{html.escape(name)}">{html.escape(alt)}</a>'
    return f'<img alt="{html.escape(alt)}" title="{html.escape(name)}" src="data:image/jpeg;base64,{data}">'


def write_report(
    path: Path, scenario: Scenario, result: ScenarioResult, captures: list[Any], broker: str = ""
) -> Path:
    folder = path.parent
    e = html.escape
    verdict = '<span class="pass">PASSED</span>' if result.passed else '<span class="fail">FAILED</span>'
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{e(scenario.name)} - smart-table sim</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(scenario.name)} {verdict}</h1>",
        f"<div class='meta'>rulebook <b>{e(scenario.profile)}</b>, {scenario.seats} seats, broker {e(broker)}, "
        f"{len(result.steps)} steps in {result.seconds:.1f} s, {len(captures)} rulings and check-ins. "
        f"Scenario file: {e(scenario.source)}</div>",
    ]
    if scenario.description:
        out.append(f"<p>{e(scenario.description)}</p>")
    if result.error:
        out.append(f"<p class='fail'>The run broke: {e(result.error)}</p>")
    out.append(
        "<h2>Steps</h2><table class='steps'><tr><th>#</th><th>step</th><th>result</th>"
        "<th>rulings in this step</th></tr>"
    )
    for r in result.steps:
        cls = {"passed": "pass", "failed": "fail"}.get(r.status, "notrun")
        rulings = ", ".join(describe_ruling(x) for x in r.rulings)
        message = f"<br>{e(r.message)}" if r.message else ""
        out.append(
            f"<tr><td>{r.step.index}</td><td>{e(r.step.title)}</td>"
            f"<td class='{cls}'>{e(r.status)}{message}</td><td>{e(rulings)}</td></tr>"
        )
    out.append("</table><h2>Rulings and check-ins, in order</h2>")
    if not captures:
        out.append("<p>No ruling was published.</p>")
    for cap in captures:
        kind = str(cap.ruling.get("type"))
        shown = {k: v for k, v in cap.ruling.items() if k not in ("seq", "event_seq", "ruling_seq", "t")}
        alert = (
            " alert" if kind in ALERTS or (kind == "checkin" and cap.ruling.get("accepted") is False) else ""
        )
        rule = cap.ruling.get("rule")
        out.append(
            f"<div class='ruling{alert}'><h3>#{cap.index} {e(describe_ruling(cap.ruling))}"
            + (f" <small>({e(str(rule))})</small>" if rule else "")
            + f"</h3><div class='step'>{e(cap.step)}</div>"
            f"<pre>{e(json.dumps(shown, separators=(', ', ': ')))}</pre><div class='pics'>"
            + _img(folder, cap.panel_png, f"panel after ruling {cap.index}")
            + _img(folder, cap.frame_png, f"camera frame at ruling {cap.index}")
            + "</div></div>"
        )
    out.append(
        "<p class='meta'>Files beside this report: rulings.jsonl (every ruling with its step), "
        "events.jsonl (every input the table accepted, as published on MQTT), camera.jsonl (what the "
        "vision pipeline reported), events.db (the table's own event log), panel/ and frames/ "
        "(full-size pictures), service.log.</p></body></html>"
    )
    path.write_text("\n".join(out), encoding="utf-8")
    return path
