# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Test-only robot models (URDF text) for the physics tests.

A planar body on two point feet, a rimless wheel, a point mass on three prismatic axes, a
horizontal double pendulum with an elbow stop. Units: kg, m, kg*m^2.
"""
import math


def _inertial(mass, iyy, ixx=None, izz=None, x=0.0, z=0.0):
    ixx = iyy if ixx is None else ixx
    izz = iyy if izz is None else izz
    return (f'<inertial><origin xyz="{x} 0 {z}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>')


def _planar_base(child: str) -> str:
    """
    Planar base chain world -> base_x -> base_z -> pitch.

    The joints: base_x prismatic in x, base_z prismatic in z, pitch continuous about y.
    """
    return f"""
  <link name="world"/><link name="carriage_x"/><link name="carriage_z"/>
  <joint name="base_x" type="prismatic"><parent link="world"/><child link="carriage_x"/>
    <axis xyz="1 0 0"/><limit lower="-100" upper="100" effort="0" velocity="100"/></joint>
  <joint name="base_z" type="prismatic"><parent link="carriage_x"/><child link="carriage_z"/>
    <axis xyz="0 0 1"/><limit lower="-100" upper="100" effort="0" velocity="100"/></joint>
  <joint name="pitch" type="continuous"><parent link="carriage_z"/><child link="{child}"/>
    <axis xyz="0 1 0"/></joint>"""


def _point(name, parent, x, z):
    return (f'<link name="{name}"/><joint name="{name}_joint" type="fixed">'
            f'<parent link="{parent}"/>'
            f'<child link="{name}"/><origin xyz="{x} 0 {z}"/></joint>')


def two_foot_body(mass=10.0, iyy=0.5, com_x=0.0, feet_x=(-0.3, 0.4), feet_z=-0.2) -> str:
    """
    Return a planar rigid body with point feet 'left' and 'right'.

    The body has base joints only; the feet are at (x, z) in the body frame, its centre of mass at
    (com_x, 0).
    """
    feet = ''.join(_point(n, 'body', x, feet_z) for n, x in zip(('left', 'right'), feet_x))
    return f"""<robot name="two_foot_body">{_planar_base('body')}
  <link name="body">{_inertial(mass, iyy, x=com_x)}</link>{feet}</robot>"""


def rimless_wheel(mass=1.0, radius_of_gyration=0.3, spoke_length=1.0, spokes=8) -> str:
    """
    Hub of mass m and inertia m r^2 about y on a planar x-z-pitch base.

    Its massless spokes have tips 'spoke0'.. that are contact frames, spoke k at angle 2 pi k / n
    from straight down.
    """
    iyy = mass * radius_of_gyration ** 2
    tips = ''.join(_point(f'spoke{k}', 'hub',
                          -spoke_length * math.sin(2 * math.pi * k / spokes),
                          -spoke_length * math.cos(2 * math.pi * k / spokes))
                   for k in range(spokes))
    return f"""<robot name="rimless_wheel">{_planar_base('hub')}
  <link name="hub">{_inertial(mass, iyy)}</link>{tips}</robot>"""


def point_mass_3d(mass=2.0) -> str:
    """
    Return a point mass on prismatic x, y, z axes (a boom-like 3-D model).

    Its contact frame is 'foot'.
    """
    return f"""<robot name="point_mass">
  <link name="world"/><link name="cx"/><link name="cy"/>
  <link name="foot">{_inertial(mass, 1e-3)}</link>
  <joint name="x" type="prismatic"><parent link="world"/><child link="cx"/>
    <axis xyz="1 0 0"/><limit lower="-100" upper="100" effort="0" velocity="100"/></joint>
  <joint name="y" type="prismatic"><parent link="cx"/><child link="cy"/>
    <axis xyz="0 1 0"/><limit lower="-100" upper="100" effort="0" velocity="100"/></joint>
  <joint name="z" type="prismatic"><parent link="cy"/><child link="foot"/>
    <axis xyz="0 0 1"/><limit lower="-100" upper="100" effort="0" velocity="100"/></joint>
</robot>"""


def horizontal_double_pendulum(elbow_lower=-0.5, elbow_upper=0.5) -> str:
    """
    Two uniform 1 m links turning about vertical axes (gravity does no work).

    The shoulder is continuous, the elbow has URDF position limits (the stop).
    """
    def link(name, mass):
        return (f'<link name="{name}">'
                f'{_inertial(mass, mass / 12.0, ixx=1e-4, izz=mass / 12.0, x=0.5)}'
                f'</link>')
    return f"""<robot name="pendulum">
  <link name="world"/>{link("upper", 2.0)}{link("lower", 1.0)}
  <joint name="shoulder" type="continuous"><parent link="world"/><child link="upper"/>
    <axis xyz="0 0 1"/><limit effort="10" velocity="100"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="{elbow_lower}" upper="{elbow_upper}" effort="10" velocity="100"/></joint>
</robot>"""


def painleve_rod(mass=1.0, length=1.0) -> str:
    """
    Painlevé's rod on a planar x-z-pitch base.

    The rod is uniform, of the given length (pitch 0: the rod vertical); its lower end 'tip' is a
    contact frame. A rod sliding on its tip at an angle phi from the ground with phi near atan(2)
    has no consistent sliding motion when the friction coefficient exceeds 4/3 (Painlevé 1895;
    Génot & Brogliato 1999).
    """
    half = 0.5 * length
    return f"""<robot name="painleve_rod">{_planar_base('rod')}
  <link name="rod">{_inertial(mass, mass * length ** 2 / 12.0)}</link>
  {_point('tip', 'rod', 0.0, -half)}</robot>"""


def ball(mass=1.0, radius=0.05) -> str:
    """
    Return a solid ball, inertia 2/5 m r^2 about y, on a planar x-z-pitch base.

    Its centre frame 'ball' is the contact frame (give it contact radius r).
    """
    return f"""<robot name="ball">{_planar_base('ball')}
  <link name="ball">{_inertial(mass, 0.4 * mass * radius ** 2)}</link></robot>"""


def planar_chain(n_links: int, link_length=0.5, hinge_z=None, link_mass=1.0) -> str:
    """
    Planar pendulum chain of ``n_links`` uniform rods from a world hinge.

    The rods hang in series from a world hinge at height ``hinge_z`` (default: 0.2 m above the
    hanging chain's length), each turning about y (1 link: a simple pendulum). Link k's frame is at
    its upper hinge, the rod along -z; contact frame 'tip' at the last rod's end.
    """
    rod = link_mass * link_length ** 2 / 12.0
    hinge_z = n_links * link_length + 0.2 if hinge_z is None else hinge_z
    links, joints = [], []
    parent = 'world'
    for k in range(n_links):
        links.append(f'<link name="rod{k}">'
                     f'{_inertial(link_mass, rod, ixx=rod, izz=1e-4, z=-link_length / 2)}</link>')
        origin = f'0 0 {hinge_z}' if k == 0 else f'0 0 {-link_length}'
        joints.append(f'<joint name="hinge{k}" type="continuous"><parent link="{parent}"/>'
                      f'<child link="rod{k}"/><origin xyz="{origin}"/><axis xyz="0 1 0"/>'
                      f'<limit effort="10" velocity="100"/></joint>')
        parent = f'rod{k}'
    return (f'<robot name="chain{n_links}"><link name="world"/>{"".join(links)}'
            f'{"".join(joints)}{_point("tip", parent, 0.0, -link_length)}</robot>')


def planar_tree(link_length=0.5, hinge_z=1.2) -> str:
    """
    Return a tree of three rods turning about y.

    'trunk' hangs from a world hinge, 'left' and 'right' hang from the trunk's lower end; contact
    frames 'left_tip' and 'right_tip'.
    """
    def rod(name, mass):
        i = mass * link_length ** 2 / 12.0
        return (f'<link name="{name}">'
                f'{_inertial(mass, i, ixx=i, izz=1e-4, z=-link_length / 2)}</link>')

    def hinge(name, parent, child, z):
        return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/>'
                f'<child link="{child}"/><origin xyz="0 0 {z}"/><axis xyz="0 1 0"/>'
                f'<limit effort="10" velocity="100"/></joint>')
    return f"""<robot name="tree"><link name="world"/>{rod("trunk", 2.0)}{rod("left", 1.0)}
  {rod("right", 0.5)}{hinge("trunk_hinge", "world", "trunk", hinge_z)}
  {hinge("left_hinge", "trunk", "left", -link_length)}
  {hinge("right_hinge", "trunk", "right", -link_length)}
  {_point("left_tip", "left", 0.0, -link_length)}{_point("right_tip", "right", 0.0, -link_length)}
</robot>"""


def free_box(mass=2.0, size=(0.4, 0.2, 0.1), feet=True) -> str:
    """
    Floating rigid box, with point contacts at its lower corners when ``feet``.

    A rigid box (no world link: a floating base under the ROS/Gazebo convention) with point
    contacts 'c0'..'c3' at its four lower corners when ``feet``.
    """
    a, b, c = size
    ixx, iyy, izz = (mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12,
                     mass * (a * a + b * b) / 12)
    corners = ''
    if feet:
        for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            corners += (f'<link name="c{k}"/><joint name="c{k}_joint" type="fixed">'
                        f'<parent link="box"/><child link="c{k}"/>'
                        f'<origin xyz="{sx * a / 2} {sy * b / 2} {-c / 2}"/></joint>')
    return (f'<robot name="box"><link name="box"><inertial><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'</link>{corners}</robot>')


#: the box of the link-collision cases (test_physics_link_collisions*.py,
#: bench/compare_link_collisions.py)
BOX_MASS_KG = 2.0
BOX_SIZE_M = (0.4, 0.2, 0.1)


def planar_box() -> str:
    """Return a 2 kg 0.4 x 0.2 x 0.1 m box on a planar x-z-pitch base, no contact frames."""
    a, b, c = BOX_SIZE_M
    m = BOX_MASS_KG
    inertial = _inertial(m, m * (a * a + c * c) / 12.0, m * (b * b + c * c) / 12.0,
                         m * (a * a + b * b) / 12.0)
    return f"""<robot name="box">{_planar_base('box')}
  <link name="box">{inertial}<collision><geometry><box size="{a} {b} {c}"/></geometry>
  </collision></link></robot>"""


def planar_wheel(radius=0.1, mass=1.0) -> str:
    """Return a solid cylinder (I = m r^2 / 2) with its axis along y on a planar x-z-pitch base."""
    inertial = _inertial(mass, 0.5 * mass * radius ** 2)
    return f"""<robot name="wheel">{_planar_base('wheel')}
  <link name="wheel">{inertial}<collision><origin rpy="{math.pi / 2} 0 0"/>
  <geometry><cylinder radius="{radius}" length="0.05"/></geometry></collision></link></robot>"""
