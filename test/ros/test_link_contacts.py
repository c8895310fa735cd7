# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Link contact wrenches on ROS (``collisions: links``; docs/ros_contract.md, "Frames").

The hopper driven into a collapse (hip -40 N*m, knee -10 N*m for 0.6 s, then no torque, as in
the issue that asked for link collisions) lands on its body and thigh. Checked:

* statics, independent of how the wrenches are formed: at rest the link wrenches and the foot
  force carry the weight, and their moments about the world origin balance gravity's;
* over DDS (lockstep, in-process nodes): ``/<link>_contact`` for every collision link, in the
  link's contact frame, every ``link_contact_period`` of the stamps, equal to the offline run's
  wrenches bit for bit; the foot's topic unchanged at every step.
"""
import time

from conftest import ros_domain_id, URDF_XACRO
from dodo_sim.physics.simulator import LinkContact
from dodo_sim.ros import contract
from dodo_sim.ros.link_contacts import LinkContactWrenches
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
import pytest

START_Q = (0.0, 1.3, 0.3, -0.6)
STOP_S = 1.2
G = 9.81


def collapse_torque(t: float) -> np.ndarray:
    """Return hip, knee torque (N*m) at simulated time ``t``: the collapse of the issue."""
    return np.array([-40.0, -10.0]) if t < 0.6 else np.zeros(2)


def offline_states(stop_s: float = STOP_S) -> tuple:
    sim = Simulator(str(URDF_XACRO), SimConfig(collisions='links', initial_q=START_Q))
    states = [sim.state]
    while states[-1].t < stop_s - 1e-9:
        states.append(sim.step(collapse_torque(round(states[-1].t * 1e9) * 1e-9)))
    return sim, states


def test_link_wrenches_and_foot_force_balance_gravity_at_rest():
    """
    At rest on body and thigh, statics says what the wrenches must be.

    The forces: body, thigh and shank wrenches plus the foot force carry the weight (the planar
    base's prismatic joints carry no force along x and z). The moments: the hip is passive
    (zero torque, inside its limits), so about the hip axis the moments of the leg's contact
    wrenches (thigh, shank; the moment part included) and of the foot force equal the hip row
    of the generalized gravity (pinocchio's RNEA), not computed by the wrench code.
    """
    import pinocchio as pin
    sim, states = offline_states(1.5)
    rest = states[-1]
    assert np.abs(rest.v).max() < 1e-6, rest.v                       # at rest
    wrenches = LinkContactWrenches(sim.robot, skip=sim.contact_frames)
    assert wrenches.links == ('body', 'thigh', 'shank')
    link_w = wrenches(rest.q, rest.link_contacts)
    assert {link for link, (f, _) in link_w.items() if f[2] > 1.0} == {'body', 'thigh'}
    force = sum(f for f, _ in link_w.values()) + rest.contact_forces.sum(axis=0)
    weight = sim.robot.total_mass * G
    np.testing.assert_allclose(force[[0, 2]], [0.0, weight], atol=1e-6)
    model = sim.robot.model
    data = model.createData()
    hip = model.getJointId('hip')
    lower, upper = model.lowerPositionLimit[model.idx_qs[hip]], model.upperPositionLimit[
        model.idx_qs[hip]]
    assert lower + 0.05 < rest.q[model.idx_qs[hip]] < upper - 0.05   # the hip off its limits
    # the leg's weight about the hip: the hip row of the generalized gravity (RNEA)
    gravity_hip = pin.computeGeneralizedGravity(model, data, rest.q)[model.idx_vs[hip]]
    pin.forwardKinematics(model, data, rest.q)
    axis_at = data.oMi[hip].translation
    axis = data.oMi[hip].rotation[:, 1]                 # RY: the joint's y axis in the world
    origins = wrenches.origins(rest.q)
    moment = np.zeros(3)
    for link in ('thigh', 'shank'):
        f, m = link_w[link]
        moment += np.cross(origins[link] - axis_at, f) + m
    for p, f in zip(rest.foot_positions, rest.contact_forces):
        moment += np.cross(p - axis_at, f)
    assert abs(moment @ axis - gravity_hip) < 1e-6, (moment @ axis, gravity_hip)
    assert abs(link_w['thigh'][1][1]) > 0.1             # ... with a moment part that matters


def test_a_link_wrench_is_due_while_touching_and_once_zero_after():
    """Nothing while no link touches; a touching link each period; one zero when it lets go."""
    sim, states = offline_states(0.05)
    wrenches = LinkContactWrenches(sim.robot, skip=sim.contact_frames)
    q = states[-1].q
    body = wrenches.links.index('body')
    touch = [LinkContact('body', (0.0, 0.0, 0.0), (1.0, 0.0, 30.0))]
    assert wrenches.due(q, []) == []
    for _ in range(2):
        ((index, force, moment),) = wrenches.due(q, touch)
        assert index == body and force.tolist() == [1.0, 0.0, 30.0]
    ((index, force, moment),) = wrenches.due(q, [])          # let go: one zero wrench
    assert index == body and not force.any() and not moment.any()
    assert wrenches.due(q, []) == []


@pytest.mark.ros
def test_link_contact_topics_carry_the_offline_wrenches_at_their_period():
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from geometry_msgs.msg import WrenchStamped

    from dodo_sim.ros.simulator_node import SimulatorNode
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain_id())
    nodes = []
    try:
        sim_node = SimulatorNode(context=context, parameter_overrides=[
            Parameter('collisions', value='links'), Parameter('initial_q', value=list(START_Q)),
            Parameter('stop_after', value=STOP_S), Parameter('min_subscribers', value=0),
            Parameter('link_contact_period', value=0.01)])
        nodes.append(sim_node)
        peer = rclpy.create_node('link_contact_probe', context=context)
        nodes.append(peer)
        commands = peer.create_publisher(JointState, contract.JOINT_COMMANDS,
                                         contract.stream_qos())
        received = {}

        def answer(state):                # the controller: the stamped collapse torque
            t = state.header.stamp.sec + state.header.stamp.nanosec * 1e-9
            tau = collapse_torque(t)
            commands.publish(JointState(header=state.header, name=['hip', 'knee'],
                                        effort=[float(x) for x in tau]))

        peer.create_subscription(JointState, contract.JOINT_STATES, answer,
                                 contract.stream_qos())
        for frame in ('body', 'thigh', 'shank', 'foot'):
            received[frame] = []
            peer.create_subscription(WrenchStamped, contract.contact_topic(frame),
                                     received[frame].append, 10000)
        executor = EventsExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        deadline = time.monotonic() + 180.0
        while not sim_node.done.done():
            assert time.monotonic() < deadline, f'{sim_node.steps} steps'
            executor.spin_once(timeout_sec=0.01)
        for _ in range(50):                            # the last messages in flight
            executor.spin_once(timeout_sec=0.01)
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert sim_node.steps == round(STOP_S / 0.001)
    sim, states = offline_states()
    by_stamp = {round(s.t * 1e9): s for s in states}
    wrenches = LinkContactWrenches(sim.robot, skip=sim.contact_frames)
    assert len(received['foot']) == len(states)                 # the foot: every state
    period_stamps = range(0, round(STOP_S * 1e9) + 1, 10_000_000)
    for link in ('body', 'thigh', 'shank'):
        msgs = received[link]
        stamps = [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in msgs]
        # every period while the link touches, and one zero at the first period after
        touching = [any(c.link == link for c in by_stamp[ns].link_contacts)
                    for ns in period_stamps]
        expected = [ns for k, ns in enumerate(period_stamps)
                    if touching[k] or (k > 0 and touching[k - 1])]
        assert stamps == expected, link
        assert {m.header.frame_id for m in msgs} <= {contract.contact_frame_id(link)}
        for stamp, msg in zip(stamps, msgs):
            state = by_stamp[stamp]
            force, moment = wrenches(state.q, state.link_contacts)[link]
            got_f = [msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z]
            got_m = [msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z]
            assert got_f == force.tolist() and got_m == moment.tolist(), (link, stamp)
    assert received['body'] and received['thigh'] and not received['shank']  # shank: in the air
    late = [m for m in received['body'] if m.header.stamp.sec >= 1]
    assert late and all(m.wrench.force.z > 10.0 for m in late)   # the body rests on the floor


@pytest.mark.ros
@pytest.mark.slow
def test_dodo_hop_records_the_link_topics_and_dodo_plot_draws_them(tmp_path):
    """
    A push down too strong for the hop folds the leg onto its shank.

    The bag holds the shank's wrenches (each period in contact, then one zero) and nothing of the
    links that never touched; ``dodo plot`` draws them.
    """
    import subprocess
    import sys

    from conftest import REPO, ros_env
    from dodo_sim.tools import bag_arrays
    from dodo_sim.tools.bag import message_counts, read_bag
    from dodo_sim.tools.plot_data import load_run
    import yaml
    params = yaml.safe_load((REPO / 'config' / 'hop.yaml').read_text())
    simulator = params['simulator']['ros__parameters']
    simulator.update(collisions='links', push_times=[0.4], push_impulses_x=[0.0],
                     push_impulses_z=[-300.0])                    # N*s, down
    params_file = tmp_path / 'hop_links.yaml'
    params_file.write_text(yaml.safe_dump(params))
    bag = tmp_path / 'bag'
    env = ros_env()
    env.pop('ROS_DOMAIN_ID')
    run = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.cli', 'hop', '--params-file',
                          str(params_file), '--duration', '1.5', '--bag', str(bag),
                          '--wall-timeout', '240'],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    counts = message_counts(bag)
    assert counts[contract.FOOT_CONTACT] == 1501
    shank = contract.contact_topic('shank')
    assert counts.get(contract.contact_topic('body'), 0) == 0, counts
    assert counts.get(contract.contact_topic('thigh'), 0) == 0, counts
    assert counts[shank] >= 2, counts
    t, force = bag_arrays.wrenches(read_bag(bag, [shank])[shank], 'shank')
    assert (force[:-1, 2] > 0.0).all() and not force[-1].any()     # touching, then one zero
    assert np.all(np.diff(t) == pytest.approx(0.01))                # on the period's stamps
    loaded = load_run(bag)
    assert loaded.contact_frames == ('foot',)                 # the links are no contact frames
    assert sorted(loaded.link_force) == ['shank']
    assert (tmp_path / 'bag_plots' / 'link_contacts.png').is_file()
