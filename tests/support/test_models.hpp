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

}  // namespace clusterdyn::support
