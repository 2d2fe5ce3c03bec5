"""The card verifier, the reader's glyphs and its confidence learnt from real photographs too, leave-one-source-out.

    python -m vision.train --real [--out-dir vision]      (make train-vision-real)

Why: trained on synthetic composites only, the verifier never saw a real camera's paper, glare and
clutter. Here the proposals `detect_quads.propose` makes on the real photos of
../shared/data/real_photos join the synthetic set: a proposal is a card when its box matches a
labelled card's box (IoU >= 0.7); not a card when it matches none (IoU < 0.3) and, on a photo whose
labels are not complete, is far from a card's size (a pip, an index, a group of cards, part of
the table: an unlabelled card could be the right size). `foltys_single_cards` has no boxes and
adds no sample.

Leave-one-source-out: for each source S a verifier `loso/quad_verifier_without_<S>.npz` is trained on
the synthetic set and the two other sources. The built-in reader's glyph classifiers learn from the
real photos the same way (`python -m vision.read_train --real`, make train-vision-glyphs: the
index crops `glyph_samples` cuts from the cards found on each source; `loso/read_glyphs_without_<S>.npz`).
A confidence map `loso/read_confidence_without_<S>.json` (`vision.confidence`, `fit_confidence`) is
fitted on the codes read on the two other sources, each read by the models that never saw it.
`bench/bench_vision.py --loso vision/loso` reports each source with the models that never saw it.
The shipped `quad_verifier.npz`, `read_glyphs.npz` and `read_confidence.json` learnt from all three.
Licences: the photos are Apache-2.0 (Edje), CC BY 4.0 (Roboflow user, black-jack-8goxw v13:
attribution required) and MIT (Foltys); see ../shared/data/real_photos/*/LICENSE.txt.
"""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np

from vision import confidence
from vision.detect_quads import features_batch, propose, work_picture
from vision.real_photos import SOURCES, iou, load_labels, real_photos_dir

POS_IOU = 0.7
NEG_IOU = 0.3
SIZE_OFF = 2.5  # an unmatched proposal this much smaller or bigger (area) than the labelled cards
REAL_WEIGHT = 3.0  # a real sample counts this many synthetic ones


def real_samples(source: str, log=print) -> tuple[np.ndarray, np.ndarray]:
    """(features, labels) of the proposals on one source's photos."""
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        raise ValueError(f"real photos of {source} not found (../shared/data/real_photos)")
    labels = load_labels(root / source)
    xs, ys = [], []
    for name in sorted(labels):
        lab = labels[name]
        cards = [c for c in lab.get("cards", []) if "box" in c]
        if len(cards) != len(lab.get("cards", [])):
            continue  # no boxes: nothing to tell a card from a non-card by
        img = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if img is None:
            continue
        work, scale = work_picture(img)
        props, _ = propose(work)
        areas = [(c["box"][2] - c["box"][0]) * (c["box"][3] - c["box"][1]) for c in cards]
        ref = float(np.median(areas)) if areas else None
        qs, y = [], []
        for q, _fill, _cue in props:
            b = (q[:, 0].min() / scale, q[:, 1].min() / scale, q[:, 0].max() / scale, q[:, 1].max() / scale)
            best = max((iou(b, c["box"]) for c in cards), default=0.0)
            if best >= POS_IOU:
                qs.append(q)
                y.append(1)
            elif best < NEG_IOU:
                area = (b[2] - b[0]) * (b[3] - b[1])
                far = ref is None or area < ref / SIZE_OFF or area > ref * SIZE_OFF
                if lab.get("labels_complete") or far:
                    qs.append(q)
                    y.append(0)
        if qs:
            xs.extend(features_batch(work, qs))
            ys.extend(y)
    log(f"  real {source}: {len(ys)} samples ({int(sum(ys))} cards)")
    if not xs:
        return np.zeros((0, 550), np.float32), np.zeros(0, np.float32)
    return np.stack(xs).astype(np.float32), np.array(ys, np.float32)


def reads(source: str, verifier_path: str | None) -> list[tuple[float, bool]]:
    """(raw confidence, right) of every code the built-in reader gives on one source's photos."""
    from vision.detect import Detector
    from vision.real_photos import score_image

    root = real_photos_dir()
    labels = load_labels(root / source)
    det = Detector(verifier_path=verifier_path, calibration=False)
    out: list[tuple[float, bool]] = []
    for name in sorted(labels):
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        det.card_width_hint = None
        out += score_image(det.detect(frame), labels[name]).reads
    return out


GLYPH_JITTER = 0.02  # of the card's width: how far each corner is moved for a further view


def labelled_cards(source: str, verifier_path: str | None, names=None):
    """(frame, corners, covering, touching, code) of each labelled face-up card the detector finds on
    one source's photos: the outline it found and the cards it saw on or against it, as the reader
    was given them. `names`: only those photos (default all)."""
    from vision.detect import Detector
    from vision.real_photos import match

    class Recording(Detector):
        """Remembers what each card read was given: where its outline is, which cards touch it."""

        def _read(self, frame, corners, covering, touching=()):
            self.given.append((np.asarray(corners, np.float64), list(covering), list(touching)))
            return super()._read(frame, corners, covering, touching)

    root = real_photos_dir()
    labels = load_labels(root / source)
    det = Recording(verifier_path=verifier_path, calibration=False)
    for name in sorted(labels) if names is None else names:
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        det.card_width_hint = None
        det.given = []
        result = det.detect(frame)
        cards = labels[name].get("cards", [])
        for i, j in match(result.cards, cards, image_size=labels[name].get("size")):
            code = cards[j].get("code")
            corners = np.asarray(result.cards[i].corners, np.float64)
            given = next((g for g in det.given if np.abs(g[0] - corners).max() < 0.5), None)
            if code and given is not None:
                yield frame, corners, given[1], given[2], code


def glyph_samples(
    source: str, verifier_path: str | None, views: int = 4, seed: int = 0, names=None, log=print
):
    """(rank features, rank labels, suit features, suit labels) that the built-in reader cuts from
    the labelled face-up cards the detector finds on one source's photos, each seen as found and
    `views - 1` more times through its outline with the corners moved a little (GLYPH_JITTER): a
    real camera's index prints, blur and JPEG, which the synthetic cards only imitate. `names`: only
    those photos (default all)."""
    from vision.detect import warp_card
    from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES
    from vision.read_train import card_crops

    rng = np.random.default_rng(seed)
    rx, ry, sx, sy = [], [], [], []
    cards_used = 0
    for frame, corners, covering, touching, code in labelled_cards(source, verifier_path, names):
        cards_used += 1
        width = float(np.linalg.norm(corners[1] - corners[0]))
        for v in range(views):
            moved = corners if v == 0 else corners + rng.normal(0, GLYPH_JITTER * width, (4, 2))
            canon, visible, _own = warp_card(frame, moved, covering, touching)
            ranks, suits = card_crops(canon, code, visible)
            rx += ranks
            sx += suits
            ry += [RANK_CLASSES.index(code[0])] * len(ranks)
            sy += [SUIT_CLASSES.index(code[1])] * len(suits)
    log(f"  real {source}: {len(rx)} rank and {len(sx)} suit crops from {cards_used} cards")
    return np.array(rx), np.array(ry), np.array(sx), np.array(sy)


def train_all(
    out_dir: Path, synth: tuple[np.ndarray, np.ndarray], hidden: int, epochs: int, seed: int, log=print
):
    """The three leave-one-source-out models and the shipped one (all sources)."""
    from vision.train import fit_mlp

    out_dir = Path(out_dir)
    fold_dir = out_dir / "loso"
    fold_dir.mkdir(parents=True, exist_ok=True)
    real = {s: real_samples(s, log) for s in SOURCES}
    xs0, ys0 = synth

    def fit(train_sources, path):
        xr = [real[s][0] for s in train_sources]
        yr = [real[s][1] for s in train_sources]
        x = np.concatenate([xs0, *xr])
        y = np.concatenate([ys0, *yr])
        w = np.concatenate(
            [np.ones(len(ys0), np.float32)] + [np.full(len(v), REAL_WEIGHT, np.float32) for v in yr]
        )
        params = fit_mlp(x, y, hidden, epochs, seed, log=lambda *_: None, sample_weight=w)
        np.savez_compressed(path, **params, seed=np.array(seed), real_sources=np.array(sorted(train_sources)))
        log(f"  wrote {path} (synthetic + {', '.join(train_sources) or 'no real source'})")

    for held in SOURCES:
        fit([s for s in SOURCES if s != held], fold_dir / f"quad_verifier_without_{held}.npz")
    fit(list(SOURCES), out_dir / "quad_verifier.npz")
    fit_confidence(out_dir, log)


def fit_confidence(out_dir: Path, log=print) -> None:
    """The confidence maps (`vision.confidence`): each source's codes read by the models that never
    saw it (its leave-one-out verifier and, where there are, glyph classifiers and index network); the map for
    leaving source S out is fitted on the other sources' reads, the shipped one on all of them. Each
    also holds `rules_alone`, fitted on the same photos read without the index network (for cards
    too small to ask it)."""
    from vision import index_net
    from vision.read_glyph import use_weights

    out_dir = Path(out_dir)
    fold_dir = out_dir / "loso"
    t0 = time.time()
    got: dict[str, list] = {}
    alone: dict[str, list] = {}  # the same photos read by the rules alone (no index network)
    try:
        for s in SOURCES:
            glyphs = fold_dir / f"read_glyphs_without_{s}.npz"
            use_weights(glyphs if glyphs.is_file() else None)
            net = fold_dir / f"index_net_without_{s}.onnx"
            index_net.use_weights(net if net.is_file() else None)
            verifier = str(fold_dir / f"quad_verifier_without_{s}.npz")
            got[s] = reads(s, verifier)
            index_net.use_weights(False)
            alone[s] = reads(s, verifier)
    finally:
        use_weights(None)
        index_net.use_weights(None)
    for held in (*SOURCES, None):
        used = [s for s in SOURCES if s != held]
        pairs = [r for s in used for r in got[s]]
        table = confidence.fit_isotonic([c for c, _ in pairs], [ok for _, ok in pairs])
        table["trained_on"] = used
        table["reads"] = [
            [round(c, 4), int(ok)] for c, ok in pairs
        ]  # (raw score, right): refit without rerunning
        by_rules = [r for s in used for r in alone[s]]
        table["rules_alone"] = confidence.fit_isotonic([c for c, _ in by_rules], [ok for _, ok in by_rules])
        path = (
            out_dir / "read_confidence.json"
            if held is None
            else fold_dir / f"read_confidence_without_{held}.json"
        )
        confidence.save(table, path)
        log(f"  wrote {path}: {len(pairs)} reads of {', '.join(used)}; {time.time() - t0:.0f} s")
