"""How the ``onnx-int8`` runtime quantises all-MiniLM-L6-v2's matrix products.

Three choices keep int8 close to float32 on a CPU with AVX2 but no VNNI:

* **Activations per token row.** Each row of a product's input gets its own
  scale (its max ``|x|``), so no token's range depends on another's and a
  text's vector does not depend on the batch it is embedded in. Signed inputs
  use uint8 codes around 128 (127 steps a side); the GELU output, which is
  never below -0.17, is shifted by :data:`GELU_SHIFT` to be non-negative and
  uses all 255 steps (the shift times the column sums is taken off the bias).
* **Smoothing** (SmoothQuant): a few hidden channels carry values 10x the
  others'; dividing input channel ``j`` by ``s_j = peak_j^a / wmax_j^(1-a)``
  and multiplying the weight row by ``s_j`` (exact in float) moves that range
  into the weights (``a`` 0.7, 0.5 for the GELU output). ``peak_j`` comes from a
  calibration pass over :data:`CALIBRATION_TEXTS`, generic sentences written
  for this purpose (no benchmark text), run in float32 when the model loads.
* **Pair-safe 8-bit weights.** onnxruntime's AVX2 uint8 x int8 kernel adds the
  products of two adjacent rows in a signed 16-bit lane, which saturates above
  32767. With activation codes up to 255 that holds when every same-sign pair
  of a column has ``|q_k| + |q_k+1| <= 128``: each column's scale is set by
  its largest such pair, about 0.6x the step of the usual 7-bit weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from engram.recall._bert import F32

I8 = npt.NDArray[np.int8]
GELU_SHIFT = 0.17
"""Added to the GELU output (minimum -0.16997) so it is non-negative."""
ALPHA = 0.7
"""Smoothing strength for layer-norm outputs: 0 leaves activations alone, 1 moves their
whole range into the weights."""
DOWN_ALPHA = 0.5
"""Smoothing strength for the GELU output (the FFN down-projection's input); measured best
of 0.0-0.8 (min cosine 0.9944 against 0.9896 at 0.7)."""
_PAIR_LIMIT = 127
"""Pair sums of codes stay <= 127 + rounding (128): 255 x 128 = 32,640 fits int16."""

CALIBRATION_TEXTS = (
    "I prefer conservative investments and avoid anything too volatile.",
    "My daughter starts school in September, so mornings are busy.",
    "Remind me to call the dentist on Thursday at 3 pm.",
    "The quarterly report shows revenue up 12% while margins shrank slightly.",
    "We went hiking near the lake last weekend and it rained the whole time!",
    "Can you summarise the meeting notes in three bullet points?",
    "He switched from Python to Rust for the parser because of memory use.",
    "Thanks!",
    "ok",
    "Sounds great, see you then.",
    "Her favourite book is an old paperback about sailing around Cape Horn.",
    "The flight to Tokyo leaves at 07:45 from terminal 2, gate B14.",
    "I'm allergic to peanuts and shellfish; please keep that in mind.",
    "Our team ships a release every second Tuesday.",
    "Wow, congratulations on the new job, that's amazing news!",
    "def add(a, b):\n    return a + b",
    "Café au lait, naïve résumé, Zürich — 東京 🚀 Ελληνικά русский",
    "Contact: jane.doe@example.org, +1 415 555 0100.",
    "Painting helps me relax after work, especially watercolours of the coast.",
    "What did I say about my brother's wedding last month?",
    "The user dislikes long emails and wants weekly summaries on Monday.",
    "It was a tough year, but volunteering at the shelter kept me going.",
    "Set the thermostat to 19 degrees at night and 21 during the day.",
    "kolimara dusenti vaparo lintuseka moravi",
    "I've been learning guitar for two years; my teacher says I'm improving.",
    "Budget: rent 1,450, groceries 400, transport 120, savings 600 per month.",
    "They adopted a rescue dog named Biscuit who is scared of thunder.",
    "Please don't schedule anything before 10 am on Fridays.",
    (
        "Yesterday I finally finished the pottery class I told you about. The teacher"
        " let us glaze our own bowls, and mine came out a bit lopsided but I love it."
        " Next month I want to try the wheel again, maybe with a friend from work who"
        " has been asking about it since spring. We might also visit the museum exhibit"
        " on ancient ceramics, which closes at the end of the season, and then grab"
        " dinner at the little Italian place near the station."
    ),
)


@dataclass(frozen=True)
class Int8Product:
    """One product's int8 weights and how its input is prepared (see the module)."""

    codes: I8
    scales: F32
    inverse_smoothing: F32 | None
    shift: float
    correction: F32
    """``shift`` times the column sums of the quantised matrix: subtracted from the bias."""

    @property
    def levels(self) -> int:
        return 255 if self.shift else 127

    @property
    def zero_point(self) -> int:
        return 0 if self.shift else 128


def pair_safe_codes(matrix: F32) -> tuple[I8, F32]:
    """Per-column int8 codes and scales that never saturate the AVX2 kernel's pair sums."""
    even, odd = matrix[0::2], matrix[1::2]
    same_sign = np.sign(even) == np.sign(odd)
    pairs = np.where(same_sign, np.abs(even) + np.abs(odd), np.maximum(np.abs(even), np.abs(odd)))
    scales = np.maximum(np.maximum(pairs.max(axis=0), np.abs(matrix).max(axis=0)), 1e-12)
    scales = (scales / _PAIR_LIMIT).astype(np.float32)
    codes = np.clip(np.rint(matrix / scales), -_PAIR_LIMIT, _PAIR_LIMIT).astype(np.int8)
    return codes, scales


def smoothing(peaks: F32, matrix: F32, alpha: float = ALPHA) -> F32:
    """Per input channel factors ``peak^alpha / wmax^(1 - alpha)`` (SmoothQuant)."""
    peak = np.maximum(peaks, 1e-5)
    wmax = np.maximum(np.abs(matrix).max(axis=1), 1e-5)
    factors: F32 = (peak**alpha / wmax ** (1 - alpha)).astype(np.float32)
    return factors


@dataclass(frozen=True)
class Int8Plan:
    """Which products run in int8 (all but ``keep_float``) and their calibration peaks.

    Product names are ``l{layer}.{qkv|o|up|down}``; ``peaks`` maps a name to the
    per-channel max ``|input|`` seen in calibration (absent: no smoothing).
    """

    peaks: Mapping[str, F32] = field(default_factory=dict)
    keep_float: frozenset[str] = frozenset()
    alpha: float = ALPHA
    down_alpha: float = DOWN_ALPHA

    def product(self, name: str, matrix: F32, shift: float = 0.0) -> Int8Product | None:
        """``matrix`` in int8 for product ``name``, or ``None`` if it stays float32."""
        if name in self.keep_float:
            return None
        peaks = self.peaks.get(name)
        alpha = self.down_alpha if name.endswith(".down") else self.alpha
        factors = None if peaks is None else smoothing(peaks, matrix, alpha)
        smoothed = matrix if factors is None else matrix * factors[:, None]
        codes, scales = pair_safe_codes(smoothed)
        effective = codes.astype(np.float32) * scales
        if factors is not None:
            effective /= factors[:, None]
        correction = (shift * effective.sum(axis=0)).astype(np.float32)
        inverse = None if factors is None else (1.0 / factors).astype(np.float32)
        return Int8Product(codes, scales, inverse, shift, correction)
