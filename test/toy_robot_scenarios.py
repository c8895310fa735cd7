# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A toy robot scenario module for test_optimize.py.

Shows that ``dodo optimize`` takes any robot module with SECTIONS and SCENARIOS
(dodo_control.scenarios), not only the hopper.
"""
from dataclasses import dataclass

from dodo_control.scenarios import Scenario


@dataclass(frozen=True)
class ToyConfig:
    """
    The fields of ``ToyConfig``.

    Fields:
        gain: a gain, (-), within [-10, 10].
        steps: an integer, >= 1.
    """

    gain: float = 0.0
    steps: int = 3

    def __post_init__(self):
        if not -10.0 <= self.gain <= 10.0:
            raise ValueError(f'ToyConfig.gain = {self.gain!r}: must be within [-10, 10]')
        if self.steps < 1:
            raise ValueError(f'ToyConfig.steps = {self.steps!r}: must be >= 1')


def _quadratic(configs, options, perturbation):
    gain = configs['controller'].gain + float(perturbation.xacro_args.get('offset', 0.0))
    return {'cost': (gain - options['optimum']) ** 2}


SECTIONS = {'controller': ToyConfig}
SCENARIOS = {'quadratic': Scenario(_quadratic, {'optimum': 2.0}, ('cost',), 'a parabola')}
