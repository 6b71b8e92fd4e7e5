// Joint dynamics (MJCF armature A, springs and dampers tau_p(q, v) = -K (q (-) q_spring) - D v)
// in the cluster-tree derivatives (docs/derivatives.md, "Joint dynamics in the cluster-tree
// derivatives"). CE-RNEA with them is tau_y = G^T tau_s with tau_s = RNEA(q, v, a) + A a -
// tau_p(q, v), a = G y_ddot + g (Chignoli et al. 2023, eq. 3), so the spanning partials gain
// (eq. J1)
//   d tau_s / dq -= d tau_p / dq,  d tau_s / dv -= d tau_p / dv,  d tau_s / da += A,
// and the chain rule of eq. C9 (dq = G dy, dv / dy, da / dy, (dG / dy)^T tau_s) carries them: in
// a loop the armature also acts on the bias acceleration g(q, v), through G^T A da / dy. Eq. J1
// is the tree's addJointDynamicsDerivatives (derivatives_steps.hpp) on the spanning tree; this
// file holds eq. J2, the same terms folded directly when G is constant.
#include "cluster/cluster_derivatives_detail.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/joint_dynamics_derivatives.hpp"

namespace clusterdyn::detail {

void foldJointDynamics(const ClusterModel& cm, ConstVecRef q, const double* v,
                       ClusterDerivativeData& dd) {
  const Model& tree = cm.treeModel;
  addJointDynamicsForces(tree, q.data(), v, dd.a.data(), dd.tree.tau.data());
  const bool passive = tree.hasPassiveForces();
  if (passive) {
    dd.passiveDq.setZero();
    dd.passiveDv.setZero();
    addPassiveForcePartials(tree, q.data(), v, -1.0, dd.passiveDq, dd.passiveDv);
  }
  const double* const arm = tree.hasArmature() ? tree.armature.data() : nullptr;
  // eq. J2: G_k^T X_k G_k from the entries of G_k (X block diagonal per joint, G per cluster).
  const ClusterDerivativeData::GEntry* const E = dd.Gentries.data();
  for (size_t k = 0; k < cm.clusters.size(); ++k)
    for (int j = dd.entryStart[k]; j < dd.entryStart[k + 1]; ++j)
      for (int i = dd.entryStart[k]; i < dd.entryStart[k + 1]; ++i) {
        const ClusterDerivativeData::GEntry &r = E[i], &c = E[j];
        const double g = r.value * c.value;
        if (arm && r.v == c.v) dd.H(r.y, c.y) += g * arm[r.v];
        if (!passive) continue;
        dd.dtau_dy(r.y, c.y) += g * dd.passiveDq(r.v, c.v);
        dd.dtau_dydot(r.y, c.y) += g * dd.passiveDv(r.v, c.v);
      }
}

}  // namespace clusterdyn::detail
