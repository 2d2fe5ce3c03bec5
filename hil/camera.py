"""Simulated overhead camera: a scriptable table that renders frames like the real camera would.

The simulated table (issue 8) drives it with `deal_to`, `expose`, `board`, `move_button`,
`muck`, `clear`; a self-dealt table also shows `fold` (cards slide face down onto the muck pile),
`bet` (chips pushed into the seat's betting area), `gather_bets` (bets swept to the pot), `show`
(hole cards turned up) and `burn` (a card face down on the burn spot). `frames()` yields
`(t_seconds, frame_bgr)` at a steady rate. Rendering is deterministic: frame k of a camera built
with seed s is always the same picture.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from hil.scene import (
    ALL_CODES,
    FELTS,
    Camera,
    CardPlacement,
    Chip,
    DealerButton,
    TableScene,
    bet_pose,
    board_card_pose,
    burn_pose,
    button_pose,
    fold_pose,
    muck_pose,
    pot_pose,
    render,
    seat_card_pose,
)


class SimulatedCamera:
    """A table scene that changes as the script says, rendered on demand (cached until it changes)."""

    def __init__(
        self,
        seats: int = 6,
        deck: str = "anglo_poker",
        width: int = 1280,
        height: int = 720,
        seed: int = 0,
        felt: tuple[int, int, int] | str = "green",
        camera: Camera | None = None,
        fps: float = 10.0,
        noise_every_frame: bool = False,
    ) -> None:
        self.width, self.height, self.fps, self.seed = width, height, fps, seed
        felt_bgr = FELTS[felt] if isinstance(felt, str) else felt
        self.scene = TableScene(seats=seats, deck=deck, felt=felt_bgr, camera=camera or Camera(), packed=True)
        self.rng = np.random.default_rng(seed)
        self._used: set[str] = set()
        self._hole: dict[int, list[CardPlacement]] = {}
        self._board: list[CardPlacement] = []
        self._folds = 0  # hands folded onto the muck this deal
        self._burns = 0
        self._bets: dict[int, list[Chip]] = {}
        self._pot: list[Chip] = []
        self._frame_no = 0
        self._cache: tuple[np.ndarray, dict] | None = None
        self.noise_every_frame = noise_every_frame
        self.stopped = False  # set True to simulate a camera that stops delivering frames
        self.unplugged = False  # set True: the device is gone (USB pulled); the service waits for it

    # -- script ----------------------------------------------------------------------------
    def _changed(self) -> None:
        self._cache = None

    def _take(self, card: str | None) -> str:
        if card is None:
            free = [c for c in ALL_CODES if c not in self._used]
            card = str(self.rng.choice(free))
        if card not in ALL_CODES:
            raise ValueError(f"unknown card code {card!r}")
        self._used.add(card)
        return card

    def deal_to(self, seat: int, card: str | None = None, face_up: bool = False) -> CardPlacement:
        """One card lands at `seat` (face down unless face_up); the second overlaps the first."""
        if not 1 <= seat <= self.scene.seats:
            raise ValueError(f"seat {seat} outside 1..{self.scene.seats}")
        held = self._hole.setdefault(seat, [])
        c, a = seat_card_pose(self.scene.seats, seat, len(held) % 2, self.scene.table_size, self.rng)
        if len(held) >= 2:  # a surplus card lies a little further in
            c = (c[0] * 0.9, c[1] * 0.9)
        placed = CardPlacement(c, a, self._take(card), face_up, seat=seat, zone="seat")
        held.append(placed)
        self.scene.cards.append(placed)
        self._changed()
        return placed

    def expose(self, seat: int, index: int = 0) -> str:
        """Turn a card already at the seat face up; returns its code."""
        card = self._hole[seat][index]
        card.face_up = True
        self._changed()
        return card.code

    def board(self, cards: list[str | None]) -> list[str]:
        out = []
        for code in cards:
            c, a = board_card_pose(len(self._board))
            placed = CardPlacement(c, a, self._take(code), True, zone="board")
            self._board.append(placed)
            self.scene.cards.append(placed)
            out.append(placed.code)
        self._changed()
        return out

    def muck(self, seat: int) -> None:
        """The seat's cards go face down to the muck."""
        c, a = muck_pose()
        for card in self._hole.pop(seat, []):
            card.center, card.angle_deg, card.face_up, card.zone, card.seat = c, a, False, "muck", None
        self._changed()

    def fold(self, seat: int) -> None:
        """The seat's hole cards slide face down onto the muck pile, a little apart from the last
        hand folded (a self-dealt table's fold)."""
        c, a = fold_pose(self._folds, self.rng)
        self._folds += 1
        for i, card in enumerate(self._hole.pop(seat, [])):
            off = (c[0] + 6.0 * i, c[1] + 4.0 * i)
            card.center, card.angle_deg, card.face_up, card.zone, card.seat = (
                off,
                a + 5.0 * i,
                False,
                "muck",
                None,
            )
        self._changed()

    def show(self, seat: int) -> list[str]:
        """The seat turns its hole cards face up where they lie (a showdown); returns their codes."""
        for card in self._hole.get(seat, []):
            card.face_up = True
        self._changed()
        return [card.code for card in self._hole.get(seat, [])]

    def burn(self, card: str | None = None) -> str:
        """A card off the top goes face down onto the burn spot."""
        c, a = burn_pose(self._burns)
        self._burns += 1
        placed = CardPlacement(c, a, self._take(card), False, zone="burn")
        self.scene.cards.append(placed)
        self._changed()
        return placed.code

    def bet(self, seat: int, count: int = 1, colour: str = "red") -> None:
        """The seat pushes `count` chips forward into its betting area."""
        held = self._bets.setdefault(seat, [])
        for _ in range(count):
            chip = Chip(bet_pose(self.scene.seats, seat, len(held), self.scene.table_size), colour)
            held.append(chip)
            self.scene.chips.append(chip)
        self._changed()

    def gather_bets(self) -> None:
        """The betting round is over: every bet is swept into the pot below the board."""
        for chips in self._bets.values():
            for chip in chips:
                chip.center = pot_pose(len(self._pot))
                self._pot.append(chip)
        self._bets.clear()
        self._changed()

    def move_button(self, seat: int, colour=None, label: str = "DEALER") -> None:
        pos = button_pose(self.scene.seats, seat, self.scene.table_size)
        self.scene.button = DealerButton(
            pos, colour=colour or (238, 238, 236), label=label, angle_deg=float(self.rng.uniform(0, 360))
        )
        self._changed()

    def clear(self) -> None:
        """Cards collected for the next hand (the button and the chip stacks stay; the pot and any
        bets go to the winner)."""
        self.scene.cards.clear()
        self._hole.clear()
        self._board.clear()
        self._used.clear()
        gone = {id(c) for c in self._pot} | {id(c) for chips in self._bets.values() for c in chips}
        self.scene.chips = [c for c in self.scene.chips if id(c) not in gone]
        self._pot.clear()
        self._bets.clear()
        self._folds = self._burns = 0
        self._changed()

    def problem(self) -> str | None:
        """Why the scene's card images cannot be loaded (say where they were looked for), or None."""
        from hil.scene import deck_dir, load_deck

        try:
            load_deck(self.scene.deck)
        except FileNotFoundError as exc:
            return (
                f"card images of deck {self.scene.deck!r} are missing: {exc} (looked in "
                f"{deck_dir(self.scene.deck)}; set SMART_TABLE_DECKS=/path/to/decks)"
            )
        return None

    # -- frames ----------------------------------------------------------------------------
    def frame(self) -> tuple[np.ndarray, dict]:
        """The current picture and its truth."""
        if self._cache is None or self.noise_every_frame:
            seed = self.seed * 100003 + (self._frame_no if self.noise_every_frame else 0)
            self._cache = render(self.scene, self.width, self.height, seed)
        self._frame_no += 1
        return self._cache

    async def frames(
        self, fps: float | None = None, count: int | None = None
    ) -> AsyncIterator[tuple[float, np.ndarray]]:
        """Yield (t_seconds, frame) at `fps` until `count` frames or until `stopped` is set."""
        period = 1.0 / (fps or self.fps)
        t0 = time.monotonic()
        n = 0
        while count is None or n < count:
            if self.stopped:
                raise CameraStopped("sim camera stopped delivering frames")
            frame, _ = self.frame()
            yield time.monotonic() - t0, frame
            n += 1
            delay = t0 + n * period - time.monotonic()
            await asyncio.sleep(max(delay, 0))


class CameraStopped(RuntimeError):
    """A camera (real or simulated) stopped delivering frames."""


# -- scripted deal sequences -------------------------------------------------------------------
@dataclass
class Step:
    """One change to the table, the protocol lines the tracker should emit for it, and how long it holds."""

    action: Callable[[SimulatedCamera], object]
    expect: list[dict] = field(default_factory=list)
    frames: int = 4


def deal_hand_script(
    seats: int,
    button: int,
    rng: np.random.Generator,
    exposed_seat: int | None = None,
    flash_seat: int | None = None,
) -> list[Step]:
    """Button placed, two rounds of face-down cards clockwise from the button's left, a flop, turn, river.

    `exposed_seat` gets its first card face up as it is dealt; `flash_seat`'s first card is turned
    face up after the deal (an `expose` by the dealer).
    """
    steps: list[Step] = [Step(lambda cam: cam.move_button(button), [{"type": "button_seen", "seat": button}])]
    order = [(button + k - 1) % seats + 1 for k in range(1, seats + 1)]
    codes = list(rng.permutation(ALL_CODES))
    for rnd in range(2):
        for s in order:
            code = str(codes.pop())
            if rnd == 0 and s == exposed_seat:
                steps.append(
                    Step(
                        lambda cam, s=s, code=code: cam.deal_to(s, code, face_up=True),
                        [{"type": "deal", "seat": s, "card": code}],
                    )
                )
            else:
                steps.append(
                    Step(lambda cam, s=s, code=code: cam.deal_to(s, code), [{"type": "deal", "seat": s}])
                )
    if flash_seat is not None:
        steps.append(
            Step(
                lambda cam, s=flash_seat: cam.expose(s, 0),
                [{"type": "expose", "seat": flash_seat, "card": "?", "by": "dealer"}],
            )
        )
    flop = [str(codes.pop()) for _ in range(3)]
    steps.append(Step(lambda cam, f=flop: cam.board(f), [{"type": "board", "cards": flop}]))
    for _ in range(2):
        c = str(codes.pop())
        steps.append(Step(lambda cam, c=c: cam.board([c]), [{"type": "board", "cards": [c]}]))
    return steps


def self_dealt_hand_script(
    seats: int,
    button: int,
    rng: np.random.Generator,
    folds: tuple[int, ...] = (),
    bets: tuple[int, ...] = (),
    flop_folds: tuple[int, ...] = (),
    flop_bets: tuple[int, ...] = (),
    burns: bool = True,
    frames: int = 5,
    exposed_seat: int | None = None,
) -> list[Step]:
    """A self-dealt hand as the camera sees it, with the lines it should give.

    The button, two rounds face down from the button's left, then pre-flop `bets` push chips into
    their betting areas and `folds` toss their cards onto the muck (in that order, one after the
    other), the bets are gathered, a burn card on the burn spot (with `burns`), the flop, the
    `flop_bets` and `flop_folds`, the turn and the river (each after a burn), and every seat still
    holding cards turns them up at the showdown. `exposed_seat`'s first card is dealt face up.
    """
    steps: list[Step] = [
        Step(lambda cam: cam.move_button(button), [{"type": "button_seen", "seat": button}], frames)
    ]
    order = [(button + k - 1) % seats + 1 for k in range(1, seats + 1)]
    codes = list(rng.permutation(ALL_CODES))
    for rnd in range(2):
        for s in order:
            code = str(codes.pop())
            up = rnd == 0 and s == exposed_seat
            line = {"type": "deal", "seat": s, **({"card": code} if up else {})}
            steps.append(
                Step(lambda cam, s=s, code=code, up=up: cam.deal_to(s, code, face_up=up), [line], frames)
            )
    live = list(order)

    def betting(bettors, folders):
        for s in bettors:
            steps.append(Step(lambda cam, s=s: cam.bet(s, 2), [{"type": "chips_seen", "seat": s}], frames))
        for s in folders:
            live.remove(s)
            steps.append(Step(lambda cam, s=s: cam.fold(s), [{"type": "fold_seen", "seat": s}], frames))
        if bettors:
            steps.append(Step(lambda cam: cam.gather_bets(), [], frames))

    def street(n):
        if burns:
            c = str(codes.pop())
            steps.append(Step(lambda cam, c=c: cam.burn(c), [{"type": "burn"}], frames))
        cards = [str(codes.pop()) for _ in range(n)]
        steps.append(Step(lambda cam, f=cards: cam.board(f), [{"type": "board", "cards": cards}], frames + 2))

    betting(bets, folds)
    street(3)
    betting(flop_bets, flop_folds)
    street(1)
    street(1)
    for s in live:
        steps.append(Step(lambda cam, s=s: cam.show(s), [{"type": "show", "seat": s, "cards": "?"}], frames))
    return steps


def run_script(cam: SimulatedCamera, steps: list[Step]) -> Iterator[tuple[int, np.ndarray, dict, list[dict]]]:
    """Apply each step and render its frames: yields (frame_index, frame, truth, expected lines so far)."""
    expected: list[dict] = []
    k = 0
    for step in steps:
        step.action(cam)
        for line in step.expect:
            if line.get("card") == "?":  # an expose: the card is whatever the seat's first card was
                line = {**line, "card": cam._hole[line["seat"]][0].code}
            if line.get("cards") == "?":  # a show: the seat's hole cards
                line = {**line, "cards": [c.code for c in cam._hole[line["seat"]]]}
            expected.append(line)
        for _ in range(step.frames):
            frame, truth = cam.frame()
            yield k, frame, truth, list(expected)
            k += 1


class DealingCamera:
    """The simulated camera dealing scripted hands forever (button, deal, flop, turn, river), the
    button moving on each hand: the `sim:<seed>` frame source, for trying the vision pipeline
    without a table. Meets controller.devices.FrameSource."""

    def __init__(self, seed: int = 0, seats: int = 6, fps: float = 10.0) -> None:
        self.seed, self.seats, self.fps = seed, seats, fps

    async def frames(self, fps: float | None = None) -> AsyncIterator[tuple[float, np.ndarray]]:
        fps = fps or self.fps
        cam = SimulatedCamera(seats=self.seats, seed=self.seed, fps=fps)
        rng = np.random.default_rng(self.seed)
        t0 = time.monotonic()
        n = 0
        button = 1
        while True:
            cam.clear()
            for step in deal_hand_script(self.seats, button, rng):
                step.action(cam)
                for _ in range(step.frames):
                    frame, _ = await asyncio.to_thread(cam.frame)
                    yield time.monotonic() - t0, frame
                    n += 1
                    await asyncio.sleep(max(0.0, t0 + n / fps - time.monotonic()))
            button = button % self.seats + 1
