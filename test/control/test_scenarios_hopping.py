# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Closed-loop scenarios: the SLIP controller on the simulator core, both integrators.

They run on the default URDF and on a second mass/length set (xacro args). Each scenario is
simulated once per (model, integrator) in a module-scoped cache and checked by several tests.

Everything measured here comes from the simulator state (q, v and pinocchio on the simulator's
own model), not from the controller's telemetry. Acceptance numbers:

* in place, 30 hops: apex (base above ground) within ±1 % of the set-point from the 3rd hop on,
  x drift below 2 cm;
* 1.5 m/s from rest: |v_apex − 1.5| < 0.05 m/s within 8 hops (cascade) / 2 hops (deadbeat) and
  staying there;
* target x = 4 m from rest at 1.5 m (dropped from a base height of 1.5 m, apex set-point 1.2 m):
  |x − 4| < 0.05 m from t = 5 s on, no sustained oscillation;
* push recovery: 1.5 m/s initial speed with target x = 0 back within 0.05 m; a push during stance;
  a 5 cm step; a 5° slope.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from conftest import URDF_XACRO
from dodo_control.controller import Controller, ControllerConfig
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pinocchio as pin
import pytest

pytestmark = pytest.mark.slow

MODELS = {
    'default': None,
    'other': {'body_mass': 8.0, 'thigh_length': 0.4, 'shank_length': 0.45},
}
INTEGRATORS = ('timestepping', 'event')
START_Q = (0.0, 1.2, 0.3, -0.6)


@dataclass
class Run:
    """A simulated closed-loop run (arrays over control ticks)."""

    t: np.ndarray
    q: np.ndarray
    com: np.ndarray
    com_vel: np.ndarray
    in_contact: np.ndarray
    phase: list
    apex_t: np.ndarray           # apexes after each liftoff (the initial drop excluded)
    apex_height: np.ndarray      # base above the ground under it, m
    apex_vx: np.ndarray          # CoG horizontal speed, m/s
    apex_x: np.ndarray           # CoG x, m
    touchdowns: int
    extra: dict = field(default_factory=dict)


def simulate(model: str, integrator: str, duration: float, ctrl: dict, sim: dict = None,
             stance_push: tuple | None = None, min_apexes: int = 0) -> Run:
    """
    Run sim + controller for ``duration`` s.

    The run is extended (up to 1.5x) until the controller has seen ``min_apexes`` apexes after
    touchdowns. ``stance_push = (hop, impulse_xz)``: push the base 40 ms after the hop-th touchdown
    (controller phase), i.e. in the middle of that stance.
    """
    xacro = MODELS[model]
    sim_cfg = SimConfig(**{'integrator': integrator, 'initial_q': START_Q, **(sim or {})})
    simulator = Simulator(URDF_XACRO, sim_cfg, xacro_args=xacro)
    controller = Controller(URDF_XACRO, ControllerConfig(**ctrl), xacro_args=xacro)
    model_pin = simulator.leg.model
    data = model_pin.createData()
    n = int(round(duration / sim_cfg.control_period))
    n_max = int(round(1.5 * n))
    phase = []
    counts = {'ticks': 0, 'apexes': 0, 'saturated': 0, 'pushed': False, 'touchdown_t': None}

    def on_tick(k, state, tau):
        tel = controller.telemetry
        phase.append(tel.phase)
        counts['ticks'] = k + 1
        counts['apexes'] += 'apex' in tel.events and tel.hops > 0
        counts['saturated'] += tel.torque_saturated
        if stance_push and not counts['pushed']:
            if 'touchdown' in tel.events and tel.hops == stance_push[0]:
                counts['touchdown_t'] = state.t
            if (counts['touchdown_t'] is not None
                    and state.t >= counts['touchdown_t'] + 0.04 - 1e-9):
                assert tel.phase == 'stance'
                simulator.apply_impulse(stance_push[1])
                counts['pushed'] = True

    def stop(state):
        return counts['ticks'] >= n and counts['apexes'] >= min_apexes

    run = rollout(simulator, controller, steps=n_max, on_tick=on_tick, stop=stop)
    phase.append(phase[-1])
    t, q, v, contact = run.t, run.q, run.v, run.in_contact
    n = len(t) - 1
    com = np.empty((n + 1, 2))
    com_vel = np.empty((n + 1, 2))
    for i in range(n + 1):
        c = pin.centerOfMass(model_pin, data, q[i], v[i])
        com[i] = c[[0, 2]]
        com_vel[i] = data.vcom[0][[0, 2]]
    # apexes: CoG vertical velocity + -> - in flight, after at least one contact
    vz = com_vel[:, 1]
    touched = np.cumsum(contact) > 0
    idx = np.flatnonzero((vz[:-1] > 0.0) & (vz[1:] <= 0.0) & ~contact[1:] & touched[1:]) + 1
    ground = np.array([simulator.terrain.height(x) for x in q[idx, 0]])
    touchdowns = int(np.sum(contact[1:] & ~contact[:-1]))
    return Run(t=t, q=q, com=com, com_vel=com_vel, in_contact=contact, phase=phase,
               apex_t=t[idx], apex_height=q[idx, 1] - ground, apex_vx=com_vel[idx, 0],
               apex_x=com[idx, 0], touchdowns=touchdowns,
               extra={'pushed': counts['pushed'], 'saturated_ticks': counts['saturated']})


def check_health(run: Run) -> None:
    """
    Check that the leg keeps its knee branch and the base stays well above the ground.

    The leg must never be stretched through the singularity.
    """
    knee = run.q[:, 3]
    assert np.all(np.sign(knee) == np.sign(START_Q[3])), 'knee flipped through the singularity'
    assert np.min(np.abs(knee)) > 0.1, f'knee nearly straight: {np.min(np.abs(knee)):.3f} rad'
    assert run.q[:, 1].min() > 0.4


def settle_hop(values, target, tol):
    """Index (1-based hop) from which |values - target| < tol holds to the end, or None."""
    ok = np.abs(np.asarray(values) - target) < tol
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(bad[-1]) + 2 if bad.size else 1


CASES = [(m, i) for m in MODELS for i in INTEGRATORS]
IDS = [f'{m}-{i}' for m, i in CASES]
_cache: dict = {}


def cached(key, fn):
    if key not in _cache:
        _cache[key] = fn()
    return _cache[key]


def report(name, case, **numbers):
    text = ' '.join(f'{k}={v:.4g}' if isinstance(v, float) else f'{k}={v}'
                    for k, v in numbers.items())
    print(f'[scenario] {name} {case[0]}/{case[1]}: {text}')


def report_run(name, case, run, **numbers):
    report(name, case, **numbers, saturated_ticks=run.extra['saturated_ticks'])


def start_com_x(model: str) -> float:
    """Return the CoG x of the start posture (the in-place target: hop where it starts)."""
    sim = Simulator(URDF_XACRO, SimConfig(initial_q=START_Q), xacro_args=MODELS[model])
    data = sim.leg.model.createData()
    return float(pin.centerOfMass(sim.leg.model, data, np.array(START_Q))[0])


# -- the scenarios (each simulated once per case) -----------------------------------------------

def in_place(case):
    x0 = start_com_x(case[0])
    return cached(('in_place', case), lambda: simulate(
        case[0], case[1], 20.0, {'target_x': x0, 'apex_height': 1.2}, min_apexes=31))


def velocity(case, policy):
    return cached(('velocity', policy, case), lambda: simulate(
        case[0], case[1], 7.0 if policy == 'cascade' else 3.5,
        {'target_velocity': 1.5, 'flight_policy': policy},
        min_apexes=12 if policy == 'cascade' else 6))


def position(case):
    return cached(('position', case), lambda: simulate(
        case[0], case[1], 8.0, {'target_x': 4.0, 'apex_height': 1.2},
        {'initial_q': (0.0, 1.5, 0.3, -0.6)}))


def push_at_start(case):
    x0 = start_com_x(case[0])
    return cached(('push_at_start', case), lambda: simulate(
        case[0], case[1], 8.0, {'target_x': x0}, {'initial_v': (1.5, 0.0, 0.0, 0.0)}))


STANCE_PUSH_NS = (10.0, 0.0)


def push_in_stance(case):
    x0 = start_com_x(case[0])
    return cached(('push_in_stance', case), lambda: simulate(
        case[0], case[1], 7.0, {'target_x': x0}, stance_push=(3, STANCE_PUSH_NS)))


def step_up(case):
    x0 = start_com_x(case[0])
    return cached(('step', case), lambda: simulate(
        case[0], case[1], 7.0, {'target_x': x0 + 1.0},
        {'terrain': 'steps', 'step_edges_x_m': (x0 + 0.5,), 'step_rises_m': (0.05,)}))


def slope(case):
    x0 = start_com_x(case[0])
    return cached(('slope', case), lambda: simulate(
        case[0], case[1], 6.0, {'target_x': x0}, {'terrain': 'slope', 'slope_deg': 5.0}))


# -- tests -------------------------------------------------------------------------------------

@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_hopping_in_place_30_hops(case):
    run = in_place(case)
    check_health(run)
    x0 = start_com_x(case[0])
    assert len(run.apex_height) >= 30, f'only {len(run.apex_height)} hops'
    heights = run.apex_height[:30]
    spread = np.max(np.abs(heights[2:] - 1.2)) / 1.2
    drift = np.max(np.abs(run.apex_x[:30] - x0))
    report_run('in_place', case, run, apex_spread_pct=100 * spread, apex_min=heights[2:].min(),
               apex_max=heights[2:].max(), apex_x_drift_m=drift,
               cog_x_range_m=float(np.ptp(run.com[:, 0])),
               base_x_range_m=float(np.ptp(run.q[:, 0])))
    assert spread < 0.01
    assert drift < 0.02


@pytest.mark.parametrize('case', CASES, ids=IDS)
@pytest.mark.parametrize('policy, max_hops', [('cascade', 8), ('deadbeat', 2)])
def test_velocity_setpoint_from_rest(case, policy, max_hops):
    run = velocity(case, policy)
    check_health(run)
    hop = settle_hop(run.apex_vx, 1.5, 0.05)
    report_run(f'velocity_{policy}', case, run, settle_hop=hop,
               apex_vx=' '.join(f'{v:.3f}' for v in run.apex_vx),
               apex_spread_pct=100 * float(np.max(np.abs(run.apex_height - 1.2)) / 1.2))
    assert len(run.apex_vx) >= max_hops + 3
    assert hop is not None and hop <= max_hops


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_position_target_4m(case):
    run = position(case)
    check_health(run)
    late = run.t >= 5.0
    err = np.abs(run.com[late, 0] - 4.0)
    late_apex = run.apex_t >= 5.0
    reached = run.t[np.flatnonzero(np.abs(run.com[:, 0] - 4.0) >= 0.05)[-1]] if np.any(
        np.abs(run.com[:, 0] - 4.0) >= 0.05) else 0.0
    report_run('position_4m', case, run, settled_at_s=float(reached),
               max_err_after_5s=float(err.max()),
               late_apex_speed=float(np.max(np.abs(run.apex_vx[late_apex]))),
               overshoot_m=float(run.com[:, 0].max() - 4.0))
    assert err.max() < 0.05
    # no sustained oscillation: the hops after 5 s are (nearly) in place
    assert np.max(np.abs(run.apex_vx[late_apex])) < 0.05


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_push_recovery_initial_speed(case):
    run = push_at_start(case)
    check_health(run)
    x0 = start_com_x(case[0])
    excursion = float(run.com[:, 0].max() - x0)
    tail = run.t >= 6.0
    report_run('push_1.5mps', case, run, excursion_m=excursion,
               final_err_m=float(np.max(np.abs(run.com[tail, 0] - x0))))
    # it does get pushed away (Feng, Lehner & Lutze 2021: 0.65 m)
    assert 0.2 < excursion < 1.0
    assert np.max(np.abs(run.com[tail, 0] - x0)) < 0.05


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_push_during_stance(case):
    run = push_in_stance(case)
    check_health(run)
    x0 = start_com_x(case[0])
    assert run.extra['pushed']
    excursion = float(np.max(np.abs(run.com[:, 0] - x0)))
    tail = run.t >= 5.5
    late = run.apex_t >= 4.5
    report_run('push_in_stance', case, run, excursion_m=excursion,
               final_err_m=float(np.max(np.abs(run.com[tail, 0] - x0))),
               late_apex_spread_pct=100 * float(np.max(np.abs(run.apex_height[late] - 1.2)) / 1.2))
    assert excursion > 0.05                # the push did move it
    assert np.max(np.abs(run.com[tail, 0] - x0)) < 0.05
    assert np.max(np.abs(run.apex_height[late] - 1.2)) < 0.01 * 1.2


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_hopping_over_a_5cm_step(case):
    run = step_up(case)
    check_health(run)
    x0 = start_com_x(case[0])
    tail = run.t >= 5.5
    last = run.apex_t >= 4.5
    report_run('step_5cm', case, run,
               final_err_m=float(np.max(np.abs(run.com[tail, 0] - x0 - 1.0))),
               late_apex_spread_pct=100 * float(np.max(np.abs(run.apex_height[last] - 1.2)) / 1.2),
               min_base_z=float(run.q[:, 1].min()))
    assert np.all(run.com[tail, 0] > x0 + 0.5)                  # up on the step, and
    assert np.max(np.abs(run.com[tail, 0] - x0 - 1.0)) < 0.05
    assert np.max(np.abs(run.apex_height[last] - 1.2)) < 0.01 * 1.2


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_hopping_on_a_5deg_slope(case):
    run = slope(case)
    check_health(run)
    x0 = start_com_x(case[0])
    late = run.apex_t >= 2.0
    report_run('slope_5deg', case, run, apex_x_drift_m=float(np.max(np.abs(run.apex_x - x0))),
               late_apex_spread_pct=100 * float(np.max(np.abs(run.apex_height[late] - 1.2)) / 1.2))
    assert np.max(np.abs(run.apex_x - x0)) < 0.05
    assert np.max(np.abs(run.apex_height[late] - 1.2)) < 0.01 * 1.2


# -- the other flight policy and the sensorless phase detection (default URDF) ------------------

@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_raibert_policy_recovers_from_a_push(integrator):
    case = ('default', integrator)
    x0 = start_com_x('default')
    run = cached(('raibert_push', case), lambda: simulate(
        'default', integrator, 8.5, {'target_x': x0, 'flight_policy': 'raibert'},
        {'initial_v': (1.5, 0.0, 0.0, 0.0)}))
    check_health(run)
    tail = run.t >= 7.0
    report_run('raibert_push_1.5mps', case, run, excursion_m=float(run.com[:, 0].max() - x0),
               final_err_m=float(np.max(np.abs(run.com[tail, 0] - x0))))
    assert np.max(np.abs(run.com[tail, 0] - x0)) < 0.05
    assert np.max(np.abs(run.apex_height[2:] - 1.2)) < 0.01 * 1.2


@pytest.mark.parametrize('integrator', INTEGRATORS)
def test_kinematic_phase_detection_without_foot_sensor(integrator):
    case = ('default', integrator)
    x0 = start_com_x('default')
    run = cached(('no_sensor', case), lambda: simulate(
        'default', integrator, 6.0, {'target_x': x0, 'use_foot_sensor': False}, min_apexes=9))
    check_health(run)
    spread = float(np.max(np.abs(run.apex_height[2:] - 1.2)) / 1.2)
    report_run('no_foot_sensor', case, run, hops=len(run.apex_height),
               apex_spread_pct=100 * spread,
               apex_x_drift_m=float(np.max(np.abs(run.apex_x - x0))))
    assert len(run.apex_height) >= 8
    assert spread < 0.01
    assert np.max(np.abs(run.apex_x - x0)) < 0.02
