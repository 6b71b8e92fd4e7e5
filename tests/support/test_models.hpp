// Small URDF models written inline, shared by the C++ tests (tests/) and the C API tests
// (capi/tests/). Header-only, no dependency.
#pragma once

namespace clusterdyn::support {

/// A turntable (revolute about z) carrying a slider (prismatic along (0.6, 0, 0.8)) with a 2 kg
/// block and a tool frame 1e308 m out along x: huge but finite slider positions make the mass
/// matrix (m (0.6 q)^2), the potential energy (m g 0.8 q) and the tool placement overflow.
inline constexpr const char* kSliderUrdf = R"(<robot name="slider">
  <link name="base"/>
  <link name="table"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="block"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="turn" type="continuous"><parent link="base"/><child link="table"/><axis xyz="0 0 1"/></joint>
  <joint name="slide" type="prismatic"><parent link="table"/><child link="block"/><axis xyz="0.6 0 0.8"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="block"/><child link="tool"/><origin xyz="1e308 0 0"/></joint>
</robot>)";

/// A double pendulum with both joints about the vertical z axis (so g(q) = 0): link1 (Izz 0.01,
/// centre of mass on joint 1), link2 (1 kg, Izz 0.2) with its centre of mass on joint 2's axis,
/// 0.1 m from joint 1. M = [[0.01 + 0.2 + 1 * 0.1^2, 0.2], [0.2, 0.2]] for every q.
inline constexpr const char* kVerticalDoublePendulumUrdf =
    R"(<robot name="vertical_double_pendulum">
  <link name="base_link"/>
  <link name="link1"><inertial><mass value="0.5"/><inertia ixx="0.02" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="link2"><inertial><mass value="1"/><inertia ixx="0.3" iyy="0.3" izz="0.2" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="joint1" type="continuous"><parent link="base_link"/><child link="link1"/><axis xyz="0 0 1"/></joint>
  <joint name="joint2" type="continuous"><parent link="link1"/><child link="link2"/><origin xyz="0.1 0 0"/><axis xyz="0 0 1"/></joint>
</robot>)";

}  // namespace clusterdyn::support
