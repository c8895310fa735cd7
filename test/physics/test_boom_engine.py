# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
What the boom leg needs from the engine's 3-D contact solve, as minimal cases.

On the boom-mounted leg the foot slides radially in every stance (docs/control.md, "Boom-mounted
leg"): the contact's Delassus matrix is strongly anisotropic, the fixed-point search for the
slip direction of ``dodo_sim.physics.contact_solve.solve_contact_3d`` does not converge and
the bracketed search runs. The two problems below were taken from a simulated drop of the boom leg
(friction 0.8, PD-held leg, time-stepping) at the first calls that fail:

* ``rtol``: ``scipy.optimize.brentq`` refused ``rtol=4e-16`` (its minimum is 4 eps = 8.9e-16);
* ``two_roots``: a second bracketed root after an invalid first one evaluated ``best or
  array`` (the truth value of an array).

Both raised ValueError until the engine fixed its bracketed search; the boom's closed-loop tests
(test_boom_hopping.py) need them solved.
"""
import math

from dodo_sim.physics.contact_solve import solve_contact_3d
import numpy as np
import pytest

SLIDE_CASES = {
    'rtol': (np.array([[21.536235176597888, 0.24689343062513236, -25.034132035894842],
                       [0.2468934306251324, 0.07358206314137274, -0.337489489784152],
                       [-25.03413203589485, -0.33748948978415194, 39.10284158503455]]),
             np.array([-0.995382823852129, -0.3540400866500743, -0.03521554571033682]), 0.8),
    'two_roots': (np.array([[30.57670651866595, 3.0281883377138987, -26.46833632425528],
                            [3.0281883377138987, 0.35158984793831255, -2.806873503153185],
                            [-26.468336324255276, -2.806873503153185, 28.65673496335284]]),
                  np.array([-0.6473487597181616, -0.05878058232320599, 0.49615386670329126]),
                  0.8),
}


@pytest.mark.parametrize('case', sorted(SLIDE_CASES))
def test_3d_slide_of_the_boom_foot_is_solved(case):
    """
    Coulomb conditions of the solution.

    The conditions: λ_n >= 0, in the cone, sliding against the velocity when on its edge, no
    penetration velocity while pushing.
    """
    g, b, mu = SLIDE_CASES[case]
    lam, ok = solve_contact_3d(g, b, mu)
    assert ok
    u = g @ lam + b
    assert lam[0] >= 0.0 and abs(lam[0] * u[0]) < 1e-9 and u[0] > -1e-9
    tangential = math.hypot(lam[1], lam[2])
    assert tangential <= mu * lam[0] * (1 + 1e-9)
    slip = math.hypot(u[1], u[2])
    if slip > 1e-9:                    # sliding: friction on the cone edge, opposite the slip
        assert tangential == pytest.approx(mu * lam[0], rel=1e-9)
        np.testing.assert_allclose(lam[1:] / tangential, -u[1:] / slip, atol=1e-6)
