# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
tf2_msgs and simulation_interfaces as the install builds them (interfaces/, docs/interfaces.md).

Wire identity: the RIHS01 type hash (REP-2011) of every type is the official one. It covers the
field names, types and nesting of a type and of every type it refers to; the rmw compares it on
discovery. It does not cover constants and default values: they are compared with the standard's
separately (:data:`CONSTANTS`, :data:`DEFAULTS`). Where each official hash was read:

* ``tf2_msgs/msg/TFMessage``: issue 31; the same value is what ``ros2 topic info -v /tf`` prints
  on ROS 2 robots and what rosbag2 writes as the ``type_description_hash`` of ``/tf`` in public
  bags, and the rosbags library (Ternaris' independent RIHS01 implementation, its ROS 2 Kilted
  type store) computes it (:func:`test_rosbags_computes_the_official_hashes`).
* ``simulation_interfaces``, the kilted line, release 1.6.1 (ros/rosdistro 8468e88,
  ``kilted/distribution.yaml``: release 1.6.1-1): the hashes ROS 2 Kilted's type description
  generator (``rosidl_generator_type_description`` 4.9.5, the wheel of requirements.txt) writes
  for the upstream package ros-simulation/simulation_interfaces at tag 1.6.1 = commit
  c6459b7546ab9067ba1b034ffee142ecf0b97b73 (branch ``kilted``), built unchanged. Public
  generated code of other builds of that package (rosidl_generator_c ``*__description.c``)
  shows the same bytes where it could be found: StepSimulation (913fe065...) with its request,
  response and event, Result (cf43a306...), EntityState (2e0464a8...).
* :data:`ROLLING_2X`: the same generator on the upstream ``main`` branch (2.x, commit 172a1b1c,
  released for Rolling as 2.1.0), where five types differ on the wire from the kilted line. The
  DDS type names are equal: only the hash tells them apart.

The constants and defaults of :data:`CONSTANTS` and :data:`DEFAULTS` were read from the upstream
files at c6459b75 with rosidl_adapter's parser.
"""
import ctypes
from pathlib import Path
import subprocess
import sys
import time

from conftest import REPO, ros_env
import pytest

INTERFACES = REPO / 'interfaces'

#: type -> official RIHS01 hash (the hex digest after ``RIHS01_``); sources in the module docs
TF2_MSGS = {'msg/TFMessage': 'e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'}
SIMULATION_INTERFACES = {
    'action/SimulateSteps': 'f0837c898e1219cd73bf4c041feab41e8c533e8e1057e982744dba7b093467eb',
    'msg/Bounds': 'e8624fe51f0f5548197542697d924c5699ac7198f1e4c68e50c3ca2af73f5b3f',
    'msg/EntityCategory': '43bdf7933fddf75f6970f7a8fe7078524355d821d390b3954bb46ac36c03dfe1',
    'msg/EntityFilters': '8e7b12e8ea062f14c55de4877221fe1b7cd9749665a7ad8a4ab855fc4b148303',
    'msg/EntityInfo': '3b9a2e7fa00f9a59d325b6e47904044c421561a385682027c7fc06c359806319',
    'msg/EntityState': '2e0464a85eb80a939025075d6c20761eca6a4cb9d6baf2c0ba373467c8b598d0',
    'msg/NamedPose': 'b32da2a039b1840f605ec025b7991a18efacac662fac272818d1ae6e2b12bc27',
    'msg/Resource': '2bb1939cf80f8d2f284afba53cbec60b5ff33759bd39b714128ea8867a34c51a',
    'msg/Result': 'cf43a306adff3337a0a47143d8f5689933bc70a30478f13b077dc1fe3bc5ad17',
    'msg/SimulationState': 'bb9f87ccdd98fba113052a512d9801e84ce732d0a2b3c2b0cb281828de36e415',
    'msg/SimulatorFeatures': '8b101c8529bc0ea3dcf056078254768f39832b9ef0adaf93bd5cea96c0de3305',
    'msg/SpawnEntity': '94a349a865ccf673c18c080520299c88c3d8d5f4842ecf1482d6c997ac4b69f9',
    'msg/SpawnResult': 'dbc277304b6c24bfb2a631cea8f52e2b005d583ec0a6c86b11613f5ce6486da1',
    'msg/Spawnable': '8c22025d840e7a05ab31ba56f998b06458b549a9744b4695be25b778829fc176',
    'msg/TagsFilter': '5c3efc51e8ed04c266c09cb4691ec95b964cd410558e01d8c83646b038826b45',
    'msg/WorldResource': 'e3b65ecf904b9b115673e4a343c6aa3d28c19e185a71228faa64b783afcf2403',
    'srv/DeleteEntity': 'ff7e96a5b83dc8e2bb34b8b034480028b3a24d9f8376b2c0590bac3704be3e28',
    'srv/GetAvailableWorlds': 'ce5589b5523f2732d1969a3c5a7e6b17a387091df8190c62f78d7fdd1109e3e3',
    'srv/GetCurrentWorld': '79ed4e910e1b7a1c9f7950ff758bfba3535bf0dec669054e8af115a099724ddd',
    'srv/GetEntities': 'cb90004c48cd50f37732fb008e22c34c261dd680a723bf0f85d8437ea4498bf7',
    'srv/GetEntitiesStates': '0a76170d0c1c90e1eaf805cfab78ea801d1f82df309a28c1f0fae4b570f19754',
    'srv/GetEntityBounds': '17be8d36231178a5eed0de0344b55c19975581627a9aec30a4fee9926a35deed',
    'srv/GetEntityInfo': '953b7ab6bfc35063f5c9a72463c6ce489baa10249a7fa510926d342a34b0d29e',
    'srv/GetEntityState': '749c91f2a2353d98367b64f2995a0f5842ce92a08ec1ffb3e185540a91557fb5',
    'srv/GetNamedPoseBounds': '59fa8dd2c68ba6771160cc66a628ac99fa95e2748fa0a43c2cc62a2e5f3f6fdc',
    'srv/GetNamedPoses': 'c3d12ab920115bfd4733f6d20516adc3968fb438538540997c37e200e02b04e3',
    'srv/GetSimulationState': '3362dcebee4b1afebbf9c4beee5c79c1455385aded62092a892d61fde8644f30',
    'srv/GetSimulatorFeatures': 'abb9439c8cf196722a469fb6c68b44b484f198c2a1356ac38849a29c2a20a794',
    'srv/GetSpawnables': '3bc0266bf8236058ff589c44512e013afe4f295427c39d44cff363d1c956bf36',
    'srv/LoadWorld': 'f210682338f195f6f06191b46b20ec4992bddf485d33e2cffab2dd15341b4e3e',
    'srv/ResetSimulation': '4ce285d7ff9b8ac70dcc95161f32bf54c05a6f4b13427990e41ab40c36c39646',
    'srv/SetEntityInfo': '867fe2b6812f3e021859171f9b788560d66bb7079d640030baf6c0bb2dd2631e',
    'srv/SetEntityState': 'ca210e7d2b66629ae133c8e1edf5246e618106d75c78ed0556c0e7a33c59ee5e',
    'srv/SetSimulationState': 'a868b916dce49974f637ba252141258c4b07b0c06858b88af560e3eb6bfbcb30',
    'srv/SpawnEntities': '41703a359ee032bf4fc230f144f531705ba039a2e97edeae1f7997dd83b04857',
    'srv/SpawnEntity': 'd4c086345d4194a5fc4c9ae45095736ca4062b5cdac4d06a42dec93d683e03cf',
    'srv/StepSimulation': '913fe0653690ce6bf8f09f316e6a626747012e9fca31e26719910d417aa8565c',
    'srv/UnloadWorld': 'ac7f9a73df1b5b15015d854c5ac552b7726506e22f886c6792804f0b7f88b30b',
}
#: the 2.x line (upstream main, Rolling) where it differs from the kilted line built here
ROLLING_2X = {
    'msg/Spawnable': '8675aa686f0df1ed7874a6ec210fdce1ac1c07f4e49fc26ec7fb6fe729f6772e',
    'srv/GetSpawnables': '3e25fd827d8bcbd9db5e36ccb190efa22d6f6313897861268ab923bf091a992a',
    'srv/LoadWorld': '87d0ded1bfddb40a74d0bedb963fdd592fbedb14d0057d597850404b73c338af',
    'srv/SetEntityState': 'fba636c91d38832dbd4f6896ffce54ff98fd9929962b0533546b56ce00f988ac',
    'srv/SpawnEntity': '66860313e11009faddbfc8568e5d410d1a11607fe75eeb1308671dc0406fe3a7',
}
OFFICIAL = {f'tf2_msgs/{name}': digest for name, digest in TF2_MSGS.items()}
OFFICIAL.update({f'simulation_interfaces/{name}': digest
                 for name, digest in SIMULATION_INTERFACES.items()})

#: the constants of simulation_interfaces 1.6.1, by message (srv: _Request/_Response)
CONSTANTS = {
    'msg/Bounds': {'TYPE_EMPTY': 0, 'TYPE_BOX': 1, 'TYPE_CONVEX_HULL': 2, 'TYPE_SPHERE': 3},
    'msg/EntityCategory': {
        'CATEGORY_OBJECT': 0, 'CATEGORY_ROBOT': 1, 'CATEGORY_HUMAN': 2,
        'CATEGORY_DYNAMIC_OBJECT': 4, 'CATEGORY_STATIC_OBJECT': 5},
    'msg/Result': {
        'RESULT_FEATURE_UNSUPPORTED': 0, 'RESULT_OK': 1, 'RESULT_NOT_FOUND': 2,
        'RESULT_INCORRECT_STATE': 3, 'RESULT_OPERATION_FAILED': 4},
    'msg/SimulationState': {
        'STATE_STOPPED': 0, 'STATE_PLAYING': 1, 'STATE_PAUSED': 2, 'STATE_QUITTING': 3,
        'STATE_NO_WORLD': 4, 'STATE_LOADING_WORLD': 5},
    'msg/SimulatorFeatures': {
        'SPAWNING': 0, 'DELETING': 1, 'NAMED_POSES': 2, 'POSE_BOUNDS': 3, 'ENTITY_TAGS': 4,
        'ENTITY_BOUNDS': 5, 'ENTITY_BOUNDS_BOX': 6, 'ENTITY_BOUNDS_CONVEX': 7,
        'ENTITY_CATEGORIES': 8, 'SPAWNING_RESOURCE_STRING': 9, 'ENTITY_STATE_GETTING': 10,
        'ENTITY_STATE_SETTING': 11, 'ENTITY_INFO_GETTING': 12, 'ENTITY_INFO_SETTING': 13,
        'SPAWNABLES': 14, 'SIMULATION_RESET': 20, 'SIMULATION_RESET_TIME': 21,
        'SIMULATION_RESET_STATE': 22, 'SIMULATION_RESET_SPAWNED': 23,
        'SIMULATION_STATE_GETTING': 24, 'SIMULATION_STATE_SETTING': 25,
        'SIMULATION_STATE_PAUSE': 26, 'STEP_SIMULATION_SINGLE': 31,
        'STEP_SIMULATION_MULTIPLE': 32, 'STEP_SIMULATION_ACTION': 33, 'WORLD_LOADING': 40,
        'WORLD_RESOURCE_STRING': 41, 'WORLD_TAGS': 42, 'WORLD_UNLOADING': 43,
        'WORLD_INFO_GETTING': 44, 'AVAILABLE_WORLDS': 45, 'SPAWNING_ENTITIES': 50},
    'msg/SpawnResult': {
        'NAME_NOT_UNIQUE': 101, 'NAME_INVALID': 102, 'UNSUPPORTED_FORMAT': 103,
        'NO_RESOURCE': 104, 'NAMESPACE_INVALID': 105, 'RESOURCE_PARSE_ERROR': 106,
        'MISSING_ASSETS': 107, 'UNSUPPORTED_ASSETS': 108, 'INVALID_POSE': 109},
    'msg/TagsFilter': {'FILTER_MODE_ANY': 0, 'FILTER_MODE_ALL': 1},
    'srv/GetAvailableWorlds_Response': {'DEFAULT_SOURCES_FAILED': 101},
    'srv/GetCurrentWorld_Response': {'NO_WORLD_LOADED': 101},
    'srv/LoadWorld_Response': {
        'UNSUPPORTED_FORMAT': 101, 'NO_RESOURCE': 102, 'RESOURCE_PARSE_ERROR': 103,
        'MISSING_ASSETS': 104, 'UNSUPPORTED_ASSETS': 105, 'UNSUPPORTED_ELEMENTS': 106},
    'srv/ResetSimulation_Request': {
        'SCOPE_DEFAULT': 0, 'SCOPE_TIME': 1, 'SCOPE_STATE': 2, 'SCOPE_SPAWNED': 4,
        'SCOPE_ALL': 255},
    'srv/SetEntityState_Response': {'INVALID_POSE': 101},
    'srv/SetSimulationState_Response': {
        'ALREADY_IN_TARGET_STATE': 101, 'STATE_TRANSITION_ERROR': 102,
        'INCORRECT_TRANSITION': 103},
    'srv/SpawnEntities_Response': {'ENTITIES_SPAWN_FAILED': 150},
    'srv/SpawnEntity_Response': {
        'NAME_NOT_UNIQUE': 101, 'NAME_INVALID': 102, 'UNSUPPORTED_FORMAT': 103,
        'NO_RESOURCE': 104, 'NAMESPACE_INVALID': 105, 'RESOURCE_PARSE_ERROR': 106,
        'MISSING_ASSETS': 107, 'UNSUPPORTED_ASSETS': 108, 'INVALID_POSE': 109},
    'srv/UnloadWorld_Response': {'NO_WORLD_LOADED': 101},
}
#: the default values of simulation_interfaces 1.6.1
DEFAULTS = {'srv/StepSimulation_Request': {'steps': 1}}


def built_type_hash(type_name: str) -> str:
    """
    Return the RIHS01 digest compiled into the C library of ``type_name`` (``pkg/kind/Name``).

    It is what the type support hands the rmw: what goes on the wire.
    """
    package, kind, name = type_name.split('/')
    library = ctypes.CDLL(f'lib{package}__rosidl_generator_c.so')
    function = getattr(library, f'{package}__{kind}__{name}__get_type_hash')
    function.restype = ctypes.POINTER(ctypes.c_uint8 * 33)     # rosidl_type_hash_t
    function.argtypes = [ctypes.c_void_p]
    raw = bytes(function(None).contents)
    assert raw[0] == 1, f'{type_name}: type hash version {raw[0]}'
    return raw[1:].hex()


def python_class(type_name: str):
    """Return the generated Python class of ``pkg/kind/Name``."""
    import importlib
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


@pytest.mark.parametrize('type_name', sorted(OFFICIAL))
def test_built_types_have_the_official_type_hashes(type_name):
    assert built_type_hash(type_name) == OFFICIAL[type_name]


def test_every_definition_has_its_official_hash_here():
    """A type added to interfaces/ without its official hash would go unchecked."""
    built = {f'{path.parent.parent.name}/{path.parent.name}/{path.stem}'
             for path in INTERFACES.rglob('*') if path.suffix in ('.msg', '.srv', '.action')}
    assert built == set(OFFICIAL)


def test_the_kilted_line_is_built_not_the_rolling_one():
    for name, rolling in ROLLING_2X.items():
        assert built_type_hash(f'simulation_interfaces/{name}') == SIMULATION_INTERFACES[name]
        assert SIMULATION_INTERFACES[name] != rolling


def test_constants_and_defaults_are_the_standards():
    """What the hash leaves out: every constant and default value, none missing, none extra."""
    parts = {'msg': (), 'srv': ('Request', 'Response'), 'action': ('Goal', 'Result', 'Feedback')}
    for name in sorted(SIMULATION_INTERFACES):
        outer = python_class(f'simulation_interfaces/{name}')
        for part in parts[name.split('/')[0]] or (None,):
            key, cls = (name, outer) if part is None else (f'{name}_{part}', getattr(outer, part))
            constants = getattr(type(cls), f'_Metaclass_{cls.__name__}__constants')
            assert constants == CONSTANTS.get(key, {}), key
            instance = cls()
            for field, value in DEFAULTS.get(key, {}).items():
                assert getattr(instance, field) == value, (key, field)
    tf_class = python_class('tf2_msgs/msg/TFMessage')
    assert getattr(type(tf_class), '_Metaclass_TFMessage__constants') == {}


def test_rosbags_computes_the_official_hashes():
    """An independent RIHS01 implementation (rosbags) on our message files gives the table."""
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores
    store = get_typestore(Stores.ROS2_KILTED)
    assert store.hash_rihs01('tf2_msgs/msg/TFMessage') == 'RIHS01_' + TF2_MSGS['msg/TFMessage']
    ours = (INTERFACES / 'tf2_msgs' / 'msg' / 'TFMessage.msg').read_text()
    assert get_types_from_msg(ours, 'tf2_msgs/msg/TFMessage') == \
        get_types_from_msg('geometry_msgs/TransformStamped[] transforms',
                           'tf2_msgs/msg/TFMessage')
    paths = sorted((INTERFACES / 'simulation_interfaces' / 'msg').glob('*.msg'))
    for path in paths:
        store.register(get_types_from_msg(path.read_text(),
                                          f'simulation_interfaces/msg/{path.stem}'))
    for path in paths:
        assert store.hash_rihs01(f'simulation_interfaces/msg/{path.stem}') == \
            'RIHS01_' + SIMULATION_INTERFACES[f'msg/{path.stem}'], path.name


def test_the_venv_has_the_packages_the_install_built():
    """
    The README's install line (and so CI) built them into this venv, from these sources.

    Packages that came from elsewhere (a ROS install) have no stamp: only the imports count then.
    """
    from dodo_sim.tools.build_interfaces import build_key, PACKAGES, STAMP_NAME, up_to_date
    for modules in PACKAGES.values():
        for module in modules:
            __import__(module)
    prefix = Path(sys.prefix)
    if sys.prefix == sys.base_prefix or not (prefix / 'share' / 'tf2_msgs' / STAMP_NAME).is_file():
        pytest.skip('the interface packages were not built into this venv')
    for package in PACKAGES:
        assert up_to_date(prefix, package, build_key(INTERFACES, package)), \
            f'{package} in {prefix} is not built from these sources: run ' \
            f'{sys.executable} -m dodo_sim.tools.build_interfaces'


#: a process publishing one transform on /tf until killed
TALKER = """
import rclpy
from geometry_msgs.msg import TransformStamped
from tf2_msgs.msg import TFMessage
rclpy.init()
node = rclpy.create_node('tf_talker')
publisher = node.create_publisher(TFMessage, '/tf', 10)
transform = TransformStamped(child_frame_id='foot')
transform.header.frame_id = 'shank'
transform.transform.translation.z = -0.5
node.create_timer(0.05, lambda: publisher.publish(TFMessage(transforms=[transform])))
rclpy.spin(node)
"""

#: a process serving StepSimulation on /step_simulation until killed
SERVER = """
import rclpy
from simulation_interfaces.msg import Result
from simulation_interfaces.srv import StepSimulation
rclpy.init()
node = rclpy.create_node('stepper')

def step(request, response):
    response.result.result = Result.RESULT_OK
    response.result.error_message = f'stepped {request.steps}'
    return response

node.create_service(StepSimulation, '/step_simulation', step)
rclpy.spin(node)
"""


class Peer:
    """This process on the domain of a peer process it started (killed at the end)."""

    def __init__(self, code: str):
        import rclpy
        env = ros_env()
        self.process = subprocess.Popen([sys.executable, '-c', code], env=env, cwd=REPO)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=int(env['ROS_DOMAIN_ID']))
        self.node = rclpy.create_node('probe', context=self.context)
        from rclpy.executors import SingleThreadedExecutor
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, done, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done() and time.monotonic() < deadline:
            assert self.process.poll() is None, 'the peer process ended'
            self.executor.spin_once(timeout_sec=0.05)
        return done()

    def close(self):
        import rclpy
        rclpy.try_shutdown(context=self.context)
        self.process.kill()
        self.process.wait(timeout=10)


@pytest.mark.ros
def test_tf_message_between_two_processes_over_dds():
    """A TFMessage another process publishes arrives here; the graph shows the official hash."""
    from tf2_msgs.msg import TFMessage
    peer = Peer(TALKER)
    try:
        received = []
        peer.node.create_subscription(TFMessage, '/tf', received.append, 10)
        assert peer.spin_until(lambda: received, 15.0), 'no /tf message within 15 s'
        transform = received[0].transforms[0]
        assert (transform.header.frame_id, transform.child_frame_id) == ('shank', 'foot')
        assert transform.transform.translation.z == -0.5
        hashes = {str(info.topic_type_hash)
                  for info in peer.node.get_publishers_info_by_topic('/tf')}
        assert hashes == {'RIHS01_' + TF2_MSGS['msg/TFMessage']}
    finally:
        peer.close()


@pytest.mark.ros
def test_step_simulation_service_call_between_two_processes():
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation
    peer = Peer(SERVER)
    try:
        client = peer.node.create_client(StepSimulation, '/step_simulation')
        assert peer.spin_until(client.service_is_ready, 15.0), 'no StepSimulation server'
        future = client.call_async(StepSimulation.Request(steps=7))
        assert peer.spin_until(future.done, 15.0), 'no StepSimulation response within 15 s'
        response = future.result()
        assert response.result.result == Result.RESULT_OK
        assert response.result.error_message == 'stepped 7'
    finally:
        peer.close()
