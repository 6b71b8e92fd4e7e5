// Constraint-embedding articulated-body algorithm (Chignoli et al. 2023, Alg. 1): the three
// passes over the cluster tree; the per-cluster steps and their equations are in
// cluster_aba_step.cpp.
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "cluster/cluster_workspace.hpp"
#include "cluster/loop_closure.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace {

Status ceAbaCore(const ClusterModel& cm, ClusterData& data, ConstVecRef q, ConstVecRef v,
                 const double* tau, detail::ForceCoordinates forces, const Force* fext) {
  Data& td = data.treeData;
  const int ncl = static_cast<int>(cm.clusters.size());
  // Without external forces: the rotors of clusters with one to three coordinates in their
  // output body's frame (their entries of treeData deferred to completeRotorBodies) and the flat
  // scalar clusters' fused steps.
  const detail::RotorFrame frame = fext ? detail::RotorFrame::Body : detail::RotorFrame::Output;
  ClusterScratch& scr = detail::fullScratch(data);
  detail::discardDeferredRotors(scr);
  // Pass 1: kinematics, G and g, inertias, bias forces, cluster motion subspaces.
  const std::vector<ClusterWorkspace>& ws = scr.clusters;
  for (int k = 0; k < ncl; ++k) {
    if (frame == detail::RotorFrame::Output && ws[k].flatScalar) {
      CDYN_TRY(detail::flatClusterKinematics(cm, data, k, q, v.data(), detail::StateCheck::Check));
      continue;
    }
    CDYN_TRY(detail::clusterVelocityStep(cm, data, k, q, v.data(), detail::Bias::Compute,
                                         detail::StateCheck::Check, detail::OutputPoses::All,
                                         frame));
    detail::clusterInertiaAndBiasStep(cm, data, k, fext, frame);
    if (frame == detail::RotorFrame::Output) detail::clusterRotorBias(cm, data, k, v.data());
  }
  // Joint dynamics (MJCF springs, dampers, armature in loops): spanning forces.
  tau = detail::withJointDynamicsForces(cm, data, q.data(), v.data(), tau, forces);
  // Pass 2: articulated inertias, leaf clusters to root (eq. 53, 58-60); a D singular to
  // working precision (pivot below td.pivotFloor, kSingularPivot) fails.
  for (int k = ncl - 1; k >= 0; --k)
    CDYN_TRY(detail::clusterArticulatedStep(cm, data, k, tau, forces, frame));
  // Pass 3: accelerations, root cluster to leaves (eq. 53, 61).
  const Motion a0 = detail::gravityAcceleration(cm.treeModel);
  for (int k = 0; k < ncl; ++k) {
    const int o = cm.clusters[k].outputBody;
    detail::clusterAccelerationStep(cm, data, k, o >= 0 ? td.a_gf[o] : a0, frame);
  }
  if (frame == detail::RotorFrame::Output && !scr.rotors.empty())
    detail::deferRotorBodies(scr, q, v.data());
  return detail::ok(td);
}

}  // namespace

Status ceAba(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
             ConstVecRef tauY, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.treeData, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.treeModel, data.treeData, fext));
  const Status s =
      ceAbaCore(model, data, q, v, tauY.data(), detail::ForceCoordinates::Independent, fext);
  return detail::checkOverflow(data.treeData, s, data.qdd, "ceAba: qdd",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"tau", detail::maxAbs(tauY), 1},
                                {"fext", detail::maxAbsForces(model.treeModel, fext), 1}});
}

Status ceAbaSpanningForces(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                           ConstVecRef v, ConstVecRef tauSpanning, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.treeData, tauSpanning, model.treeModel.nv, "tau"));
  CDYN_TRY(detail::checkForces(model.treeModel, data.treeData, fext));
  const Status s =
      ceAbaCore(model, data, q, v, tauSpanning.data(), detail::ForceCoordinates::Spanning, fext);
  return detail::checkOverflow(data.treeData, s, data.qdd, "ceAbaSpanningForces: qdd",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"tau", detail::maxAbs(tauSpanning), 1},
                                {"fext", detail::maxAbsForces(model.treeModel, fext), 1}});
}

Status ceAbaIndependent(const ClusterModel& model, ClusterData& data, ConstVecRef y,
                        ConstVecRef ydot, ConstVecRef tauY, const Force* fext) {
  if (data.model != &model)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  CDYN_TRY(detail::checkVector(data.treeData, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.treeModel, data.treeData, fext));
  Status s = independentToSpanning(model, data, y, ydot);
  if (s == Status::Ok)
    s = ceAbaCore(model, data, data.q, data.v, tauY.data(), detail::ForceCoordinates::Independent,
                  fext);
  else if (s != Status::ConstraintFailure)
    return s;  // size / finiteness of y, ydot
  s = detail::keepWarmStartUsable(model, data, s);
  return detail::checkOverflow(data.treeData, s, data.qdd, "ceAbaIndependent: qdd",
                               {{"y", detail::maxAbs(y), 1},
                                {"ydot", detail::maxAbs(ydot), 2},
                                {"tau", detail::maxAbs(tauY), 1},
                                {"fext", detail::maxAbsForces(model.treeModel, fext), 1}});
}

}  // namespace clusterdyn
