"""Playing membership games: one place where targets are planned, attacked, scored and cached.

- :mod:`vrlib.play.game`: :func:`play`, the attack of each target of a privacy game
  (achilles, lost, the attention attack).
- :mod:`vrlib.play.pointwise`: per-record attacks over settings × attacks × seeds
  (the DOMIAS and TableGAN-MCA families).
"""

from vrlib.play.game import GameAttack as GameAttack, attack_seed as attack_seed, play as play
from vrlib.play.pointwise import score_pointwise as score_pointwise
