# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
A robot description from a bag or a topic is XML text, never a path to open or a program to run.

The attack of issue 27 item 1, kept as tests: a shared bag directory carries its own
``robot.xacro`` whose ``${}`` escapes xacro's sandbox (string subscripts reach
``object.__getattribute__`` through ``python.vars``), and its ``/robot_description`` names that
file relatively. ``dodo bag info``, ``dodo plot`` and ``dodo replay --through-controller`` run from
inside the directory must not run it: the marker file the xacro would create stays absent, and
each command ends with one ``error:`` line and exit 2. In process (the commands' ``main``).
"""
from pathlib import Path
from types import SimpleNamespace

from dodo_sim.physics.robot import ModelError, robot_description_xml
import numpy as np
from process_support import deadline
import pytest

MARKER = 'PWNED'

# the ${} escape: python.vars(object)['__getattribute__'] reads any attribute by a string,
# here the module globals of an exposed xacro function, and calls os.system through them
EXPLOIT = ("${python.vars(python.type.mro(python.int)[-1])['__getattribute__']"
           "(xacro.load_yaml, '__globals__')['os'].system('touch " + MARKER + "')}")

EVIL_XACRO = f"""<?xml version="1.0"?>
<robot name="evil" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="payload" value="{EXPLOIT}"/>
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="leg"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="leg"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <dummy value="${{payload}}"/>
</robot>
"""


def _shared_bag(directory: Path, description: str) -> Path:
    """Return a bag directory holding ``robot.xacro`` and a bag whose description is given."""
    from dodo_sim.tools.bag_writer import OfflineBagWriter
    bag = directory / 'shared_bag'
    with OfflineBagWriter(bag) as w:
        w.robot_description(description)
        for k in range(30):
            t = 0.001 * k
            w.step(t, [0.0, 1.0, 0.0, 0.0], np.zeros(4), np.zeros(4), [0.0, 0.0])
            w.joint_command(t, ['hip', 'knee'], [0.0, 0.0])
    (bag / 'robot.xacro').write_text(EVIL_XACRO)
    return bag


def test_the_xacro_of_the_attack_does_run_code_when_trusted(tmp_path, monkeypatch):
    # the exploit is real: the user's own files may be xacro, and this one runs a command
    (tmp_path / 'robot.xacro').write_text(EVIL_XACRO)
    monkeypatch.chdir(tmp_path)
    robot_description_xml('robot.xacro')
    assert (tmp_path / MARKER).exists()


def _one_error_line(capsys, program: str) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    assert err[0].startswith(f'{program}: error:'), err
    assert 'Traceback' not in err[0]
    return err[0]


@pytest.mark.parametrize('command', ['bag info', 'plot', 'replay --through-controller'])
def test_a_bag_naming_its_own_xacro_never_runs_it(tmp_path, monkeypatch, capsys, command):
    bag = _shared_bag(tmp_path, 'robot.xacro')
    monkeypatch.chdir(bag)                  # the victim looks at the bag from inside it
    if command == 'bag info':
        from dodo_sim.tools.bag_tool import main
        code, program = main(['info', '.']), 'dodo bag'
    elif command == 'plot':
        from dodo_sim.tools.plot import main
        code, program = main(['.', '--out', str(tmp_path / 'plots'), '--no-animation']), \
            'dodo plot'
    else:
        from dodo_sim.tools.replay import main
        code, program = main(['.', '--through-controller']), 'dodo replay'
    assert not (bag / MARKER).exists(), f'dodo {command} ran the xacro named by the bag'
    assert code == 2
    line = _one_error_line(capsys, program)
    assert 'not URDF XML' in line and 'robot_description' in line


def test_a_bag_naming_an_absolute_xacro_is_refused_too(tmp_path, monkeypatch, capsys):
    bag = _shared_bag(tmp_path, str(tmp_path / 'shared_bag' / 'robot.xacro'))
    monkeypatch.chdir(tmp_path)
    from dodo_sim.tools.bag_tool import main
    assert main(['info', str(bag)]) == 2
    assert not (tmp_path / MARKER).exists()
    assert 'not URDF XML' in _one_error_line(capsys, 'dodo bag')


def test_bag_info_on_an_unusable_urdf_says_one_line_and_still_lists_the_bag(tmp_path, capsys):
    # XML, but not a robot pinocchio can load (no mass): on main a ModelError traceback
    bag = _shared_bag(tmp_path, '<robot name="r"><link name="a"/><link name="b"/><joint '
                                'name="j" type="revolute"><parent link="a"/><child link="b"/>'
                                '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
                                '</joint></robot>')
    from dodo_sim.tools.bag_tool import main
    assert main(['info', str(bag)]) == 2
    captured = capsys.readouterr()
    assert 'joint_states' in captured.out and "joints ['base_x'" in captured.out
    err = [line for line in captured.err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith('dodo bag: error:'), err
    assert 'robot_description' in err[0] and 'mass' in err[0]


def test_a_description_recorded_as_xml_is_still_used(tmp_path, capsys, urdf_xml):
    bag = _shared_bag(tmp_path, urdf_xml)
    from dodo_sim.tools.bag_tool import main
    assert main(['info', str(bag)]) == 0
    out = capsys.readouterr().out
    assert "robot: joints ['base_x', 'base_z', 'hip', 'knee'], actuated ['hip', 'knee']" in out
    assert 'unusable' not in out


@pytest.mark.parametrize('text', ['robot.xacro', 'package://dodo_sim/urdf/hopper.urdf.xacro',
                                  '/etc/passwd', '', '   \n', 'robot.urdf'])
def test_untrusted_text_that_is_not_xml_is_refused_naming_the_source(text):
    from dodo_sim.physics.robot import urdf_from_untrusted_text
    with pytest.raises(ModelError, match=r'/robot_description is not URDF XML'):
        urdf_from_untrusted_text(text, '/robot_description')


def test_untrusted_text_over_the_size_limit_is_refused():
    from dodo_sim.physics.robot import MAX_UNTRUSTED_DESCRIPTION_CHARS, urdf_from_untrusted_text
    with pytest.raises(ModelError, match='characters long'):
        urdf_from_untrusted_text('<' + ' ' * MAX_UNTRUSTED_DESCRIPTION_CHARS, 'the topic')


def test_untrusted_xml_is_returned_unchanged(urdf_xml):
    from dodo_sim.physics.robot import urdf_from_untrusted_text
    assert urdf_from_untrusted_text('\n  ' + urdf_xml) == '\n  ' + urdf_xml


def _serialized_string(text: str) -> bytes:
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    return serialize_message(String(data=text))


def test_the_recorder_never_runs_a_xacro_named_on_the_topic(tmp_path, monkeypatch):
    # the recorder computes /tf from whatever /robot_description any node publishes
    from dodo_sim.ros.recorder_tf import TfWriter
    (tmp_path / 'robot.xacro').write_text(EVIL_XACRO)
    monkeypatch.chdir(tmp_path)
    errors = []
    logger = SimpleNamespace(error=errors.append, warning=errors.append, info=lambda *_: None)
    recorder = SimpleNamespace(node=SimpleNamespace(get_logger=lambda: logger),
                               config=SimpleNamespace(tf='compute', tf_period_s=0.01,
                                                      tf_max_jump_s=1.0))
    writer = TfWriter(recorder)
    writer.on_description(0, _serialized_string('robot.xacro'))
    assert not (tmp_path / MARKER).exists()
    assert writer.tree is None
    assert len(errors) == 1 and 'not URDF XML' in errors[0]


@pytest.mark.parametrize('value', ['1;python.vars', '0.5)+(1', "'x'", 'a b', 'x[0]', 'é'])
def test_xacro_arguments_are_plain_literals(urdf_path, value):
    # a xacro substitutes $(arg) as text inside ${}, which it evaluates as Python: a study
    # file's perturbation xacro_args could otherwise inject an expression
    with pytest.raises(ModelError, match='xacro argument body_mass'):
        robot_description_xml(urdf_path, {'body_mass': value})


def test_xacro_arguments_that_are_numbers_still_work(urdf_path):
    assert 'mass value="8' in robot_description_xml(urdf_path, {'body_mass': 8.0})
    assert robot_description_xml(urdf_path, {'body_mass': '1e-1', 'hip_lower': -1.5})


def _claim_a_giant_chunk(bag: Path, size: int = 10**12) -> None:
    """Make the bag's chunk index (and the chunk) declare ``size`` bytes once decompressed."""
    import struct
    mcap = next(bag.glob('*.mcap'))
    data = bytearray(mcap.read_bytes())
    footer = len(data) - 8 - 29                       # opcode, length, 2 offsets, CRC; magic
    assert data[footer] == 0x02
    summary = struct.unpack_from('<Q', data, footer + 9)[0]
    struct.pack_into('<I', data, footer + 25, 0)      # summary CRC: none
    pos = summary
    while data[pos] != 0x0E:                          # up to the summary offsets
        length = struct.unpack_from('<Q', data, pos + 1)[0]
        if data[pos] == 0x08:                         # chunk index: uncompressed size last
            struct.pack_into('<Q', data, pos + 9 + length - 8, size)
            chunk = struct.unpack_from('<Q', data, pos + 9 + 16)[0]
            struct.pack_into('<Q', data, chunk + 25, size)
        pos += 9 + length
    mcap.write_bytes(bytes(data))


@pytest.mark.parametrize('command', ['bag info', 'plot', 'replay --through-controller'])
def test_a_giant_chunk_is_one_line_before_anything_is_decompressed(
        tmp_path, capsys, urdf_xml, command):
    bag = _shared_bag(tmp_path, urdf_xml)
    _claim_a_giant_chunk(bag)
    if command == 'bag info':
        from dodo_sim.tools.bag_tool import main
        code, program = main(['info', str(bag)]), 'dodo bag'
    elif command == 'plot':
        from dodo_sim.tools.plot import main
        code, program = main([str(bag), '--out', str(tmp_path / 'p'), '--no-animation']), \
            'dodo plot'
    else:
        from dodo_sim.tools.replay import main
        code, program = main([str(bag), '--through-controller']), 'dodo replay'
    assert code == 2
    assert 'a chunk declares 1000000000000 bytes' in _one_error_line(capsys, program)


def test_merging_a_driver_log_holding_a_decompression_bomb_is_one_line(
        tmp_path, capsys, urdf_xml, monkeypatch):
    # a one-topic log as the driver writes it, whose chunk is a zstd frame of 300 MB of zeros
    # declaring the few hundred bytes the chunk really held
    import zstandard
    from bags_support import zstd_zeros_frame
    from mcap.writer import CompressionType, Writer
    bag = _shared_bag(tmp_path, urdf_xml)
    log = tmp_path / 'run.driver.mcap'
    bomb = zstd_zeros_frame(300 * 2**20)
    monkeypatch.setattr(zstandard, 'compress', lambda data, *args: bomb)
    with log.open('wb') as fh:
        writer = Writer(fh, compression=CompressionType.ZSTD, enable_crcs=False)
        writer.start(profile='ros2')
        schema = writer.register_schema('sensor_msgs/msg/JointState', 'ros2msg', b'')
        channel = writer.register_channel('/joint_states', 'cdr', schema)
        writer.add_message(channel, 1, b'\x00\x01\x00\x00' + bytes(60), 1)
        writer.finish()
    monkeypatch.undo()
    from dodo_sim.tools.bag_tool import main
    with deadline(30):
        code = main(['merge-driver-log', str(bag), '--log', str(log)])
    assert code == 2
    assert 'a zstd chunk holds 314572800 bytes but declares' in _one_error_line(
        capsys, 'dodo bag merge-driver-log')
