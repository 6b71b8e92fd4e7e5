#!/usr/bin/env python3
"""Generates the seed-000 benchmark mechanisms as URDF+ files (standard library only).

Families (docs/urdfplus.md describes the URDF+ elements used):

  Fig. 9 sub-mechanisms -- a floating base with B identical serial branches, each a chain of D
  copies of one sub-mechanism (file <prefix>_branch_B_D.urdf, tree approximation approx_<...>):
    revolute       link + geared rotor on the link's parent   (2 bodies, 1 coupling, 1 dof)
    revolute_pair  two links + two rotors on the pair's parent; the second rotor drives the
                   second link through a belt, ratio * (q_a + q_b) = q_rotor_b
                                                               (4 bodies, 2 couplings, 2 dofs)
    four_bar       crank-rocker four-bar closed by an implicit revolute <loop>; the next
                   sub-mechanism is mounted on the rocker          (3 bodies, 1 loop, 1 dof)
  Fig. 11 loop locality -- two planar chains of depth N on a fixed base joined at the
  d-th links (file depthN/loop_sizeK.urdf, tree approximation approx_loop_sizeK.urdf):
    parallel_explicit  a transmission <coupling> between link_1_d and link_2_d; loop size K = 2d
    parallel_implicit  a connecting rod on link_1_d closed onto link_2_d by a revolute <loop>;
                       loop size K = 2d + 1

Every implicit loop closes at q = 0 (the nominal angles are in the joint origins) at a regular,
non-parallelogram configuration, so the independent coordinates parametrize the loop there.
Tree approximations drop the chords: rotors are removed (their mass and own inertia go to the
body carrying them, their reflected armature r^2 J goes to the driven link as a thin-disc
inertia), a four-bar becomes one rigid body (its three bars frozen at the nominal pose) on the
crank joint, and the parallel chains lose the coupling / connecting rod.

Usage:
  generate_benchmark_models.py --family revolute --branches 2 --depth 3 --out DIR
      -> DIR/revolute_rotor_branch_2_3.urdf and DIR/approx_revolute_rotor_branch_2_3.urdf
  generate_benchmark_models.py --family parallel_implicit --depth 5 --loop-size 7 --out DIR
      -> DIR/parallel_implicit_depth5_loop_size7.urdf and DIR/approx_parallel_implicit_...
  generate_benchmark_models.py --all DIR
      -> the standard sweep in the seed-000 folder layout:
         DIR/variable_{revolute,revolute_pair,four_bar}_urdf/<prefix>_branch_B_D.urdf with
         B in {1, 2, 4, 6}, D in 1..10 (1..7 for revolute_pair), and
         DIR/parallel_chains/{Explicit,Implicit}/depthN/loop_sizeK.urdf with N in {5, 10, 20, 40};
         every file with its approx_ twin.
"""

import argparse
import math
import os
import sys
import xml.etree.ElementTree as ET

# --------------------------------------------------------------------------------------------
# Small rigid-body helpers
# --------------------------------------------------------------------------------------------


def matmul(a, b):
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3))
                 for i in range(3))


def matvec(a, v):
    return tuple(sum(a[i][k] * v[k] for k in range(3)) for i in range(3))


def transpose(a):
    return tuple(tuple(a[j][i] for j in range(3)) for i in range(3))


def rot_y(angle):
    c, s = math.cos(angle), math.sin(angle)
    return ((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c))


def rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0))


class Pose:
    """Rigid transform: rotation r (3x3) and translation p, with URDF rpy kept for printing."""

    def __init__(self, p=(0.0, 0.0, 0.0), yaw=0.0, pitch=0.0):
        self.p = tuple(float(x) for x in p)
        self.yaw, self.pitch = yaw, pitch  # URDF rpy = (0, pitch, yaw): R = Rz(yaw) Ry(pitch)
        self.r = matmul(rot_z(yaw), rot_y(pitch))

    def compose(self, other):
        out = Pose()
        out.r = matmul(self.r, other.r)
        out.p = tuple(a + b for a, b in zip(matvec(self.r, other.p), self.p))
        out.yaw = out.pitch = None  # a composed pose is only used numerically
        return out

    def inverse(self):
        out = Pose()
        out.r = transpose(self.r)
        out.p = tuple(-x for x in matvec(out.r, self.p))
        out.yaw = out.pitch = None
        return out


def box_inertia(m, lx, ly, lz):
    return (m / 12.0 * (ly * ly + lz * lz), m / 12.0 * (lx * lx + lz * lz),
            m / 12.0 * (lx * lx + ly * ly))


def disc_inertia(m, radius, thickness):
    """Solid cylinder about its own y axis (the joint axis of every rotor here)."""
    axial = 0.5 * m * radius * radius
    transverse = m / 12.0 * (3.0 * radius * radius + thickness * thickness)
    return (transverse, axial, transverse)


def diag(d):
    return ((d[0], 0.0, 0.0), (0.0, d[1], 0.0), (0.0, 0.0, d[2]))


class Piece:
    """A rigid mass element: mass, centre of mass and inertia about it, in its body's frame."""

    def __init__(self, mass, com, inertia):
        self.mass = mass
        self.com = tuple(com)
        self.inertia = inertia if isinstance(inertia[0], tuple) else diag(inertia)

    def moved(self, pose):
        """The same element expressed in the frame in which `pose` is given."""
        return Piece(self.mass, [a + b for a, b in zip(matvec(pose.r, self.com), pose.p)],
                     matmul(pose.r, matmul(self.inertia, transpose(pose.r))))


def lump(pieces):
    mass = sum(p.mass for p in pieces)
    com = [sum(p.mass * p.com[i] for p in pieces) / mass for i in range(3)] if mass > 0 else \
        [0.0, 0.0, 0.0]
    inertia = [[0.0] * 3 for _ in range(3)]
    for p in pieces:
        d = [p.com[i] - com[i] for i in range(3)]
        dd = sum(x * x for x in d)
        for i in range(3):
            for j in range(3):
                inertia[i][j] += p.inertia[i][j] + p.mass * ((dd if i == j else 0.0) - d[i] * d[j])
    return mass, com, inertia


# --------------------------------------------------------------------------------------------
# In-memory URDF+ description and writer
# --------------------------------------------------------------------------------------------
def fmt(x):
    if abs(x) < 5e-16:
        return "0"
    return "%.15g" % x


class Robot:
    def __init__(self, name, description):
        self.name = name
        self.description = description
        self.links = []  # [name, [Piece]] (empty list: massless link)
        self.pieces = {}
        self.elements = []  # ("joint"|"coupling"|"loop", dict)

    def link(self, name, pieces=()):
        if name in self.pieces:
            raise ValueError("duplicate link " + name)
        self.pieces[name] = list(pieces)
        self.links.append(name)

    def add_piece(self, link, piece):
        self.pieces[link].append(piece)

    def joint(self, name, jtype, parent, child, pose=None, axis=(0, 1, 0), independent=None,
              limit=None):
        self.elements.append(("joint", dict(name=name, type=jtype, parent=parent, child=child,
                                            pose=pose or Pose(), axis=axis,
                                            independent=independent, limit=limit)))

    def coupling(self, name, predecessor, successor, ratio):
        self.elements.append(("coupling", dict(name=name, predecessor=predecessor,
                                               successor=successor, ratio=ratio)))

    def loop(self, name, predecessor, p_origin, successor, s_origin, axis=(0, 1, 0)):
        self.elements.append(("loop", dict(name=name, predecessor=predecessor, p=p_origin,
                                           successor=successor, s=s_origin, axis=axis)))

    def text(self):
        out = ['<?xml version="1.0"?>', "<!--"]
        out += ["  " + line if line else "" for line in self.description]
        out += ["  Generated by clusterdyn tools/generate_benchmark_models.py; do not edit.", "-->",
                '<robot name="%s">' % self.name]
        for name in self.links:
            pieces = self.pieces[name]
            if not pieces:
                out.append('  <link name="%s"/>' % name)
                continue
            m, c, inertia = lump(pieces)
            out += ['  <link name="%s">' % name, "    <inertial>",
                    '      <origin xyz="%s"/>' % " ".join(fmt(x) for x in c),
                    '      <mass value="%s"/>' % fmt(m),
                    '      <inertia ixx="%s" ixy="%s" ixz="%s" iyy="%s" iyz="%s" izz="%s"/>' % (
                        fmt(inertia[0][0]), fmt(inertia[0][1]), fmt(inertia[0][2]),
                        fmt(inertia[1][1]), fmt(inertia[1][2]), fmt(inertia[2][2])),
                    "    </inertial>", "  </link>"]
        for kind, e in self.elements:
            if kind == "joint":
                attrs = 'name="%s" type="%s"' % (e["name"], e["type"])
                if e["independent"] is not None:
                    attrs += ' independent="%s"' % ("true" if e["independent"] else "false")
                out += ["  <joint %s>" % attrs, '    <parent link="%s"/>' % e["parent"],
                        '    <child link="%s"/>' % e["child"], "    " + origin_xml(e["pose"])]
                if e["type"] not in ("fixed", "floating"):
                    out.append('    <axis xyz="%s"/>' % " ".join(fmt(x) for x in e["axis"]))
                if e["limit"]:
                    out.append('    <limit lower="%s" upper="%s" effort="%s" velocity="%s"/>'
                               % tuple(fmt(x) for x in e["limit"]))
                out.append("  </joint>")
            elif kind == "coupling":
                out += ['  <coupling name="%s">' % e["name"],
                        '    <predecessor link="%s"/>' % e["predecessor"],
                        '    <successor link="%s"/>' % e["successor"],
                        '    <ratio value="%s"/>' % fmt(e["ratio"]), "  </coupling>"]
            else:
                out += ['  <loop name="%s" type="revolute">' % e["name"],
                        '    <predecessor link="%s">' % e["predecessor"],
                        "      " + origin_xml(e["p"]), "    </predecessor>",
                        '    <successor link="%s">' % e["successor"],
                        "      " + origin_xml(e["s"]), "    </successor>",
                        '    <axis xyz="%s"/>' % " ".join(fmt(x) for x in e["axis"]), "  </loop>"]
        out += ["</robot>", ""]
        return "\n".join(out)


def origin_xml(pose):
    xyz = " ".join(fmt(x) for x in pose.p)
    if pose.yaw is None:
        raise ValueError("joint origins must be simple poses")
    if pose.yaw == 0.0 and pose.pitch == 0.0:
        return '<origin xyz="%s"/>' % xyz
    return '<origin xyz="%s" rpy="0 %s %s"/>' % (xyz, fmt(pose.pitch), fmt(pose.yaw))


# --------------------------------------------------------------------------------------------
# Fig. 9 families: floating base, B branches of D sub-mechanisms
# --------------------------------------------------------------------------------------------
LINK_LENGTH = 0.4
LINK = Piece(1.0, (LINK_LENGTH / 2, 0, 0), box_inertia(1.0, LINK_LENGTH, 0.04, 0.04))
ROTOR_MASS, ROTOR_RADIUS, ROTOR_THICKNESS = 0.05, 0.03, 0.02
ROTOR = Piece(ROTOR_MASS, (0, 0, 0), disc_inertia(ROTOR_MASS, ROTOR_RADIUS, ROTOR_THICKNESS))
GEAR_RATIO = 8.0
LIMIT = (-3.0, 3.0, 30.0, 10.0)

# Four-bar sub-mechanism (crank-rocker, Grashof: 0.12 + 0.34 <= 0.32 + 0.26), plane x-z, axes y.
FB_CRANK, FB_COUPLER, FB_ROCKER, FB_GROUND = 0.12, 0.32, 0.26, 0.34
FB_CRANK_ANGLE = math.radians(90.0)


def four_bar_angles():
    """Nominal closed angles (from +x toward +z) of crank, coupler and rocker."""
    a, b, c, g = FB_CRANK, FB_COUPLER, FB_ROCKER, FB_GROUND
    ax, az = a * math.cos(FB_CRANK_ANGLE), a * math.sin(FB_CRANK_ANGLE)
    dx, dz = g - ax, -az  # from the crank tip to the rocker pivot
    d = math.hypot(dx, dz)
    along = (b * b - c * c + d * d) / (2 * d)
    h = math.sqrt(b * b - along * along)
    bx = ax + along * dx / d + h * dz / d  # the "upper" assembly
    bz = az + along * dz / d - h * dx / d
    if bz < 0:
        bx, bz = ax + along * dx / d - h * dz / d, az + along * dz / d + h * dx / d
    return FB_CRANK_ANGLE, math.atan2(bz - az, bx - ax), math.atan2(bz, bx - g)


def bar_piece(mass, length):
    return Piece(mass, (length / 2, 0, 0), box_inertia(mass, length, 0.03, 0.03))


FB_PIECES = (bar_piece(0.2, FB_CRANK), bar_piece(0.4, FB_COUPLER), bar_piece(0.35, FB_ROCKER))


def armature_piece(driven_com, ratio):
    """Reflected rotor inertia r^2 J as a massless thin disc about the joint (y) axis."""
    a = ratio * ratio * 0.5 * ROTOR_MASS * ROTOR_RADIUS ** 2
    return Piece(0.0, driven_com, (a / 2, a, a / 2))


def add_revolute(robot, tag, parent, mount, approx):
    """Link + geared rotor. Returns (output link, pose of the next mount in it)."""
    link, rotor = "link_" + tag, "rotor_" + tag
    robot.link(link, [LINK] + ([armature_piece(LINK.com, GEAR_RATIO)] if approx else []))
    robot.joint("joint_" + tag, "revolute", parent, link, mount, independent=True, limit=LIMIT)
    if approx:
        robot.add_piece(parent, ROTOR.moved(mount))
    else:
        robot.link(rotor, [ROTOR])
        robot.joint("rotor_joint_" + tag, "continuous", parent, rotor, mount, independent=False)
        robot.coupling("gear_" + tag, link, rotor, GEAR_RATIO)
    return link, Pose((LINK_LENGTH, 0, 0))


def add_revolute_pair(robot, tag, parent, mount, approx):
    """Two links, two rotors on the pair's parent; gear on the first, belt on the second."""
    la, lb = "link_%s_a" % tag, "link_%s_b" % tag
    ra, rb = "rotor_%s_a" % tag, "rotor_%s_b" % tag
    arm = [armature_piece(LINK.com, GEAR_RATIO)] if approx else []
    robot.link(la, [LINK] + arm)
    robot.joint("joint_%s_a" % tag, "revolute", parent, la, mount, independent=True, limit=LIMIT)
    robot.link(lb, [LINK] + arm)
    robot.joint("joint_%s_b" % tag, "revolute", la, lb, Pose((LINK_LENGTH, 0, 0)),
                independent=True, limit=LIMIT)
    # The second rotor sits beside the first one on the same shaft line.
    mount_b = mount.compose(Pose((0, 0.04, 0)))
    mount_b.yaw, mount_b.pitch = mount.yaw, mount.pitch
    if approx:
        robot.add_piece(parent, ROTOR.moved(mount))
        robot.add_piece(parent, ROTOR.moved(mount_b))
    else:
        robot.link(ra, [ROTOR])
        robot.joint("rotor_joint_%s_a" % tag, "continuous", parent, ra, mount, independent=False)
        robot.link(rb, [ROTOR])
        robot.joint("rotor_joint_%s_b" % tag, "continuous", parent, rb, mount_b,
                    independent=False)
        robot.coupling("gear_%s_a" % tag, la, ra, GEAR_RATIO)
        # Nearest common ancestor of link_b and rotor_b is the parent: the path holds both
        # link joints, so this is the belt ratio * (qd_a + qd_b) = qd_rotor_b.
        robot.coupling("belt_%s_b" % tag, lb, rb, GEAR_RATIO)
    return lb, Pose((LINK_LENGTH, 0, 0))


def add_four_bar(robot, tag, parent, mount, approx):
    """Crank (independent) + coupler + rocker (dependent), implicit revolute loop. The mount is
    the ground frame of the four-bar: crank pivot at its origin, rocker pivot at x = ground."""
    t2, t3, t4 = four_bar_angles()
    crank, coupler, rocker = "crank_" + tag, "coupler_" + tag, "rocker_" + tag
    crank_pose = Pose(mount.p, mount.yaw, mount.pitch - t2)
    pivot = tuple(a + b for a, b in zip(matvec(mount.r, (FB_GROUND, 0, 0)), mount.p))
    rocker_pose = Pose(pivot, mount.yaw, mount.pitch - t4)
    coupler_in_crank = Pose((FB_CRANK, 0, 0), 0.0, -(t3 - t2))
    next_mount = Pose((FB_ROCKER, 0, 0))
    if approx:
        # One rigid body on the crank joint: the three bars frozen at the nominal pose.
        rocker_in_crank = crank_pose.inverse().compose(rocker_pose)
        robot.link(crank, [FB_PIECES[0], FB_PIECES[1].moved(coupler_in_crank),
                           FB_PIECES[2].moved(rocker_in_crank)])
        robot.joint("crank_joint_" + tag, "continuous", parent, crank, crank_pose,
                    independent=True)
        # The next stage hangs where the rocker tip is at the nominal pose (a pure y rotation).
        nxt = rocker_in_crank.compose(next_mount)
        return crank, Pose(nxt.p, 0.0, math.atan2(nxt.r[0][2], nxt.r[0][0]))
    robot.link(crank, [FB_PIECES[0]])
    robot.joint("crank_joint_" + tag, "continuous", parent, crank, crank_pose, independent=True)
    robot.link(coupler, [FB_PIECES[1]])
    robot.joint("coupler_joint_" + tag, "continuous", crank, coupler, coupler_in_crank,
                independent=False)
    robot.link(rocker, [FB_PIECES[2]])
    robot.joint("rocker_joint_" + tag, "continuous", parent, rocker, rocker_pose,
                independent=False)
    robot.loop("loop_" + tag, coupler, Pose((FB_COUPLER, 0, 0)), rocker, Pose((FB_ROCKER, 0, 0)))
    return rocker, next_mount


SUBMECHANISMS = {
    # family: (builder, file prefix, robot name, description)
    "revolute": (add_revolute, "revolute_rotor",
                 "link + geared rotor (ratio %g) per stage: 2 bodies, 1 coupling, 1 dof"
                 % GEAR_RATIO),
    "revolute_pair": (add_revolute_pair, "revolute_rotor_pair",
                      "two links + gear rotor + belt rotor per stage (ratio %g): 4 bodies, "
                      "2 couplings, 2 dofs" % GEAR_RATIO),
    "four_bar": (add_four_bar, "four_bar",
                 "crank-rocker four-bar per stage (crank %g, coupler %g, rocker %g, ground %g): "
                 "3 bodies, 1 revolute loop, 1 dof" % (FB_CRANK, FB_COUPLER, FB_ROCKER, FB_GROUND)),
}


def branched(family, branches, depth, approx):
    builder, prefix, what = SUBMECHANISMS[family]
    name = ("approx_" if approx else "") + "%s_branch_%d_%d" % (prefix, branches, depth)
    desc = ["Chignoli et al. 2023, Fig. 9 benchmark: floating base with %d identical branch(es), each a chain "
            "of %d stage(s);" % (branches, depth), what + "."]
    if approx:
        desc.append("Tree approximation: chords removed (see the generator's docstring).")
    robot = Robot(name, desc)
    robot.link("world")
    robot.link("base", [Piece(4.0, (0, 0, 0), box_inertia(4.0, 0.3, 0.3, 0.3))])
    robot.joint("floating_base", "floating", "world", "base")
    for b in range(1, branches + 1):
        yaw = 2.0 * math.pi * (b - 1) / branches
        mount = Pose((0.2 * math.cos(yaw), 0.2 * math.sin(yaw), 0.0), yaw, 0.0)
        parent = "base"
        for d in range(1, depth + 1):
            parent, mount = builder(robot, "%d_%d" % (b, d), parent, mount, approx)
    return name, robot


# --------------------------------------------------------------------------------------------
# Fig. 11: two chains of depth N joined at the d-th links
# --------------------------------------------------------------------------------------------
CHAIN_LENGTH = 0.5
CHAIN_SPACING = 0.6
CHAIN_LINK = Piece(0.3, (0, 0, CHAIN_LENGTH / 2), box_inertia(0.3, 0.03, 0.03, CHAIN_LENGTH))
ROD_SUCCESSOR_FRACTION = 0.8  # the rod meets link_2_d at 80 % of its length: no parallelogram
TRANSMISSION_RATIO = 1.0


def parallel(kind, depth, loop_size, approx, flat_name=False):
    implicit = kind == "parallel_implicit"
    d = (loop_size - 1) // 2 if implicit else loop_size // 2
    if depth < 1:
        raise ValueError("--depth must be >= 1")
    if implicit and (loop_size % 2 != 1 or not 1 <= d <= depth):
        raise ValueError("parallel_implicit: the loop size must be odd, 3 <= K <= 2*depth+1")
    if not implicit and (loop_size % 2 != 0 or not 1 <= d <= depth):
        raise ValueError("parallel_explicit: the loop size must be even, 2 <= K <= 2*depth")
    name = ("approx_" if approx else "") + (
        "%s_depth%d_loop_size%d" % (kind, depth, loop_size) if flat_name
        else "loop_size%d" % loop_size)
    robot_name = "parallel_chain_%s_d%d_k%d" % ("imp" if implicit else "exp", depth, loop_size)
    if approx:
        robot_name = "approx_" + robot_name
    desc = ["Chignoli et al. 2023, Fig. 11 benchmark: two planar chains (x-z plane, axes y) of depth %d on a "
            "fixed base," % depth]
    if implicit:
        desc.append("joined by a connecting rod from the tip of link_1_%d to link_2_%d (revolute "
                    "<loop>), loop size %d." % (d, d, loop_size))
        desc.append("Dependent joints: joint_2_1 and rod_joint. Closed at q = 0.")
    else:
        desc.append("joined by a transmission <coupling> (ratio %g) between link_1_%d and "
                    "link_2_%d, loop size %d." % (TRANSMISSION_RATIO, d, d, loop_size))
        desc.append("Dependent joint: joint_2_%d." % d)
    if approx:
        desc.append("Tree approximation: the chord%s removed." %
                    (" and the connecting rod are" if implicit else " is"))
    robot = Robot(robot_name, desc)
    robot.link("base")
    # Height of the loop point on chain 2 and the rod pose closing the loop at q = 0.
    h1 = d * CHAIN_LENGTH
    h2 = (d - 1 + ROD_SUCCESSOR_FRACTION) * CHAIN_LENGTH
    rod_dx, rod_dz = CHAIN_SPACING, h2 - h1
    rod_length = math.hypot(rod_dx, rod_dz)
    rod_angle = math.atan2(rod_dz, rod_dx)
    for i in range(1, depth + 1):
        for chain in (1, 2):
            link = "link_%d_%d" % (chain, i)
            parent = "base" if i == 1 else "link_%d_%d" % (chain, i - 1)
            xyz = ((CHAIN_SPACING if chain == 2 else 0.0, 0, 0) if i == 1
                   else (0, 0, CHAIN_LENGTH))
            dependent = not approx and ((implicit and chain == 2 and i == 1) or
                                        (not implicit and chain == 2 and i == d))
            robot.link(link, [CHAIN_LINK])
            robot.joint("joint_%d_%d" % (chain, i), "revolute", parent, link, Pose(xyz),
                        independent=not dependent, limit=LIMIT)
        if i == d and not approx:
            if implicit:
                robot.link("rod", [Piece(0.2, (rod_length / 2, 0, 0),
                                         box_inertia(0.2, rod_length, 0.03, 0.03))])
                robot.joint("rod_joint", "continuous", "link_1_%d" % d, "rod",
                            Pose((0, 0, CHAIN_LENGTH), 0.0, -rod_angle), independent=False)
                robot.loop("rod_loop", "rod", Pose((rod_length, 0, 0)), "link_2_%d" % d,
                           Pose((0, 0, ROD_SUCCESSOR_FRACTION * CHAIN_LENGTH)))
            else:
                robot.coupling("transmission", "link_1_%d" % d, "link_2_%d" % d,
                               TRANSMISSION_RATIO)
    return name, robot


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------
def write(robot, path):
    text = robot.text()
    ET.fromstring(text.split("\n", 1)[1])  # well-formed XML or raise
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def generate(family, out, branches=None, depth=None, loop_size=None, approx=True,
             flat_name=True):
    """Writes one model (and its approximation) into `out`; returns the paths. With flat_name,
    parallel-chain files are named <family>_depthN_loop_sizeK.urdf, otherwise loop_sizeK.urdf
    (the seed-000 name inside <Explicit|Implicit>/depthN/)."""
    paths = []
    variants = (False, True) if approx else (False,)
    for ap in variants:
        if family in SUBMECHANISMS:
            if branches is None or depth is None or branches < 1 or depth < 1:
                raise ValueError("--family %s needs --branches B >= 1 and --depth D >= 1" % family)
            name, robot = branched(family, branches, depth, ap)
        else:
            if depth is None or loop_size is None:
                raise ValueError("--family %s needs --depth N and --loop-size K" % family)
            name, robot = parallel(family, depth, loop_size, ap, flat_name)
        paths.append(write(robot, os.path.join(out, name + ".urdf")))
    return paths


SWEEP_BRANCHES = (1, 2, 4, 6)
SWEEP_DEPTH = {"revolute": 10, "revolute_pair": 7, "four_bar": 10}
SWEEP_FOLDER = {"revolute": "variable_revolute_urdf",
                "revolute_pair": "variable_revolute_pair_urdf",
                "four_bar": "variable_four_bar_urdf"}
# Loop depth d (link index of the junction) per chain depth; K = 2d (explicit), 2d+1 (implicit).
SWEEP_PARALLEL = {5: (1, 2, 3, 4, 5), 10: (1, 2, 4, 6, 8), 20: (1, 2, 4, 8, 12, 16, 20),
                  40: (1, 2, 4, 8, 16, 24, 32, 40)}


def generate_all(out):
    paths = []
    for family, folder in SWEEP_FOLDER.items():
        for b in SWEEP_BRANCHES:
            for d in range(1, SWEEP_DEPTH[family] + 1):
                paths += generate(family, os.path.join(out, folder), b, d)
    for family, folder in (("parallel_explicit", "Explicit"), ("parallel_implicit", "Implicit")):
        for n, ds in SWEEP_PARALLEL.items():
            for d in ds:
                k = 2 * d + 1 if family == "parallel_implicit" else 2 * d
                paths += generate(family, os.path.join(out, "parallel_chains", folder,
                                                       "depth%d" % n), depth=n, loop_size=k,
                                  flat_name=False)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Without --all, --family and --out are required; both the URDF+ file and its tree "
               "approximation are written unless --no-approx is given.")
    parser.add_argument("--family", choices=sorted(list(SUBMECHANISMS) +
                                                   ["parallel_explicit", "parallel_implicit"]))
    parser.add_argument("--branches", type=int, help="B: number of branches (Fig. 9 families)")
    parser.add_argument("--depth", type=int,
                        help="D: stages per branch (Fig. 9) or N: chain depth (Fig. 11)")
    parser.add_argument("--loop-size", type=int,
                        help="K: loop size (Fig. 11): 2d explicit, 2d+1 implicit")
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--no-approx", action="store_true",
                        help="do not write the tree approximation")
    parser.add_argument("--all", metavar="DIR",
                        help="write the standard sweep into DIR in the seed-000 folder layout")
    parser.add_argument("--quiet", action="store_true", help="do not list the files written")
    args = parser.parse_args(argv)
    try:
        if args.all:
            paths = generate_all(args.all)
        else:
            if not args.family or not args.out:
                parser.error("--family and --out are required (or use --all DIR)")
            if args.family in SUBMECHANISMS and args.loop_size is not None:
                parser.error("--loop-size applies to the parallel_* families only")
            if args.family not in SUBMECHANISMS and args.branches is not None:
                parser.error("--branches applies to revolute, revolute_pair and four_bar only")
            paths = generate(args.family, args.out, args.branches, args.depth, args.loop_size,
                             approx=not args.no_approx)
    except ValueError as e:
        parser.error(str(e))
    if not args.quiet:
        for p in paths:
            print(p)
    else:
        print("%d files written" % len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
