"""RL job test fixtures: the helpers' folder and the RL tests' tiny model builder on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "rl"))
