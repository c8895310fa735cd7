# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The sensor model (dodo_sim.physics.sensors): IMU kinematics, noise statistics, latency, resolution.

In process, no ROS. The IMU is checked at rest (+g along the body's up axis, zero rate), in free
fall (zero specific force) and against pinocchio's own classical acceleration on a swinging
chain; the noise against its parameters over 10 s of samples, with tolerances from the sample
size (stated at each check); latency and quantisation exactly.
"""
import math

from dodo_sim.paths import default_urdf_path
from dodo_sim.physics.sensors import NoiseChannel, SensorModel
from dodo_sim.rollout import rollout
from dodo_sim.simulator import SimConfig, Simulator
import numpy as np
from physics_models import free_box, planar_chain
import pinocchio as pin
import pytest

CORNERS = ('c0', 'c1', 'c2', 'c3')
G = 9.81
#: 10 s of 1 kHz samples
SAMPLES = 10_000


def resting_box(**sensors):
    """Return a free box resting flat on its four corners (corners exactly on the ground)."""
    return Simulator(free_box(), SimConfig(contact_frames=CORNERS,
                                           initial_q=(0.3, -0.2, 0.05, 0, 0, 0, 1), **sensors))


def imu_rows(sim, steps, sensors=None):
    """Return the (measured, truth) IMU rows of ``steps`` zero-torque steps after the start."""
    run = rollout(sim, ZeroTorque(), steps=steps, sensors=sensors)
    return run.imu, run.imu_truth


class ZeroTorque:
    """A policy commanding nothing (the box has no actuated joint) or zero torques."""

    def __init__(self, n=0):
        self.n = n

    def update(self, t, q, v, force):
        return np.zeros(self.n)


def test_a_floating_base_has_an_imu_at_its_root_link_and_a_fixed_one_none_by_default():
    assert SensorModel.of(resting_box()).imu_link == 'box'
    hopper = Simulator(default_urdf_path(), SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6)))
    assert SensorModel.of(hopper).imu_link is None
    assert SensorModel.of(hopper).passthrough       # the shipped runs: sensors change nothing
    with_imu = Simulator(default_urdf_path(), SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6),
                                                        imu_link='body'))
    assert SensorModel.of(with_imu).imu_link == 'body'
    with pytest.raises(ValueError, match=r"imu_link = 'torso': not a link"):
        SensorModel.of(Simulator(default_urdf_path(), SimConfig(
            initial_q=(0.0, 1.2, 0.3, -0.6), imu_link='torso')))


@pytest.mark.parametrize('physics', [
    {'integrator': 'event'},
    # at rest to the contact solve's tolerance: the default 1e-10 m/s leaves velocity changes of
    # that size, 1e-7 m/s^2 once divided by the period
    {'solver_tolerance': 1e-14, 'solver_max_iterations': 1000}], ids=['event', 'timestepping'])
def test_imu_at_rest_reads_plus_g_along_the_body_up_axis_and_zero_rate(physics):
    """A box resting on the ground for 1 s: specific force (0, 0, +g), rates 0, to 1e-9."""
    sim = resting_box(**physics)
    measured, truth = imu_rows(sim, 1000)
    np.testing.assert_array_equal(measured, truth)            # no noise: the reading is exact
    np.testing.assert_allclose(truth[:, :4], np.tile((0, 0, 0, 1), (1001, 1)), atol=1e-9)
    np.testing.assert_allclose(truth[:, 4:7], 0.0, atol=1e-9)
    np.testing.assert_allclose(truth[:, 7:10], np.tile((0, 0, G), (1001, 1)), atol=1e-9)


def test_a_tilted_body_at_rest_reads_g_along_its_own_up_axis():
    """Tilted and still: the reading is the world's up axis in body axes, times g."""
    rotation = pin.rpy.rpyToMatrix(0.3, -0.5, 1.1)
    xyzw = pin.Quaternion(rotation).coeffs()
    sim = Simulator(free_box(), SimConfig(contact_frames=CORNERS,
                                          initial_q=(0, 0, 1.0, *xyzw)))
    reading = SensorModel.of(sim).measure(sim.state).imu
    np.testing.assert_allclose(reading.linear_acceleration, rotation.T @ (0, 0, G), atol=1e-12)
    np.testing.assert_allclose(reading.orientation_xyzw, xyzw, atol=1e-12)
    assert np.linalg.norm(reading.linear_acceleration) == pytest.approx(G, abs=1e-12)


def test_a_tumbling_box_in_free_fall_reads_zero_specific_force_and_its_body_rates():
    """
    In free flight the centre of mass falls at g: the accelerometer at it reads 0.

    The reading is the simulated motion's: event-driven (RK4) at dt = 0.1 ms it falls at g to
    6e-9 m/s^2 (5.7e-7 at 1 ms); the time-stepping midpoint step, first order in the Coriolis
    terms of this spin, reads 0.012 m/s^2 at 1 ms (docs/ros_contract.md "Sensors").
    """
    omega_world = np.array([1.0, -2.0, 0.5])
    sim = Simulator(free_box(), SimConfig(integrator='event', dt=1e-4, contact_frames=CORNERS,
                                          initial_q=(0, 0, 5.0, 0, 0, 0, 1),
                                          initial_v=(1.0, 0.5, 2.0, *omega_world)))
    measured, truth = imu_rows(sim, 300)
    np.testing.assert_allclose(truth[1:, 7:10], 0.0, atol=1e-8)
    # the rate in the body's own axes (at the start the body axes are the world's)
    np.testing.assert_array_equal(truth[0, 4:7], omega_world)
    assert np.abs(truth[:, 4:7] - omega_world).max() > 0.1      # it tumbles


@pytest.mark.parametrize('period', [1e-3, 1e-4])
def test_the_imu_acceleration_is_the_mean_over_the_control_period(period):
    """
    On a swinging chain the reading is R_k^T (a_mean - g).

    a_mean, the mean acceleration of the IMU link's origin over the period that ended at the
    state, agrees with the trapezoid of pinocchio's classical frame acceleration (from forward
    dynamics) at the two ends of the period to the trapezoid's O(T^2): measured 3.1e-4 m/s^2 at
    T = 1 ms and 3.1e-6 at 0.1 ms, against accelerations up to 14 m/s^2 (bound: 400 T^2).
    """
    xml = planar_chain(2, hinge_z=2.0)
    sim = Simulator(xml, SimConfig(integrator='event', dt=1e-4, control_period=period,
                                   contact_frames=('tip',), collisions='feet', imu_link='rod1',
                                   initial_q=(1.2, -0.4)))
    run = rollout(sim, ZeroTorque(2), duration_s=0.2)
    model = sim.robot.model
    data = model.createData()
    frame = model.getFrameId('rod1', pin.FrameType.BODY)

    def classical(q, v):
        pin.aba(model, data, q, v, np.zeros(model.nv))
        pin.forwardKinematics(model, data, q, v, data.ddq)
        pin.updateFramePlacements(model, data)
        return np.array(pin.getFrameClassicalAcceleration(
            model, data, frame, pin.LOCAL_WORLD_ALIGNED).linear)

    worst = 0.0
    for k in range(1, len(run.t)):
        mean = 0.5 * (classical(run.q[k - 1], run.v[k - 1]) + classical(run.q[k], run.v[k]))
        pin.forwardKinematics(model, data, run.q[k])
        rotation = pin.updateFramePlacement(model, data, frame).rotation
        expected = rotation.T @ (mean - model.gravity.linear)
        worst = max(worst, float(np.abs(run.imu_truth[k, 7:10] - expected).max()))
    assert worst < 400.0 * period ** 2, worst
    assert np.abs(run.imu_truth[:, 7:10]).max() > 10.0       # it does swing


def at_rest(sim, samples=SAMPLES):
    """Return ``samples`` states of ``sim`` held still at its start, one control period apart."""
    period = sim.config.control_period
    return [sim.state._replace(t=k * period) for k in range(samples)]


def rest_readings(**sensors):
    """Return the (measured, truth) IMU rows of a box held at rest for 10 s with ``sensors``."""
    sim = resting_box(**sensors)
    model = SensorModel.of(sim)
    readings = [model.measure(state) for state in at_rest(sim)]
    return (np.array([r.imu.row() for r in readings]),
            np.array([r.imu_truth.row() for r in readings]))


def statistics_run(**sensors):
    """Return the IMU error rows (measured - truth) of rates and accelerations at rest, 10 s."""
    measured, truth = rest_readings(**sensors)
    np.testing.assert_allclose(truth[:, 7:10], np.tile((0, 0, G), (len(truth), 1)), atol=1e-12)
    return measured[:, 4:10] - truth[:, 4:10]


def assert_sample_std(samples, sigma):
    """Sample std within 5 of its standard errors, sigma / sqrt(2 (N - 1)) (N = 10000: 3.5 %)."""
    n = samples.shape[0]
    tolerance = 5.0 * sigma / math.sqrt(2.0 * (n - 1))
    np.testing.assert_allclose(samples.std(axis=0, ddof=1), sigma, atol=tolerance)


def assert_sample_mean(samples, mean, sigma):
    """Sample mean within 5 standard errors, sigma / sqrt(N) (N = 10000: sigma / 20)."""
    n = samples.shape[0]
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=5.0 * sigma / math.sqrt(n))


def test_imu_noise_std_and_bias_match_the_parameters_over_10_s():
    gyro_sigma, gyro_bias, accel_sigma, accel_bias = 0.004, 0.02, 0.03, -0.15
    errors = statistics_run(imu_angular_velocity_noise=gyro_sigma,
                            imu_angular_velocity_bias=gyro_bias,
                            imu_linear_acceleration_noise=accel_sigma,
                            imu_linear_acceleration_bias=accel_bias)
    assert errors.shape == (SAMPLES, 6)
    assert_sample_std(errors[:, :3], gyro_sigma)
    assert_sample_mean(errors[:, :3], gyro_bias, gyro_sigma)
    assert_sample_std(errors[:, 3:], accel_sigma)
    assert_sample_mean(errors[:, 3:], accel_bias, accel_sigma)
    # the three axes are independent draws
    correlation = np.corrcoef(errors[:, :3].T)[np.triu_indices(3, 1)]
    assert np.abs(correlation).max() < 5.0 / math.sqrt(SAMPLES)


def test_imu_bias_random_walk_steps_match_sigma_per_sqrt_second():
    """With the white noise off the error is the bias walk: steps of sigma_w sqrt(T)."""
    walk = 0.01          # rad/s per sqrt(s)
    errors = statistics_run(imu_angular_velocity_bias_walk=walk)[:, :3]
    np.testing.assert_array_equal(errors[0], 0.0)                 # w_0 = 0
    steps = np.diff(errors, axis=0)
    assert_sample_std(steps, walk * math.sqrt(1e-3))
    assert_sample_mean(steps, 0.0, walk * math.sqrt(1e-3))


def test_imu_orientation_error_is_a_rotation_of_the_noise_sigma():
    sigma = 0.01
    measured, truth = rest_readings(imu_orientation_noise=sigma)
    errors = np.array([pin.log3(pin.Quaternion(*np.roll(t[:4], 1)).toRotationMatrix().T
                                @ pin.Quaternion(*np.roll(m[:4], 1)).toRotationMatrix())
                       for m, t in zip(measured, truth)])
    assert_sample_std(errors, sigma)
    assert_sample_mean(errors, 0.0, sigma)
    np.testing.assert_allclose(np.linalg.norm(measured[:, :4], axis=1), 1.0, atol=1e-12)


def hopper(**sensors):
    return Simulator(default_urdf_path(), SimConfig(initial_q=(0.0, 1.2, 0.3, -0.6), **sensors))


def channel_errors(sim, steps=SAMPLES - 1):
    """Return (q, v, force) errors, measured - truth, of a zero-torque hopper drop."""
    run = rollout(sim, ZeroTorque(2), steps=steps)
    return (run.measured_q - run.q, run.measured_v - run.v,
            run.measured_contact_forces - run.contact_forces)


def test_encoder_and_force_sensor_noise_match_their_parameters_per_joint():
    position_sigma = (2e-3, 1e-3, 4e-4, 4e-4)        # m, m, rad, rad
    q_err, v_err, f_err = channel_errors(hopper(joint_position_noise=position_sigma,
                                                joint_velocity_noise=(0.05,),
                                                joint_velocity_bias=(0.0, 0.0, 0.01, -0.02),
                                                contact_force_noise=0.8,
                                                contact_force_bias=1.5))
    for j, sigma in enumerate(position_sigma):
        assert_sample_std(q_err[:, j], sigma)
        assert_sample_mean(q_err[:, j], 0.0, sigma)
    assert_sample_std(v_err, 0.05)
    assert_sample_mean(v_err, (0.0, 0.0, 0.01, -0.02), 0.05)
    forces = f_err.reshape(len(f_err), -1)
    assert_sample_std(forces, 0.8)
    assert_sample_mean(forces, 1.5, 0.8)


def test_a_per_joint_parameter_of_the_wrong_length_names_the_joints():
    with pytest.raises(ValueError, match=r"joint_position_noise = \[0.1, 0.2\].*'base_x', "
                                         r"'base_z', 'hip', 'knee'"):
        SensorModel.of(hopper(joint_position_noise=(0.1, 0.2)))


@pytest.mark.parametrize('k', [1, 3, 25])
def test_latency_reports_the_reading_of_exactly_k_periods_ago(k):
    noise = {'joint_position_noise': (1e-3,), 'joint_velocity_noise': (0.01,),
             'contact_force_noise': 0.5}
    now = rollout(hopper(**noise), ZeroTorque(2), steps=400)
    late = rollout(hopper(**noise, joint_state_latency=k, contact_force_latency=k),
                   ZeroTorque(2), steps=400)
    np.testing.assert_array_equal(late.q, now.q)          # the motion is the same
    np.testing.assert_array_equal(late.measured_q[k:], now.measured_q[:-k])
    np.testing.assert_array_equal(late.measured_v[k:], now.measured_v[:-k])
    np.testing.assert_array_equal(late.measured_contact_forces[k:],
                                  now.measured_contact_forces[:-k])
    # before k readings exist: the first one
    np.testing.assert_array_equal(late.measured_q[:k], np.tile(now.measured_q[0], (k, 1)))


def test_imu_latency_delays_the_reading_by_exactly_k_periods():
    k = 7
    now, _ = imu_rows(resting_box(imu_linear_acceleration_noise=0.1), 200)
    late, _ = imu_rows(resting_box(imu_linear_acceleration_noise=0.1, imu_latency=k), 200)
    np.testing.assert_array_equal(late[k:], now[:-k])


def test_quantisation_is_exact():
    lsb_q, lsb_f = 2 * math.pi / 16384, 0.5
    run = rollout(hopper(joint_position_resolution=(2 * math.pi / 65536, 1e-4, lsb_q, lsb_q),
                         contact_force_resolution=lsb_f), ZeroTorque(2), steps=1500)
    assert run.in_contact.any()
    lsb = np.array([2 * math.pi / 65536, 1e-4, lsb_q, lsb_q])
    np.testing.assert_array_equal(run.measured_q, np.round(run.q / lsb) * lsb)
    assert np.abs(run.measured_q - run.q).max() <= lsb.max() / 2
    np.testing.assert_array_equal(run.measured_contact_forces,
                                  np.round(run.contact_forces / lsb_f) * lsb_f)
    np.testing.assert_array_equal(run.measured_v, run.v)       # velocities not quantised


def test_one_seed_one_stream_and_each_channel_its_own():
    base = {'joint_position_noise': (1e-3,), 'contact_force_noise': 0.5}
    a = rollout(hopper(**base), ZeroTorque(2), steps=300)
    b = rollout(hopper(**base), ZeroTorque(2), steps=300)
    np.testing.assert_array_equal(a.measured_q, b.measured_q)
    np.testing.assert_array_equal(a.measured_contact_forces, b.measured_contact_forces)
    other_seed = rollout(hopper(**base, sensor_seed=1), ZeroTorque(2), steps=300)
    assert not np.array_equal(a.measured_q, other_seed.measured_q)
    # more force noise: the same encoder readings (own stream), the same draws scaled
    louder = rollout(hopper(joint_position_noise=(1e-3,), contact_force_noise=1.0),
                     ZeroTorque(2), steps=300)
    np.testing.assert_array_equal(louder.measured_q, a.measured_q)
    np.testing.assert_allclose(louder.measured_contact_forces - louder.contact_forces,
                               2.0 * (a.measured_contact_forces - a.contact_forces),
                               rtol=1e-12, atol=1e-12)


def test_the_policy_is_given_the_readings_and_the_run_keeps_the_truth():
    class Recorder(ZeroTorque):

        def __init__(self):
            super().__init__(2)
            self.seen = []

        def update(self, t, q, v, force):
            self.seen.append((np.array(q), np.array(v), np.array(force)))
            return np.zeros(2)

    policy = Recorder()
    run = rollout(hopper(joint_position_noise=(1e-3,), joint_velocity_noise=(0.01,),
                         contact_force_noise=0.5), policy, steps=400)
    seen_q = np.array([s[0] for s in policy.seen])
    np.testing.assert_array_equal(seen_q, run.measured_q[:-1])
    np.testing.assert_array_equal(np.array([s[1] for s in policy.seen]), run.measured_v[:-1])
    np.testing.assert_array_equal(np.array([s[2] for s in policy.seen]),
                                  run.measured_contact_forces[:-1, 0, ::2])
    assert np.abs(run.measured_q - run.q).max() > 1e-4           # the truth is kept apart
    truth = rollout(hopper(), ZeroTorque(2), steps=400)
    np.testing.assert_array_equal(run.q, truth.q)                # zero torque: same motion


def test_a_channel_draws_a_fixed_number_of_normals_per_step():
    """The stream is a function of (seed, channel, step): 2n normals a step, sigma scales them."""
    a = NoiseChannel(3, noise=0.1, bias_walk=0.2, period=1e-3, seed=5, stream=4)
    b = NoiseChannel(3, noise=0.3, bias_walk=0.6, period=1e-3, seed=5, stream=4)
    zero = np.zeros(3)
    for _ in range(600):                       # across draw blocks
        np.testing.assert_allclose(b.read(zero), 3.0 * a.read(zero), rtol=1e-12, atol=1e-15)
