// Contact scenes shared by the contact tools (tools/contact/) and the contact tests: the bundled
// loop robot cd_parallel_walker and the mini cheetah of the URDF+ models, each on four sphere /
// point feet on the ground, in closed states built from independent coordinates.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::scenes {

/// cd_parallel_walker (floating trunk, four parallelogram legs): loops embedded, or cut
/// (cutLoops) for the bilateral-row variant.
inline ClusterModel walkerModel(const std::string& modelsDir, bool cutLoops) {
  ModelOptions o;
  o.floatingBase = true;
  o.cutLoops = cutLoops;
  return loadModel(modelsDir + "/cd_parallel_walker.urdf", o);
}

/// Its four sphere feet (radius 0.02 m, centre 0.05 m below the coupler's middle).
inline void addWalkerFeet(const ClusterModel& cm, ContactProblem& p, double mu) {
  for (const char* leg : {"lf", "rf", "lh", "rh"})
    p.addGroundFoot(std::string(leg) + "_foot", cm.treeModel.bodyId(std::string(leg) + "_coupler"),
                    Vec3(0.03, 0.0, -0.05), 0.02, mu);
}

/// The mini cheetah with its exact rotor transmissions (URDF+ loops; floating base from the URDF).
inline ClusterModel cheetahModel(const std::string& urdfplusDir) {
  return loadModel(urdfplusDir + "/mini_cheetah.urdf");
}

/// Its four point feet at the end of the lower legs (0.19 m along -z of the knee links); skip:
/// a leg ("FR", ...) left out.
inline void addCheetahFeet(const ClusterModel& cm, ContactProblem& p, double mu,
                           const std::string& skip = "") {
  for (const char* leg : {"FR", "FL", "HR", "HL"})
    if (leg != skip)
      p.addGroundFoot(std::string(leg) + "_foot",
                      cm.treeModel.bodyId(std::string(leg) + "_knee_link"), Vec3(0.0, 0.0, -0.19),
                      0.0, mu);
}

/// Index of an independent position / velocity coordinate by name (throws if absent).
inline int yIndex(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  throw std::runtime_error("no independent coordinate " + name);
}

/// Independent positions of a floating robot upright at base height z: quaternion identity
/// (x, y, z, w in y[3..6]), every other coordinate zero.
inline VecX uprightAt(const ClusterModel& cm, double z) {
  VecX y = VecX::Zero(cm.nyq);
  y[2] = z;
  y[6] = 1.0;
  return y;
}

/// Independent positions of the cheetah standing (hip -0.8 rad, knee 1.6 rad) at base height
/// z; quaternion identity.
inline VecX cheetahStanding(const ClusterModel& cm, double z) {
  VecX y = uprightAt(cm, z);
  for (const char* leg : {"FR", "FL", "HR", "HL"}) {
    y[yIndex(cm.independentPositionNames, std::string(leg) + "_abad_to_hip_j")] = -0.8;
    y[yIndex(cm.independentPositionNames, std::string(leg) + "_hip_to_knee_j")] = 1.6;
  }
  return y;
}

/// Lowers (or raises) the base of a closed state so that the lowest foot of `problem` is at gap
/// `gap` (negative: penetration): one assembly to read the gaps, then a shift of y[2].
inline Status placeOnGround(const ClusterModel& cm, ClusterData& data,
                            const ContactProblem& problem, ContactData& cd, VecX& y,
                            const VecX& ydot, double gap) {
  Status s = independentToSpanning(cm, data, y, ydot);
  if (s != Status::Ok) return s;
  StepSettings st;
  st.activationDistance = 1e9;
  s = assembleContactProblem(cm, data, problem, cd, data.q, data.v, VecX::Zero(cm.ny), st);
  if (s != Status::Ok) return s;
  y[2] -= cd.gap.minCoeff() - gap;
  return independentToSpanning(cm, data, y, ydot);
}

}  // namespace clusterdyn::scenes
