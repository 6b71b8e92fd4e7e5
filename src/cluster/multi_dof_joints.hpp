// Multi-dof joints inside clusters (cluster builder helpers, multi_dof_joints.cpp).
#pragma once

#include <string>

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn::detail {

/// Checks the multi-dof joint of body b inside constrained cluster c (uj: its URDF joint, may
/// be null): accepted in a loop cluster, where it is independent as a whole when marked
/// independent="true" (returns true) and dependent as a whole otherwise (false); throws
/// ModelError naming the joint inside a cluster of couplings and mimics.
bool checkMultiDofJoint(const ClusterModel& cm, const Cluster& c, int b, const UrdfJoint* uj);

/// How to fix a cluster whose independent set does not match its freedom, in both idioms: URDF+
/// marks the joints, the MJCF reader chooses them at qpos0 (loop_coordinates.cpp).
inline constexpr const char* kIndependentCountAdvice =
    "URDF+: mark exactly that many of its joints independent=\"true\"; MJCF (no such mark): the "
    "reader makes dependent the joints that span the equality constraints' Jacobian at qpos0 "
    "(docs/mjcf.md section 3), so a loop drawn open or at a singular pose at qpos0 miscounts: "
    "draw it closed and away from singular poses at qpos0, or cut the loop "
    "(ModelOptions::cutLoops, CDYN_LOAD_CUT_LOOPS, Python cut_loops=True, clusterdyn bench --cut)";

/// "" or a hint naming the multi-dof joint that carries a null direction of the dependent
/// columns of cluster k's K (in data): a direction without a coordinate (a rod's idle spin).
std::string multiDofFreeDirectionHint(const ClusterModel& cm, const ClusterData& data, int k);

}  // namespace clusterdyn::detail
