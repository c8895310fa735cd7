# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
/tf and /tf_static as robot_state_publisher makes them, from pinocchio forward kinematics.

It also checks that Foxglove can open the bags: they are read back with the ``mcap`` reader and the
``mcap-ros2-support`` decoder (what Foxglove's MCAP loader does), not with rosbags that wrote them.
"""
from __future__ import annotations

from dodo_sim.paths import default_urdf_path
from dodo_sim.physics.robot import robot_description_xml
from dodo_sim.ros import contract
from dodo_sim.ros.tf_frames import (compose, quaternion_matrix, TfTree, Transform, urdf_joints,
                                    urdf_links)
import numpy as np
import pytest

ROBOTS = ('hopper', 'boom_leg', 'kneed_walker')


def _xml(robot: str) -> str:
    return robot_description_xml(default_urdf_path().parent / f'{robot}.urdf.xacro')


@pytest.fixture(scope='module', params=ROBOTS)
def robot(request):
    xml = _xml(request.param)
    return request.param, xml, TfTree(xml)


def test_edges_are_the_urdf_joints_with_link_names(robot):
    _, xml, tree = robot
    joints = urdf_joints(xml)
    assert [(j.parent, j.child) for j in tree.static_joints] == \
        [(j.parent, j.child) for j in joints if j.kind == 'fixed']
    assert [(j.parent, j.child) for j in tree.moving_joints] == \
        [(j.parent, j.child) for j in joints if j.kind != 'fixed']
    assert set(tree.links) == set(urdf_links(xml))
    assert 'world' in tree.links


def test_composed_chain_equals_pinocchio_placement_of_every_link(robot):
    import pinocchio as pin
    _, xml, tree = robot
    rng = np.random.default_rng(7)
    # an independent pinocchio model built from the XML alone (continuous joints would have
    # pinocchio's (cos, sin) coordinates: only for the robots without them)
    model = pin.buildModelFromXML(xml) if 'continuous' not in xml else None
    for _ in range(5):
        positions = {name: rng.uniform(-0.8, 0.8) for name in tree.joint_names}
        q = tree.configuration(positions)
        edges = tree.static_transforms() + tree.moving_transforms(q)
        for link in tree.links:
            if link == 'world':
                continue
            position, rotation = compose(edges, link)
            expected_p, expected_r = tree.placement(q, link)
            np.testing.assert_allclose(position, expected_p, atol=1e-12)
            np.testing.assert_allclose(rotation, expected_r, atol=1e-12)
        if model is not None:
            data = model.createData()
            qm = np.array([positions[model.names[i]] for i in range(1, model.njoints)])
            pin.framesForwardKinematics(model, data, qm)
            for link in tree.links:
                if link != 'world':
                    np.testing.assert_allclose(compose(edges, link)[0],
                                               data.oMf[model.getFrameId(link)].translation,
                                               atol=1e-12)


def test_hopper_foot_by_hand():
    """The hopper's foot from its URDF geometry (thigh and shank 0.5 m, hip and knee about y)."""
    tree = TfTree(_xml('hopper'))
    x, z, hip, knee = 0.3, 1.1, 0.4, -0.7
    q = tree.configuration({'base_x': x, 'base_z': z, 'hip': hip, 'knee': knee})
    edges = tree.static_transforms() + tree.moving_transforms(q)
    foot, _ = compose(edges, 'foot')
    # rotation about +y by a turns the downward leg (0, 0, -l) to (-l sin a, 0, -l cos a)
    expected = np.array([x - 0.5 * np.sin(hip) - 0.5 * np.sin(hip + knee), 0.0,
                         z - 0.5 * np.cos(hip) - 0.5 * np.cos(hip + knee)])
    np.testing.assert_allclose(foot, expected, atol=1e-12)


def test_quaternions_are_unit_and_match_their_matrix():
    tree = TfTree(_xml('kneed_walker'))
    q = tree.configuration(dict.fromkeys(tree.joint_names, 0.3))
    for edge in tree.moving_transforms(q):
        assert abs(np.linalg.norm(edge.rotation_xyzw) - 1.0) < 1e-12
        r = quaternion_matrix(edge.rotation_xyzw)
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-12)


def test_compose_names_a_broken_chain():
    with pytest.raises(ValueError, match="'b'"):
        compose([Transform('world', 'a', np.zeros(3), np.array([0, 0, 0, 1.0]))], 'b')


def mcap_tf_check(bag_dir, xml: str, frame: str = 'foot') -> dict:
    """
    Decode /tf, /tf_static and /joint_states of a bag's MCAP file and check the frames.

    The file is opened with the ``mcap`` reader and decoded with mcap-ros2-support. Besides the
    frames, /tf_static + /tf at each /tf stamp must put ``frame`` where pinocchio puts it for the
    /joint_states of that stamp. Returns counts.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    tree = TfTree(xml)
    links = set(urdf_links(xml))
    files = sorted(p for p in bag_dir.glob('*.mcap'))
    assert len(files) == 1, files
    static, moving, states, contacts = [], {}, {}, {}
    with files[0].open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for schema, channel, message, decoded in reader.iter_decoded_messages(
                topics=['/tf', '/tf_static', '/joint_states']):
            if channel.topic == '/joint_states':
                ns = decoded.header.stamp.sec * 1_000_000_000 + decoded.header.stamp.nanosec
                states[ns] = dict(zip(decoded.name, decoded.position))
                continue
            assert schema.name == 'tf2_msgs/msg/TFMessage' and schema.encoding == 'ros2msg'
            edges, contact_edges = [], []
            for t in decoded.transforms:
                tr, r = t.transform.translation, t.transform.rotation
                edge = Transform(t.header.frame_id, t.child_frame_id,
                                 np.array([tr.x, tr.y, tr.z]), np.array([r.x, r.y, r.z, r.w]))
                assert t.header.frame_id in links
                if t.child_frame_id == contract.contact_frame_id(t.header.frame_id):
                    contact_edges.append(edge)      # the contact wrenches' frame at the link
                else:
                    assert t.child_frame_id in links
                    edges.append(edge)
            if channel.topic == '/tf_static':
                static += edges
            else:
                stamp = decoded.transforms[0].header.stamp
                moving[stamp.sec * 1_000_000_000 + stamp.nanosec] = edges
                contacts[stamp.sec * 1_000_000_000 + stamp.nanosec] = contact_edges
    assert static and moving
    assert {(e.parent, e.child) for e in static} == \
        {(j.parent, j.child) for j in tree.static_joints}
    for ns, edges in moving.items():
        assert {(e.parent, e.child) for e in edges} == \
            {(j.parent, j.child) for j in tree.moving_joints}
        position, rotation = compose(static + edges, frame)
        expected_p, expected_r = tree.placement(tree.configuration(states[ns]), frame)
        np.testing.assert_allclose(position, expected_p, atol=1e-9)
        np.testing.assert_allclose(rotation, expected_r, atol=1e-9)
        for edge in contacts[ns]:           # at its link's origin, with the world's axes
            position, rotation = compose(static + edges + contacts[ns], edge.child)
            expected_p, _ = tree.placement(tree.configuration(states[ns]), edge.parent)
            np.testing.assert_allclose(position, expected_p, atol=1e-9)
            np.testing.assert_allclose(rotation, np.eye(3), atol=1e-9)
    return {'tf': len(moving), 'tf_static': len(static), 'joint_states': len(states),
            'contact_frames': len({e.child for edges in contacts.values() for e in edges})}


def test_offline_bag_tf_opens_with_the_mcap_reader(tmp_path):
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    xml = _xml('kneed_walker')
    tree = TfTree(xml)
    names = tree.joint_names
    rng = np.random.default_rng(3)
    with OfflineBagWriter(tmp_path / 'bag') as w:
        w.robot_description(xml)
        w.tf_static(tree.static_transforms())
        for k in range(20):
            t = k * 0.01
            q = rng.uniform(-0.5, 0.5, len(names))
            w.joint_state(t, q, np.zeros(len(names)), names=names)
            w.tf(t, tree.moving_transforms(tree.configuration(dict(zip(names, q)))))
    counts = mcap_tf_check(tmp_path / 'bag', xml, 'left_foot')
    assert counts == {'tf': 20, 'tf_static': 2, 'joint_states': 20, 'contact_frames': 0}


class _StubRecorder:
    """What the recorder's /tf writer uses of the recorder, without DDS."""

    def __init__(self, **config):
        import logging

        from dodo_sim.ros.recorder_config import RecorderConfig
        from dodo_sim.tools.bag import make_typestore
        self.config = RecorderConfig(bag='unused', tf='compute', **config)
        self.typestore = make_typestore()
        self.written = []
        logger = logging.getLogger('stub_recorder')
        self.node = type('Node', (), {'get_logger': lambda _self: logger})()

    def take_over_tf(self):
        pass

    def write_computed(self, name, type_name, log_ns, data):
        self.written.append((name, self.typestore.deserialize_cdr(data, type_name)))


def _joint_state_bytes(ns, names, positions):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    msg = JointState(name=list(names), position=[float(p) for p in positions])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    return serialize_message(msg)


@pytest.mark.parametrize('split', [False, True])
def test_recorder_tf_from_joint_states_every_period(split):
    """
    One /tf per 10 ms of stamps; each equals pinocchio for the joint positions of its stamp.

    This holds also when base and leg joints come in separate messages (two drivers).
    """
    from dodo_sim.ros.recorder_tf import TfWriter
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    xml = _xml('hopper')
    stub = _StubRecorder(tf_period_s=0.01)
    writer = TfWriter(stub)
    writer.on_description(0, serialize_message(String(data=xml)))
    tree = TfTree(xml)
    truth = {}
    for k in range(100):
        ns = k * 1_000_000
        q = {'base_x': 0.01 * k, 'base_z': 1.0 + 0.001 * k, 'hip': 0.3 - 0.004 * k,
             'knee': -0.6 + 0.002 * k}
        truth[ns] = q
        if split:
            writer.on_joint_state(ns, _joint_state_bytes(ns, ['base_x', 'base_z'],
                                                         [q['base_x'], q['base_z']]))
            writer.on_joint_state(ns, _joint_state_bytes(ns, ['hip', 'knee'],
                                                         [q['hip'], q['knee']]))
        else:
            writer.on_joint_state(ns, _joint_state_bytes(ns, list(q), list(q.values())))
    static = [m for name, m in stub.written if name == contract.TF_STATIC]
    moving = [m for name, m in stub.written if name == contract.TF]
    # one message per driver and period, each with the joints it carried
    assert len(static) == 1 and len(moving) == (20 if split else 10)
    by_stamp = {}
    for msg in moving:
        stamp = msg.transforms[0].header.stamp
        by_stamp.setdefault(stamp.sec * 1_000_000_000 + stamp.nanosec, []).extend(
            msg.transforms)
    assert sorted(by_stamp) == [k * 10_000_000 for k in range(10)]
    static_edges = [Transform(t.header.frame_id, t.child_frame_id,
                              np.array([t.transform.translation.x, t.transform.translation.y,
                                        t.transform.translation.z]),
                              np.array([t.transform.rotation.x, t.transform.rotation.y,
                                        t.transform.rotation.z, t.transform.rotation.w]))
                    for t in static[0].transforms]
    for ns, transforms in by_stamp.items():
        assert len(transforms) == 4
        edges = static_edges + [Transform(
            t.header.frame_id, t.child_frame_id,
            np.array([t.transform.translation.x, t.transform.translation.y,
                      t.transform.translation.z]),
            np.array([t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
                      t.transform.rotation.w])) for t in transforms]
        position, _ = compose(edges, 'foot')
        expected, _ = tree.placement(tree.configuration(truth[ns]), 'foot')
        np.testing.assert_allclose(position, expected, atol=1e-12)


def _tf_stamps(stub) -> list:
    return [m.transforms[0].header.stamp.sec * 1_000_000_000
            + m.transforms[0].header.stamp.nanosec
            for name, m in stub.written if name == contract.TF]


def test_one_far_future_joint_state_does_not_end_tf():
    """A stray /joint_states stamped an hour ahead is left out; /tf goes on with the run."""
    from dodo_sim.ros.recorder_tf import TfWriter
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    stub = _StubRecorder(tf_period_s=0.01)
    writer = TfWriter(stub)
    writer.on_description(0, serialize_message(String(data=_xml('hopper'))))
    names, q = ['base_x', 'base_z', 'hip', 'knee'], [0.0, 1.0, 0.3, -0.6]
    for k in range(100):
        writer.on_joint_state(0, _joint_state_bytes(k * 1_000_000, names, q))
        if k == 30:
            writer.on_joint_state(0, _joint_state_bytes(3600 * 10**9, names, q))
    assert _tf_stamps(stub) == [k * 10_000_000 for k in range(10)]
    assert writer.strays == 1


def test_a_confirmed_jump_of_the_stamps_is_a_new_time_base():
    """
    Two joint states continuing from each other far ahead (a restarted driver's clock).

    /tf follows them.
    """
    from dodo_sim.ros.recorder_tf import TfWriter
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    stub = _StubRecorder(tf_period_s=0.01)
    writer = TfWriter(stub)
    writer.on_description(0, serialize_message(String(data=_xml('hopper'))))
    names, q = ['base_x', 'base_z', 'hip', 'knee'], [0.0, 1.0, 0.3, -0.6]
    later = 3600 * 10**9
    for k in range(30):
        writer.on_joint_state(0, _joint_state_bytes(k * 1_000_000, names, q))
    for k in range(30):
        writer.on_joint_state(0, _joint_state_bytes(later + k * 1_000_000, names, q))
    assert _tf_stamps(stub) == ([k * 10_000_000 for k in range(3)]
                                + [later + 1_000_000 + k * 10_000_000 for k in range(3)])


def _wrench_bytes(ns: int, frame_id: str, force) -> bytes:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.serialization import serialize_message
    msg = WrenchStamped()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    msg.header.frame_id = frame_id
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(f) for f in force)
    return serialize_message(msg)


def test_contact_force_read_back_through_the_recorder_tf_is_the_simulated_world_force():
    """
    A hopper lands; the force on /foot_contact, turned into ``world`` through the recorded /tf.

    Equals the simulator's world-frame contact force within 1e-9, at the foot link's origin:
    the message is built as the simulator node builds it (frame_id = contact frame of the link,
    the force's components), the /tf by the recorder's computation from /joint_states.
    """
    from dodo_sim.ros.recorder_tf import TfWriter
    from dodo_sim.simulator import SimConfig, Simulator
    from rclpy.serialization import deserialize_message, serialize_message
    from geometry_msgs.msg import WrenchStamped
    from std_msgs.msg import String
    import pinocchio as pin
    xml = _xml('hopper')
    sim = Simulator(xml, SimConfig(initial_q=(0.0, 0.97, 0.3, -0.6),
                                   initial_v=(0.6, 0.0, 0.0, 0.0)))
    data = sim.leg.model.createData()
    stub = _StubRecorder(tf_period_s=0.001)
    writer = TfWriter(stub)
    writer.on_description(0, serialize_message(String(data=xml)))
    topic = contract.contact_topic('foot')
    checked = 0
    for _ in range(120):
        state = sim.step(np.array([5.0, 30.0]))     # lands, pushes off sideways
        ns = int(round(state.t * 1e9))
        wrench = _wrench_bytes(ns, contract.contact_frame_id('foot'), state.contact_forces[0])
        writer.on_contact(topic)
        writer.on_joint_state(ns, _joint_state_bytes(ns, sim.joint_names, state.q))
        if not np.any(state.contact_forces[0]):
            continue
        static = [m for name, m in stub.written if name == contract.TF_STATIC][0]
        latest = [m for name, m in stub.written if name == contract.TF][-1]
        edges = [_edge(t) for t in static.transforms + latest.transforms]
        msg = deserialize_message(wrench, WrenchStamped)
        position, rotation = compose(edges, msg.header.frame_id)
        f = msg.wrench.force
        np.testing.assert_allclose(rotation @ np.array([f.x, f.y, f.z]),
                                   state.contact_forces[0], rtol=0, atol=1e-9)
        # at the foot, as the simulator's own model places it
        pin.framesForwardKinematics(sim.leg.model, data, state.q)
        np.testing.assert_allclose(position, data.oMf[sim.leg.contact_frame_ids[0]].translation,
                                   atol=1e-9)
        checked += 1
    assert checked > 40                # the foot was on the ground, pushed sideways too


def _edge(t) -> Transform:
    tr, r = t.transform.translation, t.transform.rotation
    return Transform(t.header.frame_id, t.child_frame_id, np.array([tr.x, tr.y, tr.z]),
                     np.array([r.x, r.y, r.z, r.w]))


def test_recorder_tf_of_a_floating_base_goes_from_odom_through_the_odometry():
    """
    Solo-12 (free flyer): odom -> base_link from the odometry, the legs from /joint_states.

    Composed, /tf puts every foot where the simulator's own model puts it (REP-105 tree:
    odom -> base_link -> ...), and each foot's contact frame has the odom axes.
    """
    import public_robots
    if public_robots.robots_dir() is None:
        pytest.skip('example-robot-data is not installed')
    from dodo_sim.ros.odometry import BaseOdometer
    from dodo_sim.ros.recorder_tf import TfWriter
    from dodo_sim.simulator import SimConfig, Simulator
    from nav_msgs.msg import Odometry
    import pinocchio as pin
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    xml = robot_description_xml(public_robots.solo12())
    quat = pin.Quaternion(pin.rpy.rpyToMatrix(0.3, -0.2, 1.0)).coeffs()
    sim = Simulator(xml, SimConfig(
        contact_frames=public_robots.SOLO_FEET,
        initial_q=(0.2, -0.1, 0.6, *quat, *public_robots.SOLO_STAND_LEGS),
        initial_v=(1.0, 0.5, 0.3, 0.4, -0.2, 2.0) + (0.5,) * 12))
    odometer = BaseOdometer(sim.leg)
    stub = _StubRecorder(tf_period_s=0.001)
    writer = TfWriter(stub)
    writer.on_description(0, serialize_message(String(data=xml)))
    data = sim.leg.model.createData()
    names = sim.joint_names[1:]
    for _ in range(20):
        state = sim.step(np.zeros(12))
        ns = int(round(state.t * 1e9))
        odom = odometer(state.q, state.v)
        msg = Odometry()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
        msg.header.frame_id, msg.child_frame_id = odom.frame_id, odom.child_frame_id
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = odom.position
        o.x, o.y, o.z, o.w = odom.orientation_xyzw
        for foot in public_robots.SOLO_FEET:
            writer.on_contact(contract.contact_topic(foot))
        writer.on_odom(ns, serialize_message(msg))
        writer.on_joint_state(ns, _joint_state_bytes(ns, names, state.q[7:]))
        static = [m for name, m in stub.written if name == contract.TF_STATIC]
        latest = {}                                     # the newest transform of each frame
        for name, m in stub.written:
            if name == contract.TF:
                latest.update({t.child_frame_id: _edge(t) for t in m.transforms})
        edges = [_edge(t) for m in static for t in m.transforms] + list(latest.values())
        assert latest['base_link'].parent == contract.ODOM_FRAME
        pin.framesForwardKinematics(sim.leg.model, data, state.q)
        for foot, fid in zip(public_robots.SOLO_FEET, sim.leg.contact_frame_ids):
            position, _ = compose(edges, foot, contract.ODOM_FRAME)
            np.testing.assert_allclose(position, data.oMf[fid].translation, atol=1e-9)
            _, rotation = compose(edges, contract.contact_frame_id(foot), contract.ODOM_FRAME)
            np.testing.assert_allclose(rotation, np.eye(3), atol=1e-9)


def test_bag_tools_read_contact_forces_only_with_world_axes(tmp_path):
    """Plot and replay read the contact frame the writers use; a link frame is refused, named."""
    from dodo_sim.tools import bag as bagio
    from dodo_sim.tools import bag_arrays, bag_writer
    with bag_writer.OfflineBagWriter(tmp_path / 'good') as w:
        w.contact('foot', 0.0, [3.0, 40.0])
    good = bagio.read_bag(tmp_path / 'good')[contract.FOOT_CONTACT]
    assert good.messages[0].header.frame_id == 'foot_contact'
    t, force = bag_arrays.wrenches(good, 'foot')
    np.testing.assert_array_equal(force, [[3.0, 0.0, 40.0]])
    with bag_writer.OfflineBagWriter(tmp_path / 'link') as w:
        types = w.typestore.types
        vec = types['geometry_msgs/msg/Vector3']
        msg = types['geometry_msgs/msg/WrenchStamped'](
            header=w._header(0.0, 'foot'),          # the link's own, rotating axes
            wrench=types['geometry_msgs/msg/Wrench'](force=vec(x=3.0, y=0.0, z=40.0),
                                                     torque=vec(x=0.0, y=0.0, z=0.0)))
        w.write(contract.FOOT_CONTACT, contract.CONTACT_TYPE, msg, w._log_ns(0.0, None))
    link = bagio.read_bag(tmp_path / 'link')[contract.FOOT_CONTACT]
    with pytest.raises(ValueError, match="foot_contact has frame_id 'foot'"):
        bag_arrays.wrenches(link, 'foot')
