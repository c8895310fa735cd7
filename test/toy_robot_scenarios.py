# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A toy robot scenario module for test_optimize.py.

It shows that ``dodo optimize`` takes any robot module with SECTIONS and SCENARIOS
(dodo_control.scenarios), not only the hopper.
"""
from dataclasses import dataclass

from dodo_control.scenarios import Scenario


@dataclass(frozen=True)
class ToyConfig:
    """
    Config of the toy robot: one gain and a step count.

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


def _faulty(configs, options, perturbation):
    """
    Return the parabola with injected faults.

    For the failure handling of test_optimize_scaleout.py: a bug (ZeroDivisionError) above
    ``raise_above``, a NaN metric below ``nan_below``, no metric at all with ``omit_metric``, and
    ``delay_s`` of wall time per run (a stand-in for a rollout, so that a test can stop a worker in
    the middle of a trial).
    """
    import math
    import time
    gain = configs['controller'].gain
    if gain > options['raise_above']:
        return {'cost': 1.0 / 0.0}
    if gain < options['nan_below']:
        return {'cost': math.nan}
    time.sleep(options['delay_s'])
    if options['omit_metric']:
        return {}
    return {'cost': (gain - options['optimum']) ** 2}


SCENARIOS['faulty'] = Scenario(_faulty, {'optimum': 2.0, 'raise_above': 100.0,
                                         'nan_below': -100.0, 'omit_metric': False,
                                         'delay_s': 0.0}, ('cost',), 'a parabola with faults')
