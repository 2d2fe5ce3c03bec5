"""The HTML report of a simulated table run: one self-contained file a person can open and follow.

Written for people before programmers: the players by name, every alert listed first, the steps
(pass/fail, what was seen instead), then every ruling in order as a sentence (controller/sentences.py,
the `--pretty` wording) with the rule it comes from (marked when borrowed from another venue's book),
the camera frame as the vision pipeline annotated it, enlarged to be read, and the panel as the
players saw it. Pictures are embedded
(JPEG, base64), so the file can be mailed or attached to a ticket on its own.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from controller.sentences import is_borrowed, sentence
from hil.scenario import Scenario, ScenarioResult

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1120px;padding:0 .8em;color:#222;background:#fafafa;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em} .meta{color:#555;margin-bottom:1em}
.pass{color:#116611;font-weight:bold} .fail{color:#b00;font-weight:bold} .notrun{color:#888}
table.steps{border-collapse:collapse;width:100%;margin-bottom:1.5em}
table.steps td,table.steps th{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}
table.players td{padding:.1em .8em .1em 0}
.ruling{background:#fff;border:1px solid #ddd;border-radius:6px;margin:1em 0;padding:.7em .9em}
.ruling h3{margin:.1em 0 .4em 0;font-size:1.15em;font-weight:600} .ruling .step{color:#666;font-size:.9em}
.rule{font-size:.85em;color:#555;white-space:nowrap} .borrowed{background:#fff3cd;border:1px solid #e0c060;border-radius:4px;padding:0 .3em}
.ruling .pics{display:flex;flex-direction:column;gap:.6em}
.ruling figure{margin:0} .ruling figcaption{color:#666;font-size:.85em}
.ruling img.frame{width:100%;max-width:1080px;border-radius:4px} .ruling img.panel{max-width:100%;border-radius:4px}
details{margin:.4em 0;color:#555} details pre{background:#f3f3f3;padding:.3em .5em;white-space:pre-wrap;font-size:.85em}
.alert h3{color:#b00} ul.alerts li{margin:.2em 0}
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


def _img(folder: Path, name: str | None, alt: str, css: str, width: int) -> str:
    """The picture embedded at `width` pixels: small camera frames (640x360 in the simulator) are
    enlarged so their labels can be read; big ones are scaled down to keep the file mailable."""
    if not name:
        return ""
    path = folder / name
    try:
        import cv2

        img = cv2.imread(str(path))
        if img is None:
            return ""
        if img.shape[1] != width:
            scale = width / img.shape[1]
            method = cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA
            img = cv2.resize(img, (width, round(img.shape[0] * scale)), interpolation=method)
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 82])
        if not ok:
            return ""
        data = base64.b64encode(buf.tobytes()).decode()
    except Exception:
        return f'<a href="{html.escape(name)}">{html.escape(alt)}</a>'
    return (
        f'<figure><img class="{css}" alt="{html.escape(alt)}" title="{html.escape(name)}" '
        f'src="data:image/jpeg;base64,{data}"><figcaption>{html.escape(alt)} '
        f'(<a href="{html.escape(name)}">full size</a>)</figcaption></figure>'
    )


def _rule_html(line: dict[str, Any], profile: str) -> str:
    rule = line.get("rule")
    if not rule:
        return ""
    if is_borrowed(line, profile):
        book = str(rule).split(":", 1)[0]
        return (
            f" <span class='rule borrowed' title='{profile} has no rule of its own here; the profile "
            f"borrows this one'>borrowed from {html.escape(book)}: {html.escape(str(rule))}</span>"
        )
    return f" <span class='rule'>{html.escape(str(rule))}</span>"


def write_report(
    path: Path, scenario: Scenario, result: ScenarioResult, captures: list[Any], broker: str = ""
) -> Path:
    """Written for the floor person first: the rulings as sentences with the players' names, every
    alert listed at the top, borrowed rules marked; the raw lines are one click away."""
    folder = path.parent
    e = html.escape
    profile = scenario.profile
    names = {p.seat: p.name for p in scenario.players if p.seat}
    verdict = '<span class="pass">PASSED</span>' if result.passed else '<span class="fail">FAILED</span>'
    out = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(scenario.name)} - smart-table sim</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(scenario.name)} {verdict}</h1>",
        f"<div class='meta'>Rulebook <b>{e(profile)}</b>, {scenario.seats} seats, "
        f"{len(result.steps)} steps in {result.seconds:.1f} s, {len(captures)} rulings and check-ins. "
        f"Broker {e(broker) or '-'}; scenario file {e(scenario.source)}.</div>",
    ]
    if scenario.description:
        out.append(f"<p>{e(scenario.description)}</p>")
    if result.error:
        out.append(f"<p class='fail'>The run broke: {e(result.error)}</p>")
    seated = sorted((p for p in scenario.players if p.seat), key=lambda p: p.seat or 0)
    if seated:
        out.append("<h2>Players</h2><table class='players'>")
        out += [
            f"<tr><td>seat {p.seat}</td><td><b>{e(p.name)}</b></td><td>{e(p.id)}</td></tr>" for p in seated
        ]
        out.append("</table>")
    # names as the run went on: check-ins (and seat moves) change who sits where
    named: list[dict[int, str]] = []
    lines: list[dict[str, Any]] = []  # the rulings as shown (a check-in gets the player's name)
    current = dict(names)
    for cap in captures:
        r = cap.ruling
        if r.get("type") == "checkin" and not r.get("name") and scenario.player(str(r.get("player"))):
            r = {**r, "name": scenario.player(str(r.get("player"))).name}  # who tapped, by name
        if r.get("type") == "checkin" and r.get("accepted") is not False and isinstance(r.get("seat"), int):
            current[r["seat"]] = str(r.get("name") or r.get("player") or current.get(r["seat"], ""))
        named.append(dict(current))
        lines.append(r)
    alerts = [(c, n, r) for c, n, r in zip(captures, named, lines, strict=True) if _is_alert(r)]
    out.append(f"<h2>Alerts ({len(alerts)})</h2>")
    if alerts:
        out.append("<ul class='alerts'>")
        for cap, n, r in alerts:
            out.append(
                f"<li><a href='#r{cap.index}'>#{cap.index}</a> {e(sentence(_without_rule(r), n))}"
                f"{_rule_html(r, profile)}</li>"
            )
        out.append("</ul>")
    else:
        out.append("<p>No misdeal, misplaced button, dead hand or refused line in this run.</p>")
    out.append(
        "<h2>Steps</h2><table class='steps'><tr><th>#</th><th>step</th><th>result</th>"
        "<th>what the table said</th></tr>"
    )
    for r in result.steps:
        cls = {"passed": "pass", "failed": "fail"}.get(r.status, "notrun")
        said = "<br>".join(e(sentence(x, names, profile)) for x in r.rulings)
        message = f"<br>{e(r.message)}" if r.message else ""
        out.append(
            f"<tr><td>{r.step.index}</td><td>{e(r.step.title)}</td>"
            f"<td class='{cls}'>{e(r.status)}{message}</td><td>{said}</td></tr>"
        )
    out.append("</table><h2>Rulings and check-ins, in order</h2>")
    if not captures:
        out.append("<p>No ruling was published.</p>")
    for cap, n, r in zip(captures, named, lines, strict=True):
        shown = {k: v for k, v in cap.ruling.items() if k not in ("seq", "event_seq", "ruling_seq", "t")}
        alert = " alert" if _is_alert(r) else ""
        out.append(
            f"<div class='ruling{alert}' id='r{cap.index}'><h3>#{cap.index} "
            f"{e(sentence(_without_rule(r), n))}{_rule_html(r, profile)}</h3>"
            f"<div class='step'>{e(cap.step)}</div>"
            f"<details><summary>the line as published</summary><pre>"
            f"{e(json.dumps(shown, separators=(', ', ': ')))}</pre></details><div class='pics'>"
            + _img(
                folder,
                cap.frame_png,
                f"camera frame at ruling {cap.index}, as the vision pipeline saw it",
                "frame",
                FRAME_WIDTH,
            )
            + _img(folder, cap.panel_png, f"LED panel after ruling {cap.index}", "panel", PANEL_WIDTH)
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


FRAME_WIDTH = 1080  # the simulator's 640x360 frames, enlarged so card codes and seat labels read
PANEL_WIDTH = 540


def _is_alert(line: dict[str, Any]) -> bool:
    kind = str(line.get("type"))
    return kind in ALERTS or (kind == "checkin" and line.get("accepted") is False)


def _without_rule(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k != "rule"}
